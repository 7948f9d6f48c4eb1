//! Redaction decided on whole raw sources, judged on the wire: whatever a
//! tool cuts from a file (a line range, a search line and its context, a
//! signature), no part of a credential whose context lies outside the cut
//! leaves the server; line numbers are never taken for part of a credential;
//! search_code answers cannot be used to learn what a placeholder hides; file
//! names cannot forge lines inside a fence, and names that are not UTF-8 can
//! be listed and then read back.
//!
//! Every credential here is built by concatenation, so secret scanners
//! reading this repository stay quiet; none of them is real.

use std::os::unix::ffi::OsStrExt;

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::util::{call_line, entry_names};

/// The serialised forms a leaked `secret` could take in a JSON line.
#[track_caller]
fn assert_absent(line: &str, secret: &str, what: &str) {
    let escaped = serde_json::to_string(secret).unwrap();
    let escaped = escaped.trim_matches('"');
    assert!(
        !line.contains(secret) && !line.contains(escaped),
        "{what}: {secret:?} left the server:\n{line}"
    );
}

fn token() -> String {
    ["tok3n", "Value9876543210xyzQ"].concat()
}

/// Key material lines of a private-key block (each long enough to be
/// unmistakable in an answer).
fn pem_body() -> Vec<String> {
    (0..10)
        .map(|i| format!("MIIEpAIBAAKCAQEA{i}q7BFUpkGp3x9Z{i}Lm2Nb4Vc6Xw8"))
        .collect()
}

fn pem() -> String {
    let k = "PRIVATE KEY";
    format!(
        "-----BEGIN RSA {k}-----\n{}\n-----END RSA {k}-----",
        pem_body().join("\n")
    )
}

/// `client.py`: a bearer header whose token is on the next line, inside a
/// function (so find_symbol carries it in the signature); `key.py`: a
/// private-key block followed by code.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file(
        "client.py",
        format!(
            "import os\n\ndef connect(headers=\"\"\"Authorization: Bearer\n{}\n\"\"\"):\n    return headers\n",
            token()
        ),
    );
    fx.file(
        "key.py",
        format!(
            "KEY = \"\"\"{}\"\"\"\n\ndef after_the_key():\n    return KEY\n",
            pem()
        ),
    );
    fx
}

#[test]
fn a_bearer_token_on_the_line_after_its_header_never_leaves_and_line_numbers_stay() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let calls = [
            ("read_file", json!({"path": "client.py"})),
            (
                "read_file",
                json!({"path": "client.py", "start_line": 4, "end_line": 4}),
            ),
            (
                "search_code",
                json!({"pattern": "def connect", "context_lines": 2}),
            ),
            (
                "search_code",
                json!({"pattern": "return headers", "context_lines": 2}),
            ),
            ("find_symbol", json!({"symbol": "connect"})),
        ];
        for (tool, args) in calls {
            let what = format!("{mode:?} {tool} {args}");
            let (line, r) = call_line(&mut m, tool, args);
            assert_eq!(r["isError"], false, "{what}: {line}");
            assert_absent(&line, &token(), &what);
            assert!(
                tool == "find_symbol" || line.contains("[redacted:basic-auth-header]"),
                "{what}: the token's line reads as a placeholder: {line}"
            );
            let rules = &r["structuredContent"]["redaction"]["rules"];
            assert_eq!(rules, &json!(["basic-auth-header"]), "{what}: {line}");
        }
        // The numbering is the file's: line 4 is the token's line, numbered 4.
        let (_, r) = call_line(
            &mut m,
            "read_file",
            json!({"path": "client.py", "start_line": 3, "end_line": 5}),
        );
        let body = text(&r, 1);
        assert!(
            body.contains("\n3  def connect(headers=\"\"\"Authorization: Bearer\n4  [redacted:basic-auth-header]\n5  \"\"\"):\n"),
            "{mode:?}: {body}"
        );
    }
}

#[test]
fn an_excerpt_inside_a_private_key_block_shows_no_key_material() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let calls = [
            // A range starting inside the block: its BEGIN line is not shown.
            (
                "read_file",
                json!({"path": "key.py", "start_line": 5, "end_line": 14}),
            ),
            // Context reaching back into the block from the line after it.
            (
                "search_code",
                json!({"pattern": "def after_the_key", "context_lines": 5}),
            ),
            // A line of the block itself: a match on a placeholder is no
            // match.
            (
                "search_code",
                json!({"pattern": "q7BFUpkGp3", "context_lines": 5}),
            ),
            ("read_file", json!({"path": "key.py"})),
        ];
        for (tool, args) in calls {
            let what = format!("{mode:?} {tool} {args}");
            let (line, r) = call_line(&mut m, tool, args);
            assert_eq!(r["isError"], false, "{what}: {line}");
            for material in pem_body() {
                assert_absent(&line, &material, &what);
            }
        }
        // The lines keep their numbers: the block spans lines 1-12, the
        // function is on line 14, and every line of the block is a
        // placeholder.
        let (line, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": "def after_the_key", "context_lines": 3}),
        );
        let hit = &r["structuredContent"]["matches"][0];
        assert_eq!(hit["line"], 14, "{line}");
        assert_eq!(
            hit["before"],
            json!([
                "[redacted:private-key-block]",
                "[redacted:private-key-block]\"\"\"",
                ""
            ]),
            "{line}"
        );
        let (line, r) = call_line(&mut m, "search_code", json!({"pattern": "q7BFUpkGp3"}));
        assert_eq!(r["structuredContent"]["match_count"], 0, "{line}");
        let (line, r) = call_line(&mut m, "read_file", json!({"path": "key.py"}));
        assert_eq!(r["structuredContent"]["total_lines"], 15, "{line}");
    }
}

/// The numbered lines of a read_file answer, by number.
fn numbered_lines(r: &Value) -> Vec<(u64, String)> {
    text(r, 1)
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.trim_start().split_once("  ")?;
            Some((n.parse().ok()?, rest.to_owned()))
        })
        .collect()
}

/// A whole-file answer and answers of one line each show every line alike:
/// the whole file is decided on as one source whichever process decides.
#[test]
fn a_whole_file_and_each_of_its_lines_read_alone_are_redacted_alike() {
    let fx = fixture();
    let password = ["S3cr3t", "Passw0rd!x"].concat();
    fx.file(
        "settings.yaml",
        format!("db:\n  password:\n    {password}\n  host: db\n"),
    );
    fx.file(
        "crlf.yaml",
        format!("db:\r\n  password:\r\n    {password}\r\n"),
    );
    fx.file("no_newline.py", format!("KEY = \"\"\"{}\"\"\"", pem()));
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for file in [
            "client.py",
            "key.py",
            "settings.yaml",
            "crlf.yaml",
            "no_newline.py",
        ] {
            let what = format!("{mode:?} {file}");
            let (line, whole) = call_line(&mut m, "read_file", json!({"path": file}));
            assert_eq!(whole["isError"], false, "{what}: {line}");
            for secret in pem_body().into_iter().chain([token(), password.clone()]) {
                assert_absent(&line, &secret, &what);
            }
            let shown = numbered_lines(&whole);
            let total = whole["structuredContent"]["total_lines"].as_u64().unwrap();
            assert_eq!(shown.len() as u64, total, "{what}: {line}");
            assert!(
                whole["structuredContent"]["redaction"]["count"]
                    .as_u64()
                    .unwrap()
                    > 0,
                "{what}: {line}"
            );
            for (n, expected) in &shown {
                let (line, one) = call_line(
                    &mut m,
                    "read_file",
                    json!({"path": file, "start_line": n, "end_line": n}),
                );
                assert_eq!(
                    numbered_lines(&one),
                    vec![(*n, expected.clone())],
                    "{what} line {n}: {line}"
                );
            }
        }
    }
}

/// The answer line with the request id and the fence nonces blanked, so two
/// answers can be compared byte for byte.
fn normalised(line: &str) -> String {
    let mut v: Value = serde_json::from_str(line).unwrap();
    v["id"] = Value::Null;
    let s = v.to_string();
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(at) = rest.find("id=") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        let hex = rest
            .bytes()
            .take(16)
            .filter(|b| b.is_ascii_hexdigit())
            .count();
        if hex == 16 {
            out.push_str("NONCE");
            rest = &rest[16..];
        }
    }
    out.push_str(rest);
    out
}

fn stripe(tail: &str) -> String {
    ["sk_", "live_", tail].concat()
}

/// Two workspaces, identical but for the Stripe key `pay.py` holds.
fn payment_workspace(secret: &str) -> Fixture {
    let fx = Fixture::new();
    fx.file(
        "pay.py",
        format!("import stripe\n\nstripe.api_key = \"{secret}\"\n\ndef charge():\n    pass\n"),
    );
    fx
}

#[test]
fn prefix_probing_a_redacted_key_learns_nothing() {
    let x = stripe("4eC39HqLyjWDarjtT1zdp7dc");
    let y = stripe("9Zq81LmNbVcXwE5rT2yUiOpA");
    assert_eq!(x.len(), y.len());
    let (fx, fy) = (payment_workspace(&x), payment_workspace(&y));
    for mode in Mode::BOTH {
        let mut mx = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let mut my = Moat::connect(&fy.root, &Options::new(mode), Era::Modern);
        // Every prefix of either key, literal and as regexes, plus patterns
        // that end at or start inside the placeholder.
        let mut probes: Vec<Value> = Vec::new();
        for secret in [&x, &y] {
            for n in 4..=secret.len() {
                let prefix = &secret[..n];
                probes.push(json!({"pattern": prefix}));
                probes.push(json!({"pattern": format!("{prefix}[a-z]"), "regex": true}));
                probes.push(json!({"pattern": format!("\"{prefix}"), "context_lines": 1}));
            }
        }
        for p in [
            json!({"pattern": "api_key = \"sk_live_[0-9]", "regex": true}),
            json!({"pattern": "sk_live_[4-4]", "regex": true}),
            json!({"pattern": "[0-9A-Za-z]{24}\"", "regex": true}),
            json!({"pattern": "dc\""}),
            json!({"pattern": "pA\""}),
            json!({"pattern": "api_key = \""}),
            json!({"pattern": "redacted"}),
            json!({"pattern": "stripe", "context_lines": 2}),
        ] {
            probes.push(p);
        }
        let mut matched = 0;
        for args in probes {
            let (lx, rx) = call_line(&mut mx, "search_code", args.clone());
            let (ly, _) = call_line(&mut my, "search_code", args.clone());
            assert_absent(&lx, &x[8..], "workspace x");
            assert_absent(&ly, &y[8..], "workspace y");
            assert_eq!(
                normalised(&lx),
                normalised(&ly),
                "{mode:?} {args}: the answers differ, so they tell the keys apart"
            );
            matched += rx["structuredContent"]["match_count"].as_u64().unwrap();
        }
        // The probes that do not touch the key still find what is there.
        assert!(matched >= 2, "{mode:?}: {matched}");
        // find_symbol and project_overview agree too.
        for (tool, args) in [
            ("find_symbol", json!({"symbol": "charge"})),
            ("project_overview", json!({})),
            ("read_file", json!({"path": "pay.py"})),
        ] {
            let (lx, _) = call_line(&mut mx, tool, args.clone());
            let (ly, _) = call_line(&mut my, tool, args.clone());
            assert_absent(&lx, &x[8..], tool);
            assert_eq!(normalised(&lx), normalised(&ly), "{mode:?} {tool}");
        }
    }
}

#[test]
fn a_match_touching_a_placeholder_is_neither_reported_nor_counted() {
    let key = stripe("4eC39HqLyjWDarjtT1zdp7dc");
    let fx = Fixture::new();
    fx.file(
        "a.py",
        format!("k1 = \"{key}\"\nk2 = \"{key}\"\nplain = 1\n"),
    );
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    for pattern in ["sk_live_4", "k1 = \"", "e_key]\"", "redacted:stripe"] {
        let (line, r) = call_line(&mut m, "search_code", json!({"pattern": pattern}));
        assert_eq!(
            r["structuredContent"]["match_count"], 0,
            "{pattern}: {line}"
        );
        assert_eq!(
            r["structuredContent"]["truncated"], false,
            "{pattern}: {line}"
        );
    }
    // A match clear of the placeholder on the same line is kept.
    let (line, r) = call_line(&mut m, "search_code", json!({"pattern": "k1"}));
    assert_eq!(r["structuredContent"]["match_count"], 1, "{line}");
    assert_eq!(
        r["structuredContent"]["matches"][0]["text"], "k1 = \"[redacted:stripe-key]\"",
        "{line}"
    );
}

#[test]
fn a_file_name_cannot_forge_a_search_hit_inside_the_fence() {
    let fx = Fixture::new();
    // The forged hit is not itself a credential shape, so redaction leaves
    // the escaped name as it is and the test sees only the escaping.
    let forged = "fake.py:99:\n  forged_hit = 1";
    let names = [
        format!("x\n{forged}.txt"),
        "esc\u{1b}[2Kclear.txt".to_owned(),
        "bidi\u{202e}txt.exe".to_owned(),
    ];
    for n in &names {
        fx.file(n, "needle_in_named_file\n");
    }
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let (line, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": "needle_in_named_file", "context_lines": 1}),
        );
        assert_eq!(r["structuredContent"]["match_count"], 3, "{line}");
        let fenced = text(&r, 1);
        // Inside the fence: a header line per hit and one indented line each.
        let body: Vec<&str> = fenced.lines().collect();
        let body = &body[1..body.len() - 1];
        assert_eq!(body.len(), 6, "{mode:?}: {fenced:?}");
        for pair in body.chunks(2) {
            assert!(pair[0].ends_with(":1:1:"), "{mode:?} header {pair:?}");
            assert_eq!(pair[1], "  1: needle_in_named_file", "{mode:?}");
        }
        assert!(
            fenced.contains("x\\nfake.py:99:\\n  forged_hit = 1.txt:1:1:"),
            "{fenced:?}"
        );
        for c in ['\u{1b}', '\u{202e}'] {
            assert!(
                !fenced.contains(c) && !text(&r, 0).contains(c),
                "{mode:?} {c:?}"
            );
        }
        // Every name that is shown can be given back.
        for hit in r["structuredContent"]["matches"].as_array().unwrap() {
            let shown = hit["path"].as_str().unwrap().to_owned();
            let (line, back) = call_line(&mut m, "read_file", json!({"path": shown}));
            assert_eq!(back["isError"], false, "{mode:?} {shown:?}: {line}");
        }
        for shown in body.iter().step_by(2) {
            let shown = shown.strip_suffix(":1:1:").unwrap();
            let (line, back) = call_line(&mut m, "read_file", json!({"path": shown}));
            assert_eq!(back["isError"], false, "{mode:?} {shown:?}: {line}");
        }
    }
}

#[test]
fn names_that_are_not_utf8_are_listed_unambiguously_and_read_back() {
    let fx = Fixture::new();
    let dir = fx.dir("odd");
    let latin1 = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(dir.join(latin1), "latin-1 name\n").unwrap();
    // A valid name spelling what the escape of the other looks like.
    std::fs::write(dir.join("caf\\xe9.txt"), "backslash name\n").unwrap();
    std::fs::write(
        dir.join(std::ffi::OsStr::from_bytes(b"\xff\xfe")),
        "two bytes\n",
    )
    .unwrap();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let (line, r) = call_line(&mut m, "list_directory", json!({"path": "odd"}));
        let mut names = entry_names(&r);
        names.sort();
        assert_eq!(
            names,
            ["\\xff\\xfe", "caf\\\\xe9.txt", "caf\\xe9.txt"],
            "{mode:?}: {line}"
        );
        let expect = [
            ("odd/caf\\xe9.txt", "latin-1 name"),
            ("odd/caf\\\\xe9.txt", "backslash name"),
            ("odd/\\xff\\xfe", "two bytes"),
        ];
        for (path, content) in expect {
            let (line, back) = call_line(&mut m, "read_file", json!({"path": path}));
            assert_eq!(back["isError"], false, "{mode:?} {path}: {line}");
            assert_eq!(back["structuredContent"]["path"], path, "{line}");
            assert!(text(&back, 1).contains(&format!("1  {content}")), "{line}");
        }
        // Listed names, joined to the listing's path, are accepted back as
        // they are.
        let dir = r["structuredContent"]["path"].as_str().unwrap().to_owned();
        for e in r["structuredContent"]["entries"].as_array().unwrap() {
            let p = &format!("{dir}/{}", e["name"].as_str().unwrap());
            let (line, back) = call_line(&mut m, "read_file", json!({"path": p}));
            assert_eq!(back["isError"], false, "{mode:?} {p}: {line}");
        }
        // search_code finds them under the same names and reads them back.
        let (line, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": "name", "path": "odd"}),
        );
        let mut paths: Vec<&str> = moat_tests::strings(&r["structuredContent"]["matches"], "path");
        paths.sort_unstable();
        assert_eq!(paths, ["odd/caf\\\\xe9.txt", "odd/caf\\xe9.txt"], "{line}");
        let (line, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": "two", "path": "odd/\\xff\\xfe"}),
        );
        assert_eq!(r["structuredContent"]["match_count"], 1, "{line}");
        // Another spelling of a denied name is the denied name.
        fx.file(".env", "SECRET_ENV=1\n");
        let (line, r) = call_line(&mut m, "read_file", json!({"path": "\\x2eenv"}));
        assert_eq!(r["isError"], true, "{line}");
        assert_eq!(r["structuredContent"]["error"], "denied_path", "{line}");
        let (line, r) = call_line(&mut m, "read_file", json!({"path": "odd\\x2f..\\x2f.env"}));
        assert_eq!(r["isError"], true, "{line}");
        assert!(!line.contains("SECRET_ENV"), "{line}");
    }
}

// Git answers: each side of a diff (a blob or a work-tree file) and each
// commit message is redacted whole before anything is cut from it, so a
// hunk that shows only part of a credential shows none of it.

mod git_sources {
    use moat_tests::{Fixture, Moat, Mode, have_git};
    use serde_json::{Value, json};

    use super::super::git::start;
    use super::super::util::call_line;
    use super::assert_absent;

    const KEY_FILE: &str = "deploy/signing.py";
    const CONFIG_FILE: &str = "deploy/app.yaml";
    const REQUEST_FILE: &str = "deploy/request.http";

    /// One line of key material, distinct per `tag` and `i`.
    fn key_line(tag: &str, i: usize) -> String {
        format!("MIIEvQIBADANBgkq{tag}{i:02}hkiG9w0BAQEFAASCBKcw")
    }

    /// A private-key block inside a Python string: `BEGIN` on line 1, the
    /// `lines` on lines 2.., then `END` and a function.
    fn key_file(lines: &[String]) -> String {
        let k = "PRIVATE KEY";
        format!(
            "KEY = \"\"\"-----BEGIN RSA {k}-----\n{}\n-----END RSA {k}-----\"\"\"\n\ndef load():\n    return KEY\n",
            lines.join("\n")
        )
    }

    /// Twenty lines of key material.
    fn base_key() -> Vec<String> {
        (0..20).map(|i| key_line("a", i)).collect()
    }

    /// The committed key after its rotation: line 10 replaced by two new
    /// lines (so the block grows by one line).
    fn history_key() -> Vec<String> {
        let mut k = base_key();
        k.splice(10..11, [key_line("h", 10), key_line("h", 11)]);
        k
    }

    /// The work-tree key: one middle line replaced.
    fn worktree_key() -> Vec<String> {
        let mut k = history_key();
        k[5] = key_line("w", 5);
        k
    }

    fn config_file(value: &str) -> String {
        format!(
            "database:\n  host: db.internal\n  port: 5432\n  password:\n    {value}\n  user: app\n  pool: 4\n"
        )
    }

    fn request_file(token: &str) -> String {
        format!(
            "GET /v1/items\nAccept: application/json\nAuthorization: Bearer\n  {token}\nX-Trace: on\n"
        )
    }

    fn history_password() -> String {
        ["S3cr3t!", "Passw0rd", "Hist"].concat()
    }

    fn worktree_password() -> String {
        ["W0rkTr33!", "Passw0rd", "Tree"].concat()
    }

    fn tokens() -> [String; 3] {
        [
            ["Zq8wLk2m", "Px7nRt4v", "Yb3cD9"].concat(),
            ["Hn5tGv8q", "Wc2xLp6r", "Km4sJ1"].concat(),
            ["Rf3dSa9z", "Xe7wQc5v", "Bn2mT8"].concat(),
        ]
    }

    /// Every secret byte sequence the repository and work tree hold.
    fn secrets() -> Vec<String> {
        let mut all: Vec<String> = base_key();
        all.extend(history_key());
        all.extend(worktree_key());
        all.push(history_password());
        all.push(worktree_password());
        all.extend(tokens());
        all.sort();
        all.dedup();
        all
    }

    const ADD: &str = "Add the deploy files";
    const ROTATE: &str = "Rotate the deploy credentials";

    /// Commit 1 adds the three files (the password is a reference, not a
    /// credential); commit 2 rotates the key (a middle line replaced by two),
    /// writes a real password and a new token; the work tree changes one key
    /// line, the password and the token again.
    fn repo() -> Fixture {
        assert!(have_git());
        let fx = Fixture::new();
        fx.git(&["init", "--quiet", "--initial-branch=main"]);
        let [t0, t1, t2] = tokens();
        fx.file(KEY_FILE, key_file(&base_key()));
        fx.file(CONFIG_FILE, config_file("${DB_PASSWORD}"));
        fx.file(REQUEST_FILE, request_file(&t0));
        fx.git(&["add", "deploy"]);
        fx.git(&["commit", "--quiet", "-m", ADD]);
        fx.file(KEY_FILE, key_file(&history_key()));
        fx.file(CONFIG_FILE, config_file(&history_password()));
        fx.file(REQUEST_FILE, request_file(&t1));
        fx.git(&["commit", "--quiet", "-a", "-m", ROTATE]);
        fx.file(KEY_FILE, key_file(&worktree_key()));
        fx.file(CONFIG_FILE, config_file(&worktree_password()));
        fx.file(REQUEST_FILE, request_file(&t2));
        fx
    }

    /// Call `tool`, require success, check that no secret appears anywhere
    /// in the serialised answer, and return (answer line, result).
    #[track_caller]
    fn call_clean(m: &mut Moat, what: &str, tool: &str, args: Value) -> (String, Value) {
        let what = format!("{what} {tool} {args}");
        let (line, r) = call_line(m, tool, args);
        assert_eq!(r["isError"], false, "{what}: {line}");
        for s in secrets() {
            assert_absent(&line, &s, &what);
        }
        (line, r)
    }

    /// The rule names of the answer's redaction report, and its count.
    fn report(r: &Value) -> (Vec<String>, u64) {
        let red = &r["structuredContent"]["redaction"];
        let rules = red["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        (rules, red["count"].as_u64().unwrap())
    }

    #[track_caller]
    fn assert_reports(r: &Value, rules: &[&str], what: &str) {
        let (got, count) = report(r);
        for rule in rules {
            assert!(
                got.iter().any(|g| g == rule),
                "{what}: {rule} not in the redaction report {got:?}: {r}"
            );
        }
        assert!(
            count >= rules.len() as u64,
            "{what}: count {count} for {got:?}"
        );
    }

    /// The rules of the three rotated credentials: every diff reports all.
    const ROTATED_RULES: [&str; 3] = ["assigned-secret", "basic-auth-header", "private-key-block"];

    fn diff_text(r: &Value) -> String {
        moat_tests::text(r, 1)
    }

    #[test]
    fn history_diffs_show_no_part_of_a_credential_cut_by_a_hunk() {
        let fx = repo();
        for mode in Mode::BOTH {
            let mut m = start(&fx.root, mode);
            for context in [0, 3] {
                let what = format!("{mode:?} context {context}");
                let (line, r) = call_clean(
                    &mut m,
                    &what,
                    "git_diff",
                    json!({"revision": "HEAD~1..HEAD", "context_lines": context}),
                );
                let diff = diff_text(&r);
                // The key grew by one line, far from its BEGIN line: the
                // added line reads as a placeholder.
                assert!(
                    diff.contains("+[redacted:private-key-block]\n"),
                    "{what}: {line}"
                );
                // The password's value, alone on its line, is a placeholder
                // under its own line number.
                let hunk = if context == 0 {
                    "@@ -5 +5 @@"
                } else {
                    "@@ -2,6 +2,6 @@"
                };
                assert!(diff.contains(hunk), "{what}: {hunk} in {diff}");
                assert!(
                    diff.contains("-    ${DB_PASSWORD}\n+    [redacted:assigned-secret]\n"),
                    "{what}: {diff}"
                );
                assert_reports(&r, &ROTATED_RULES, &what);
                let sc = &r["structuredContent"];
                assert_eq!(sc["files_changed"], 3, "{what}: {line}");
            }
        }
    }

    #[test]
    fn work_tree_diffs_show_no_part_of_a_credential_cut_by_a_hunk() {
        let fx = repo();
        for mode in Mode::BOTH {
            let mut m = start(&fx.root, mode);
            for args in [
                json!({}),
                json!({"context_lines": 0}),
                json!({"revision": "HEAD"}),
                json!({"revision": "HEAD", "context_lines": 0}),
            ] {
                let what = format!("{mode:?} {args}");
                let (line, r) = call_clean(&mut m, &what, "git_diff", args);
                let diff = diff_text(&r);
                // Every change lies inside a redacted span: each file is
                // still named, with a notice instead of hunks.
                for file in [KEY_FILE, CONFIG_FILE, REQUEST_FILE] {
                    assert!(
                        diff.contains(&format!("diff --git a/{file} b/{file}\n")),
                        "{what}: {file} in {diff}"
                    );
                }
                assert_eq!(
                    diff.matches("moat: the change lies inside redacted text.")
                        .count(),
                    3,
                    "{what}: {diff}"
                );
                assert!(!diff.contains("\n@@ "), "{what}: {diff}");
                assert_reports(&r, &ROTATED_RULES, &what);
                let sc = &r["structuredContent"];
                assert_eq!(sc["files_changed"], 3, "{what}: {line}");
                assert_eq!(sc["lines_added"], 0, "{what}: {line}");
            }
            // Against the first commit the work tree shows the grown key
            // and the written password as placeholders.
            let what = format!("{mode:?} HEAD~1");
            let (_, r) = call_clean(
                &mut m,
                &what,
                "git_diff",
                json!({"revision": "HEAD~1", "context_lines": 1}),
            );
            let diff = diff_text(&r);
            assert!(
                diff.contains("+[redacted:private-key-block]\n"),
                "{what}: {diff}"
            );
            assert!(
                diff.contains("+    [redacted:assigned-secret]\n"),
                "{what}: {diff}"
            );
            assert_reports(&r, &ROTATED_RULES, &what);
        }
    }

    #[test]
    fn stats_and_log_subjects_are_unaffected_by_redacted_sides() {
        let fx = repo();
        for mode in Mode::BOTH {
            let mut m = start(&fx.root, mode);
            for args in [
                json!({"revision": "HEAD~1..HEAD"}),
                json!({}),
                json!({"revision": "HEAD~1"}),
            ] {
                let what = format!("{mode:?} {args}");
                let mut stat_args = args.clone();
                stat_args["stat_only"] = json!(true);
                let (line, stat) = call_clean(&mut m, &what, "git_diff", stat_args);
                let (_, full) = call_clean(&mut m, &what, "git_diff", args);
                let table = diff_text(&stat);
                for file in [KEY_FILE, CONFIG_FILE, REQUEST_FILE] {
                    assert!(table.contains(file), "{what}: {file} in {table}");
                }
                assert!(table.contains("3 files changed"), "{what}: {table}");
                // The stat counts the lines the diff shows.
                for k in ["files_changed", "lines_added", "lines_removed"] {
                    assert_eq!(
                        stat["structuredContent"][k], full["structuredContent"][k],
                        "{what}: {k}: {line}"
                    );
                }
            }
            let what = format!("{mode:?}");
            let (line, r) = call_clean(&mut m, &what, "git_log", json!({}));
            let subjects: Vec<&str> =
                moat_tests::strings(&r["structuredContent"]["commits"], "subject");
            assert_eq!(subjects, [ROTATE, ADD], "{what}: {line}");
            assert_eq!(report(&r), (Vec::new(), 0), "{what}: {line}");
        }
    }

    #[test]
    fn a_private_key_in_a_commit_message_never_reaches_a_subject() {
        let fx = Fixture::new();
        assert!(have_git());
        fx.git(&["init", "--quiet", "--initial-branch=main"]);
        fx.file("notes.txt", "notes\n");
        fx.git(&["add", "notes.txt"]);
        // The first paragraph (the subject) holds the BEGIN line and the
        // first lines of the key; its END line is in a later paragraph.
        let k = "PRIVATE KEY";
        let body: Vec<String> = (0..4).map(|i| key_line("m", i)).collect();
        let message = format!(
            "Add the deploy key\n-----BEGIN RSA {k}-----\n{}\n{}\n\n{}\n{}\n-----END RSA {k}-----\n",
            body[0], body[1], body[2], body[3]
        );
        fx.git(&["commit", "--quiet", "--cleanup=verbatim", "-m", &message]);
        for mode in Mode::BOTH {
            let mut m = start(&fx.root, mode);
            let what = format!("{mode:?} git_log");
            let (line, r) = call_line(&mut m, "git_log", json!({}));
            assert_eq!(r["isError"], false, "{what}: {line}");
            for s in &body {
                assert_absent(&line, s, &what);
            }
            let subject = r["structuredContent"]["commits"][0]["subject"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(
                subject.starts_with("Add the deploy key [redacted:private-key-block]"),
                "{what}: {subject}"
            );
            assert_reports(&r, &["private-key-block"], &what);
        }
    }
}

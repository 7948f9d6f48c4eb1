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
            assert!(pair[0].ends_with(":1:"), "{mode:?} header {pair:?}");
            assert_eq!(pair[1], "  needle_in_named_file", "{mode:?}");
        }
        assert!(
            fenced.contains("x\\nfake.py:99:\\n  forged_hit = 1.txt:1:"),
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
            let shown = shown.strip_suffix(":1:").unwrap();
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
        // Listed paths are accepted back as they are.
        for e in r["structuredContent"]["entries"].as_array().unwrap() {
            let p = e["path"].as_str().unwrap();
            let (line, back) = call_line(&mut m, "read_file", json!({"path": p}));
            assert_eq!(back["isError"], false, "{mode:?} {p}: {line}");
        }
        // search_code finds them under the same names and reads them back.
        let (line, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": "name", "path": "odd"}),
        );
        let mut paths: Vec<&str> = r["structuredContent"]["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap())
            .collect();
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

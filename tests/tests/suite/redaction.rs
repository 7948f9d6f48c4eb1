//! Redaction, judged on the wire: for every rule, a planted credential of its
//! shape never appears anywhere in the serialised response of any tool that
//! can carry it (file text, file names, symbol signatures, commit subjects
//! and authors, diffs, refusals), and `structuredContent.redaction` names the
//! rule. Placeholders, variable names and hosts survive.
//!
//! Every credential here is built by concatenation, so secret scanners
//! reading this repository stay quiet; none of them is real.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::util::{
    call_line, content_fixture, example_aws_key, example_github_token, git, have_git,
};

/// One credential per rule: the rule, the text it is planted as (one line,
/// no double quotes, except the private-key block), and the part that must
/// never leave.
struct Planted {
    rule: &'static str,
    shaped: String,
    secret: String,
}

fn planted() -> Vec<Planted> {
    let p = |rule, shaped: String, secret: String| Planted {
        rule,
        shaped,
        secret,
    };
    let same = |rule, s: String| Planted {
        rule,
        shaped: s.clone(),
        secret: s,
    };
    let pem_body = [
        "MIIBVgIBADANBgkqhkiG9w0BAQEFAAS",
        "CAUAwggE8AgEAAkEAq7BFUpkGp3",
    ]
    .concat();
    let jwt = [
        "eyJhbGciOiJIUzI1NiJ9",
        ".eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
    .concat();
    let google = ["AIza", "SyD4x9Q2w7E1r6T3y8U5i0O4p9A2s7D1f6G"].concat();
    assert_eq!(google.len(), 39, "AIza + 35");
    let all = vec![
        same("aws-access-key-id", ["AKIA", "Z7Q2M4N8P1R5T9W3"].concat()),
        same("github-token", ["ghp_", &"x1Y2z3".repeat(6)].concat()),
        same(
            "github-fine-grained-token",
            ["github_pat_", &"A1b2C3d4".repeat(8)].concat(),
        ),
        same("gitlab-token", ["glpat-", "abcDEF123_-xyzXYZ7890"].concat()),
        same("slack-token", ["xoxb-", "1234567890-abcdefghijkl"].concat()),
        same(
            "stripe-key",
            ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].concat(),
        ),
        same(
            "anthropic-key",
            ["sk-ant-", "api03-AbCdEfGhIjKlMnOpQrStUv"].concat(),
        ),
        same(
            "openai-key",
            ["sk-", "proj-", "AbCdEfGhIjKlMnOpQrStUvWx"].concat(),
        ),
        same("google-api-key", google),
        same(
            "npm-token",
            ["npm_", &"Q7w8E9r0".repeat(4), "T1y2"].concat(),
        ),
        same("hugging-face-token", ["hf_", &"Zy9".repeat(12)].concat()),
        same("jwt", jwt),
        p(
            "private-key-block",
            format!(
                "-----BEGIN RSA {k}-----\n{pem_body}\n-----END RSA {k}-----",
                k = "PRIVATE KEY"
            ),
            pem_body.clone(),
        ),
        p(
            "url-credentials",
            ["postgres://app:", "S3cretPassw0rd", "@db.internal:5432/app"].concat(),
            "S3cretPassw0rd".into(),
        ),
        p(
            "basic-auth-header",
            ["Authorization: Bearer ", "tok3nValue9876543210"].concat(),
            "tok3nValue9876543210".into(),
        ),
        p(
            "assigned-secret",
            ["client_secret=", "q8Rk2mZp4Lx7Wn3v"].concat(),
            "q8Rk2mZp4Lx7Wn3v".into(),
        ),
    ];
    assert_eq!(all.len(), 16, "one credential per rule");
    all
}

/// `r07.py` holds rule 7's credential as the default value of `marker_07`,
/// the one definition in the file.
fn marker(i: usize) -> String {
    format!("marker_{i:02}")
}

fn file_for(i: usize) -> String {
    format!("r{i:02}.py")
}

fn python_for(i: usize, p: &Planted) -> String {
    let quote = if p.shaped.contains('\n') {
        "\"\"\""
    } else {
        "\""
    };
    format!(
        "def {m}(v={quote}{s}{quote}):\n    return v\n",
        m = marker(i),
        s = p.shaped
    )
}

/// The serialised forms a leaked `secret` could take in a JSON line.
#[track_caller]
fn assert_absent(line: &str, secret: &str, what: &str) {
    let escaped = serde_json::to_string(secret).unwrap();
    let escaped = escaped.trim_matches('"');
    assert!(
        !line.contains(secret) && !line.contains(escaped),
        "{what}: the secret {secret:?} left the server:\n{line}"
    );
}

#[track_caller]
fn redaction(result: &Value) -> (bool, u64, Vec<String>) {
    let r = &result["structuredContent"]["redaction"];
    let rules = r["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("no redaction report: {result}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    (
        r["applied"].as_bool().unwrap(),
        r["count"].as_u64().unwrap(),
        rules,
    )
}

#[track_caller]
fn assert_named(result: &Value, rule: &str, what: &str) {
    assert_reported(result, rule, what);
    assert!(
        result.to_string().contains(&format!("[redacted:{rule}]")),
        "{what}: no token for {rule}: {result}"
    );
}

/// The result's redaction report names `rule`, and only it.
#[track_caller]
fn assert_reported(result: &Value, rule: &str, what: &str) {
    let (applied, count, rules) = redaction(result);
    assert!(applied && count >= 1, "{what}: nothing reported: {result}");
    assert_eq!(rules, vec![rule.to_owned()], "{what}: {result}");
}

/// A workspace with one file per rule, committed one by one (subject and
/// author carrying the credential), then each file edited in the working tree
/// (an added line carrying it again).
fn per_rule_fixture(with_git: bool) -> Fixture {
    let fx = Fixture::new();
    let samples = planted();
    for (i, p) in samples.iter().enumerate() {
        fx.file(&file_for(i), python_for(i, p));
    }
    if with_git {
        git(&fx.root, "Fixture", &["init", "-q", "-b", "main"]);
        for (i, p) in samples.iter().enumerate() {
            git(&fx.root, "Fixture", &["add", &file_for(i)]);
            if p.shaped.contains('\n') {
                git(
                    &fx.root,
                    "Fixture",
                    &["commit", "-q", "-m", &format!("add {}", marker(i))],
                );
            } else {
                let author = format!("Dev {}", p.shaped);
                let subject = format!("add {} {}", marker(i), p.shaped);
                git(&fx.root, &author, &["commit", "-q", "-m", &subject]);
            }
        }
        for (i, p) in samples.iter().enumerate() {
            let mut body = python_for(i, p);
            body.push_str(&format!("\nEXTRA = '''{}'''\n", p.shaped));
            fx.file(&file_for(i), body);
        }
    }
    fx
}

#[test]
fn every_rule_is_redacted_from_read_file_search_code_and_find_symbol() {
    let fx = per_rule_fixture(false);
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), era);
        for (i, p) in planted().iter().enumerate() {
            let what = format!("{era:?} {} read_file", p.rule);
            let (line, r) = call_line(&mut m, "read_file", json!({"path": file_for(i)}));
            assert_eq!(r["isError"], false, "{what}: {line}");
            assert_absent(&line, &p.secret, &what);
            assert_named(&r, p.rule, &what);

            let what = format!("{era:?} {} find_symbol", p.rule);
            let (line, r) = call_line(&mut m, "find_symbol", json!({"symbol": marker(i)}));
            assert_eq!(
                r["structuredContent"]["definition_count"], 1,
                "{what}: {line}"
            );
            assert_absent(&line, &p.secret, &what);
            // The file is parsed redacted: where a placeholder leaves the
            // line unparseable, the pattern's signature stops before it, so
            // only the report names the rule.
            assert_reported(&r, p.rule, &what);

            // A search decides on the whole file before cutting lines from
            // it, so a private-key block is judged here too, through its
            // context lines.
            let what = format!("{era:?} {} search_code", p.rule);
            let (line, r) = call_line(
                &mut m,
                "search_code",
                json!({"pattern": marker(i), "context_lines": 1}),
            );
            assert_eq!(r["structuredContent"]["match_count"], 1, "{what}: {line}");
            assert_absent(&line, &p.secret, &what);
            assert_named(&r, p.rule, &what);
            // The decision is made once, on the whole file, before the line
            // is cut from it: one replacement, however often the line is
            // shown (fence and matches[].text).
            assert_eq!(redaction(&r).1, 1, "{what}: {line}");
        }
    }
}

#[test]
fn every_rule_is_redacted_from_git_log_subjects_and_authors_and_git_diff_added_lines() {
    if !have_git() {
        eprintln!("skipped: git is not on PATH");
        return;
    }
    let fx = per_rule_fixture(true);
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    for (i, p) in planted().iter().enumerate() {
        let what = format!("{} git_diff", p.rule);
        let (line, r) = call_line(&mut m, "git_diff", json!({"path": file_for(i)}));
        assert_eq!(r["isError"], false, "{what}: {line}");
        assert!(text(&r, 1).contains("+EXTRA = '''"), "{what}: {line}");
        assert_absent(&line, &p.secret, &what);
        assert_named(&r, p.rule, &what);

        if p.shaped.contains('\n') {
            continue;
        }
        let what = format!("{} git_log", p.rule);
        let (line, r) = call_line(&mut m, "git_log", json!({"path": file_for(i)}));
        assert_eq!(r["structuredContent"]["commit_count"], 1, "{what}: {line}");
        let commit = &r["structuredContent"]["commits"][0];
        assert!(
            commit["subject"]
                .as_str()
                .is_some_and(|s| s.starts_with(&format!("add {} ", marker(i)))),
            "{what}: {line}"
        );
        assert!(
            commit["author"]
                .as_str()
                .is_some_and(|a| a.starts_with("Dev ")),
            "{what}: {line}"
        );
        assert_absent(&line, &p.secret, &what);
        assert_named(&r, p.rule, &what);
        // The subject once, in the worker (its message redacted whole
        // before the subject is taken); the author in the fence and in the
        // structured half.
        assert!(redaction(&r).1 >= 3, "{what}: {line}");
    }
}

#[test]
fn a_file_named_like_a_token_is_redacted_in_listings_and_search_headers() {
    let fx = Fixture::new();
    let token = ["ghp_", &"N4m3d".repeat(7), "X"].concat();
    let name = format!("{token}.txt");
    fx.file(&name, "needle_named_file\n");
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);

    let (line, r) = call_line(&mut m, "list_directory", json!({"path": "."}));
    assert_absent(&line, &token, "list_directory");
    assert!(
        text(&r, 0).contains("file  [redacted:github-token].txt"),
        "the prose half names the file redacted: {line}"
    );
    let entry = &r["structuredContent"]["entries"][0];
    assert_eq!(entry["name"], "[redacted:github-token].txt", "{line}");
    // The name in the structured half, the line in the summary.
    assert_eq!(redaction(&r), (true, 2, vec!["github-token".to_owned()]));

    let (line, r) = call_line(
        &mut m,
        "search_code",
        json!({"pattern": "needle_named_file"}),
    );
    assert_eq!(r["structuredContent"]["match_count"], 1, "{line}");
    assert_absent(&line, &token, "search_code");
    assert_eq!(
        r["structuredContent"]["matches"][0]["path"],
        "[redacted:github-token].txt"
    );
    assert!(
        text(&r, 1).contains("\n[redacted:github-token].txt:1:1:\n"),
        "the fenced header names the file redacted: {line}"
    );
    assert_named(&r, "github-token", "search_code");
}

// Refusals are redacted and carry a report too.
#[test]
fn a_refusal_echoing_a_token_in_its_path_is_redacted() {
    let fx = Fixture::new();
    fx.file("README.md", "# Readme\n");
    let token = ["ghp_", &"R3fu5".repeat(7), "Z"].concat();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), era);
        for (tool, args) in [
            ("read_file", json!({"path": format!("missing/{token}.txt")})),
            ("list_directory", json!({"path": format!("{token}")})),
            (
                "search_code",
                json!({"pattern": "x", "path": format!("../{token}")}),
            ),
        ] {
            let what = format!("{era:?} {tool}");
            let (line, r) = call_line(&mut m, tool, args);
            assert_eq!(r["isError"], true, "{what}: {line}");
            assert_absent(&line, &token, &what);
            let message = r["structuredContent"]["message"].as_str().unwrap();
            assert!(
                message.contains("[redacted:github-token]"),
                "{what}: the refusal still names the path: {line}"
            );
            assert!(
                text(&r, 0).contains("[redacted:github-token]"),
                "{what}: {line}"
            );
            assert_named(&r, "github-token", &what);
        }
    }
}

#[test]
fn an_aws_key_and_a_github_token_count_two_under_both_names() {
    let fx = Fixture::new();
    fx.file(
        "pair.py",
        format!(
            "KEY_ID = '{}'\nGH = '{}'\n",
            example_aws_key(),
            example_github_token()
        ),
    );
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let (line, r) = call_line(&mut m, "read_file", json!({"path": "pair.py"}));
    assert_absent(&line, &example_aws_key(), "read_file");
    assert_absent(&line, &example_github_token(), "read_file");
    assert_eq!(
        redaction(&r),
        (
            true,
            2,
            vec!["aws-access-key-id".to_owned(), "github-token".to_owned()]
        ),
        "{line}"
    );
    assert!(
        line.contains("KEY_ID = '[redacted:aws-access-key-id]'"),
        "{line}"
    );
    assert!(line.contains("GH = '[redacted:github-token]'"), "{line}");
}

// Placeholders (`changeme`, `xxxxxxxxxxxx`, `your-api-key`, `REPLACE_ME`,
// `********`) are not credentials: nothing is redacted or reported.
#[test]
fn placeholders_survive_and_nothing_is_reported() {
    let fx = Fixture::new();
    let body = "API_KEY = \"REPLACE_ME\"\npassword = \"changeme\"\nsecret = \"xxxxxxxxxxxx\"\ntoken = \"your-api-key\"\nDB_PASSWORD = \"********\"\n";
    fx.file("placeholders.py", body);
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let (line, r) = call_line(&mut m, "read_file", json!({"path": "placeholders.py"}));
    for kept in [
        "API_KEY = \\\"REPLACE_ME\\\"",
        "password = \\\"changeme\\\"",
        "secret = \\\"xxxxxxxxxxxx\\\"",
        "token = \\\"your-api-key\\\"",
        "DB_PASSWORD = \\\"********\\\"",
    ] {
        assert!(line.contains(kept), "{kept} should survive: {line}");
    }
    assert!(!line.contains("[redacted:"), "{line}");
    assert_eq!(redaction(&r), (false, 0, vec![]), "{line}");
}

#[test]
fn variable_names_schemes_and_hosts_survive() {
    let fx = content_fixture();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let (line, _) = call_line(&mut m, "read_file", json!({"path": "src/demo/settings.py"}));
    for kept in [
        "AWS_ACCESS_KEY_ID = \\\"[redacted:aws-access-key-id]\\\"",
        "GITHUB_TOKEN = \\\"[redacted:github-token]\\\"",
        "DATABASE_URL = \\\"postgresql://demo:[redacted:url-credentials]@db.internal:5432/demo\\\"",
    ] {
        assert!(line.contains(kept), "{kept}: {line}");
    }
}

/// No credential of the demo project's `settings.py` leaves, anywhere in the
/// serialised response of read_file and search_code.
mod secrets_do_not_leave {
    use super::*;

    fn server() -> (Fixture, Moat) {
        let fx = content_fixture();
        let m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
        (fx, m)
    }

    fn read_settings(m: &mut Moat) -> (String, Value) {
        call_line(m, "read_file", json!({"path": "src/demo/settings.py"}))
    }

    #[test]
    fn read_file_never_carries_the_aws_key_the_github_token_or_the_password() {
        let (_fx, mut m) = server();
        let (line, _) = read_settings(&mut m);
        for secret in [
            example_aws_key(),
            example_github_token(),
            "hunter2".to_owned(),
        ] {
            assert_absent(&line, &secret, "read_file settings.py");
        }
    }

    #[test]
    fn the_aws_key_is_replaced_by_its_token() {
        let (_fx, mut m) = server();
        let (line, _) = read_settings(&mut m);
        assert!(line.contains("[redacted:aws-access-key-id]"), "{line}");
    }

    #[test]
    fn the_variable_name_survives() {
        let (_fx, mut m) = server();
        let (line, _) = read_settings(&mut m);
        assert!(line.contains("AWS_ACCESS_KEY_ID"), "{line}");
    }

    #[test]
    fn a_search_for_the_variable_returns_the_path_but_not_the_key() {
        let (_fx, mut m) = server();
        let (line, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": "AWS_ACCESS_KEY_ID"}),
        );
        let paths: Vec<&str> = moat_tests::strings(&r["structuredContent"]["matches"], "path");
        assert_eq!(paths, ["src/demo/settings.py"], "{line}");
        assert_absent(&line, &example_aws_key(), "search_code");
    }

    #[test]
    fn the_database_host_survives() {
        let (_fx, mut m) = server();
        let (line, _) = read_settings(&mut m);
        assert!(line.contains("db.internal"), "{line}");
    }

    #[test]
    fn the_report_says_applied_with_three_or_more_including_aws() {
        let (_fx, mut m) = server();
        let (line, r) = read_settings(&mut m);
        let (applied, count, rules) = redaction(&r);
        assert!(applied, "{line}");
        assert!(count >= 3, "{line}");
        assert!(rules.contains(&"aws-access-key-id".to_owned()), "{line}");
        assert_eq!(
            rules,
            ["aws-access-key-id", "github-token", "url-credentials"],
            "{line}"
        );
    }

    #[test]
    fn the_placeholder_survives() {
        let (_fx, mut m) = server();
        let (line, _) = read_settings(&mut m);
        assert!(line.contains("API_KEY = \\\"REPLACE_ME\\\""), "{line}");
    }

    #[test]
    fn a_readme_with_nothing_to_redact_reports_applied_false() {
        let (_fx, mut m) = server();
        let (line, r) = call_line(&mut m, "read_file", json!({"path": "README.md"}));
        assert_eq!(
            r["structuredContent"]["redaction"],
            json!({"applied": false, "count": 0, "rules": []}),
            "{line}"
        );
    }

    #[test]
    fn a_search_for_token_leaks_nothing() {
        let (_fx, mut m) = server();
        let (line, r) = call_line(&mut m, "search_code", json!({"pattern": "TOKEN"}));
        assert!(
            r["structuredContent"]["match_count"].as_u64().unwrap() >= 1,
            "{line}"
        );
        for secret in [
            example_aws_key(),
            example_github_token(),
            "hunter2".to_owned(),
        ] {
            assert_absent(&line, &secret, "search TOKEN");
        }
    }
}

/// A line longer than the search line limit (400 characters) or a signature
/// longer than the signature limit (160) is cut; a credential the cut runs
/// through loses the part its rule needs to recognise it (the `@` after a
/// URL password, the last characters of a token) and must not leave as the
/// fragment that remains.
#[test]
fn a_credential_cut_by_a_length_limit_does_not_leave_as_a_fragment() {
    let password = ["S3cret", "Passw0rd"].concat();
    let url = format!("postgres://app:{password}@db.internal:5432/app");
    let token = ["ghp_", &"C5u7".repeat(9)].concat();
    // The cut falls right after the password, before the `@` (search), and
    // in the middle of the token.
    let search_url = {
        let head = "needle_cut_url = \"";
        let filler = "x".repeat(400 - head.len() - "postgres://app:".len() - password.len());
        format!("{head}{filler}{url}\"\n")
    };
    let search_token = {
        let head = "needle_cut_token = \"";
        let filler = "y".repeat(400 - head.len() - 20);
        format!("{head}{filler}{token}\"\n")
    };
    let signature = {
        let head = "def needle_cut_signature(a=\"";
        let filler = "z".repeat(160 - head.len() - 4 - "postgres://app:".len() - password.len());
        format!("{head}{filler}\", b=\"{url}\"):\n    return a\n")
    };
    let fx = Fixture::new();
    fx.file("cut_url.py", search_url);
    fx.file("cut_token.py", search_token);
    fx.file("cut_signature.py", signature);
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    for (tool, args, secret) in [
        (
            "search_code",
            json!({"pattern": "needle_cut_url"}),
            password.clone(),
        ),
        (
            "search_code",
            json!({"pattern": "needle_cut_token"}),
            token[..24].to_owned(),
        ),
        (
            "find_symbol",
            json!({"symbol": "needle_cut_signature"}),
            password.clone(),
        ),
    ] {
        let (line, r) = call_line(&mut m, tool, args);
        assert_eq!(r["isError"], false, "{line}");
        assert!(
            line.contains("needle_cut_"),
            "{tool}: the hit itself is still shown: {line}"
        );
        assert_absent(&line, &secret, tool);
    }
}

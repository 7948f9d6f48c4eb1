use super::patterns::compiled;
use super::rules::{Kind, MAX_RULES};
use super::*;

/// Credential-shaped strings that are not credentials, built by
/// concatenation so secret scanners reading this file stay quiet.
fn fake_aws_key() -> String {
    ["AKIA", "IOSFODNN7EXAMPLE"].concat()
}
fn fake_github_token() -> String {
    format!("ghp_{}", "a".repeat(36))
}
fn fake_slack_token() -> String {
    ["xoxb-", "1234567890", "-abcdefghijkl"].concat()
}

fn redact(text: &str) -> (String, RedactionReport) {
    let mut report = RedactionReport::default();
    let out = Redactor::new(true)
        .redact_str(text, &mut report)
        .unwrap_or_else(|| text.to_owned());
    (out, report)
}

/// `value` is gone from `text`, replaced by the assignment rule alone.
#[track_caller]
fn assert_assignment_hidden(text: &str, value: &str) {
    let (out, report) = redact(text);
    assert!(!out.contains(value), "{text:?} -> {out:?}");
    assert_eq!(report.rules(), vec!["assigned-secret"], "{text:?}");
}

/// One sample secret per rule, the text it sits in, and the secret itself.
fn planted() -> Vec<(&'static str, String, String)> {
    let pem_body = "MIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEA";
    let block =
        format!("-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----");
    let jwt = [
        "eyJhbGciOiJIUzI1NiJ9",
        ".eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
    .concat();
    vec![
        (
            "aws-access-key-id",
            format!("key = \"{}\"", fake_aws_key()),
            fake_aws_key(),
        ),
        (
            "github-token",
            format!("token: {}", fake_github_token()),
            fake_github_token(),
        ),
        (
            "github-fine-grained-token",
            format!("GH={}", ["github_pat_", &"A1b2".repeat(16)].concat()),
            ["github_pat_", &"A1b2".repeat(16)].concat(),
        ),
        (
            "gitlab-token",
            format!("x {} y", ["glpat-", "abcDEF123_-xyzXYZ7890"].concat()),
            ["glpat-", "abcDEF123_-xyzXYZ7890"].concat(),
        ),
        (
            "slack-token",
            format!("slack={}", fake_slack_token()),
            fake_slack_token(),
        ),
        (
            "stripe-key",
            format!(
                "s = '{}'",
                ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].concat()
            ),
            ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].concat(),
        ),
        (
            "anthropic-key",
            format!("k={}", ["sk-ant-", "api03-AbCdEfGhIjKlMnOpQrStUv"].concat()),
            ["sk-ant-", "api03-AbCdEfGhIjKlMnOpQrStUv"].concat(),
        ),
        (
            "openai-key",
            format!(
                "k={}",
                ["sk-", "proj-", "AbCdEfGhIjKlMnOpQrStUvWx"].concat()
            ),
            ["sk-", "proj-", "AbCdEfGhIjKlMnOpQrStUvWx"].concat(),
        ),
        (
            "google-api-key",
            format!("AIza{}", "B".repeat(35)),
            format!("AIza{}", "B".repeat(35)),
        ),
        (
            "npm-token",
            format!("npm_{}", "c".repeat(36)),
            format!("npm_{}", "c".repeat(36)),
        ),
        (
            "hugging-face-token",
            format!("HF {}", ["hf_", &"Zy9".repeat(12)].concat()),
            ["hf_", &"Zy9".repeat(12)].concat(),
        ),
        ("jwt", format!("Cookie: session={jwt}"), jwt.clone()),
        (
            "private-key-block",
            format!("before\n{block}\nafter"),
            pem_body.to_owned(),
        ),
        (
            "url-credentials",
            "url = postgres://user:sup3rs3cret@host/db".to_owned(),
            "sup3rs3cret".to_owned(),
        ),
        (
            "basic-auth-header",
            "Authorization: Bearer abcdefghijklmnop".to_owned(),
            "abcdefghijklmnop".to_owned(),
        ),
        (
            "assigned-secret",
            "client_secret = \"q8Rk2mZp4Lx7Wn3v\"".to_owned(),
            "q8Rk2mZp4Lx7Wn3v".to_owned(),
        ),
    ]
}

#[test]
fn every_rule_compiles_and_the_tables_agree() {
    assert!(RULES.len() <= MAX_RULES);
    assert_eq!(Redactor::rule_names().len(), RULES.len());
    assert_eq!(Redactor::rule_names().last(), Some(&"assigned-secret"));
    let mut unique = Redactor::rule_names().to_vec();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), RULES.len(), "rule names are unique");
    for (index, rule) in RULES.iter().enumerate() {
        assert!(
            rule.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{} is kebab-case",
            rule.name
        );
        assert!(!rule.anchors.is_empty(), "{} has anchors", rule.name);
        if matches!(rule.kind, Kind::Token | Kind::Header) {
            let _ = compiled(index);
        }
    }
    Redactor::warm_up();
}

#[test]
fn rules_are_applied_in_a_fixed_order_with_anthropic_before_openai() {
    let names = Redactor::rule_names();
    let position = |name: &str| names.iter().position(|n| *n == name);
    assert!(position("anthropic-key") < position("openai-key"));
    assert_eq!(names.first(), Some(&"aws-access-key-id"));
    assert_eq!(names.last(), Some(&"assigned-secret"));
    assert!(position("stripe-key") < position("anthropic-key"));
    assert!(position("google-api-key") > position("openai-key"));
}

#[test]
fn one_planted_secret_per_rule_is_gone_and_named() {
    let samples = planted();
    assert_eq!(
        samples.len(),
        16,
        "a sample for each of the first sixteen rules"
    );
    for (rule, text, secret) in samples {
        let (out, report) = redact(&text);
        assert!(!out.contains(&secret), "{rule}: secret survived in {out:?}");
        assert!(
            out.contains(&format!("[redacted:{rule}]")),
            "{rule}: {out:?}"
        );
        assert_eq!(report.rules(), vec![rule], "{rule}: {out:?}");
        assert_eq!(report.count(), 1, "{rule}");
    }
}

#[test]
fn recognised_credentials_are_replaced() {
    let cases = [
        (format!("key = \"{}\"", fake_aws_key()), "aws-access-key-id"),
        (format!("token: {}", fake_github_token()), "github-token"),
        (format!("slack={}", fake_slack_token()), "slack-token"),
        (format!("AIza{}", "B".repeat(35)), "google-api-key"),
        (format!("npm_{}", "c".repeat(36)), "npm-token"),
        (
            "url = postgres://user:sup3rs3cret@host/db".to_owned(),
            "url-credentials",
        ),
        (
            "Authorization: Bearer abcdefghijklmnop".to_owned(),
            "basic-auth-header",
        ),
    ];
    for (text, rule) in cases {
        let (out, report) = redact(&text);
        assert!(report.applied(), "{text}");
        assert!(report.rules().contains(&rule), "{text}");
        assert!(out.contains(&format!("[redacted:{rule}]")), "{out}");
    }
}

#[test]
fn the_secret_itself_does_not_survive() {
    let (out, _) = redact(&format!("AWS_ACCESS_KEY_ID = \"{}\"", fake_aws_key()));
    assert!(!out.contains(&fake_aws_key()));
}

#[test]
fn the_surrounding_context_does_survive() {
    let (out, _) = redact(&format!("AWS_ACCESS_KEY_ID = \"{}\"", fake_aws_key()));
    assert_eq!(out, "AWS_ACCESS_KEY_ID = \"[redacted:aws-access-key-id]\"");
}

#[test]
fn a_url_keeps_its_host() {
    let (out, _) = redact("postgres://demo:hunter2@db.internal:5432/demo");
    assert_eq!(
        out,
        "postgres://demo:[redacted:url-credentials]@db.internal:5432/demo"
    );
}

#[test]
fn a_private_key_block_is_replaced_whole() {
    let block = "-----BEGIN PRIVATE KEY-----\nMIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEA\n-----END PRIVATE KEY-----";
    let (out, report) = redact(&format!("key:\n{block}\ndone"));
    assert_eq!(out, "key:\n[redacted:private-key-block]\ndone");
    assert_eq!(report.count(), 1);
    for kind in ["RSA ", "EC ", "DSA ", "OPENSSH ", "PGP "] {
        let block = format!(
            "-----BEGIN {kind}PRIVATE KEY-----\nabc\n\ndef\n-----END {kind}PRIVATE KEY-----"
        );
        assert_eq!(redact(&block).0, "[redacted:private-key-block]", "{kind}");
    }
    let pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nxyz\n-----END PGP PRIVATE KEY BLOCK-----";
    assert_eq!(redact(pgp).0, "[redacted:private-key-block]");
}

#[test]
fn two_private_key_blocks_are_replaced_separately_and_the_text_between_survives() {
    let one = "-----BEGIN EC PRIVATE KEY-----\naaa\n-----END EC PRIVATE KEY-----";
    let (out, report) = redact(&format!("{one}\nkeep me\n{one}"));
    assert_eq!(
        out,
        "[redacted:private-key-block]\nkeep me\n[redacted:private-key-block]"
    );
    assert_eq!(report.count(), 2);
}

#[test]
fn an_unterminated_private_key_block_is_not_a_match() {
    let text = "-----BEGIN PRIVATE KEY-----\nno end marker";
    assert_eq!(redact(text).1.count(), 0);
}

#[test]
fn documented_placeholders_are_left_alone() {
    for text in [
        r#"API_KEY = "REPLACE_ME""#,
        r#"password = "changeme""#,
        r#"secret = "xxxxxxxxxxxx""#,
        r#"token = "your-api-key""#,
    ] {
        let mut report = RedactionReport::default();
        assert_eq!(
            Redactor::new(true).redact_str(text, &mut report),
            None,
            "{text}"
        );
        assert!(!report.applied());
    }
}

#[test]
fn placeholders_and_masks_are_left_alone_under_prefixed_names() {
    for text in [
        r#"DB_PASSWORD = "xxxxxxxxxxxx""#,
        r#"export STRIPE_SECRET=************"#,
        r#"AWS_SECRET_ACCESS_KEY="<xxxxxxxxxxxxxxx>""#,
        r#"MY_API_KEY = "yourapikeyhere""#,
        "Authorization: Bearer PLACEHOLDER",
        "Authorization: Basic `changeme`",
        "postgres://user:********@host/db",
        "postgres://user:example@host/db",
    ] {
        let (out, report) = redact(text);
        assert_eq!(out, text);
        assert_eq!(report.count(), 0, "{text}");
    }
}

#[test]
fn name_prefixed_assignments_are_caught() {
    let cases = [
        (
            r#"DB_PASSWORD = "hunter2hunter2""#,
            r#"DB_PASSWORD = "[redacted:assigned-secret]""#,
        ),
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY=[redacted:assigned-secret]",
        ),
        (
            "export STRIPE_SECRET=whsec_abcdefghijklmnop",
            "export STRIPE_SECRET=[redacted:assigned-secret]",
        ),
        (
            "app.client-secret: q8Rk2mZp4Lx7Wn3v",
            "app.client-secret: [redacted:assigned-secret]",
        ),
        (
            r#"const dbPassword = "p4ssw0rd-p4ssw0rd";"#,
            r#"const dbPassword = "[redacted:assigned-secret]";"#,
        ),
        (
            r#"awsSecretAccessKey: 'wJalrXUtnFEMIK7MDENG'"#,
            r#"awsSecretAccessKey: '[redacted:assigned-secret]'"#,
        ),
        (
            "MYSQL_ROOT_PASSWD=abcdefghijkl",
            "MYSQL_ROOT_PASSWD=[redacted:assigned-secret]",
        ),
    ];
    for (text, expected) in cases {
        let (out, report) = redact(text);
        assert_eq!(out, expected);
        assert_eq!(report.rules(), vec!["assigned-secret"], "{text}");
    }
}

/// A bare value ends at any control character and at a pipe; what follows
/// cannot make the whole assignment look like something other than a secret.
#[test]
fn a_bare_value_ends_at_any_control_character_and_at_a_pipe() {
    let value = "Q7x0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabc";
    for after in [
        "\u{b}",
        "\u{0}",
        "\u{7f}",
        "\u{1}x",
        "|\u{b}[>\u{4}",
        "\u{c}",
        "|:///3xo",
        "|grep x",
    ] {
        for key in ["secret_access_key:", "(password=", "api_token: "] {
            let text = format!("{key}{value}{after}");
            assert_assignment_hidden(&text, value);
            assert!(redact(&text).0.ends_with(after), "{text:?}");
        }
    }
}

/// `name: Type = value` skips the type; `name: value =` with nothing after
/// the `=` has no type, and the value after the colon is judged.
#[test]
fn a_colon_value_followed_by_a_bare_equals_sign_is_still_the_value() {
    let value = "Q7x0123456789ABCDEFGHIJKLM";
    for text in [
        format!(" api_key: {value} ="),
        format!("api_key: {value} =\nnext = 1"),
        format!("password: {value} =  \r\n"),
    ] {
        assert_assignment_hidden(&text, value);
    }
    let (out, _) = redact(&format!("password: str = \"{value}\""));
    assert_eq!(out, "password: str = \"[redacted:assigned-secret]\"");
    let (out, _) = redact(&format!("password: Optional[str] = \"{value}\""));
    assert_eq!(
        out,
        "password: Optional[str] = \"[redacted:assigned-secret]\""
    );
    // What stands after the colon is not a type when it is shaped like a
    // secret, whatever follows it.
    assert_assignment_hidden(&format!("SecretKey:{value}[UUUU]password = \"x\""), value);
    // Nor when it does not parse as one: dot runs, a `]` never opened, a `?`
    // inside a name.
    for (text, secret) in [
        (
            "{dbPassword:Q7xWW..........................z.....ai]]private_key = \"abc\"]",
            "Q7xWW..........................z.....ai",
        ),
        ("password: Q7xW8mZ2]k = \"abc\"", "Q7xW8mZ2"),
        ("password: Q7x?W8mZ2kp = \"abc\"", "Q7x?W8mZ2kp"),
    ] {
        assert_assignment_hidden(text, secret);
    }
    // Types that do parse: the value after the `=` is the one judged.
    for annotation in [
        "str | None",
        "dict[str, list[int]]",
        "string[]",
        "typing.Final",
        "String?",
        "Optional[str]|None",
    ] {
        assert_assignment_hidden(&format!("password: {annotation} = \"{value}\""), value);
    }
}

/// A bare value that swallows the next key name on its line does not hide
/// that key's own value.
#[test]
fn a_key_name_inside_a_bare_value_still_has_its_value_found() {
    let value = "Q7x0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijk";
    for text in [
        format!("credentials= api_key:'{value}' "),
        format!("password= secret: \"{value}\""),
    ] {
        assert_assignment_hidden(&text, value);
    }
}

#[test]
fn common_secret_assignments_are_caught() {
    for (text, expected) in [
        (
            "password = s3cr3t-v4lu3-xyz",
            "password = [redacted:assigned-secret]",
        ),
        (
            "api-key: 'abcdefghijklmnop'",
            "api-key: '[redacted:assigned-secret]'",
        ),
        (
            "spring.datasource.password=abcdefghijkl",
            "spring.datasource.password=[redacted:assigned-secret]",
        ),
        (
            "SECRET_KEY = \"django-insecure-abcdef\"",
            "SECRET_KEY = \"[redacted:assigned-secret]\"",
        ),
        (
            "secret:=abcdefghijklmn",
            "secret:=[redacted:assigned-secret]",
        ),
    ] {
        assert_eq!(redact(text).0, expected);
    }
}

#[test]
fn assignments_that_are_not_credentials_are_left_alone() {
    for text in [
        "password = abcdefghijk",           // eleven characters
        "password = \"abc def ghi jkl\"",   // the value stops at a blank
        "password_hash = abcdefghijklmnop", // not a key name
        "PASSWORD_RESET_TIMEOUT = 259200",
        "password = ${DB_PASSWORD}",
    ] {
        assert_eq!(redact(text).1.count(), 0, "{text}");
    }
}

#[test]
fn a_rejected_name_does_not_hide_a_later_assignment() {
    // A name ending in a credential word is a credential's name.
    let (out, _) = redact("xpassword=secret=abcdefghijklmnopq");
    assert_eq!(out, "xpassword=[redacted:assigned-secret]");
    let (out, _) = redact("DBPassword = abcdefghijklmnop");
    assert_eq!(out, "DBPassword = [redacted:assigned-secret]");
    let (out, _) = redact("mypassword = abcdefghijklmnop");
    assert_eq!(out, "mypassword = [redacted:assigned-secret]");
    let (out, _) = redact("xpasswordy=1 secret=abcdefghijklmnopq");
    assert_eq!(out, "xpasswordy=1 secret=[redacted:assigned-secret]");
    let (out, _) = redact("mysecret_key=1 client_secret=abcdefghijklmn");
    assert_eq!(
        out,
        "mysecret_key=1 client_secret=[redacted:assigned-secret]"
    );
}

#[test]
fn anthropic_keys_are_named_anthropic_and_openai_keys_openai() {
    let anthropic = ["sk-ant-", "api03-", &"Q".repeat(40)].concat();
    let (out, report) = redact(&format!("ANTHROPIC_API_KEY={anthropic}"));
    assert_eq!(out, "ANTHROPIC_API_KEY=[redacted:anthropic-key]");
    assert_eq!(report.rules(), vec!["anthropic-key"]);

    for openai in [
        ["sk-", &"a1B2".repeat(6)].concat(),
        ["sk-", "proj-", &"a1B2".repeat(10)].concat(),
    ] {
        let (out, report) = redact(&format!("key {openai} end"));
        assert_eq!(out, "key [redacted:openai-key] end");
        assert_eq!(report.rules(), vec!["openai-key"]);
    }
}

#[test]
fn stripe_and_openai_keys_do_not_collide() {
    let stripe = ["sk_test_", &"4eC39HqLyjWDarjt".repeat(2)].concat();
    let (_, report) = redact(&stripe);
    assert_eq!(report.rules(), vec!["stripe-key"]);
}

#[test]
fn plain_source_is_untouched() {
    let source = "def add(a, b):\n    return a + b\n";
    let mut report = RedactionReport::default();
    assert_eq!(Redactor::new(true).redact_str(source, &mut report), None);
    assert_eq!(report.count(), 0);
}

#[test]
fn redaction_reports_what_it_did() {
    let (_, report) = redact(&format!("{} and {}", fake_aws_key(), fake_github_token()));
    assert_eq!(report.count(), 2);
    assert_eq!(report.rules(), vec!["aws-access-key-id", "github-token"]);
    assert_eq!(
        report.to_json(),
        serde_json::json!({"applied": true, "count": 2, "rules": ["aws-access-key-id", "github-token"]})
    );
}

#[test]
fn an_empty_report_says_so() {
    assert_eq!(
        RedactionReport::default().to_json(),
        serde_json::json!({"applied": false, "count": 0, "rules": []})
    );
}

#[test]
fn reports_add_up_and_list_rules_sorted_and_unique() {
    let redactor = Redactor::new(true);
    let mut report = RedactionReport::default();
    for _ in 0..2 {
        redactor.redact_str(&fake_github_token(), &mut report);
        redactor.redact_str(&fake_aws_key(), &mut report);
    }
    assert_eq!(report.count(), 4);
    assert_eq!(report.rules(), vec!["aws-access-key-id", "github-token"]);
    let mut total = RedactionReport::new();
    total.merge(&report);
    total.merge(&report);
    assert_eq!(total.count(), 8);
    assert_eq!(total.rules(), report.rules());
}

#[test]
fn redaction_can_be_disabled_and_then_changes_nothing() {
    let mut report = RedactionReport::default();
    let redactor = Redactor::new(false);
    assert!(!redactor.enabled());
    assert_eq!(redactor.redact_str(&fake_aws_key(), &mut report), None);
    let mut value = serde_json::json!({"k": fake_aws_key()});
    redactor.redact_value(&mut value, &mut report);
    assert_eq!(value, serde_json::json!({"k": fake_aws_key()}));
    assert!(!report.applied());
}

// The rule set is fixed, so a no-op is shown on empty text and on text no rule can match.
#[test]
fn empty_text_and_text_no_rule_matches_are_no_ops() {
    let mut report = RedactionReport::default();
    let redactor = Redactor::new(true);
    assert_eq!(redactor.redact_str("", &mut report), None);
    assert_eq!(redactor.redact_str("fn main() {}\n", &mut report), None);
    assert_eq!(report, RedactionReport::default());
}

#[test]
fn a_match_that_is_only_a_placeholder_returns_none() {
    // The rule set says assigned-secret can match; nothing is replaced.
    let mut report = RedactionReport::default();
    let text = "password = undefined";
    assert_eq!(Redactor::new(true).redact_str(text, &mut report), None);
    let text = "secret = xxxxxxxxxxxxxxxxxxxx";
    assert_eq!(Redactor::new(true).redact_str(text, &mut report), None);
    assert_eq!(report.count(), 0);
}

#[test]
fn redacting_twice_changes_nothing_the_second_time() {
    let mut text = String::new();
    for (_, sample, _) in planted() {
        text.push_str(&sample);
        text.push('\n');
    }
    text.push_str("curl -H 'Authorization: Bearer ");
    text.push_str(&fake_github_token());
    text.push_str("' https://u:");
    text.push_str(&fake_github_token());
    text.push_str("@example.com/\n");
    let (once, first) = redact(&text);
    assert!(first.count() >= 16);
    let mut report = RedactionReport::default();
    assert_eq!(
        Redactor::new(true).redact_str(&once, &mut report),
        None,
        "{once}"
    );
    assert_eq!(report.count(), 0);
    // A secret redacted by an earlier rule is counted once.
    let (out, report) = redact(&format!("https://u:{}@example.com", fake_github_token()));
    assert_eq!(out, "https://u:[redacted:github-token]@example.com");
    assert_eq!(report.count(), 1);
}

// See: fuzz/redact, first, second and sixth findings. The header's token runs
// to the next whitespace, so a second header glued to the first, or a
// later rule's key name, was swallowed into the first token and the second
// token, or the value, left bare.
#[test]
fn r_fuzz_a_header_token_ends_where_the_next_credential_starts() {
    for text in [
        "Authorization:Bearer Q7xabcdefgh)<Authorization:Bearer Q7x012345 .",
        "Authorization: Basic dXNlcjpwYXNz,authorization: bearer Q7x012345",
    ] {
        let (out, report) = redact(text);
        assert!(!out.contains("Q7x012345"), "{out}");
        assert_eq!(report.count(), 2, "{out}");
        assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
    }
    for text in [
        "Authorization:Bearer Q7xabcdefgh[<secret_access_key = \"Q7x0123456789ABCDEF\";)",
        "|AUTHORIZATION:  Bearer Q7xabcde]|dbPassword: Q7x0123456789ABCDEF\"",
    ] {
        let (out, report) = redact(text);
        assert!(!out.contains("Q7x0123456789ABCDEF"), "{out}");
        assert_eq!(report.rules(), ["assigned-secret", "basic-auth-header"]);
        assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
    }
    // An assignment whose value is inside the token is part of it.
    let (out, _) = redact("Authorization: Bearer abc,password=Q7x0123456789ABCDEF end");
    assert_eq!(
        out,
        "Authorization: Bearer [redacted:basic-auth-header] end"
    );
    // A header without a token, then a full one on the next line.
    let (out, _) = redact("Authorization: Bearer\nAuthorization: Bearer Q7x012345abc\n");
    assert_eq!(
        out,
        "Authorization: Bearer\nAuthorization: Bearer [redacted:basic-auth-header]\n"
    );
    // Separated headers, as before.
    let (out, _) = redact("Authorization: Bearer tok1abcdef Authorization: Bearer tok2abcdef");
    assert_eq!(
        out,
        "Authorization: Bearer [redacted:basic-auth-header] Authorization: Bearer [redacted:basic-auth-header]"
    );
}

// See: fuzz/redact, third and fourth findings. An assignment's value may run over
// whitespace into the next assignment's key name, which was then taken
// for the value, and the next value left bare (YAML, below).
#[test]
fn r_fuzz_an_assignment_value_is_not_the_next_key_name() {
    let yaml = "aws:\n  api_key:\n    secret_access_key: \"wJalrXUtnFEMIK7MDENGbPxRfiCY\"\n";
    let (out, report) = redact(yaml);
    assert_eq!(
        out,
        "aws:\n  api_key:\n    secret_access_key: \"[redacted:assigned-secret]\"\n"
    );
    assert_eq!(report.count(), 1);
    assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
    let (out, _) = redact("password=\r\nsecret_access_key = \"Q7xm123456789ABCDEFGHIJ\"");
    assert!(!out.contains("Q7xm123456789ABCDEFGHIJ"), "{out}");
    // A name whose separator is inside the value is part of the value.
    let (out, _) = redact("password=abcdefghijklmnop.api_key=qrstuvwxyz0123");
    assert_eq!(out, "password=[redacted:assigned-secret]");
    // The cut does not depend on what redaction changes (fourth finding:
    // chained camelCase assignments were cut differently the second time).
    let chained = "dbPassword=bPassword=zbPassword=bPassword=Q7x0123456789ABCDEF";
    let (out, _) = redact(chained);
    assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
}

// See: fuzz/redact, fifth finding. An assignment's value swallowed the
// name of a header glued to it, which left that header's token glued to
// the key name before it; a second redaction then replaced the lot.
#[test]
fn r_fuzz_redacting_twice_changes_nothing_even_when_rules_chain() {
    let text = "\nAUTHORIZATION: bearer Q7x0123456789ABCDEFGHIJKLM'\0\0\0``apikey:\"AUTHORIZATION: bearer Q7x0123456789ABCDEFGHIJKLM \0m)";
    let (out, _) = redact(text);
    assert!(!out.contains("Q7x0123456789ABCDEFGHIJKLM"), "{out}");
    assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
}

#[test]
fn every_redaction_token_is_inert() {
    for name in Redactor::rule_names() {
        let token = format!("[redacted:{name}]");
        for text in [
            token.clone(),
            format!("password = {token}"),
            format!("Authorization: Bearer {token}"),
        ] {
            let mut report = RedactionReport::default();
            assert_eq!(
                Redactor::new(true).redact_str(&text, &mut report),
                None,
                "{text}"
            );
        }
    }
}

#[test]
fn later_rules_see_earlier_output() {
    // The github rule replaces the token first; url-credentials then sees a
    // redaction token as the password and leaves it.
    let text = format!("git clone https://x:{}@github.com/o/r", fake_github_token());
    let (out, report) = redact(&text);
    assert_eq!(
        out,
        "git clone https://x:[redacted:github-token]@github.com/o/r"
    );
    assert_eq!(report.rules(), vec!["github-token"]);
    // Both fire when both secrets are there.
    let text = format!("{} postgres://a:hunter22@h/", fake_aws_key());
    assert_eq!(
        redact(&text).1.rules(),
        vec!["aws-access-key-id", "url-credentials"]
    );
}

#[test]
fn word_boundaries_apply() {
    // Provider shapes are word-bounded: an AWS-looking run inside a longer
    // word is not a key.
    for text in [
        format!("X{}", fake_aws_key()),
        format!("{}Z", fake_aws_key()),
        format!("ghp_{}", "a".repeat(300)),
        format!("npm_{}", "c".repeat(37)),
    ] {
        assert_eq!(redact(&text).1.count(), 0, "{text}");
    }
}

#[test]
fn non_ascii_neighbours_do_not_hide_a_secret() {
    for (text, rule) in [
        (format!("é{}é", fake_aws_key()), "aws-access-key-id"),
        (format!("«{}»", fake_github_token()), "github-token"),
        (
            format!("日本{}語", ["glpat-", "abcDEF123_-xyzXYZ789-"].concat()),
            "gitlab-token",
        ),
        (format!("κλειδί AIza{}-ü", "B".repeat(34)), "google-api-key"),
        (
            "пароль: password=abcdefghijklmnopд".to_owned(),
            "assigned-secret",
        ),
    ] {
        let (out, report) = redact(&text);
        assert_eq!(report.rules(), vec![rule], "{text} -> {out}");
    }
}

#[test]
fn whitespace_follows_python() {
    // Python's \s counts U+001C..U+001F and U+2028; a header split by them
    // still has its token redacted.
    let (out, _) = redact("authorization:\u{1F}bearer\u{2028}abcdefghijkl");
    assert_eq!(
        out,
        "authorization:\u{1F}bearer\u{2028}[redacted:basic-auth-header]"
    );
    let (out, _) = redact("AUTHORIZATION : Basic dXNlcjpwYXNz");
    assert_eq!(out, "AUTHORIZATION : Basic [redacted:basic-auth-header]");
}

// The demo project's `src/demo/settings.py`.
#[test]
fn the_settings_fixture_keeps_names_and_placeholders_and_loses_secrets() {
    let settings = format!(
        "'''Settings with a credential nobody meant to commit.'''\n\nAWS_ACCESS_KEY_ID = \"{}\"\nGITHUB_TOKEN = \"{}\"\nAPI_KEY = \"REPLACE_ME\"\nDATABASE_URL = \"postgresql://demo:hunter2@db.internal:5432/demo\"\n",
        fake_aws_key(),
        fake_github_token()
    );
    let (out, report) = redact(&settings);
    assert!(!out.contains(&fake_aws_key()));
    assert!(!out.contains(&fake_github_token()));
    assert!(!out.contains("hunter2"));
    assert!(out.contains("[redacted:aws-access-key-id]"));
    assert!(out.contains("AWS_ACCESS_KEY_ID"));
    assert!(out.contains("db.internal"));
    assert!(out.contains("REPLACE_ME"));
    assert!(report.count() >= 3);
    assert!(report.rules().contains(&"aws-access-key-id"));
    // The README gives applied false.
    let (_, readme) = redact("# Demo\n\nA fixture project.\n");
    assert!(!readme.applied());
}

#[test]
fn nested_values_are_redacted_and_keys_are_not() {
    let token = fake_github_token();
    let mut value = serde_json::json!({
        "nested": {"deep": [{"value": token}, 7, null, true]},
        token.clone(): "the key stays",
        "text": format!("a {} b", fake_aws_key()),
    });
    let mut report = RedactionReport::default();
    Redactor::new(true).redact_value(&mut value, &mut report);
    assert_eq!(
        value["nested"]["deep"][0]["value"],
        "[redacted:github-token]"
    );
    assert_eq!(value[token.as_str()], "the key stays");
    assert_eq!(value["text"], "a [redacted:aws-access-key-id] b");
    assert_eq!(report.count(), 2);
}

#[test]
fn a_search_result_carries_no_credential_in_either_half() {
    // search_code for TOKEN: the matched line is in the fenced text and in
    // matches[].text, so it is counted twice.
    let line = format!("GITHUB_TOKEN = \"{}\"", fake_github_token());
    let mut result = serde_json::json!({
        "content": [{"type": "text", "text": format!("<untrusted-search-results id=0123456789abcdef>\nsrc/demo/settings.py:4:{line}\n</untrusted-search-results id=0123456789abcdef>")}],
        "structuredContent": {"matches": [{"path": "src/demo/settings.py", "line": 4, "text": line}]},
    });
    let mut report = RedactionReport::default();
    Redactor::new(true).redact_value(&mut result, &mut report);
    let rendered = result.to_string();
    assert!(!rendered.contains(&fake_github_token()));
    assert!(rendered.contains("GITHUB_TOKEN"));
    assert_eq!(report.count(), 2);
    assert!(rendered.contains("</untrusted-search-results id=0123456789abcdef>"));
}

#[test]
fn credential_field_names() {
    for name in [
        "bearer_token",
        "Authorization",
        "token",
        "SECRET",
        "password",
        "api_key",
        "API-KEY",
        "github_token",
        "db_password",
        "client_secret",
        "private_key",
        "x-api-key",
        "passwd",
        "ä_key",
    ] {
        assert!(is_credential_field(name), "{name}");
    }
    for name in [
        "method",
        "tool",
        "tokens",
        "keyboard",
        "secretary",
        "_key",
        "",
        "monkey",
        "pässword",
        "é_tokeñ",
    ] {
        assert!(!is_credential_field(name), "{name}");
    }
}

#[test]
fn a_word_cut_by_a_limit_is_dropped() {
    let password = ["S3cret", "Passw0rd"].concat();
    let cut = format!("dsn = \"postgres://app:{password}");
    let n = cut.chars().count();
    assert_eq!(drop_cut_tail(&cut, n), "dsn = \"");
    assert_eq!(drop_cut_tail(&cut, n - 1), "dsn = \"");
    // Shorter than the limit: not cut, kept whole.
    assert_eq!(drop_cut_tail(&cut, n + 1), cut);
    assert_eq!(drop_cut_tail("a(b", 3), "a(");
    assert_eq!(drop_cut_tail("abc", 3), "");
    assert_eq!(drop_cut_tail("ab é", 4), "ab ");
    assert_eq!(drop_cut_tail("", 0), "");
}

#[test]
fn redactor_is_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Redactor>();
    assert_send_sync::<RedactionReport>();
}

#[test]
fn large_inputs_stay_linear() {
    // Adversarial shapes for the assignment search: many rejected names,
    // one long value, and many near-miss private-key headers.
    let pieces = [
        "xpassword=".repeat(50_000),
        format!("password={}", "a".repeat(500_000)),
        "-----BEGIN PRIVATE KEY-----".repeat(20_000),
        "password ".repeat(60_000),
        "_secret=abc ".repeat(40_000),
    ];
    for text in pieces {
        let started = std::time::Instant::now();
        let _ = redact(&text);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{}",
            &text[..20]
        );
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text that can sit next to a secret: anything, ending and starting
    /// with a character that cannot extend the secret's shape.
    fn surrounding() -> impl Strategy<Value = String> {
        ("[ -~\u{a0}-\u{2fff}\n\t]{0,40}", "[ \n\t;,()]")
            .prop_map(|(body, edge)| format!("{body}{edge}"))
    }

    fn surrounding_after() -> impl Strategy<Value = String> {
        ("[ \n\t;,()]", "[ -~\u{a0}-\u{2fff}\n\t]{0,40}")
            .prop_map(|(edge, body)| format!("{edge}{body}"))
    }

    /// A secret of each rule's shape, with its rule name. An assigned value
    /// never starts with `=`: after an `=` that would be the comparison `==`.
    fn secret() -> impl Strategy<Value = (&'static str, String, String)> {
        prop_oneof![
            ("(AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}").prop_map(|s| ("aws-access-key-id", s.clone(), s)),
            ("gh[pousr]_[A-Za-z0-9]{36,80}").prop_map(|s| ("github-token", s.clone(), s)),
            ("github_pat_[A-Za-z0-9_]{60,90}").prop_map(|s| ("github-fine-grained-token", s.clone(), s)),
            ("glpat-[A-Za-z0-9_-]{19,40}[A-Za-z0-9]").prop_map(|s| ("gitlab-token", s.clone(), s)),
            ("xox[abposr]-[A-Za-z0-9-]{9,40}[A-Za-z0-9]").prop_map(|s| ("slack-token", s.clone(), s)),
            ("(sk|rk)_(live|test)_[A-Za-z0-9]{16,40}").prop_map(|s| ("stripe-key", s.clone(), s)),
            ("sk-ant-[A-Za-z0-9_-]{19,60}[A-Za-z0-9]").prop_map(|s| ("anthropic-key", s.clone(), s)),
            ("sk-(proj-)?[B-Zb-z0-9_][A-Za-z0-9_-]{18,60}[A-Za-z0-9]").prop_map(|s| ("openai-key", s.clone(), s)),
            ("AIza[0-9A-Za-z_-]{34}[0-9A-Za-z]").prop_map(|s| ("google-api-key", s.clone(), s)),
            ("npm_[A-Za-z0-9]{36}").prop_map(|s| ("npm-token", s.clone(), s)),
            ("hf_[A-Za-z0-9]{34,60}").prop_map(|s| ("hugging-face-token", s.clone(), s)),
            ("eyJ[A-Za-z0-9_-]{10,30}\\.[A-Za-z0-9_-]{10,30}\\.[A-Za-z0-9_-]{9,40}[A-Za-z0-9]").prop_map(|s| ("jwt", s.clone(), s)),
            ("[A-Za-z0-9+/=\n]{15,200}[0-9]").prop_map(|body| {
                ("private-key-block", format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"), body)
            }),
            ("[a-z][a-z0-9+.-]{0,8}", "[A-Za-z0-9._%!-]{1,12}", "[A-Za-z0-9._%!~*+-]{6,30}[0-9]", "[a-z0-9.-]{1,20}").prop_map(|(scheme, user, pass, host)| {
                ("url-credentials", format!("{scheme}://{user}:{pass}@{host}"), pass)
            }),
            ("(?i:authorization)", "[ \t]{0,3}", "[ \t]{0,3}", "(?i:basic|bearer)", "[ \t]{1,3}", "[!-~]{5,40}[0-9]").prop_map(|(a, s1, s2, kind, s3, token)| {
                ("basic-auth-header", format!("{a}{s1}:{s2}{kind}{s3}{token}"), token)
            }),
            ("([A-Z]{1,8}_)?", "(?i:api_key|secret_key|access_token|auth_token|client_secret|private_key|passwd|password|secret|secret_access_key)", "[ \t]{0,2}[:=][ \t]{0,2}", "[\"']?", "[A-Za-z0-9_+/.~-][A-Za-z0-9_+/.=~-]{10,39}[0-9]").prop_map(|(prefix, name, sep, quote, value)| {
                ("assigned-secret", format!("{prefix}{name}{sep}{quote}{value}{quote}"), value)
            }),
        ]
        .prop_filter("a placeholder, mask, reference or code is exempt by design", |(rule, _, secret)| !exempt_by_design(rule, secret))
            // Key names are read as ASCII: the long s and the Kelvin sign,
            // which fold to `s` and `k`, do not spell a key name.
            .prop_filter("ASCII key names", |(_, shaped, _)| !shaped.contains(['\u{17F}', '\u{212A}']))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn a_planted_secret_never_survives(before in surrounding(), (rule, shaped, secret) in secret(), after in surrounding_after()) {
            let text = format!("{before}{shaped}{after}");
            let (out, report) = redact(&text);
            prop_assert!(!out.contains(&secret), "{rule}: {text:?} -> {out:?}");
            prop_assert!(report.applied());
        }

        #[test]
        fn a_secret_alone_is_named_by_its_rule((rule, shaped, _secret) in secret()) {
            let (out, report) = redact(&shaped);
            prop_assert!(report.rules().contains(&rule), "{rule}: {shaped:?} -> {out:?} {:?}", report.rules());
        }

        #[test]
        fn redaction_is_idempotent(text in "[ -~\n\u{a0}-\u{3ff}]{0,200}", (_r, shaped, _s) in secret()) {
            let (once, _) = redact(&format!("{text}{shaped}{text}"));
            let mut report = RedactionReport::default();
            prop_assert_eq!(Redactor::new(true).redact_str(&once, &mut report), None);
        }

        #[test]
        fn the_joined_prescan_changes_nothing(
            parts in proptest::collection::vec(
                prop_oneof![
                    "[ -~\n\t\u{a0}-\u{3ff}]{0,60}".prop_map(|t| t),
                    secret().prop_map(|(_, shaped, _)| shaped),
                    (surrounding(), secret(), surrounding_after()).prop_map(|(b, (_, s, _), a)| format!("{b}{s}{a}")),
                    "(?i:authorization: bearer|password =|-----BEGIN PRIVATE KEY-----|-----END PRIVATE KEY-----|changeme|\\*{8}|https://u)".prop_map(|t| t),
                ],
                0..8,
            )
        ) {
            let value = Value::Array(parts.iter().cloned().map(Value::String).collect());
            let redactor = Redactor::new(true);
            let (mut fast, mut fast_report) = (value.clone(), RedactionReport::default());
            redactor.redact_value(&mut fast, &mut fast_report);
            let (mut each, mut each_report) = (value, RedactionReport::default());
            redactor.redact_each(&mut each, &mut each_report);
            prop_assert_eq!(fast, each);
            prop_assert_eq!(fast_report.to_json(), each_report.to_json());
        }

        #[test]
        fn the_gate_finds_exactly_the_automatons_hits(
            parts in proptest::collection::vec(
                prop_oneof![
                    "[ -~\n\t\u{a0}-\u{3ff}]{0,12}".prop_map(|t| t),
                    (0..ANCHORS.len(), 0..4_u8, any::<u64>()).prop_map(|(i, case, bits)| recase(ANCHORS[i], case, bits)),
                    (0..ANCHORS.len(), 1..4_usize).prop_map(|(i, cut)| ANCHORS[i][..ANCHORS[i].len().saturating_sub(cut)].to_owned()),
                ],
                0..24,
            )
        ) {
            let text = parts.concat();
            let prefilter = &*PREFILTER;
            let gate = prefilter.gate.as_ref();
            prop_assert!(gate.is_some());
            if let Some(gate) = gate {
                prop_assert_eq!(prefilter.gated_hits(gate, &text), prefilter.automaton_hits(&text));
            }
        }

        #[test]
        fn unchanged_text_is_reported_as_unchanged(text in "\\PC{0,300}") {
            let mut report = RedactionReport::default();
            match Redactor::new(true).redact_str(&text, &mut report) {
                None => prop_assert_eq!(report.count(), 0),
                Some(out) => {
                    prop_assert!(report.count() > 0);
                    prop_assert_ne!(out, text);
                }
            }
        }
    }
}

/// `n` characters cycling through `alphabet`, starting at `seed`.
fn material(alphabet: &str, n: usize, seed: usize) -> String {
    let a = alphabet.as_bytes();
    (0..n)
        .map(|i| a[(seed + i * 7 + i / 3) % a.len()] as char)
        .collect()
}

const HEX: &str = "0123456789abcdef";
const ALNUM: &str = "aB3dE5fG7hJ9kLmN2pQ4rS6tU8vW0xYz";
const UPPER: &str = "ABCDEFGHJKLMNPQRSTUVWXYZ234567";

/// One sample per provider rule beyond the first sixteen: the rule, the
/// secret (built by concatenation so scanners reading this file stay quiet).
fn provider_samples() -> Vec<(&'static str, String)> {
    let m = material;
    vec![
        ("adobe-client-secret", ["p8e-", &m(ALNUM, 32, 1)].concat()),
        (
            "age-secret-key",
            ["AGE-SECRET-KEY-1", &m(UPPER, 58, 2)].concat(),
        ),
        (
            "airtable-token",
            ["pat", &m(ALNUM, 14, 3), ".", &m(HEX, 64, 3)].concat(),
        ),
        ("alibaba-access-key-id", ["LTAI", &m(ALNUM, 20, 4)].concat()),
        ("artifactory-token", ["AKCp", &m(ALNUM, 69, 5)].concat()),
        (
            "atlassian-api-token",
            ["ATATT3", &m(ALNUM, 186, 6)].concat(),
        ),
        ("aws-bedrock-key", ["ABSK", &m(ALNUM, 120, 7)].concat()),
        (
            "azure-ad-client-secret",
            ["abc8Q~", &m(ALNUM, 34, 8)].concat(),
        ),
        (
            "clojars-token",
            [
                "CLOJARS_",
                &m("abcdefghijklmnopqrstuvwxyz0123456789", 60, 9),
            ]
            .concat(),
        ),
        (
            "cloudflare-origin-ca-key",
            ["v1.0-", &m(HEX, 24, 10), "-", &m(HEX, 146, 10)].concat(),
        ),
        ("databricks-token", ["dapi", &m(HEX, 32, 11)].concat()),
        ("digitalocean-token", ["dop_v1_", &m(HEX, 64, 12)].concat()),
        ("doppler-token", ["dp.pt.", &m(ALNUM, 43, 13)].concat()),
        ("dropbox-token", ["sl.", &m(ALNUM, 135, 14)].concat()),
        ("duffel-token", ["duffel_test_", &m(ALNUM, 43, 15)].concat()),
        (
            "dynatrace-token",
            ["dt0c01.", &m(UPPER, 24, 16), ".", &m(UPPER, 64, 16)].concat(),
        ),
        ("easypost-key", ["EZAK", &m(ALNUM, 54, 17)].concat()),
        (
            "facebook-access-token",
            ["EAAC", &m(ALNUM, 120, 18)].concat(),
        ),
        (
            "flutterwave-secret-key",
            ["FLWSECK_TEST-", &m("abcdef0123456789", 32, 19), "-X"].concat(),
        ),
        ("fly-io-token", ["fo1_", &m(ALNUM, 43, 20)].concat()),
        ("frameio-token", ["fio-u-", &m(ALNUM, 64, 21)].concat()),
        (
            "gcp-oauth-client-secret",
            ["GOCSPX-", &m(ALNUM, 28, 22)].concat(),
        ),
        ("google-oauth-token", ["ya29.", &m(ALNUM, 60, 23)].concat()),
        (
            "grafana-token",
            ["glsa_", &m(ALNUM, 32, 24), "_", &m(HEX, 8, 24)].concat(),
        ),
        ("groq-api-key", ["gsk_", &m(ALNUM, 52, 25)].concat()),
        (
            "harness-token",
            [
                "pat.",
                &m(ALNUM, 22, 26),
                ".",
                &m(ALNUM, 24, 26),
                ".",
                &m(ALNUM, 20, 26),
            ]
            .concat(),
        ),
        ("heroku-api-key", ["HRKU-AA", &m(ALNUM, 58, 27)].concat()),
        ("infracost-key", ["ico-", &m(ALNUM, 32, 28)].concat()),
        ("intra42-secret", ["s-s4t2ud-", &m(HEX, 64, 29)].concat()),
        ("linear-api-key", ["lin_api_", &m(ALNUM, 40, 30)].concat()),
        (
            "mailchimp-api-key",
            [m(HEX, 32, 31).as_str(), "-us12"].concat(),
        ),
        ("mailgun-api-key", ["key-", &m(HEX, 32, 32)].concat()),
        (
            "mapbox-secret-token",
            ["sk.eyJ", &m(ALNUM, 60, 33), ".", &m(ALNUM, 22, 33)].concat(),
        ),
        (
            "maxmind-license-key",
            [m(ALNUM, 6, 34).as_str(), "_", &m(ALNUM, 29, 34), "_mmk"].concat(),
        ),
        ("new-relic-key", ["NRAK-", &m(UPPER, 27, 35)].concat()),
        (
            "notion-token",
            ["ntn_", &m("0123456789", 11, 36), &m(ALNUM, 35, 36)].concat(),
        ),
        (
            "octopus-deploy-api-key",
            ["API-", &m(UPPER, 26, 37)].concat(),
        ),
        (
            "onepassword-token",
            ["ops_eyJ", &m(ALNUM, 250, 38)].concat(),
        ),
        ("openshift-token", ["sha256~", &m(ALNUM, 43, 39)].concat()),
        ("perplexity-api-key", ["pplx-", &m(ALNUM, 48, 40)].concat()),
        (
            "planetscale-token",
            ["pscale_tkn_", &m(ALNUM, 43, 41)].concat(),
        ),
        (
            "postman-api-key",
            ["PMAK-", &m(HEX, 24, 42), "-", &m(HEX, 34, 42)].concat(),
        ),
        ("prefect-api-key", ["pnu_", &m(ALNUM, 36, 43)].concat()),
        ("pulumi-token", ["pul-", &m(HEX, 40, 44)].concat()),
        (
            "pypi-token",
            ["pypi-AgEIcHlwaS5vcmc", &m(ALNUM, 70, 45)].concat(),
        ),
        (
            "readme-api-key",
            ["rdme_", &m("abcdefghijklmnopqrstuvwxyz0123456789", 70, 46)].concat(),
        ),
        ("replicate-token", ["r8_", &m(ALNUM, 37, 47)].concat()),
        ("rubygems-api-key", ["rubygems_", &m(HEX, 48, 48)].concat()),
        ("scalingo-token", ["tk-us-", &m(ALNUM, 48, 49)].concat()),
        (
            "sendgrid-api-key",
            ["SG.", &m(ALNUM, 22, 50), ".", &m(ALNUM, 43, 50)].concat(),
        ),
        (
            "sendinblue-api-key",
            ["xkeysib-", &m(HEX, 64, 51), "-", &m(ALNUM, 16, 51)].concat(),
        ),
        ("sentry-token", ["sntryu_", &m(HEX, 64, 52)].concat()),
        (
            "shippo-api-token",
            ["shippo_live_", &m(HEX, 40, 53)].concat(),
        ),
        ("shopify-token", ["shpat_", &m(HEX, 32, 54)].concat()),
        ("sonarqube-token", ["squ_", &m(HEX, 40, 55)].concat()),
        (
            "sourcegraph-token",
            ["sgp_", &m(HEX, 16, 56), "_", &m(HEX, 40, 56)].concat(),
        ),
        ("square-token", ["sq0atp-", &m(ALNUM, 22, 57)].concat()),
        (
            "stripe-webhook-secret",
            ["whsec_", &m(ALNUM, 32, 58)].concat(),
        ),
        (
            "telegram-bot-token",
            ["1234567890", ":AA", &m(ALNUM, 33, 59)].concat(),
        ),
        (
            "terraform-cloud-token",
            [m(ALNUM, 14, 60).as_str(), ".atlasv1.", &m(ALNUM, 67, 60)].concat(),
        ),
        ("twilio-api-key", ["SK", &m(HEX, 32, 61)].concat()),
        (
            "twitter-bearer-token",
            ["A".repeat(22).as_str(), &m(ALNUM, 90, 62)].concat(),
        ),
        ("typeform-token", ["tfp_", &m(ALNUM, 59, 63)].concat()),
        ("vault-token", ["hvs.", &m(ALNUM, 90, 64)].concat()),
        ("xai-api-key", ["xai-", &m(ALNUM, 80, 65)].concat()),
        ("yandex-token", ["AQVN", &m(ALNUM, 36, 66)].concat()),
        (
            "slack-webhook-url",
            [
                "T0",
                &m(UPPER, 8, 67),
                "/B0",
                &m(UPPER, 8, 67),
                "/",
                &m(ALNUM, 24, 67),
            ]
            .concat(),
        ),
        (
            "microsoft-teams-webhook-url",
            [
                m(HEX, 36, 68).as_str(),
                "@",
                &m(HEX, 36, 68),
                "/IncomingWebhook/",
                &m(HEX, 32, 68),
            ]
            .concat(),
        ),
        (
            "discord-webhook-url",
            ["123456789012345678/", &m(ALNUM, 68, 69)].concat(),
        ),
        (
            "plaid-access-token",
            [
                "access-sandbox-",
                &material(HEX, 8, 71),
                "-",
                &material(HEX, 4, 71),
                "-",
                &material(HEX, 4, 72),
                "-",
                &material(HEX, 4, 73),
                "-",
                &material(HEX, 12, 74),
            ]
            .concat(),
        ),
        (
            "azure-sas-signature",
            [m(ALNUM, 43, 70).as_str(), "%3D"].concat(),
        ),
    ]
}

/// The line a provider sample sits in; webhook URLs and SAS signatures
/// carry their host or parameter.
fn provider_line(rule: &str, secret: &str) -> String {
    match rule {
        "slack-webhook-url" => format!("url = \"https://hooks.slack.com/services/{secret}\""),
        "microsoft-teams-webhook-url" => {
            format!("TEAMS = 'https://acme.webhook.office.com/webhookb2/{secret}'")
        }
        "discord-webhook-url" => format!("hook: https://discord.com/api/webhooks/{secret}"),
        "azure-sas-signature" => {
            format!("blob = \"https://a.blob.core.windows.net/c?sv=2021&sr=b&sig={secret}\"")
        }
        _ => format!("client = Client(\"{secret}\")"),
    }
}

#[test]
fn every_provider_rule_has_a_sample_that_it_redacts_and_names() {
    let samples = provider_samples();
    for (rule, secret) in &samples {
        let line = provider_line(rule, secret);
        let (out, report) = redact(&line);
        assert!(!out.contains(secret.as_str()), "{rule}: {line} -> {out}");
        assert_eq!(report.rules(), vec![*rule], "{rule}: {line} -> {out}");
    }
    // Every token rule of the table has a sample here or in `planted`.
    let named: Vec<&str> = samples
        .iter()
        .map(|(r, _)| *r)
        .chain(planted().iter().map(|(r, _, _)| *r))
        .collect();
    for rule in RULES {
        if rule.kind == Kind::Token {
            assert!(
                named.contains(&rule.name)
                    || ["curl-credentials", "netrc-password"].contains(&rule.name),
                "no sample for {}",
                rule.name
            );
        }
    }
}

#[test]
fn provider_near_misses_are_left_alone() {
    for text in [
        // Glued to a word: not a token.
        format!("x{}", ["dop_v1_", &material(HEX, 64, 1)].concat()),
        // Too short.
        ["shpat_", &material(HEX, 20, 1)].concat(),
        ["SG.", "abc.def"].concat(),
        ["pul-", "abc"].concat(),
        // Wrong case for a case-sensitive prefix.
        ["sk", &material(HEX, 32, 1)].concat(),
        // Ordinary identifiers that share an anchor.
        "task_struct *tsk = sk_alloc(net);".to_owned(),
        "let api = client.key_name(); // AIDA".to_owned(),
        "static int pat_enabled; struct sk_buff *skb;".to_owned(),
    ] {
        let (out, report) = redact(&text);
        assert_eq!(report.count(), 0, "{text} -> {out}");
    }
}

/// Assignments of `secret` in every common syntax.
fn assignment_shapes(secret: &str) -> Vec<String> {
    vec![
        format!("API_TOKEN = \"{secret}\""),
        format!("DB_PASSWORD={secret}"),
        format!("export DB_PASSWORD='{secret}'"),
        format!("{{\"password\": \"{secret}\"}}"),
        format!("{{\"auth\":{{\"token\":\"{secret}\"}}}}"),
        format!("password: \"{secret}\""),
        format!("  db_pass: {secret}"),
        format!("creds = {{'password': '{secret}'}}"),
        format!("config['api_key'] = '{secret}'"),
        format!("token := \"{secret}\""),
        format!("$db_password = '{secret}';"),
        format!("'secret' => '{secret}',"),
        format!(":client_secret => \"{secret}\""),
        format!("client_secret: {secret}"),
        format!("private_key = \"{secret}\""),
        format!("[database]\npasswd = \"{secret}\""),
        format!("<password>{secret}</password>"),
        format!("<add key=\"x\" password=\"{secret}\"/>"),
        format!("mysqldump --password {secret} db"),
        format!("app --api-token={secret}"),
        format!("const apiToken = `{secret}`;"),
        format!("self.secret_key = \"{secret}\""),
        format!("props.put(\"password\", \"{secret}\");"),
        format!("password: str = \"{secret}\""),
        format!("  passwd: {secret}=x"),
        format!("X-Api-Key: {secret}"),
        format!("Server=db;Database=app;User Id=sa;Password={secret};"),
        format!("jdbc:mysql://db:3306/app?user=app&password={secret}&ssl=true"),
        format!("SPRING_DATASOURCE_PASSWORD={secret}"),
        format!("credential = \"{secret}\""),
        format!("pwd=\"{secret}\""),
    ]
}

#[test]
fn assignments_in_every_common_syntax_are_redacted() {
    for secret in [
        "Zq8wLk2mPx7nRt4vYb3cD9",
        "S3cr3t!Passw0rd",
        "p@ss:w0rd#42",
        "hunter2",
    ] {
        for text in assignment_shapes(secret) {
            // `hunter2` is too short for an unquoted value.
            if secret == "hunter2" && !text.contains("\"hunter2") && !text.contains("'hunter2") {
                continue;
            }
            let (out, report) = redact(&text);
            assert!(!out.contains(secret), "{text} -> {out}");
            assert_eq!(report.rules(), vec!["assigned-secret"], "{text} -> {out}");
            assert_eq!(redact(&out).1.count(), 0, "again: {out}");
        }
    }
}

#[test]
fn the_key_name_and_syntax_survive() {
    let (out, _) = redact("DB_PASSWORD=S3cr3t!Passw0rd");
    assert_eq!(out, "DB_PASSWORD=[redacted:assigned-secret]");
    let (out, _) = redact("{\"password\": \"S3cr3t!Passw0rd\", \"user\": \"app\"}");
    assert_eq!(
        out,
        "{\"password\": \"[redacted:assigned-secret]\", \"user\": \"app\"}"
    );
    let (out, _) = redact("token := \"Zq8wLk2mPx7nRt4vYb3cD9\"");
    assert_eq!(out, "token := \"[redacted:assigned-secret]\"");
}

#[test]
fn documentation_tags_and_member_access_are_not_secrets() {
    // Lines of the Linux tree the assignment rule once took for secrets.
    for text in [
        " * @bus_token: domain-specific data",
        " * @private_key:\tpregenerated private key for the given curve",
        " * @NL80211_ATTR_TDLS_DIALOG_TOKEN: Non-zero token for uniquely identifying a",
        "\t\t__entry->xdp_pass\t= xdp_stats->pass;",
        "\tpassword = ctx->auth->password;",
        "\t\tpass = jit_data->pass + 1;",
        "\tmsk->token = subflow_req->token;",
    ] {
        let (out, report) = redact(text);
        assert_eq!(out, text, "{text:?}");
        assert_eq!(report.count(), 0, "{text:?}");
    }
    // Near misses: a value alone after a tag (or before a comment), a tag
    // with `=`.
    assert_assignment_hidden(
        " * @token: Zq8wLk2mPx7nRt4vYb3cD9",
        "Zq8wLk2mPx7nRt4vYb3cD9",
    );
    assert_assignment_hidden("@password = 'S3cr3t!Passw0rd'", "S3cr3t!Passw0rd");
    assert_assignment_hidden("token = Zq8wLk2mPx7nRt4vYb3cD9;", "Zq8wLk2mPx7nRt4vYb3cD9");
    assert_assignment_hidden(
        " * @token: Zq8wLk2mPx7nRt4vYb3cD9 # rotate yearly",
        "Zq8wLk2mPx7nRt4vYb3cD9",
    );
}

#[test]
fn placeholders_references_and_code_are_not_secrets() {
    for text in [
        "password = \"changeme\"",
        "API_TOKEN = \"xxxxxxxxxxxxxxxx\"",
        "DB_PASSWORD=${DB_PASSWORD}",
        "token: \"<your-token>\"",
        "api_key = \"your-api-key-here\"",
        "password = \"example-password-1\"",
        "SECRET_KEY = os.environ[\"SECRET_KEY\"]",
        "password = os.environ.get('DB_PASSWORD')",
        "token = process.env.GITHUB_TOKEN",
        "password = get_password()",
        "token = self.token",
        "token = tokens[0];",
        "secret = secrets.token_hex(32)",
        "password = None",
        "token = next_token",
        "token = nextToken;",
        "api_key = settings.API_KEY",
        "password: ${{ secrets.DB_PASSWORD }}",
        "password: '{{ vault_db_password }}'",
        "password = \"password\"",
        "password = \"test123\"",
        "token_type = \"bearer\"",
        "TOKEN_KEY = \"access_token\"",
        "GITHUB_TOKEN_ENV = \"GITHUB_TOKEN\"",
        "password_field = \"passwordConfirmation\"",
        "max_tokens = 4096",
        "private_key_path = \"/etc/ssl/private/server.key\"",
        "private_key = \"keys/server.pem\"",
        "let token = lexer.next_token()?;",
        "auth = HTTPBasicAuth(user, password)",
        "password: string;",
        "error(\"invalid password: please try again\")",
        "PASSWORD_RESET_TIMEOUT = 259200",
        "password = \"********\"",
        "secret: !Ref DbSecret",
        "pass",
        "struct key *key = key_ref_to_ptr(key_ref);",
    ] {
        let (out, report) = redact(text);
        assert_eq!(report.count(), 0, "{text} -> {out}");
    }
}

#[test]
fn a_value_on_the_next_line_is_redacted() {
    for (text, secret) in [
        ("password:\n  S3cr3t!Passw0rd\n", "S3cr3t!Passw0rd"),
        (
            "db:\n  password:\n    \"Zq8wLk2mPx7nRt4vYb3cD9\"\n",
            "Zq8wLk2mPx7nRt4vYb3cD9",
        ),
        (
            "API_TOKEN = \\\n    'Zq8wLk2mPx7nRt4vYb3cD9'\n",
            "Zq8wLk2mPx7nRt4vYb3cD9",
        ),
        ("password =\r\n  S3cr3t!Passw0rd\r\n", "S3cr3t!Passw0rd"),
    ] {
        let (out, report) = redact(text);
        assert!(!out.contains(secret), "{text:?} -> {out:?}");
        assert_eq!(report.rules(), vec!["assigned-secret"]);
    }
    // The next key is not a value.
    let (out, report) = redact("password:\n  user: admin\n");
    assert_eq!(report.count(), 0, "{out}");
    let (_, report) = redact("if password:\n    return check(password)\n");
    assert_eq!(report.count(), 0);
}

#[test]
fn a_yaml_block_scalar_under_a_secret_key_is_redacted_whole() {
    let text = "tls:\n  private_key: |\n    MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n    BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n\n    MIIEvQIBADANBgkqhkiG9w0BAQEFAASD\n  cert_file: /etc/tls.crt\n";
    let (out, report) = redact(text);
    assert_eq!(
        out,
        "tls:\n  private_key: |\n    [redacted:assigned-secret]\n  cert_file: /etc/tls.crt\n"
    );
    assert_eq!(report.count(), 1);
    let text = "secret: >-\n  Zq8wLk2mPx7nRt4v\n  Yb3cD9S3cr3t\nnext: 1\n";
    let (out, _) = redact(text);
    assert_eq!(out, "secret: >-\n  [redacted:assigned-secret]\nnext: 1\n");
}

#[test]
fn a_header_split_across_lines_loses_its_token() {
    let (out, report) = redact("Authorization: Bearer\n  Zq8wLk2mPx7nRt4vYb3cD9\n");
    assert_eq!(
        out,
        "Authorization: Bearer\n  [redacted:basic-auth-header]\n"
    );
    assert_eq!(report.rules(), vec!["basic-auth-header"]);
    let (out, _) = redact("headers = {\"Authorization\": \"Bearer Zq8wLk2mPx7nRt4vYb3cD9\"}");
    assert!(!out.contains("Zq8wLk2mPx7nRt4vYb3cD9"), "{out}");
    let (out, report) = redact("headers = {\"Authorization\": \"Bearer \" + token}");
    assert_eq!(report.count(), 0, "{out}");
    let (_, report) = redact("curl -H \"Authorization: Bearer $TOKEN\" https://api");
    assert_eq!(report.count(), 0);
}

#[test]
fn url_credentials_of_every_form() {
    for (text, secret) in [
        ("redis://:S3cr3tPw@cache:6379/0", "S3cr3tPw"),
        ("redis://:pw@host", "pw"),
        ("postgres://app:p@ss@w0rd@db.internal:5432/app", "p@ss@w0rd"),
        (
            "mongodb+srv://admin:S3cr3t!Pw@cluster0.mongodb.net/db",
            "S3cr3t!Pw",
        ),
        ("amqp://guest:Gu3st-Pw@rabbit:5672/", "Gu3st-Pw"),
        ("mysql://root:ab/cd+ef@db/app", "ab/cd+ef"),
        ("https://user:tok3n@example.com/path/@me", "tok3n"),
        ("DATABASE_URL=postgresql://u:hunter2@h/db", "hunter2"),
    ] {
        let (out, report) = redact(text);
        assert!(!out.contains(secret), "{text} -> {out}");
        assert!(
            report.rules().contains(&"url-credentials"),
            "{text} -> {out}"
        );
    }
    let (out, _) = redact("postgres://app:p@ss@w0rd@db.internal:5432/app");
    assert_eq!(
        out,
        "postgres://app:[redacted:url-credentials]@db.internal:5432/app"
    );
    for text in [
        "http://localhost:8080/api/users/@me",
        "https://example.com/a:b",
        "postgres://app:${DB_PASSWORD}@db/app",
        "ssh://git@github.com:22/org/repo",
    ] {
        assert_eq!(redact(text).1.count(), 0, "{text}");
    }
}

#[test]
fn every_private_key_armor_is_redacted() {
    let body = "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI";
    for label in [
        "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "DSA PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
        "ANY PRIVATE KEY",
    ] {
        let text = format!("x\n-----BEGIN {label}-----\n{body}\n-----END {label}-----\ny");
        let (out, report) = redact(&text);
        assert_eq!(out, "x\n[redacted:private-key-block]\ny", "{label}");
        assert_eq!(report.count(), 1);
    }
    // Armor headers (legacy encrypted PEM, PGP) are inside the block.
    let text = format!(
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123\n\n{body}\n-----END RSA PRIVATE KEY-----"
    );
    assert_eq!(redact(&text).0, "[redacted:private-key-block]");
    // SSH2.
    let text = format!(
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"k\"\n{body}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    );
    assert_eq!(redact(&text).0, "[redacted:private-key-block]");
    // Inside a JSON string (a cloud service-account file).
    let text = format!(
        "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n\"}}"
    );
    let (out, _) = redact(&text);
    assert!(!out.contains(body), "{out}");
    // Cut short (no END line): the base64 lines are still the secret.
    let text = format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n{body}");
    let (out, _) = redact(&text);
    assert_eq!(out, "[redacted:private-key-block]");
    // A public key or certificate is not a secret.
    let text = format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----");
    assert_eq!(redact(&text).1.count(), 0);
}

#[test]
fn a_putty_key_loses_its_private_lines() {
    let text = "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAB3NzaC1yc2EAAAABJQAAAQEA\nPrivate-Lines: 2\nAAABAQCkp9d0p1kQ2X4v7nAbCdEf\nGhIjKlMnOpQrStUvWxYz01234567\nPrivate-MAC: 0123456789abcdef0123456789abcdef01234567\n";
    let (out, report) = redact(text);
    assert!(!out.contains("AAABAQCkp9d0p1kQ2X4v7nAbCdEf"), "{out}");
    assert!(
        !out.contains("0123456789abcdef0123456789abcdef01234567"),
        "{out}"
    );
    assert!(
        out.contains("AAAAB3NzaC1yc2EAAAABJQAAAQEA"),
        "the public half stays"
    );
    assert_eq!(report.rules(), vec!["putty-private-key"]);
}

#[test]
fn curl_and_netrc_credentials() {
    let (out, _) = redact("curl -u admin:S3cr3tPw https://api");
    assert_eq!(out, "curl -u admin:[redacted:curl-credentials] https://api");
    let (out, _) = redact("machine api.example.com login bob password S3cr3tPw");
    assert_eq!(
        out,
        "machine api.example.com login bob password [redacted:netrc-password]"
    );
}

#[test]
fn spans_say_where_the_secrets_of_the_raw_text_are() {
    let text = "a = 1\nDB_PASSWORD=S3cr3t!Passw0rd\nurl = redis://:pw@h\n";
    let spans = Redactor::new(true).redact_spans(text);
    let taken: Vec<(&str, &str)> = spans
        .iter()
        .map(|s| (s.rule, &text[s.range.clone()]))
        .collect();
    assert_eq!(
        taken,
        vec![
            ("assigned-secret", "S3cr3t!Passw0rd"),
            ("url-credentials", "pw")
        ]
    );
    assert!(Redactor::new(false).redact_spans(text).is_empty());
}

/// Every rule's anchors, as written.
static ANCHORS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    RULES
        .iter()
        .flat_map(|rule| rule.anchors.iter().copied())
        .collect()
});

/// `anchor` as written (0), lower-cased (1), upper-cased (2) or with the
/// case of each letter taken from `bits` (3).
fn recase(anchor: &str, case: u8, bits: u64) -> String {
    match case {
        0 => anchor.to_owned(),
        1 => anchor.to_ascii_lowercase(),
        2 => anchor.to_ascii_uppercase(),
        _ => anchor
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if bits >> (i % 64) & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect(),
    }
}

#[test]
fn the_gate_sees_anchors_across_the_walks_lane_and_block_boundaries() {
    let prefilter = &*PREFILTER;
    let Some(gate) = prefilter.gate.as_ref() else {
        panic!("the gate builds");
    };
    // The walk's lanes are 2 KiB, its blocks 16 KiB, each started 32 bytes
    // early; an anchor is placed across each kind of seam, in three cases.
    for seam in [32 + 2048, 32 + 16384, 32 + 16384 + 7 * 2048] {
        for anchor in ANCHORS.iter() {
            for shift in 0..anchor.len() + 1 {
                for case in 0..3 {
                    let pad = "x ".repeat(seam + 17_000);
                    let text = format!(
                        "{}{}{}",
                        &pad[..seam - shift],
                        recase(anchor, case, 0),
                        &pad[..17_000]
                    );
                    let hits = prefilter.gated_hits(gate, &text);
                    assert_eq!(hits, prefilter.automaton_hits(&text), "{anchor} {shift}");
                }
            }
        }
    }
}

#[test]
fn a_value_whose_dashes_run_into_a_closing_bracket_is_hidden() {
    // `->` continues a value only as member access (a name follows it).
    let value = "Q7x.S0---------------------";
    let (out, _) = redact(&format!(">dbPassword:{value}->&\0"));
    assert!(!out.contains(value), "{out:?}");
    let value = "Q7x.Km1-----";
    let (out, _) = redact(&format!("<SecretKey:{value}->f x"));
    assert!(!out.contains(value), "{out:?}");
    let (out, _) = redact("token = self->session->token_value_here;");
    assert!(out.contains("self->session->token_value_here"), "{out:?}");
}

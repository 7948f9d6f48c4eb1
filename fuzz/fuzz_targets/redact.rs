//! Redaction (`broker::redact::Redactor`): secrets of every rule's shape,
//! planted in arbitrary surrounding text.
//!
//! Properties:
//! * the redacted text never contains the secret part of a planted secret
//!   (whatever surrounds it, as long as a separator stands between them, as
//!   the rules' word boundaries require);
//! * redaction is idempotent: redacting the output again changes nothing;
//! * a report that counts nothing means the text came back unchanged.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use moat_broker::redact::{RedactionReport, Redactor, exempt_by_design};

/// The rule each `Plant::rule % 16` plants a secret for.
const RULES: [&str; 16] = [
    "aws-access-key-id",
    "github-token",
    "github-fine-grained-token",
    "gitlab-token",
    "slack-token",
    "stripe-key",
    "anthropic-key",
    "openai-key",
    "google-api-key",
    "npm-token",
    "hugging-face-token",
    "jwt",
    "private-key-block",
    "url-credentials",
    "basic-auth-header",
    "assigned-secret",
];

const UPPER_DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ALNUM_US: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";
const ALNUM_US_DASH: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-";
const ALNUM_DASH: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-";
const VALUE: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_+/.=~-";
const PASSWORD: &[u8] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&*+,.;=?^_~-";
const BASE64: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/=\n";
/// What may stand between a planted secret and the text around it.
const SEPARATORS: &[&str] = &[
    " ", "\n", "\t", "\r\n", "\"", "'", "`", "(", ")", ",", ";", "<", ">", "[", "]", "{", "}", "|",
];

#[derive(Arbitrary, Debug)]
struct Plant {
    rule: u8,
    /// Picks among the rule's prefixes and variants.
    variant: u8,
    /// Extra length, within the rule's bounds.
    extra: u8,
    /// The random material of the secret.
    material: Vec<u8>,
    before: u8,
    after: u8,
}

#[derive(Arbitrary, Debug)]
struct Input {
    pieces: Vec<(String, Option<Plant>)>,
    tail: String,
}

/// `len` characters from `alphabet`, drawn from `material`, opened by three
/// fixed distinct characters of the alphabet so the secret is never a mask
/// (fewer than three distinct characters) or a documented placeholder.
///
/// A shape that ends in a word boundary cannot end in `-` (nor can a real
/// token): a trailing `-` becomes `Z`.
fn draw(alphabet: &[u8], material: &[u8], len: usize) -> String {
    let mut out = draw_any(alphabet, material, len);
    if out.ends_with('-') {
        out.pop();
        out.push('Z');
    }
    out
}

fn draw_any(alphabet: &[u8], material: &[u8], len: usize) -> String {
    let fixed: Vec<u8> = [b'Q', b'7', b'x', b'K', b'2']
        .into_iter()
        .filter(|c| alphabet.contains(c))
        .take(3)
        .collect();
    let mut out: Vec<u8> = fixed.iter().copied().take(len).collect();
    let mut i = 0;
    while out.len() < len {
        let b = material.get(i).copied().unwrap_or(i as u8);
        out.push(alphabet[usize::from(b) % alphabet.len()]);
        i += 1;
    }
    String::from_utf8(out).expect("alphabets are ASCII")
}

fn pick<'a>(options: &[&'a str], n: u8) -> &'a str {
    options[usize::from(n) % options.len()]
}

/// The whole planted text, and the part of it that must not survive.
fn plant(p: &Plant) -> (String, String) {
    let m = &p.material;
    let extra = usize::from(p.extra);
    let v = p.variant;
    let whole = |s: String| (s.clone(), s);
    match p.rule % 16 {
        0 => whole(format!(
            "{}{}",
            pick(&["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"], v),
            draw(UPPER_DIGITS, m, 16)
        )),
        1 => whole(format!(
            "gh{}_{}",
            pick(&["p", "o", "u", "s", "r"], v),
            draw(ALNUM, m, 36 + extra % 40)
        )),
        2 => whole(format!("github_pat_{}", draw(ALNUM_US, m, 60 + extra % 30))),
        3 => whole(format!("glpat-{}", draw(ALNUM_US_DASH, m, 20 + extra % 30))),
        4 => whole(format!(
            "xox{}-{}",
            pick(&["a", "b", "p", "o", "s", "r"], v),
            draw(ALNUM_DASH, m, 10 + extra % 30)
        )),
        5 => whole(format!(
            "{}_{}_{}",
            pick(&["sk", "rk"], v),
            pick(&["live", "test"], v / 2),
            draw(ALNUM, m, 16 + extra % 30)
        )),
        6 => whole(format!(
            "sk-ant-{}",
            draw(ALNUM_US_DASH, m, 20 + extra % 30)
        )),
        7 => whole(format!(
            "sk-{}{}",
            pick(&["", "proj-"], v),
            draw(ALNUM_US_DASH, m, 20 + extra % 30)
        )),
        8 => whole(format!("AIza{}", draw(ALNUM_US_DASH, m, 35))),
        9 => whole(format!("npm_{}", draw(ALNUM, m, 36))),
        10 => whole(format!("hf_{}", draw(ALNUM, m, 34 + extra % 20))),
        11 => whole(format!(
            "eyJ{}.{}.{}",
            draw(ALNUM_US_DASH, m, 10 + extra % 20),
            draw(
                ALNUM_US_DASH,
                m.get(7..).unwrap_or_default(),
                10 + extra % 7
            ),
            draw(
                ALNUM_US_DASH,
                m.get(13..).unwrap_or_default(),
                10 + extra % 11
            )
        )),
        12 => {
            let kind = pick(&["", "RSA ", "EC ", "DSA ", "OPENSSH ", "PGP "], v);
            let block = if v % 7 == 3 { " BLOCK" } else { "" };
            let body = draw_any(BASE64, m, 12 + extra);
            (
                format!(
                    "-----BEGIN {kind}PRIVATE KEY{block}-----\n{body}\n-----END {kind}PRIVATE KEY{block}-----"
                ),
                body,
            )
        }
        13 => {
            let password = draw_any(PASSWORD, m, 6 + extra % 20);
            (
                format!(
                    "{}://{}:{password}@db.example.com",
                    pick(&["https", "postgres", "redis", "mongodb+srv", "amqp"], v),
                    pick(&["admin", "user", "u.name", "x"], v / 8)
                ),
                password,
            )
        }
        14 => {
            let token = draw_any(VALUE, m, 8 + extra % 40);
            (
                format!(
                    "{}:{}{} {token}",
                    pick(&["Authorization", "authorization", "AUTHORIZATION"], v),
                    pick(&["", " ", "  "], v / 4),
                    pick(&["Bearer", "Basic", "bearer"], v / 16)
                ),
                token,
            )
        }
        _ => {
            let value = draw_any(VALUE, m, 12 + extra % 40);
            let quote = pick(&["", "\"", "'"], v / 32);
            (
                format!(
                    "{}{}{quote}{value}{quote}",
                    pick(
                        &[
                            "api_key",
                            "API-KEY",
                            "apikey",
                            "secret_access_key",
                            "secret",
                            "password",
                            "DB_PASSWORD",
                            "passwd",
                            "client_secret",
                            "auth_token",
                            "access-token",
                            "private_key",
                            "dbPassword",
                            "SecretKey",
                        ],
                        v
                    ),
                    pick(&["=", ": ", " = ", ":"], v / 14),
                ),
                value,
            )
        }
    }
}

fuzz_target!(|input: Input| {
    let mut text = String::new();
    // Each planted secret, and where its whole planted text lies.
    let mut planted = Vec::new();
    for (surrounding, plant_here) in &input.pieces {
        text.push_str(surrounding);
        if let Some(p) = plant_here {
            let (whole, secret) = plant(p);
            text.push_str(pick(SEPARATORS, p.before));
            let start = text.len();
            text.push_str(&whole);
            // A value the rule leaves alone by design (a placeholder, a
            // reference, a value that reads as code) is not checked.
            if !exempt_by_design(RULES[usize::from(p.rule % 16)], &secret) {
                planted.push((secret, start..text.len()));
            }
            text.push_str(pick(SEPARATORS, p.after));
        }
    }
    text.push_str(&input.tail);

    let redactor = Redactor::new(true);
    let mut report = RedactionReport::new();
    let once = redactor.redact_str(&text, &mut report);
    let out = once.as_deref().unwrap_or(&text);
    if report.count() == 0 {
        assert!(once.is_none(), "text changed without a replacement");
    }
    // The surrounding text is arbitrary: the same characters glued to other
    // text elsewhere are not a shape and may rightly stay. Only check secrets
    // that the text without this plant does not hold.
    for (secret, range) in &planted {
        let without = [&text[..range.start], &text[range.end..]].join("\u{0}");
        if without.contains(secret.as_str()) {
            continue;
        }
        assert!(
            !out.contains(secret.as_str()),
            "planted secret {secret:?} survived in {out:?}"
        );
    }
    let mut again = RedactionReport::new();
    let twice = redactor.redact_str(out, &mut again);
    assert!(
        twice.is_none(),
        "redacting again changed {out:?} into {twice:?} ({:?})",
        again.rules()
    );
});

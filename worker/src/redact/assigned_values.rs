//! `assigned-secret`'s values: whether the value assigned to a secret-named
//! key is a credential.
//!
//! A value is a credential unless it reads as something else: a placeholder
//! (`changeme`, `<your-token>`, `xxxx`, anything with `example`), a
//! reference (`${VAR}`, `$VAR`, `os.environ[…]`, `{{ secrets.X }}`), a call or
//! expression (`get_password()`, `self.token`, `tokens[0]`), a path or URL,
//! an identifier (`next_token`, `accessToken`, `GITHUB_TOKEN`), a word
//! shorter than 12 letters, or an obvious test value (`test123`). A quoted
//! value is judged more readily a credential than a bare one: quotes end it
//! where the syntax says, while a bare value may be code.

use super::exempt::is_exempt;

/// Values that are test values, not credentials.
const TEST_VALUES: [&str; 24] = [
    "password",
    "password1",
    "password123",
    "passw0rd",
    "secret",
    "secret123",
    "admin",
    "admin123",
    "root",
    "test",
    "test123",
    "test1234",
    "testing",
    "testing123",
    "123456",
    "1234567",
    "12345678",
    "123456789",
    "qwerty",
    "letmein",
    "foobar",
    "abc123",
    "abcdef",
    "pass123",
];

/// Parts that mark a value as documentation (compared lower-cased).
const PLACEHOLDER_PARTS: [&str; 26] = [
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourpass",
    "yoursecret",
    "yourtoken",
    "yourkey",
    "replace_",
    "replace-",
    "replaceme",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "...",
    "redacted",
    "fake",
    "insert_",
    "insert-",
    "notreal",
    "not_real",
    "not-real",
];

/// Parts that mark a value as a reference to something else.
const REFERENCE_PARTS: [&str; 18] = [
    "${",
    "{{",
    "}}",
    "#{",
    "%(",
    "<%",
    "{}",
    "{0",
    "()",
    "::",
    "->",
    "os.environ",
    "process.env",
    "getenv",
    "environ[",
    "env(",
    "env[",
    "secrets.",
];

/// ASCII case-insensitive `ends_with`.
fn ends_with_ci(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text.as_bytes()[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Whether `value`, assigned to a key whose credential word is `word`, is a
/// credential rather than a placeholder, a reference, code or a test value.
pub(super) fn value_is_secret(value: &str, quoted: bool, word: &str) -> bool {
    let chars = value.chars().count();
    if chars < if quoted { 6 } else { 8 } {
        return false;
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control())
        || is_exempt(value)
        || value.contains("[redacted:")
    {
        return false;
    }
    let lower = value.to_lowercase();
    // A placeholder word marks a short value, or one it opens
    // (`example-password-1`, `your-api-key-here`), not long random material
    // that happens to hold it.
    let placeholder = PLACEHOLDER_PARTS
        .iter()
        .any(|part| lower.starts_with(part) || (chars < 20 && lower.contains(part)));
    // The key's own word, alone or with a few characters (`password123`).
    let own_word = word.len() >= 4 && lower.starts_with(word) && chars <= word.len() + 4;
    if TEST_VALUES.contains(&lower.as_str())
        || placeholder
        || own_word
        || REFERENCE_PARTS.iter().any(|part| lower.contains(part))
    {
        return false;
    }
    let first = value.as_bytes()[0];
    if matches!(first, b'$' | b'%' | b'<' | b'{' | b'!' | b'&' | b'*') || (!quoted && first == b'@')
    {
        return false;
    }
    if is_path_or_url(value) {
        return false;
    }
    let shape = Shape::of(value);
    if quoted {
        quoted_is_secret(value, &shape)
    } else {
        bare_is_secret(value, &shape)
    }
}

/// Whether `value` is a file path or a URL.
fn is_path_or_url(value: &str) -> bool {
    const FILES: [&str; 16] = [
        ".pem",
        ".key",
        ".json",
        ".txt",
        ".crt",
        ".p12",
        ".pfx",
        ".yaml",
        ".yml",
        ".env",
        ".gpg",
        ".asc",
        ".der",
        ".jks",
        ".ppk",
        ".keystore",
    ];
    value.starts_with(['/', '\\'])
        || value.starts_with("~/")
        || value.starts_with("./")
        || value.starts_with("../")
        || value.contains("://")
        || value.as_bytes().get(1..3) == Some(b":\\")
        || FILES.iter().any(|ext| ends_with_ci(value, ext))
}

/// What a value is made of.
struct Shape {
    lower: bool,
    upper: bool,
    digit: bool,
    /// A digit followed, later, by a letter (`S3cret`, not `token2`).
    digit_inside: bool,
    /// Only ASCII letters, digits and `_`.
    identifier: bool,
    underscore: bool,
    dot: bool,
    /// Letter case changes (`aB`, `Ab`).
    case_changes: usize,
}

impl Shape {
    fn of(value: &str) -> Shape {
        let mut shape = Shape {
            lower: false,
            upper: false,
            digit: false,
            digit_inside: false,
            identifier: true,
            underscore: false,
            dot: false,
            case_changes: 0,
        };
        let mut previous: Option<u8> = None;
        for b in value.bytes() {
            match b {
                b'a'..=b'z' => shape.lower = true,
                b'A'..=b'Z' => shape.upper = true,
                b'0'..=b'9' => shape.digit = true,
                b'_' => shape.underscore = true,
                b'.' => {
                    shape.dot = true;
                    shape.identifier = false;
                }
                _ => shape.identifier = false,
            }
            if b.is_ascii_alphabetic() && shape.digit {
                shape.digit_inside = true;
            }
            if let Some(p) = previous
                && p.is_ascii_alphabetic()
                && b.is_ascii_alphabetic()
                && p.is_ascii_lowercase() != b.is_ascii_lowercase()
            {
                shape.case_changes += 1;
            }
            previous = Some(b);
        }
        shape
    }
}

/// An unquoted value (env file, YAML, INI, a flag's argument, code).
fn bare_is_secret(value: &str, shape: &Shape) -> bool {
    let chars = value.len();
    if value.contains(['(', ')', '[', ']', '{', '}']) {
        return false;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) || (value.starts_with("0x") && chars <= 18) {
        return false;
    }
    // An attribute chain: `self.token`, `settings.SECRET_KEY`.
    if shape.dot
        && value.split('.').all(|part| {
            part.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    {
        return false;
    }
    if shape.identifier {
        return identifier_is_secret(value, chars, shape);
    }
    true
}

/// Whether a value made only of letters, digits and `_` reads as a secret
/// rather than an identifier.
fn identifier_is_secret(value: &str, chars: usize, shape: &Shape) -> bool {
    if shape.underscore {
        // snake_case and CONSTANT_CASE are names; random material may hold `_`.
        return (chars >= 16 && shape.lower && shape.upper && shape.digit_inside)
            || value.split('_').any(|part| part.len() >= 12);
    }
    match (shape.lower && shape.upper, shape.digit) {
        // camelCase words change case about once a word; random letters often.
        (true, false) => chars >= 16 && shape.case_changes * 3 >= chars,
        (false, false) => chars >= 12,
        (_, true) => shape.digit_inside || chars >= 12,
    }
}

/// A quoted value.
fn quoted_is_secret(value: &str, shape: &Shape) -> bool {
    let chars = value.len();
    let only = |ok: fn(u8) -> bool| value.bytes().all(ok);
    if !shape.digit {
        // Words and names: `bearer`, `access_token`, `auth.token.expired`,
        // `GITHUB_TOKEN`, `accessToken`.
        if only(|b| b.is_ascii_lowercase()) || only(|b| b.is_ascii_uppercase()) {
            return chars >= 12;
        }
        if only(|b| b.is_ascii_lowercase() || b == b'_' || b == b'.')
            || only(|b| b.is_ascii_uppercase() || b == b'_')
        {
            return false;
        }
        if shape.identifier && shape.lower && shape.upper && !shape.underscore {
            return chars >= 16 && shape.case_changes * 3 >= chars;
        }
    }
    if shape.identifier && shape.underscore && !(shape.lower && shape.upper) && !shape.digit_inside
    {
        return false;
    }
    true
}

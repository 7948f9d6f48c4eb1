//! `assigned-secret`'s key names: which names are secret-named.
//!
//! A key name is secret-named when its last word (split at `_`, `-`, `.` and
//! camelCase) is a credential word: `password`, `passwd`, `pwd`, `pass`,
//! `passphrase`, `secret`, `token`, `credential(s)`, `creds`, `auth`, or
//! `key` after a qualifier (`api`, `access`, `secret`, `private`, `signing`,
//! `client`, `account`, …), or ends in one (`dbpassword`, `apikey`). So
//! `DB_PASSWORD`, `apiToken`, `client-secret`, `spring.datasource.password`,
//! `awsSecretAccessKey`, `_authToken` are, and `password_hash`, `max_tokens`,
//! `tokenizer`, `keyboard` are not.

/// Whether `b` can be part of a key name.
pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Short words that make a key name secret-named as its whole last word.
const SECRET_WORDS: [&str; 6] = ["pwd", "pass", "auth", "creds", "passcode", "pw"];

/// Endings that make a key name secret-named (after dropping `_` and `-`
/// and lower-casing: `dbpassword`, `githubtoken`, `clientsecret`).
const SECRET_ENDINGS: [&str; 8] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "credentials",
    "privatekey",
];

/// Words before `key` that make it a credential's key name.
const KEY_QUALIFIERS: [&str; 30] = [
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "crypt",
    "master",
    "app",
    "account",
    "auth",
    "client",
    "service",
    "license",
    "licence",
    "shared",
    "webhook",
    "consumer",
    "hmac",
    "jwt",
    "session",
    "admin",
    "deploy",
    "ingest",
    "subscription",
    "storage",
    "server",
    "sas",
];

/// The last word of `name` before `end` (split at `_`, `-` and camelCase,
/// trailing digits kept), and where the text before it ends.
fn last_word(name: &[u8], mut end: usize) -> Option<(usize, usize)> {
    while end > 0 && matches!(name[end - 1], b'_' | b'-') {
        end -= 1;
    }
    if end == 0 {
        return None;
    }
    let mut start = end;
    while start > 0 && name[start - 1].is_ascii_digit() {
        start -= 1;
    }
    if start > 0 && name[start - 1].is_ascii_lowercase() {
        while start > 0
            && (name[start - 1].is_ascii_lowercase() || name[start - 1].is_ascii_digit())
        {
            start -= 1;
        }
        if start > 0 && name[start - 1].is_ascii_uppercase() {
            start -= 1;
        }
    } else {
        while start > 0
            && (name[start - 1].is_ascii_uppercase() || name[start - 1].is_ascii_digit())
        {
            start -= 1;
        }
    }
    (start < end).then_some((start, end))
}

/// The credential word `name` ends in, lower-cased, if it is secret-named.
///
/// The last `.`-component is read with `_` and `-` dropped and lower-cased,
/// so any spelling of a name matches (`api_key`, `apiKey`, `API-KEY`,
/// `ApI_kEy`); the short words (`pwd`, `pass`, `auth`) only as a whole last
/// word, so `bypass`, `oauth` and `compass` are not credential names.
pub(super) fn secret_word(name: &str) -> Option<String> {
    let component = name.rsplit('.').next().unwrap_or(name);
    let normalized: String = component
        .bytes()
        .filter(|b| !matches!(b, b'_' | b'-'))
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect();
    let normalized = normalized.trim_end_matches(|c: char| c.is_ascii_digit());
    if let Some(ending) = SECRET_ENDINGS.iter().find(|e| normalized.ends_with(*e)) {
        return Some((*ending).to_owned());
    }
    if let Some(stem) = normalized.strip_suffix("key")
        && KEY_QUALIFIERS.iter().any(|q| stem.ends_with(q))
    {
        return Some("key".to_owned());
    }
    let bytes = component.as_bytes();
    let (start, end) = last_word(bytes, bytes.len())?;
    let word = String::from_utf8_lossy(&bytes[start..end]).to_ascii_lowercase();
    let word = word.trim_end_matches(|c: char| c.is_ascii_digit());
    SECRET_WORDS.contains(&word).then(|| word.to_owned())
}

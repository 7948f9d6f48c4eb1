//! For log redaction: which field names hold credentials.
//!
//! A log line's fields are named; a field called `password` or `github_token`
//! is withheld whatever its value looks like. Names compare ASCII
//! case-insensitively with `-` and `_` alike, and a name counts by its whole
//! self or by its suffix (`_token`, `_password`, `_secret`, `_key`).

/// Field names whose values are credentials. Compared case-insensitively, with
/// `-` and `_` treated alike.
const CREDENTIAL_FIELDS: [&str; 11] = [
    "authorization",
    "proxy_authorization",
    "bearer_token",
    "token",
    "secret",
    "password",
    "passwd",
    "api_key",
    "apikey",
    "cookie",
    "set_cookie",
];

/// Suffixes that make a field name a credential name (`github_token`,
/// `db_password`, `client_secret`, `private_key`).
const CREDENTIAL_SUFFIXES: [&str; 5] = ["_token", "_password", "_passwd", "_secret", "_key"];

/// For log redaction: whether a field called `name` holds a credential.
///
/// True for `bearer_token`, `authorization`, `token`, `secret`, `password`,
/// `api_key` and a few more, and for names ending in `_token`, `_password`,
/// `_secret` or `_key`; case-insensitive, `-` counts as `_`.
pub fn is_credential_field(name: &str) -> bool {
    CREDENTIAL_FIELDS
        .iter()
        .any(|field| same_name(name.as_bytes(), field))
        || CREDENTIAL_SUFFIXES.iter().any(|suffix| {
            name.len() > suffix.len()
                && same_name(&name.as_bytes()[name.len() - suffix.len()..], suffix)
        })
}

/// ASCII case-insensitive equality where `-` equals `_`, on bytes (a suffix
/// of a name need not start on a character boundary).
fn same_name(name: &[u8], canonical: &str) -> bool {
    name.len() == canonical.len()
        && name
            .iter()
            .zip(canonical.bytes())
            .all(|(&a, b)| a.to_ascii_lowercase() == b || (a == b'-' && b == b'_'))
}

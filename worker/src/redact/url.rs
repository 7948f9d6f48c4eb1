//! `url-credentials`: the password of `scheme://user:password@host`, in a
//! URL of any scheme.
//!
//! Only the password is the secret: the scheme, user name and host survive.
//! The user name may be empty (`redis://:pw@host`) and the password may hold
//! `@` and `/`: the host follows the last `@` that no `/` precedes. A
//! password that is a placeholder, a mask or a reference, or a port followed
//! by a path (`http://host:8080/a/@b`), is not a credential.

use super::exempt::{is_exempt, is_reference};
use super::found::Found;

/// How far past `://` the authority of a URL is looked for.
const URL_REACH: usize = 2048;

/// Characters that end a URL's authority (and so its password).
fn ends_authority(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\' | 0x1C..=0x1F)
}

/// The password of `scheme://user:password@host` whose `://` starts at
/// `start`. The user name may be empty (`redis://:pw@host`); the password may
/// hold `@` and `/` (the host follows the last `@` that no `/` precedes, or
/// the last `@` when a `/` precedes every one).
pub(super) fn url_at(text: &str, start: usize, index: usize, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    // A scheme: a letter, then letters, digits, `+`, `-`, `.`.
    let mut scheme = start;
    while scheme > 0
        && start - scheme < 32
        && (bytes[scheme - 1].is_ascii_alphanumeric()
            || matches!(bytes[scheme - 1], b'+' | b'-' | b'.'))
    {
        scheme -= 1;
    }
    while scheme < start && !bytes[scheme].is_ascii_alphabetic() {
        scheme += 1;
    }
    if scheme == start {
        return;
    }
    let from = start + 3;
    let limit = (from + URL_REACH).min(bytes.len());
    let mut end = from;
    while end < limit && !ends_authority(bytes[end]) {
        end += 1;
    }
    let authority = &bytes[from..end];
    let mut at = None;
    let mut last_any = None;
    let mut slash_seen = false;
    for (i, &b) in authority.iter().enumerate() {
        match b {
            b'/' => slash_seen = true,
            b'@' => {
                last_any = Some(i);
                if !slash_seen {
                    at = Some(i);
                }
            }
            _ => {}
        }
    }
    let Some(at) = at.or(last_any) else {
        return;
    };
    let userinfo = &authority[..at];
    let Some(colon) = userinfo.iter().position(|&b| b == b':') else {
        return;
    };
    if userinfo[..colon].contains(&b'/') {
        return;
    }
    let (secret_start, secret_end) = (from + colon + 1, from + at);
    if secret_start >= secret_end {
        return;
    }
    let password = &text[secret_start..secret_end];
    if password_is_exempt(password) {
        return;
    }
    out.push(Found {
        start: secret_start,
        end: secret_end,
        rule: index,
    });
}

/// Whether a URL password is a placeholder, a mask, a reference, or a port
/// followed by a path (`http://host:8080/a/@b` has no credentials).
pub(super) fn password_is_exempt(password: &str) -> bool {
    if is_exempt(password) || is_reference(password) {
        return true;
    }
    match password.split_once('/') {
        Some((port, _)) => !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

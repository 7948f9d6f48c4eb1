//! What every rule leaves alone: values that are documentation or point
//! elsewhere rather than being credentials.
//!
//! [`is_exempt`] is the check every matcher applies to a secret: a known
//! placeholder (`changeme`, `example`, …), a mask of at most two distinct
//! characters (`********`, `xxxx`, `<...>`), or an earlier
//! `[redacted:<rule>]` token, which keeps redaction idempotent.
//! [`is_reference`] is the header's and URL password's extra check: a value
//! that starts as a variable, template or concatenation refers to a
//! credential kept elsewhere. The assignment rule's own, stricter reading of
//! values is in `assigned_values.rs`.

use super::rules::RULES;

/// Values that look like credentials but are documentation, compared after
/// trimming quotes, backticks and blanks, and lower-casing.
const PLACEHOLDERS: [&str; 17] = [
    "replace_me",
    "changeme",
    "change_me",
    "your_api_key",
    "your-api-key",
    "yourapikeyhere",
    "xxxxxxxxxxxx",
    "placeholder",
    "example",
    "notarealkey",
    "dummy",
    "redacted",
    "none",
    "null",
    "undefined",
    "true",
    "false",
];

/// Whether a header token or URL password refers to something else rather
/// than being a credential: a variable (`$TOKEN`, `${TOKEN}`, `%TOKEN%`), a
/// template (`{{ token }}`, `{token}`, `<token>`), a format directive, or the
/// end of a string being concatenated (`"Bearer " + token`). Only the start
/// counts: a token runs to the next blank and may carry text after it.
pub(super) fn is_reference(secret: &str) -> bool {
    let first = secret.chars().next();
    matches!(
        first,
        Some('$' | '{' | '<' | '%' | '"' | '\'' | '`' | '+' | '#')
    )
}

/// Whether a captured secret is documentation rather than a credential: a
/// known placeholder, a mask such as `********`, or an earlier redaction token.
pub(super) fn is_exempt(secret: &str) -> bool {
    let trimmed = secret.trim_matches(['"', '\'', '`', ' ', '\t']);
    if is_redaction_token(trimmed) {
        return true;
    }
    let lowered = trimmed.to_lowercase();
    if PLACEHOLDERS.contains(&lowered.as_str()) {
        return true;
    }
    let core = lowered.trim_matches(['<', '>', '{', '}', '[', ']']);
    let mut distinct: [Option<char>; 2] = [None, None];
    let mut length = 0;
    for c in core.chars() {
        length += 1;
        if distinct.contains(&Some(c)) {
            continue;
        }
        match distinct.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => *slot = Some(c),
            None => return false,
        }
    }
    length >= 4
}

/// Whether `text` is exactly `[redacted:<rule>]` for one of our rules.
fn is_redaction_token(text: &str) -> bool {
    text.strip_prefix("[redacted:")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|name| RULES.iter().any(|rule| rule.name == name))
}

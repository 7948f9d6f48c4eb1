//! Text cut at a limit: the word the cut ran through is dropped before
//! redaction.
//!
//! A shape must be seen whole. Where a limit cuts text (a search line, a
//! signature), a credential the cut runs through loses what its rule needs
//! (the `@` after a URL password, a token's last characters) and would
//! leave as a fragment; [`drop_cut_tail`] removes that fragment.

use std::borrow::Cow;

/// Characters that end a credential (with whitespace), so a cut text may end
/// after one without keeping part of a credential.
const WORD_ENDS: [char; 14] = [
    '"', '\'', '`', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '|',
];

/// Whether `c` ends a credential: whitespace or one of
/// `` "'`,;()[]{}<>| ``. A text cut at a limit keeps what lies beyond the
/// last such character on its cut side, never the word the cut ran through.
#[must_use]
pub fn ends_a_word(c: char) -> bool {
    c.is_whitespace() || WORD_ENDS.contains(&c)
}

/// For text that may have been cut at `limit` characters: when it has
/// `limit` characters or more, drops the trailing word (everything after the
/// last whitespace or one of `` "'`,;()[]{}<>| ``, which end every shape but
/// the `basic-auth-header` token, and that rule matches any remainder), which
/// may be the start of a credential no rule can recognise any more. Shorter text is returned as it
/// is. Apply before redaction.
#[must_use]
pub fn drop_cut_tail(text: &str, limit: usize) -> Cow<'_, str> {
    if text.chars().nth(limit.saturating_sub(1)).is_none() {
        return Cow::Borrowed(text);
    }
    let keep = text
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || WORD_ENDS.contains(&c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    Cow::Borrowed(&text[..keep])
}

//! Text helpers every matcher shares: word bytes and char boundaries.
//!
//! Matchers work on byte offsets; a window or reach computed in bytes is
//! moved to a char boundary with these before the text is sliced, so no
//! slice can panic on multi-byte text.

/// An ASCII letter, digit or `_`.
pub(super) fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The largest char boundary at or before `at`.
pub(super) fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary at or after `at`.
pub(super) fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

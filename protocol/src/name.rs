//! How a workspace name (a file or directory name, a relative path) is
//! written as text: the one escape used everywhere a name appears, inside an
//! untrusted fence, in the prose summary and in structured results, and
//! accepted back wherever a tool takes a path.
//!
//! Names come from whoever wrote the workspace. Shown raw, a newline, an ESC
//! or a bidirectional control in a name could forge a line (a search-hit
//! header) or hide what the name really is, and a name that is not valid
//! UTF-8 has no text form at all. [`encode`] gives every name one text form:
//!
//! - `\` becomes `\\`; a newline, carriage return or tab becomes `\n`, `\r`
//!   or `\t`;
//! - other C0 and C1 controls and DEL, the line and paragraph separators
//!   (U+2028, U+2029), bidirectional controls (U+061C, U+200E, U+200F,
//!   U+202A..U+202E, U+2066..U+2069) and invisible characters
//!   (U+200B..U+200D, U+2060..U+2064, U+206A..U+206F, U+FEFF,
//!   U+E0000..U+E007F) become `\u{…}` (lower-case hex, as Rust writes them);
//! - each byte that is not part of valid UTF-8 becomes `\xHH` (lower-case);
//! - everything else, ordinary non-ASCII text included, is kept.
//!
//! An ordinary name is its own text form. The escape is unambiguous: every
//! backslash a name holds is doubled, so a `\` in the text form always starts
//! an escape, and [`decode`] gives back the exact bytes. [`decode`] also
//! accepts text that is not an [`encode`] output (a client typing a name with
//! a real newline, or `\x41` for `A`): what it decodes to is the name meant;
//! a backslash starting no escape stands for itself. [`canonical`] maps any
//! text to the one text form of the name it decodes to, so two spellings of
//! one name are never two names.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The text form of the name whose bytes are `bytes` (see the module docs).
/// Borrows when the name needs no escape.
#[must_use]
pub fn encode(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.chars().any(needs_escape)
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_char(&mut out, c);
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

fn push_char(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if needs_escape(c) => out.extend(c.escape_unicode()),
        c => out.push(c),
    }
}

/// The bytes of the name `text` stands for (see the module docs). Borrows
/// when `text` holds no backslash.
#[must_use]
pub fn decode(text: &str) -> Cow<'_, [u8]> {
    if !text.contains('\\') {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.extend_from_slice(&rest.as_bytes()[..at]);
        let after = &rest[at + 1..];
        let (bytes, used) = escape_at(after);
        match bytes {
            Some(decoded) => {
                out.extend_from_slice(&decoded);
                rest = &after[used..];
            }
            None => {
                out.push(b'\\');
                rest = after;
            }
        }
    }
    out.extend_from_slice(rest.as_bytes());
    Cow::Owned(out)
}

/// The escape that `after` (the text after a backslash) starts: its bytes
/// and how many bytes of `after` it used, or `None` when it starts none.
fn escape_at(after: &str) -> (Option<Vec<u8>>, usize) {
    let b = after.as_bytes();
    match b.first() {
        Some(b'\\') => (Some(vec![b'\\']), 1),
        Some(b'n') => (Some(vec![b'\n']), 1),
        Some(b'r') => (Some(vec![b'\r']), 1),
        Some(b't') => (Some(vec![b'\t']), 1),
        Some(b'x') => match after.get(1..3).and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(byte) if after[1..3].bytes().all(|c| c.is_ascii_hexdigit()) => {
                (Some(vec![byte]), 3)
            }
            _ => (None, 0),
        },
        Some(b'u') if b.get(1) == Some(&b'{') => {
            let Some(close) = after.find('}') else {
                return (None, 0);
            };
            let hex = &after[2..close];
            let c =
                (!hex.is_empty() && hex.len() <= 6 && hex.bytes().all(|c| c.is_ascii_hexdigit()))
                    .then(|| u32::from_str_radix(hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
            match c {
                Some(c) => {
                    let mut buf = [0u8; 4];
                    (Some(c.encode_utf8(&mut buf).as_bytes().to_vec()), close + 1)
                }
                None => (None, 0),
            }
        }
        _ => (None, 0),
    }
}

/// The one text form of the name `text` decodes to: `encode(decode(text))`.
/// Idempotent; borrows when `text` already is that form and holds no
/// backslash.
#[must_use]
pub fn canonical(text: &str) -> Cow<'_, str> {
    if !text.contains('\\') && !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(encode(&decode(text)).into_owned())
}

/// Whether [`encode`] escapes `c`.
#[must_use]
pub fn needs_escape(c: char) -> bool {
    matches!(c,
        '\\'
        | '\u{0}'..='\u{1F}'
        | '\u{7F}'..='\u{9F}'
        | '\u{61C}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}'
        | '\u{206A}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ordinary_names_are_their_own_text_form() {
        for n in ["src/main.rs", "café.txt", "日本語", "a b", ".env"] {
            assert!(matches!(encode(n.as_bytes()), Cow::Borrowed(_)), "{n}");
            assert!(matches!(decode(n), Cow::Borrowed(_)), "{n}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(encode(b"a\nb"), "a\\nb");
        assert_eq!(encode(b"a\\nb"), "a\\\\nb");
        assert_eq!(encode(b"caf\xe9.txt"), "caf\\xe9.txt");
        assert_eq!(encode(b"caf\\xe9.txt"), "caf\\\\xe9.txt");
        assert_eq!(
            encode("x\u{1b}[31m\u{202e}".as_bytes()),
            "x\\u{1b}[31m\\u{202e}"
        );
        assert_eq!(decode("caf\\xe9.txt").as_ref(), b"caf\xe9.txt");
        assert_eq!(decode("a\\u{1b}").as_ref(), b"a\x1b");
        // Backslashes that start no escape stand for themselves.
        assert_eq!(decode("C:\\dir\\q").as_ref(), b"C:\\dir\\q");
        assert_eq!(decode("\\x4").as_ref(), b"\\x4");
        assert_eq!(decode("\\u{110000}").as_ref(), b"\\u{110000}");
        assert_eq!(canonical("id\\x5frsa"), "id_rsa");
        assert_eq!(canonical("a\nb"), "a\\nb");
        assert_eq!(canonical("C:\\dir"), "C:\\\\dir");
    }

    proptest! {
        #[test]
        fn decode_undoes_encode(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let text = encode(&bytes);
            let back = decode(&text).into_owned();
            prop_assert_eq!(back, bytes.clone());
            prop_assert!(!text.chars().any(|c| needs_escape(c) && c != '\\'));
            prop_assert_eq!(canonical(&text), text.clone());
        }

        #[test]
        fn canonical_is_idempotent(text in ".{0,40}") {
            let once = canonical(&text).into_owned();
            prop_assert_eq!(canonical(&once), once.clone());
        }
    }
}

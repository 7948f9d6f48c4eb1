//! Paging cursors: stateless, opaque, and bound to the query that issued
//! them.
//!
//! A cursor is unpadded base64url of 17 bytes:
//!
//! ```text
//! version (1) | query fingerprint (8, little-endian) | position (8, little-endian)
//! ```
//!
//! * **Stateless:** everything needed to continue is in the cursor, so any
//!   replica (or a restarted server) continues a page another one issued.
//! * **Bound to its query:** the fingerprint is a hash of the tool and its
//!   normalised arguments, everything but the cursor and the page size; a
//!   cursor replayed with other arguments is refused, never silently applied
//!   to a different answer. Changing the page size between pages is allowed:
//!   the position counts items, not pages.
//! * **Nothing from the workspace inside:** the position is a count of items
//!   already answered, in the answer's stable order (for example sorted by
//!   path), never a path or a line. A cursor therefore cannot carry a name or
//!   a fragment that redaction hides elsewhere in the answer.
//! * **Untrusted on the way back:** [`decode`] checks length, alphabet,
//!   version and fingerprint before anything else reads it, and every
//!   failure is an error value, never a panic.
//!
//! The fingerprint is FNV-1a (64 bits): it tells queries apart, it is not a
//! secret. Forging a cursor gains nothing: a position only skips items the
//! same query would return on a later page, and they are contained, checked
//! and redacted like every other answer.

use std::fmt;

use moat_protocol::limits::MAX_CURSOR_CHARS;

/// The layout version written into every cursor.
const VERSION: u8 = 1;
/// Bytes of a decoded cursor.
const LEN: usize = 17;

/// A decoded cursor: which query, and how far into its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// [`fingerprint`] of the query that issued it.
    pub query: u64,
    /// Items of the answer already given.
    pub position: u64,
}

/// Why a cursor was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorError {
    /// Not a cursor this server issued: wrong length, alphabet or version.
    Malformed,
    /// Issued for another query (other tool or other arguments).
    OtherQuery,
}

impl fmt::Display for CursorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CursorError::Malformed => f.write_str(
                "arguments.cursor is not a cursor this server issued; call again without a cursor to start from the beginning",
            ),
            CursorError::OtherQuery => f.write_str(
                "arguments.cursor was issued for a different query; pass it with exactly the arguments of the call that returned it (only max_results may change), or call again without a cursor to start over",
            ),
        }
    }
}

impl std::error::Error for CursorError {}

/// Encode a cursor.
#[must_use]
pub fn encode(cursor: Cursor) -> String {
    let mut bytes = [0u8; LEN];
    bytes[0] = VERSION;
    bytes[1..9].copy_from_slice(&cursor.query.to_le_bytes());
    bytes[9..17].copy_from_slice(&cursor.position.to_le_bytes());
    base64url(&bytes)
}

/// Decode a cursor a client sent back, for the query with fingerprint
/// `query`.
///
/// # Errors
/// [`CursorError`] when it is not one this server issued, or was issued for
/// another query.
pub fn decode(text: &str, query: u64) -> Result<Cursor, CursorError> {
    let bytes = unbase64url(text, MAX_CURSOR_CHARS).ok_or(CursorError::Malformed)?;
    let bytes: [u8; LEN] = bytes.try_into().map_err(|_| CursorError::Malformed)?;
    if bytes[0] != VERSION {
        return Err(CursorError::Malformed);
    }
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[1..9]);
    let issued_for = u64::from_le_bytes(word);
    word.copy_from_slice(&bytes[9..17]);
    let position = u64::from_le_bytes(word);
    // The canonical encoding only: a cursor is compared as text by clients
    // and caches, so one position has one spelling.
    if encode(Cursor {
        query: issued_for,
        position,
    }) != text
    {
        return Err(CursorError::Malformed);
    }
    if issued_for != query {
        return Err(CursorError::OtherQuery);
    }
    Ok(Cursor {
        query: issued_for,
        position,
    })
}

/// FNV-1a, 64 bits, over `data`: the fingerprint of a query's canonical
/// bytes. Stable across builds and platforms (unlike the standard library's
/// hasher), so replicas of one version agree.
#[must_use]
pub fn fingerprint(data: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    data.iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url of `data`.
#[must_use]
pub fn base64url(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(B64[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

/// Decode unpadded base64url of at most `max_chars` characters; `None` for
/// anything else (too long, a character outside the alphabet, an impossible
/// length). Checked before anything is allocated for it.
#[must_use]
pub fn unbase64url(s: &str, max_chars: usize) -> Option<Vec<u8>> {
    if s.len() > max_chars || s.len() % 4 == 1 {
        return None;
    }
    let mut bits = 0u32;
    let mut nbits = 0u32;
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for c in s.bytes() {
        let v = u32::try_from(B64.iter().position(|x| *x == c)?).ok()?;
        bits = ((bits << 6) | v) & 0xFFFF;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push(u8::try_from((bits >> nbits) & 0xFF).ok()?);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_for_its_own_query_only() {
        for position in [0, 1, 199, u64::MAX] {
            let c = Cursor {
                query: fingerprint(b"find_files {\"glob\":\"*.rs\"}"),
                position,
            };
            let text = encode(c);
            assert!(text.len() <= MAX_CURSOR_CHARS);
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            );
            assert_eq!(decode(&text, c.query), Ok(c));
            assert_eq!(
                decode(&text, c.query ^ 1),
                Err(CursorError::OtherQuery),
                "another query"
            );
        }
    }

    #[test]
    fn anything_else_is_malformed_and_never_panics() {
        let good = encode(Cursor {
            query: 7,
            position: 3,
        });
        let mut wrong_version = unbase64url(&good, 64).unwrap();
        wrong_version[0] = 2;
        let long = "A".repeat(MAX_CURSOR_CHARS + 4);
        let mut bad: Vec<String> = vec![
            String::new(),
            "A".into(),
            "====".into(),
            "not a cursor".into(),
            "é".repeat(12),
            long,
            base64url(&wrong_version),
            base64url(b"offset:5"),
            good[..good.len() - 1].to_owned(),
            format!("{good}AA"),
        ];
        // A different spelling of the same bytes (non-zero unused bits).
        let last = good.as_bytes()[good.len() - 1];
        let idx = B64.iter().position(|b| *b == last).unwrap();
        bad.push(format!(
            "{}{}",
            &good[..good.len() - 1],
            char::from(B64[(idx + 1) % 64])
        ));
        for b in &bad {
            assert_eq!(decode(b, 7), Err(CursorError::Malformed), "{b:?}");
        }
        // Every truncation and every single-character change: an error or
        // a decode, never a panic.
        for i in 0..good.len() {
            let _ = decode(&good[..i], 7);
            for c in B64 {
                let mut t = good.clone().into_bytes();
                t[i] = *c;
                let _ = decode(std::str::from_utf8(&t).unwrap(), 7);
            }
        }
    }

    #[test]
    fn the_fingerprint_is_fnv1a() {
        assert_eq!(fingerprint(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fingerprint(b"ab"), fingerprint(b"ba"));
    }
}

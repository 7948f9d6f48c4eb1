//! Bearer-token check, in constant time, shared by the two listeners that
//! take a static token: the HTTP transport and the metrics listener.
//!
//! Both the presented and the configured token are copied into fixed-size
//! buffers (the token is at most 512 characters, a configuration bound) and
//! compared with [`subtle::ConstantTimeEq`] over the whole buffer plus the
//! length, so the time taken does not depend on where the tokens differ nor on
//! the length of either.

use subtle::ConstantTimeEq;

/// Longest token accepted (bytes); the configuration refuses longer ones.
const MAX_TOKEN_BYTES: usize = 2048;

/// A configured bearer token. Has no `Debug` output of its value.
pub struct Token {
    buf: Box<[u8; MAX_TOKEN_BYTES]>,
    len: u16,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([redacted])")
    }
}

fn fill(s: &[u8]) -> (Box<[u8; MAX_TOKEN_BYTES]>, u16) {
    let mut buf = Box::new([0u8; MAX_TOKEN_BYTES]);
    let n = s.len().min(MAX_TOKEN_BYTES);
    buf[..n].copy_from_slice(&s[..n]);
    (buf, u16::try_from(n).unwrap_or(u16::MAX))
}

impl Token {
    /// The configured token (non-empty).
    #[must_use]
    pub fn new(token: &str) -> Token {
        let (buf, len) = fill(token.as_bytes());
        Token { buf, len }
    }

    /// Whether an `Authorization` header value carries this token:
    /// `Bearer <token>`, scheme case-insensitive, surrounding spaces ignored.
    #[must_use]
    pub fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let presented = authorization
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| h.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, value)| value.trim().as_bytes())
            .unwrap_or_default();
        let too_long = presented.len() > MAX_TOKEN_BYTES;
        let (buf, len) = fill(presented);
        let same = buf.as_slice().ct_eq(self.buf.as_slice()) & len.ct_eq(&self.len);
        bool::from(same) && !too_long && self.len > 0
    }
}

/// Whether an `Authorization` value can be judged: non-empty, visible ASCII
/// and spaces (the separator of RFC 9110 credentials). Anything else (a
/// control byte, tabs included, or a non-ASCII byte) is refused, not compared.
#[must_use]
pub fn well_formed(authorization: &[u8]) -> bool {
    let trimmed = authorization.trim_ascii();
    !trimmed.is_empty() && trimmed.iter().all(|&b| b.is_ascii_graphic() || b == b' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_the_token() {
        let t = Token::new("s3cret-token");
        assert!(t.accepts(Some(b"Bearer s3cret-token")));
        assert!(t.accepts(Some(b"bearer   s3cret-token ")));
        assert!(!t.accepts(Some(b"Bearer s3cret-tokenX")));
        assert!(!t.accepts(Some(b"Bearer s3cret-toke")));
        assert!(!t.accepts(Some(b"Basic s3cret-token")));
        assert!(!t.accepts(Some(b"s3cret-token")));
        assert!(!t.accepts(None));
        assert!(!t.accepts(Some(b"Bearer ")));
        let long = format!("Bearer {}", "a".repeat(5000));
        assert!(!t.accepts(Some(long.as_bytes())));
        assert_eq!(format!("{t:?}"), "Token([redacted])");
    }

    #[test]
    fn only_visible_ascii_authorization_is_well_formed() {
        assert!(well_formed(b"Bearer s3cret-token"));
        assert!(well_formed(b" bearer   s3cret-token "));
        assert!(!well_formed(b"Bearer\ts3cret-token"));
        assert!(!well_formed(b""));
        assert!(!well_formed(b"   "));
        assert!(!well_formed(b"Bearer s3cret\xc3\xa9"));
        assert!(!well_formed(b"Bearer s3cret\x01"));
        assert!(!well_formed(b"Bearer s3cret\x7f"));
    }
}

//! Encoded payloads: runs of base64, hex, `\xHH` escapes or percent-escapes
//! whose decoded form is readable text. The scanner scores the decoded text
//! again (one level deep) and reports INJ24 when it is an instruction.
//!
//! Bounded: at most [`MAX_CANDIDATES`] runs are decoded per text, and a run is
//! decoded up to [`MAX_RUN`] bytes. Finding the runs looks at one byte in
//! [`STEP`] outside them, so the cost on ordinary text stays a small fraction
//! of one pass.

/// At most this many encoded runs are decoded per text.
pub(super) const MAX_CANDIDATES: usize = 32;

/// A run is decoded up to this many bytes.
const MAX_RUN: usize = 16 * 1024;

/// Shortest base64 or hex run looked at.
const MIN_RUN: usize = 24;

/// Every run of [`MIN_RUN`] or more bytes covers a multiple of this.
const STEP: usize = MIN_RUN;

/// Fewest escapes in a run of `\xHH` or `%HH` escapes.
const MIN_ESCAPES: usize = 8;

/// One decoded run: where it starts in the raw text, the encoding, the text.
#[derive(Debug)]
pub(super) struct Decoded {
    pub(super) at: usize,
    pub(super) encoding: &'static str,
    pub(super) text: String,
}

fn is_b64(b: u8) -> bool {
    B64[usize::from(b)]
}

/// The bytes of base64 (both alphabets) and hex, by value.
static B64: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
        b += 1;
    }
    table
};

/// The encoded runs of `raw` whose decoded form reads as text.
pub(super) fn candidates(raw: &str) -> Vec<Decoded> {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let runs = runs(bytes, MAX_CANDIDATES);
    let mut tried = runs.len();
    for run in runs {
        let start = run.start;
        let run = &bytes[run];
        let decoded = if run.len().is_multiple_of(2) && run.iter().all(u8::is_ascii_hexdigit) {
            hex(run).map(|t| (t, "hex"))
        } else {
            base64(run).map(|t| (t, "base64"))
        };
        if let Some((text, encoding)) = decoded.and_then(|(d, e)| readable(d).map(|t| (t, e))) {
            out.push(Decoded {
                at: start,
                encoding,
                text,
            });
        }
    }
    escapes(raw, b"\\x", "hex escapes", &mut out, &mut tried);
    escapes(raw, b"%", "percent-encoding", &mut out, &mut tried);
    out
}

/// The first `limit` maximal runs of base64 or hex bytes of [`MIN_RUN`]
/// bytes or more, in order, each cut to [`MAX_RUN`] bytes. Every such run
/// covers a multiple of [`STEP`], so only those bytes are looked at outside
/// the runs, and around each only as far as it takes to tell a word from a
/// run.
fn runs(bytes: &[u8], limit: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() && runs.len() < limit {
        if !is_b64(bytes[i]) {
            i += STEP;
            continue;
        }
        let mut end = i;
        while end < bytes.len() && end - i < MIN_RUN && is_b64(bytes[end]) {
            end += 1;
        }
        let mut start = i;
        while start > 0 && end - (start - 1) <= MIN_RUN && is_b64(bytes[start - 1]) {
            start -= 1;
        }
        if end - start >= MIN_RUN {
            while start > 0 && is_b64(bytes[start - 1]) {
                start -= 1;
            }
            while end < bytes.len() && is_b64(bytes[end]) {
                end += 1;
            }
            runs.push(start..end.min(start + MAX_RUN));
        }
        i = (end / STEP + 1) * STEP;
    }
    runs
}

/// Runs of `prefix` + two hex digits (`\x49\x67…`, `%49%67…`), with the
/// bytes between escapes (`+` as a space for percent-encoding) kept.
fn escapes(
    raw: &str,
    prefix: &[u8],
    encoding: &'static str,
    out: &mut Vec<Decoded>,
    tried: &mut usize,
) {
    let bytes = raw.as_bytes();
    let finder = memchr::memmem::Finder::new(prefix);
    let mut from = 0;
    while *tried < MAX_CANDIDATES {
        let Some(offset) = finder.find(&bytes[from..]) else {
            return;
        };
        let start = from + offset;
        let mut at = start;
        let mut decoded = Vec::new();
        let mut count = 0;
        while at < bytes.len() && decoded.len() < MAX_RUN {
            if bytes[at..].starts_with(prefix) {
                let digits = at + prefix.len();
                match bytes.get(digits..digits + 2).and_then(hex_pair) {
                    Some(b) => {
                        decoded.push(b);
                        count += 1;
                        at = digits + 2;
                        continue;
                    }
                    None => break,
                }
            }
            let b = bytes[at];
            if b.is_ascii_whitespace() || b == b'"' || b == b'\'' || b == b')' || b == b'>' {
                break;
            }
            decoded.push(if b == b'+' && prefix == b"%" { b' ' } else { b });
            at += 1;
        }
        if count >= MIN_ESCAPES {
            *tried += 1;
            if let Some(text) = readable(decoded) {
                out.push(Decoded {
                    at: start,
                    encoding,
                    text,
                });
            }
        }
        from = at.max(start + 1);
    }
}

fn hex_pair(pair: &[u8]) -> Option<u8> {
    let hi = (pair[0] as char).to_digit(16)?;
    let lo = (pair[1] as char).to_digit(16)?;
    u8::try_from(hi * 16 + lo).ok()
}

fn hex(run: &[u8]) -> Option<Vec<u8>> {
    run.chunks_exact(2).map(hex_pair).collect()
}

/// Standard or URL-safe base64, padding optional; `None` when the run is not
/// base64.
fn base64(run: &[u8]) -> Option<Vec<u8>> {
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(run.len() / 4 * 3);
    for chunk in run.chunks(4) {
        if chunk.len() == 1 {
            break;
        }
        let mut acc = 0_u32;
        for (k, &b) in chunk.iter().enumerate() {
            acc |= value(b)? << (18 - 6 * k);
        }
        let [_, b0, b1, b2] = acc.to_be_bytes();
        out.push(b0);
        if chunk.len() > 2 {
            out.push(b1);
        }
        if chunk.len() > 3 {
            out.push(b2);
        }
    }
    Some(out)
}

/// The decoded bytes as text, when they read as text: valid UTF-8, at least
/// 16 characters, no control characters but line breaks and tabs, mostly
/// letters and spaces, and more than one word.
fn readable(bytes: Vec<u8>) -> Option<String> {
    let text = String::from_utf8(bytes).ok()?;
    let mut chars = 0;
    let mut letters = 0;
    let mut spaces = 0;
    for c in text.chars() {
        chars += 1;
        if c.is_control() && c != '\n' && c != '\t' && c != '\r' {
            return None;
        }
        if c.is_alphabetic() {
            letters += 1;
        } else if c == ' ' {
            spaces += 1;
        }
    }
    (chars >= 16 && spaces >= 2 && (letters + spaces) * 10 >= chars * 7).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The base64 and hex runs of `raw` found by reading every byte: each
    /// maximal run of [`MIN_RUN`] bytes or more, in order, at most
    /// [`MAX_CANDIDATES`] of them, with where it starts and how far it is
    /// decoded.
    fn every_run(raw: &str) -> Vec<(usize, usize)> {
        let bytes = raw.as_bytes();
        let mut runs = Vec::new();
        let mut at = 0;
        while at < bytes.len() && runs.len() < MAX_CANDIDATES {
            if !is_b64(bytes[at]) {
                at += 1;
                continue;
            }
            let start = at;
            while at < bytes.len() && is_b64(bytes[at]) {
                at += 1;
            }
            if at - start >= MIN_RUN {
                runs.push((start, at.min(start + MAX_RUN)));
            }
        }
        runs
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// Sampling one byte in [`STEP`] finds the runs reading every byte
        /// finds.
        #[test]
        fn sampling_finds_every_run_that_reading_every_byte_finds(
            parts in proptest::collection::vec(
                prop_oneof![
                    "[a-zA-Z0-9+/_-]{1,40}",
                    "[ .:;,\n]{1,3}",
                ],
                0..60,
            ),
            limit in 1..40_usize,
        ) {
            let raw = parts.concat();
            let mut expected = every_run(&raw);
            expected.truncate(limit);
            let found: Vec<(usize, usize)> =
                runs(raw.as_bytes(), limit).into_iter().map(|r| (r.start, r.end)).collect();
            prop_assert_eq!(found, expected);
        }
    }
}

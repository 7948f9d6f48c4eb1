//! Writing a [`Value`] as one line of compact JSON, byte for byte what
//! `serde_json::to_vec` writes followed by the escaping of U+2028 and U+2029
//! (`\u2028`, `\u2029`; some JavaScript clients split lines on them), in one
//! pass.
//!
//! Tool results carry whole files, so nearly every byte of an answer is
//! inside one long string. Strings are therefore scanned eight bytes at a time
//! for the only bytes that need attention (`"`, `\`, controls below U+0020,
//! and `0xE2`, the first byte of U+2028/U+2029), and the runs between them are
//! copied whole. Everything else (numbers, structure) goes through serde_json.

use serde_json::Value;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Non-zero when some byte of `w` is `"`, `\`, below 0x20, or 0xE2. (Bytes
/// above a hit may be flagged too; the caller looks at each byte again.)
#[inline]
fn attention(w: u64) -> u64 {
    let has_zero = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let below_space = w.wrapping_sub(LO * 0x20) & !w & HI;
    below_space
        | has_zero(w ^ (LO * u64::from(b'"')))
        | has_zero(w ^ (LO * u64::from(b'\\')))
        | has_zero(w ^ (LO * 0xE2))
}

/// Calls `f(at, len, escape)` for each place in `b` that is written escaped,
/// in order: the `len` bytes at `at` are written as `escape`. Everything
/// between is written as it is.
#[inline]
fn escapes(b: &[u8], mut f: impl FnMut(usize, usize, &[u8])) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut i = 0;
    loop {
        while i + 8 <= b.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&b[i..i + 8]);
            let flagged = attention(u64::from_le_bytes(word));
            if flagged != 0 {
                // The lowest flagged byte is a real hit (false flags only
                // sit above one): go straight to it.
                i += (flagged.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        let Some(&c) = b.get(i) else { break };
        let mut unicode = [b'\\', b'u', b'0', b'0', 0, 0];
        let (escape, len): (&[u8], usize) = match c {
            b'"' => (b"\\\"", 1),
            b'\\' => (b"\\\\", 1),
            b'\n' => (b"\\n", 1),
            b'\r' => (b"\\r", 1),
            b'\t' => (b"\\t", 1),
            0x08 => (b"\\b", 1),
            0x0C => (b"\\f", 1),
            0x00..=0x1F => {
                unicode[4] = HEX[usize::from(c >> 4)];
                unicode[5] = HEX[usize::from(c & 0xF)];
                (&unicode, 1)
            }
            0xE2 if b.get(i + 1) == Some(&0x80) && b.get(i + 2) == Some(&0xA8) => (b"\\u2028", 3),
            0xE2 if b.get(i + 1) == Some(&0x80) && b.get(i + 2) == Some(&0xA9) => (b"\\u2029", 3),
            _ => {
                i += 1;
                continue;
            }
        };
        f(i, len, escape);
        i += len;
    }
}

/// Append `s` as a JSON string literal.
pub fn write_str(s: &str, out: &mut Vec<u8>) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut run = 0;
    escapes(b, |at, len, escape| {
        out.extend_from_slice(&b[run..at]);
        out.extend_from_slice(escape);
        run = at + len;
    });
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

/// Append `v` as compact JSON.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            // A Number always serialises; nothing is written if it ever did not.
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (k, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(k, out);
                out.push(b':');
                write_value(item, out);
            }
            out.push(b'}');
        }
    }
}

/// Append the object `members` as compact JSON, the value of the member
/// `key` written by `write` instead of from `members` (an answer's `id`,
/// written as the text it was sent as).
pub fn write_object_with(
    members: &serde_json::Map<String, Value>,
    key: &str,
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>),
) {
    let mut write = Some(write);
    out.push(b'{');
    for (i, (k, item)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(k, out);
        out.push(b':');
        match write.take_if(|_| k == key) {
            Some(w) => w(out),
            None => write_value(item, out),
        }
    }
    out.push(b'}');
}

/// The length in bytes of `v` as [`encode`](crate::mcp::jsonrpc::encode)
/// writes it ([`write_value`]), without building it.
#[must_use]
pub fn encoded_len(v: &serde_json::Map<String, Value>) -> u64 {
    object_len(v)
}

fn object_len(members: &serde_json::Map<String, Value>) -> u64 {
    // `{`, `}`, a `:` per member and a `,` between members.
    let punctuation = 2 + 2 * members.len() as u64 - u64::from(!members.is_empty());
    members
        .iter()
        .map(|(k, item)| str_len(k) + value_len(item))
        .sum::<u64>()
        + punctuation
}

/// The length in bytes of `v` as [`write_value`] writes it.
#[must_use]
pub fn value_len(v: &Value) -> u64 {
    match v {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => {
            let mut counter = Counter(0);
            // A Number always serialises; nothing is counted if it ever did not.
            let _ = serde_json::to_writer(&mut counter, n);
            counter.0
        }
        Value::String(s) => str_len(s),
        Value::Array(items) => {
            items.iter().map(value_len).sum::<u64>() + 2 + (items.len() as u64).saturating_sub(1)
        }
        Value::Object(members) => object_len(members),
    }
}

/// The length of `s` as [`write_str`] writes it.
fn str_len(s: &str) -> u64 {
    let mut len = s.len() as u64 + 2;
    escapes(s.as_bytes(), |_, replaced, escape| {
        len += (escape.len() - replaced) as u64;
    });
    len
}

/// Counts what serde_json writes (numbers only: their digits need no escape).
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What `jsonrpc::encode` wrote before this module: serde_json, then the
    /// separators escaped in a second pass.
    fn reference(v: &Value) -> Vec<u8> {
        let s = String::from_utf8(serde_json::to_vec(v).unwrap()).unwrap();
        s.replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029")
            .into_bytes()
    }

    fn ours(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        write_value(v, &mut out);
        out
    }

    #[test]
    fn every_escape() {
        let all: String = (0u8..0x80).map(char::from).collect();
        for v in [
            json!(all),
            json!("a\u{2028}b\u{2029}c\u{2027}\u{20ac}\u{e2}x\nd"),
            json!({"k\"\n": [1, -2, 3.5, 1e300, null, true, false, {}, []], "": "x"}),
            json!("\u{7f}\u{80}\u{ff}\u{fffd}\u{10ffff}"),
            json!(u64::MAX),
            json!(i64::MIN),
        ] {
            assert_eq!(ours(&v), reference(&v), "{v}");
        }
    }

    proptest! {
        #[test]
        fn same_bytes_as_serde_json(text in "(\\PC|[\\x00-\\x1f\"\\\\\u{2028}\u{2029}]){0,300}", n in any::<i64>(), f in -1e20f64..1e20) {
            let v = json!({"text": text, "n": n, "f": f, "nested": [{"t": text}, [], {}, null, true, false, [1, {"x": [text]}]]});
            prop_assert_eq!(ours(&v), reference(&v));
            let Value::Object(m) = &v else { unreachable!() };
            prop_assert_eq!(encoded_len(m), ours(&v).len() as u64);
        }

        #[test]
        fn encoded_len_counts_what_is_written(text in "([a\\n\\\\\u{e2}\u{2028}\u{2029}\u{2027}\u{20ac}]|\\PC){0,200}") {
            let v = json!({"text": text, "k": [text.clone(), format!("\n{text}\"")]});
            let Value::Object(m) = &v else { unreachable!() };
            prop_assert_eq!(encoded_len(m), ours(&v).len() as u64);
        }
    }

    #[test]
    fn encoded_len_is_the_length_written() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let v = json!({"a": all, "b": "x\u{2028}y\u{2029}", "c": [1, 2.5, null, {"d": "\u{1}"}]});
        let Value::Object(m) = &v else { unreachable!() };
        assert_eq!(encoded_len(m), ours(&v).len() as u64);
    }
}

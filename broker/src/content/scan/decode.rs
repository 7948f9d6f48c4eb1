//! Encoded payloads: runs of base64, hex, `\xHH` escapes or percent-escapes
//! whose decoded form is readable text. The scanner scores the decoded text
//! again (one level deep) and reports INJ24 when it is an instruction.
//!
//! Every run of the whole text is looked at, wherever it stands: a payload
//! after any number of long identifiers is still decoded. A run with no digit
//! and no upper-case letter is a word or an identifier (`snake_case_names`,
//! `kebab-case-names`), never the hex of text (every byte of readable text
//! has a hex digit for its high half) nor, in practice, its base64 (a space
//! or a letter before `h` turns into an upper-case letter), so it is passed
//! over without being decoded. Bounded: runs are disjoint and each is decoded
//! up to [`MAX_RUN`] bytes, so decoding, and the decoded texts returned, are
//! linear in the text (the scanner scores them together, in one text).
//! Finding the runs reads the text 64 bytes at a time as a mask.

use super::context::Kind;
use super::{FINDINGS_PER_SIGNAL, Hit, Level, Scanner, excerpt, newlines};

/// A run is decoded up to this many bytes.
const MAX_RUN: usize = 16 * 1024;

/// Shortest base64 or hex run looked at.
const MIN_RUN: usize = 24;

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

/// The encoded runs of `raw` whose decoded form reads as text, in order
/// (base64 and hex runs, then escapes).
pub(super) fn candidates(raw: &str) -> Vec<Decoded> {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    for run in runs(bytes) {
        let start = run.start;
        let run = &bytes[run];
        if !run
            .iter()
            .any(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        {
            continue;
        }
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
    escapes(raw, b"\\x", "hex escapes", &mut out);
    escapes(raw, b"%", "percent-encoding", &mut out);
    leetspeak(raw, &mut out);
    out
}

/// Text hidden in invisible characters of `raw`, which the scanner takes
/// out before reading: runs of Unicode tag characters (U+E0020..U+E007E
/// spell ASCII) and runs of variation selectors (each one byte: U+FE00..
/// U+FE0F are 0 to 15, U+E0100..U+E01EF 16 to 255), read back as text.
pub(super) fn hidden(raw: &str) -> Vec<Decoded> {
    let mut out = Vec::new();
    let mut tags: Vec<u8> = Vec::new();
    let mut selectors: Vec<u8> = Vec::new();
    let mut tags_at = 0;
    let mut selectors_at = 0;
    let flush = |buf: &mut Vec<u8>, at: usize, encoding: &'static str, out: &mut Vec<Decoded>| {
        if buf.len() >= MIN_ESCAPES
            && let Some(text) = readable(std::mem::take(buf))
        {
            out.push(Decoded { at, encoding, text });
        }
        buf.clear();
    };
    for (i, c) in raw.char_indices() {
        let code = u32::from(c);
        let tag = (0xE0020..=0xE007E)
            .contains(&code)
            .then(|| (code - 0xE0000) as u8);
        let selector = match code {
            0xFE00..=0xFE0F => Some((code - 0xFE00) as u8),
            0xE0100..=0xE01EF => u8::try_from(code - 0xE0100 + 16).ok(),
            _ => None,
        };
        match tag {
            Some(b) if tags.len() < MAX_RUN => {
                if tags.is_empty() {
                    tags_at = i;
                }
                tags.push(b);
            }
            Some(_) => {}
            None => flush(&mut tags, tags_at, "unicode tags", &mut out),
        }
        match selector {
            Some(b) if selectors.len() < MAX_RUN => {
                if selectors.is_empty() {
                    selectors_at = i;
                }
                selectors.push(b);
            }
            Some(_) => {}
            None if c.is_ascii_alphanumeric() && !selectors.is_empty() => {
                // Selectors between letters split words; they carry no
                // bytes of their own.
                selectors.clear();
            }
            None => flush(
                &mut selectors,
                selectors_at,
                "variation selectors",
                &mut out,
            ),
        }
    }
    flush(&mut tags, tags_at, "unicode tags", &mut out);
    flush(
        &mut selectors,
        selectors_at,
        "variation selectors",
        &mut out,
    );
    out
}

/// Digits that stand for letters in leetspeak, and the letters.
fn unleet(b: u8) -> Option<u8> {
    Some(match b {
        b'0' => b'o',
        b'1' => b'i',
        b'2' => b'z',
        b'3' => b'e',
        b'4' => b'a',
        b'5' => b's',
        b'6' => b'g',
        b'7' => b't',
        b'8' => b'b',
        b'@' => b'a',
        b'$' => b's',
        _ => return None,
    })
}

/// Fewest leetspeak words on a line read back as letters.
const MIN_LEET_WORDS: usize = 3;

/// Lines written in leetspeak (`1gn0r3 4ll pr3v10u5 1n57ruc710n5`), read
/// back as letters, joined into one decoded text. A word counts when it
/// mixes letters with digits that stand for letters and is no number,
/// hexadecimal constant or identifier (`0x1f`, `deadbeef`, `x86_64`); a line
/// counts when such words make at least a third of it. Lines are found
/// from 64-byte blocks where a digit touches a letter several times, so
/// the text is read byte by byte only there.
fn leetspeak(raw: &str, out: &mut Vec<Decoded>) {
    let bytes = raw.as_bytes();
    let (blocks, _) = bytes.as_chunks::<64>();
    let mut decoded = String::new();
    let mut first = None;
    let mut done = 0;
    let mut check = |from: usize, to: usize, decoded: &mut String, first: &mut Option<usize>| {
        let start = memchr::memrchr(b'\n', &bytes[..from]).map_or(0, |i| i + 1);
        let mut at = start.max(done);
        while at < to.min(bytes.len()) {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
            if let Some(line) = leet_line(&raw[at..end]) {
                first.get_or_insert(at);
                decoded.push_str(&line);
                decoded.push('\n');
            }
            at = end + 1;
        }
        done = done.max(at);
    };
    for (index, block) in blocks.iter().enumerate() {
        if digits_touching_letters(block) >= LEET_DIGITS {
            check(64 * index, 64 * (index + 1), &mut decoded, &mut first);
        }
    }
    let tail = 64 * blocks.len();
    if tail < bytes.len() && bytes[tail..].iter().any(u8::is_ascii_digit) {
        check(tail, bytes.len(), &mut decoded, &mut first);
    }
    if let (Some(at), Some(text)) = (first, readable(decoded.into_bytes())) {
        out.push(Decoded {
            at,
            encoding: "leetspeak",
            text,
        });
    }
}

/// Fewest digits beside letters in a 64-byte block whose lines are read
/// for leetspeak.
const LEET_DIGITS: u32 = 4;

/// How many digits of `block` have a letter next to them (within the
/// block), or any number below [`LEET_DIGITS`] when the block holds fewer
/// digits than that (most blocks of text: a count of the digits, which the
/// compiler vectorises, tells). Otherwise the digits' mask and the letters'
/// mask, shifted one place either way, are and-ed and counted.
fn digits_touching_letters(block: &[u8; 64]) -> u32 {
    let digits = block
        .iter()
        .fold(0_u8, |n, &b| n + u8::from(b.wrapping_sub(b'0') <= 9));
    if u32::from(digits) < LEET_DIGITS {
        return 0;
    }
    let mut digit = [0_u8; 64];
    let mut letter = [0_u8; 64];
    for ((d, l), &b) in digit.iter_mut().zip(letter.iter_mut()).zip(block) {
        *d = u8::from(b.wrapping_sub(b'0') <= 9);
        *l = u8::from((b | 0x20).wrapping_sub(b'a') <= 25);
    }
    let (digits, letters) = (gather(&digit), gather(&letter));
    // Bit `i` of the neighbours' mask: a letter at `i - 1` or `i + 1`; the
    // first and last bytes have a neighbour outside the block, not counted.
    let beside = (letters << 1) | (letters >> 1);
    (digits & beside & INNER).count_ones()
}

/// Every bit of a block's mask but the first and the last.
const INNER: u64 = !(1 | 1 << 63);

/// Bit `i` set when `flags[i]` is 1 (every flag is 0 or 1): each eight
/// flags are gathered into a byte of the mask by one multiplication.
fn gather(flags: &[u8; 64]) -> u64 {
    let (eights, _) = flags.as_chunks::<8>();
    let mut mask = 0_u64;
    for (k, eight) in eights.iter().enumerate() {
        // Bit j of the product's top byte is flag j (each flag is 0 or 1,
        // so no two terms share a bit and nothing carries).
        let gathered = u64::from_le_bytes(*eight).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= gathered << (8 * k);
    }
    mask
}

/// `line` read back from leetspeak, when enough of its words are written
/// in it. The words are counted first; the line is copied only when it
/// counts.
fn leet_line(line: &str) -> Option<String> {
    let words = || line.split(char::is_whitespace).filter(|w| !w.is_empty());
    let mut count = 0;
    let mut leet = 0;
    for word in words() {
        count += 1;
        leet += usize::from(leet_word(word).is_some_and(|(_, letters)| letters));
    }
    if leet < MIN_LEET_WORDS || leet * 3 < count {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    for word in words() {
        if !out.is_empty() {
            out.push(' ');
        }
        match leet_word(word) {
            Some((core, _)) => out.extend(core.bytes().map(|c| char::from(unleet(c).unwrap_or(c)))),
            None => out.push_str(word),
        }
    }
    Some(out)
}

/// The core of `word` (its punctuation around taken off) when it is written
/// in leetspeak, and whether it holds a letter (a lone digit or two counts
/// as leetspeak but not towards the line's count).
fn leet_word(word: &str) -> Option<(&str, bool)> {
    let core = word.trim_matches(|c: char| c.is_ascii_punctuation() && c != '@' && c != '$');
    let b = core.as_bytes();
    let letters = b.iter().filter(|c| c.is_ascii_alphabetic()).count();
    let stand_ins = b.iter().filter(|&&c| unleet(c).is_some()).count();
    let hexish = core.starts_with("0x") || (b.len() >= 6 && b.iter().all(u8::is_ascii_hexdigit));
    let identifier = b.contains(&b'_');
    let is_leet = stand_ins > 0
        && (letters > 0 || b.len() <= 2)
        && !hexish
        && !identifier
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'@' || c == b'$');
    is_leet.then_some((core, letters > 0))
}

/// Every maximal run of base64 or hex bytes of [`MIN_RUN`] bytes or more, in
/// order, each cut to [`MAX_RUN`] bytes.
///
/// The text is read 64 bytes at a time into a mask of its base64 bytes (a
/// loop of comparisons the compiler turns into vector instructions), and a
/// few shifts of two blocks' masks tell whether [`MIN_RUN`] of them stand in
/// a row there; only then are the bytes around read one by one. Source text
/// has a byte that is not base64 every few bytes, so nearly every block is
/// passed over by its mask.
fn runs(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    // Bytes before this are accounted for: a run that starts before it was
    // pushed already, or is too short.
    let mut done = 0;
    // Base64 bytes in a row just before the block.
    let mut carry = 0;
    let (blocks, _) = bytes.as_chunks::<64>();
    for (index, block) in blocks.iter().enumerate() {
        let mask = b64_mask(block);
        let long = carry + mask.trailing_ones() as usize >= MIN_RUN || has_long_run(mask);
        let from = (64 * index - carry).max(done);
        carry = if mask == u64::MAX {
            carry + 64
        } else {
            mask.leading_ones() as usize
        };
        if long {
            done = scan_runs(bytes, from, 64 * (index + 1), &mut runs);
        }
    }
    // The bytes after the last whole block, and a run reaching into them.
    let from = (64 * blocks.len() - carry).max(done);
    scan_runs(bytes, from, bytes.len(), &mut runs);
    runs
}

/// Bit `i` set when `block[i]` is a base64 or hex byte (`+`, `-`, `/`,
/// digits, letters, `_`). The bytes are classified with comparisons only (no
/// table, no branch, so the compiler vectorises the loop), then gathered
/// into the mask ([`gather`]).
fn b64_mask(block: &[u8; 64]) -> u64 {
    let mut flags = [0_u8; 64];
    for (flag, &b) in flags.iter_mut().zip(block) {
        let letter = (b | 0x20).wrapping_sub(b'a') <= 25;
        // `+` (0x2B) to `9` (0x39) less `,` and `.`.
        let digit_or_symbol = b.wrapping_sub(b'+') <= b'9' - b'+' && b != b',' && b != b'.';
        *flag = u8::from(letter | digit_or_symbol | (b == b'_'));
    }
    gather(&flags)
}

/// Whether [`MIN_RUN`] set bits stand in a row in `bits`.
fn has_long_run(bits: u64) -> bool {
    let two = bits & (bits >> 1);
    let four = two & (two >> 2);
    let eight = four & (four >> 4);
    let sixteen = eight & (eight >> 8);
    sixteen & (eight >> 16) != 0
}

/// Pushes the maximal runs of [`MIN_RUN`] bytes or more that start at or
/// after `from` and before `to` (each read to its end, past `to` if need
/// be); returns where the last one read ended, or `to`. A run that starts
/// before `from` was pushed already, or is too short.
fn scan_runs(
    bytes: &[u8],
    from: usize,
    to: usize,
    runs: &mut Vec<std::ops::Range<usize>>,
) -> usize {
    let mut at = from;
    // A run already under way at `from` is not one that starts here.
    while at > 0 && at < to && is_b64(bytes[at - 1]) && is_b64(bytes[at]) {
        at += 1;
    }
    let mut done = to;
    while at < to {
        if !is_b64(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && is_b64(bytes[at]) {
            at += 1;
        }
        if at - start >= MIN_RUN {
            runs.push(start..at.min(start + MAX_RUN));
            done = done.max(at);
        }
    }
    done.max(at)
}

/// Runs of `prefix` + two hex digits (`\x49\x67…`, `%49%67…`), with the
/// bytes between escapes (`+` as a space for percent-encoding) kept.
fn escapes(raw: &str, prefix: &[u8], encoding: &'static str, out: &mut Vec<Decoded>) {
    let bytes = raw.as_bytes();
    let finder = memchr::memmem::Finder::new(prefix);
    let mut from = 0;
    loop {
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
        if count >= MIN_ESCAPES
            && let Some(text) = readable(decoded)
        {
            out.push(Decoded {
                at: start,
                encoding,
                text,
            });
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

impl Scanner {
    /// INJ24: the decoded texts of `candidates` are scored together, as one
    /// text (each followed by a blank line), once: the cost stays linear in
    /// the file however many encoded runs it holds, and no number of decoys
    /// before a payload keeps it from being read. When that text is
    /// `elevated` or above, each decoded text holding a finding is a hit,
    /// shown with its encoding.
    pub(super) fn score_decoded(&self, candidates: &[Decoded], hits: &mut Vec<Hit>) {
        if candidates.is_empty() {
            return;
        }
        let mut joined = String::new();
        // The 1-based line of the joined text where each candidate starts.
        let mut first_lines = Vec::with_capacity(candidates.len());
        let mut line = 1_u64;
        for candidate in candidates {
            first_lines.push(line);
            joined.push_str(&candidate.text);
            joined.push_str("\n\n");
            line += 2 + newlines(candidate.text.as_bytes());
        }
        let inner = self.score(&joined, Kind::Unknown, false, None);
        if inner.level < Level::Elevated {
            return;
        }
        let mut shown = Vec::new();
        for finding in &inner.signals {
            if hits.len() >= FINDINGS_PER_SIGNAL {
                break;
            }
            let index = first_lines
                .partition_point(|&first| first <= finding.line)
                .saturating_sub(1);
            if shown.contains(&index) {
                continue;
            }
            shown.push(index);
            if let Some(candidate) = candidates.get(index) {
                let text = format!("{}: {}", candidate.encoding, candidate.text);
                hits.push(Hit::Raw(candidate.at, excerpt(&text)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The base64 and hex runs of `raw` found by reading every byte (the
    /// byte-by-byte reading `runs` falls back to, over the whole text): each
    /// maximal run of [`MIN_RUN`] bytes or more, in order, with where it
    /// starts and how far it is decoded.
    fn every_run(raw: &str) -> Vec<(usize, usize)> {
        let mut runs = Vec::new();
        scan_runs(raw.as_bytes(), 0, raw.len(), &mut runs);
        runs.into_iter().map(|r| (r.start, r.end)).collect()
    }

    #[test]
    fn runs_across_blocks_at_their_edges_and_in_the_tail_are_found() {
        for offset in [0, 1, 40, 63, 64, 65, 127, 128, 150] {
            for len in [23, 24, 25, 63, 64, 65, 200] {
                for total in [offset + len, offset + len + 1, offset + len + 70, 400] {
                    if total < offset + len {
                        continue;
                    }
                    let mut raw = " ".repeat(total);
                    raw.replace_range(offset..offset + len, &"aB3_".repeat(len).as_str()[..len]);
                    let found: Vec<(usize, usize)> = runs(raw.as_bytes())
                        .into_iter()
                        .map(|r| (r.start, r.end))
                        .collect();
                    assert_eq!(found, every_run(&raw), "{offset} {len} {total}");
                }
            }
        }
    }

    /// [`digits_touching_letters`] read byte by byte.
    fn digits_touching_letters_by_byte(block: &[u8; 64]) -> u32 {
        let digit = |b: u8| b.is_ascii_digit();
        let letter = |b: u8| b.is_ascii_alphabetic();
        (1..63)
            .filter(|&i| digit(block[i]) && (letter(block[i - 1]) || letter(block[i + 1])))
            .count() as u32
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// The masks count the digits beside letters that reading each
        /// byte counts, edges of the block included.
        #[test]
        fn digits_beside_letters_are_counted_as_byte_by_byte(
            bytes in proptest::collection::vec(
                prop_oneof![b'0'..=b'9', b'a'..=b'z', b'A'..=b'Z', any::<u8>()],
                64,
            ),
        ) {
            let mut block = [0_u8; 64];
            block.copy_from_slice(&bytes);
            let (got, want) =
                (digits_touching_letters(&block), digits_touching_letters_by_byte(&block));
            prop_assert!(got == want || (got < LEET_DIGITS && want < LEET_DIGITS));
        }

        /// Reading the text as masks finds the runs reading every byte
        /// finds.
        #[test]
        fn sampling_finds_every_run_that_reading_every_byte_finds(
            parts in proptest::collection::vec(
                prop_oneof![
                    "[a-zA-Z0-9+/_-]{1,40}",
                    "[ .:;,\n@`\\[\\]{}~\u{e9}\u{100}-\u{2ff}]{1,3}",
                ],
                0..60,
            ),
        ) {
            let raw = parts.concat();
            let found: Vec<(usize, usize)> =
                runs(raw.as_bytes()).into_iter().map(|r| (r.start, r.end)).collect();
            prop_assert_eq!(found, every_run(&raw));
        }
    }
}

//! Whole-source redaction: the one step every answer built from file content
//! goes through before anything is cut from it.
//!
//! # The rule
//!
//! The redaction decision is made on the raw text of a whole file, never on
//! what a tool renders from it. Line numbers, excerpt cuts and context windows
//! are applied afterwards, to the redacted text. So:
//!
//! - a rule sees a credential with all of its context (a PEM block's `BEGIN`
//!   line, the key on the line before its value, a header split across
//!   lines), however little of it an answer shows;
//! - a line number, a diff prefix or the edge of an excerpt can never be taken
//!   for part of a credential, because none of them exists yet.
//!
//! [`redact_source`] is that step. It keeps the line structure: a
//! replacement that swallowed line breaks (a private-key block) is followed
//! by one more copy of its placeholder per swallowed break, so every line
//! keeps its number and a line inside a redacted block reads as a
//! placeholder, not as an empty line.
//!
//! # Matches next to a placeholder
//!
//! A search that ran over raw text would tell whether a pattern matches what
//! a placeholder hides. [`touches_placeholder`] is the test `search_code`
//! uses to drop every match that overlaps a placeholder or is adjacent to
//! one, on the redacted text; see `tools::search_code` for why the answer is then
//! a function of the redacted text alone. A long line is shown as an
//! [`excerpt`] of the redacted line, centred on its match.

use std::borrow::Cow;
use std::ops::Range;

// A long line shown in part, around a match.
mod excerpt;
pub use excerpt::{Excerpt, excerpt};

use moat_protocol::response::RedactionCounts;

use crate::redact::{AnchorHits, RedactionReport, Redactor};
use crate::work::Account;

/// What every placeholder starts with (`[redacted:<rule>]`).
const PLACEHOLDER_OPEN: &str = "[redacted:";

/// Redacts the whole raw source `raw` (the text of one file or blob),
/// keeping its line breaks where they were, and adds what was replaced to
/// `report`. Returns `raw` itself when nothing was replaced (the usual case,
/// no allocation) or when `redactor` is disabled.
#[must_use]
pub fn redact_source<'a>(
    redactor: &Redactor,
    raw: &'a str,
    report: &mut RedactionReport,
) -> Cow<'a, str> {
    keep_breaks(raw, redactor.redact_str(raw, report))
}

/// [`redact_source`] with the anchor search already done by the caller
/// (see [`Redactor::redact_str_with`]).
#[must_use]
pub fn redact_source_with<'a>(
    redactor: &Redactor,
    raw: &'a str,
    hits: AnchorHits,
    report: &mut RedactionReport,
) -> Cow<'a, str> {
    keep_breaks(raw, redactor.redact_str_with(raw, hits, report))
}

fn keep_breaks(raw: &str, redacted: Option<String>) -> Cow<'_, str> {
    match redacted {
        None => Cow::Borrowed(raw),
        Some(redacted) => Cow::Owned(keep_line_breaks(raw, redacted)),
    }
}

/// Bytes as text, as every tool shows them: valid UTF-8 (nearly every
/// source file) borrowed after the standard library's fast validator, which
/// is over thirty times faster than the lossy decoder's walk; anything else
/// with U+FFFD for each invalid sequence.
#[must_use]
pub fn decode(raw: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(raw) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

/// [`redact_source`] for a tool: the text judged is counted in the
/// request's `work` (judged whole whatever the request asks of it, so the
/// count depends on the text's length alone).
#[must_use]
pub fn redact_text<'a>(
    redactor: &Redactor,
    raw: &'a str,
    report: &mut RedactionReport,
    work: &Account,
) -> Cow<'a, str> {
    if redactor.enabled() {
        work.redacted(raw.len());
    }
    redact_source(redactor, raw, report)
}

/// [`redact_text`] over bytes: invalid UTF-8 becomes U+FFFD first (as every
/// tool shows it), then the text is redacted whole.
#[must_use]
pub fn redact_source_bytes<'a>(
    redactor: &Redactor,
    raw: &'a [u8],
    report: &mut RedactionReport,
    work: &Account,
) -> Cow<'a, str> {
    match decode(raw) {
        Cow::Borrowed(text) => redact_text(redactor, text, report, work),
        Cow::Owned(text) => Cow::Owned(redact_text(redactor, &text, report, work).into_owned()),
    }
}

/// The report as the worker sends it to the broker.
#[must_use]
pub fn counts(report: &RedactionReport) -> RedactionCounts {
    RedactionCounts {
        count: report.count(),
        rules: report.rules().into_iter().map(str::to_owned).collect(),
    }
}

/// Line breaks by the line rule of `read_file`: `\n`, `\r\n` and a lone `\r`
/// each count once. The `\n`s are counted 64 bytes at a time, in byte-wide
/// sums the compiler turns into vector instructions (lines are short:
/// finding each one in turn costs several times more), and the `\r`s, rare,
/// one by one.
fn count_breaks(text: &str) -> usize {
    let bytes = text.as_bytes();
    let lone_returns = memchr::memchr_iter(b'\r', bytes)
        .filter(|&i| bytes.get(i + 1) != Some(&b'\n'))
        .count();
    let (blocks, rest) = bytes.as_chunks::<64>();
    let in_blocks: usize = blocks
        .iter()
        .map(|block| usize::from(block.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum();
    in_blocks + rest.iter().filter(|&&b| b == b'\n').count() + lone_returns
}

/// The placeholder starting at or after `from` in `text`, as a byte range.
fn next_placeholder(text: &str, from: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let mut at = from;
    loop {
        let start = at + memchr::memmem::find(bytes.get(at..)?, PLACEHOLDER_OPEN.as_bytes())?;
        let name_from = start + PLACEHOLDER_OPEN.len();
        let name_len = bytes[name_from..]
            .iter()
            .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || **b == b'-')
            .count();
        let close = name_from + name_len;
        if name_len > 0 && bytes.get(close) == Some(&b']') {
            return Some(start..close + 1);
        }
        at = start + 1;
    }
}

/// Every placeholder in `text`, in order.
pub fn placeholders(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        let found = next_placeholder(text, from)?;
        from = found.end;
        Some(found)
    })
}

/// Whether the match `m` (a byte range of `line`) overlaps a placeholder in
/// `line` or touches one (ends where it starts or starts where it ends).
#[must_use]
pub fn touches_placeholder(line: &str, m: &Range<usize>) -> bool {
    placeholders(line).any(|p| m.start <= p.end && p.start <= m.end)
}

/// Whether `line` holds a placeholder at all (the quick test before
/// [`touches_placeholder`]).
#[must_use]
pub fn has_placeholder(line: &[u8]) -> bool {
    memchr::memmem::find(line, PLACEHOLDER_OPEN.as_bytes()).is_some()
}

/// `redacted` with the line breaks its replacements swallowed put back, each
/// followed by the placeholder that swallowed it.
///
/// `redacted` is `raw` with some spans replaced by placeholders, so the two
/// are aligned piece by piece: the text between placeholders is found again
/// in `raw`, and the breaks of the raw span each run of placeholders stands
/// for are counted. Should the alignment fail (it cannot for text the rules
/// produced), the missing breaks go at the end, so the line count is still
/// right and no line inside a redacted span reads as anything but a
/// placeholder.
fn keep_line_breaks(raw: &str, redacted: String) -> String {
    let raw_breaks = count_breaks(raw);
    let kept = count_breaks(&redacted);
    // Placeholders hold no breaks and redaction only replaces text, so equal
    // counts mean no replacement swallowed one.
    if kept >= raw_breaks {
        return redacted;
    }
    align(raw, &redacted).unwrap_or_else(|| {
        let filler = placeholders(&redacted)
            .last()
            .map_or("[redacted:unaligned]", |p| &redacted[p]);
        let mut out = redacted.clone();
        for _ in kept..raw_breaks {
            out.push('\n');
            out.push_str(filler);
        }
        out
    })
}

fn align(raw: &str, redacted: &str) -> Option<String> {
    let mut out = String::with_capacity(redacted.len() + 256);
    let (mut r, mut i) = (0usize, 0usize);
    while let Some(first) = next_placeholder(redacted, i) {
        let before = &redacted[i..first.start];
        if !raw.get(r..)?.starts_with(before) {
            return None;
        }
        out.push_str(before);
        r += before.len();
        let placeholder = &redacted[first.clone()];
        if raw[r..].starts_with(placeholder) {
            // The raw text held this placeholder itself.
            out.push_str(placeholder);
            r += placeholder.len();
            i = first.end;
            continue;
        }
        // A run of adjacent placeholders stands for one raw span.
        let mut end = first.end;
        while let Some(next) = next_placeholder(redacted, end).filter(|n| n.start == end) {
            end = next.end;
        }
        out.push_str(&redacted[first.start..end]);
        let next = next_placeholder(redacted, end).map_or(redacted.len(), |n| n.start);
        let segment = &redacted[end..next];
        let resume = if next == redacted.len() {
            raw.len()
                .checked_sub(segment.len())
                .filter(|&at| at >= r && raw.get(at..) == Some(segment))?
        } else {
            find_from(raw, r + 1, segment)?
        };
        for _ in 0..count_breaks(raw.get(r..resume)?) {
            out.push('\n');
            out.push_str(placeholder);
        }
        r = resume;
        i = end;
    }
    if raw.get(r..)? != &redacted[i..] {
        return None;
    }
    out.push_str(&redacted[i..]);
    Some(out)
}

/// The first position at or after `from` where `raw` continues with `segment`.
fn find_from(raw: &str, from: usize, segment: &str) -> Option<usize> {
    // A short prefix finds the candidates; the whole segment confirms one.
    let needle = &segment.as_bytes()[..segment.len().min(64)];
    let bytes = raw.as_bytes();
    let mut at = from;
    loop {
        let found = at + memchr::memmem::find(bytes.get(at..)?, needle)?;
        if bytes[found..].starts_with(segment.as_bytes()) {
            return Some(found);
        }
        at = found + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\nabcdefghijkl\n-----END RSA PRIVATE KEY-----";

    fn redact(text: &str) -> String {
        let mut report = RedactionReport::default();
        redact_source(&Redactor::new(true), text, &mut report).into_owned()
    }

    #[test]
    fn line_numbers_survive_a_swallowed_block() {
        let raw = format!("one\n{PEM}\nafter\n");
        let out = redact(&raw);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), raw.split('\n').count(), "{out}");
        assert_eq!(lines[0], "one");
        for l in &lines[1..5] {
            assert_eq!(*l, "[redacted:private-key-block]", "{out}");
        }
        assert_eq!(lines[5], "after");
        assert!(!out.contains("MIIE"));
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let mut report = RedactionReport::default();
        let text = "fn main() {}\n";
        assert!(matches!(
            redact_source(&Redactor::new(true), text, &mut report),
            Cow::Borrowed(_)
        ));
        let secret = "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----";
        assert!(matches!(
            redact_source(&Redactor::new(false), secret, &mut report),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn breaks_are_counted_as_read_file_counts_lines() {
        for (text, breaks) in [
            ("", 0),
            ("a", 0),
            ("a\n", 1),
            ("\r\n\r\n", 2),
            ("\r\r\n\n\r", 4),
            ("x\ry", 1),
        ] {
            assert_eq!(count_breaks(text), breaks, "{text:?}");
        }
        let long = "line\r\n".repeat(100) + &"line\n".repeat(100) + "\r";
        assert_eq!(count_breaks(&long), 201);
    }

    #[test]
    fn alignment_with_repeats_and_literal_placeholders() {
        // The text after the block also appears inside it; a literal
        // placeholder in the raw text is not a replacement.
        let raw = format!("[redacted:jwt]\n{PEM}\nabcdefghijkl\n{PEM}\nz");
        let out = redact(&raw);
        assert_eq!(out.split('\n').count(), raw.split('\n').count(), "{out}");
        assert!(out.starts_with("[redacted:jwt]\n[redacted:private-key-block]\n"));
        assert!(out.contains("\nabcdefghijkl\n"));
        assert!(out.ends_with("[redacted:private-key-block]\nz"), "{out}");
    }

    #[test]
    fn crlf_and_lone_cr_count_as_one_break() {
        let raw = PEM.replace('\n', "\r\n") + "\r\nend\rx";
        let out = redact(&raw);
        assert_eq!(
            crate::tools::read_file::split_lines(&out).len(),
            crate::tools::read_file::split_lines(&raw).len(),
            "{out:?}"
        );
    }

    #[test]
    fn touching_and_overlapping_matches() {
        let line = "key = [redacted:stripe-key] tail";
        let p = line.find('[').unwrap();
        let e = line.find(']').unwrap() + 1;
        assert!(touches_placeholder(line, &(0..p)));
        assert!(touches_placeholder(line, &(p + 1..p + 4)));
        assert!(touches_placeholder(line, &(e..e + 2)));
        assert!(!touches_placeholder(line, &(0..3)));
        assert!(!touches_placeholder(line, &(e + 1..line.len())));
        assert!(!touches_placeholder("[redacted:]", &(0..1)));
    }
}

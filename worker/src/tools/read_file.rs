//! `read_file`: a UTF-8 text file, or a range of its lines.
//!
//! # Line rule
//!
//! A line ends at `\n`, at `\r\n`, or at a lone `\r` (classic Mac files); the
//! terminator is not part of the line, and a final terminator does not start
//! an extra empty line. Nothing else breaks a line: form feeds, vertical tabs,
//! U+0085, U+2028 and U+2029 are ordinary characters (splitting on them too
//! would disagree with editors, git and ripgrep about line numbers). An empty
//! file has zero lines and reads fine.

use std::borrow::Cow;
use std::io::Read;

use moat_protocol::request::ReadFileArgs;
use moat_protocol::response::{Columns, ReadFileOutput, RedactionCounts, ToolOutput};
use moat_protocol::wire_error::{Missing, TooLarge, Unsupported, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::{containment, open};
use crate::redact::RedactionReport;
use crate::sources;

// A file over `max_file_bytes`, streamed; `search_code` judges the pages of
// one with the same context window.
mod large;
pub(super) use large::{Before, CONTEXT_BYTES};
// Which lines and columns one answer holds.
pub(crate) mod select;

/// Run `read_file`.
pub fn run(
    ws: &Workspace,
    args: &ReadFileArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let path = containment::resolve(ws, &args.path)?;
    if path.is_root() {
        return Err(WireError::NotAFile);
    }
    let limit = ws.limits().max_file_bytes;
    let start = args.start_line.unwrap_or(1).max(1);
    let start_column = args.start_column.unwrap_or(1).max(1);
    // An end column alone ends the first line.
    let end_line = args.end_line.or(args.end_column.map(|_| start));
    // Every size is opened: the limit bounds what one answer holds, and a
    // larger file is answered from a bounded window of it.
    let mut opened = open::open_file(ws, &path, u64::MAX)?;
    if opened.size > limit {
        return large::run(
            ws,
            path.display().to_owned(),
            &mut opened.file,
            opened.size,
            large::Asked {
                start,
                end: end_line,
                start_column,
                end_column: args.end_column,
            },
            deadline,
        );
    }
    let bytes = read_bounded(&mut opened.file, opened.size, limit)?;
    // Valid UTF-8 (the usual case) is checked by the fast validator and
    // borrowed; anything else gets U+FFFD for each invalid sequence.
    let raw = sources::decode(&bytes);
    // Redaction keeps every line break, so the raw text has the lines the
    // redacted one will.
    let raw_lines = split_lines(&raw);
    let total = raw_lines.len() as u64;

    if total == 0 {
        if start > 1 {
            return Err(WireError::Unsupported(Unsupported::LineOutOfRange {
                start,
                total,
            }));
        }
        if let Some(end) = end_line.filter(|end| *end < start) {
            return Err(WireError::Unsupported(Unsupported::EndBeforeStart {
                start,
                end,
            }));
        }
        if start_column > 1 {
            return Err(WireError::Unsupported(Unsupported::ColumnOutOfRange {
                line: 1,
                column: start_column,
                columns: 0,
            }));
        }
        return Ok(ToolOutput::ReadFile(ReadFileOutput {
            path: path.display().to_owned(),
            size_bytes: bytes.len() as u64,
            total_lines: 0,
            start_line: 0,
            end_line: 0,
            cut: None,
            columns: Columns::default(),
            text: String::new(),
            redaction: RedactionCounts::default(),
        }));
    }
    let requested_end = end_line.unwrap_or(total);
    let range = select::Range::asked(
        total,
        start,
        start_column,
        requested_end,
        args.end_column,
        ws.limits(),
    )?;
    // An answer holding the whole file, line breaks as they are (no `\r` to
    // become `\n`), is that file's raw source: the broker redacts it whole
    // (it does so for every answer, whatever the worker did), so the same
    // decision is not made twice. Anything less is redacted here, whole,
    // before a line or a column is selected, so a credential is judged with
    // all of its context whatever range is asked, and every cut is made in
    // the redacted text.
    let whole = start == 1
        && start_column == 1
        && args.end_column.is_none()
        && requested_end >= total
        && total <= range.max_lines
        && fits(&raw_lines, range.budget)
        && memchr::memchr(b'\r', raw.as_bytes()).is_none();
    if whole {
        return Ok(ToolOutput::ReadFile(ReadFileOutput {
            path: path.display().to_owned(),
            size_bytes: bytes.len() as u64,
            total_lines: total,
            start_line: 1,
            end_line: total,
            cut: None,
            columns: Columns::default(),
            text: join_lines(&raw, &raw_lines),
            redaction: RedactionCounts::default(),
        }));
    }
    let mut report = RedactionReport::default();
    let selection = match sources::redact_source(ws.redactor(), &raw, &mut report) {
        // Nothing replaced: the lines already split are the answer's.
        Cow::Borrowed(_) => select::select(&raw_lines, 1, &range)?,
        Cow::Owned(redacted) => select::select(&split_lines(&redacted), 1, &range)?,
    };
    Ok(ToolOutput::ReadFile(ReadFileOutput {
        path: path.display().to_owned(),
        size_bytes: bytes.len() as u64,
        total_lines: total,
        start_line: start,
        end_line: selection.end_line,
        cut: selection.cut,
        columns: selection.columns,
        text: selection.text,
        redaction: sources::counts(&report),
    }))
}

/// Whether all of `lines`, numbered, fit in `budget` bytes (bytes are at
/// least characters).
fn fits(lines: &[&str], budget: usize) -> bool {
    let width = lines.len().to_string().len() + 3;
    let mut used = 0usize;
    lines.iter().all(|l| {
        used += l.len() + width;
        used <= budget
    })
}

/// `selected.join("\n")` for consecutive lines of `text`. When `text` has no
/// `\r`, every line ends at a single `\n`, so the joined lines are the span
/// of `text` from the first selected line to the end of the last: one copy,
/// no join.
fn join_lines(text: &str, selected: &[&str]) -> String {
    if let (Some(first), Some(last)) = (selected.first(), selected.last())
        && memchr::memchr(b'\r', text.as_bytes()).is_none()
    {
        let base = text.as_ptr() as usize;
        let from = first.as_ptr() as usize - base;
        let to = last.as_ptr() as usize - base + last.len();
        if let Some(span) = text.get(from..to) {
            return span.to_owned();
        }
    }
    selected.join("\n")
}

/// Read at most `limit` bytes; a NUL in the first 8 KiB is `binary_file`, a
/// file that grew past `limit` while being read is `too_large`.
pub(crate) fn read_bounded<R: Read>(
    r: &mut R,
    size_hint: u64,
    limit: u64,
) -> Result<Vec<u8>, WireError> {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "bounded by the file cap, 64 MiB at most"
    )]
    let cap = size_hint.min(limit) as usize;
    let mut buf = Vec::with_capacity(cap + 1);
    r.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|_| WireError::NotFound(Missing::Unreadable))?;
    if buf.len() as u64 > limit {
        return Err(WireError::TooLarge(TooLarge::Grew { limit }));
    }
    let sniff = &buf[..buf.len().min(moat_protocol::limits::BINARY_SNIFF_BYTES)];
    if memchr::memchr(0, sniff).is_some() {
        return Err(WireError::BinaryFile);
    }
    Ok(buf)
}

/// Split `text` into lines by the rule in the module docs.
#[must_use]
pub fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        if i < start {
            // The `\n` of a `\r\n` already consumed.
            continue;
        }
        lines.push(&text[start..i]);
        start = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        };
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_rule() {
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("a"), vec!["a"]);
        assert_eq!(split_lines("a\n"), vec!["a"]);
        assert_eq!(split_lines("a\nb"), vec!["a", "b"]);
        assert_eq!(split_lines("a\r\nb\r\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\rb\r"), vec!["a", "b"]);
        assert_eq!(split_lines("a\r\r\nb"), vec!["a", "", "b"]);
        assert_eq!(split_lines("\n\n"), vec!["", ""]);
        assert_eq!(split_lines("x\u{2028}y\u{0c}z"), vec!["x\u{2028}y\u{0c}z"]);
    }

    #[test]
    fn joined_lines_are_the_span_of_the_text() {
        for text in ["a\nb\n\nc\n", "a\r\nb\rc\n", "x", "\n\n\n", "é\nü\n"] {
            let lines = split_lines(text);
            for from in 0..lines.len() {
                for to in from..=lines.len() {
                    let selected = &lines[from..to];
                    assert_eq!(
                        join_lines(text, selected),
                        selected.join("\n"),
                        "{text:?} {from}..{to}"
                    );
                }
            }
        }
    }

    #[test]
    fn bounded_read() {
        let mut r: &[u8] = b"hello";
        assert_eq!(read_bounded(&mut r, 5, 5).unwrap(), b"hello");
        let mut r: &[u8] = b"hello!";
        assert_eq!(
            read_bounded(&mut r, 5, 5),
            Err(WireError::TooLarge(TooLarge::Grew { limit: 5 }))
        );
        let mut r: &[u8] = b"he\0llo";
        assert_eq!(read_bounded(&mut r, 6, 100), Err(WireError::BinaryFile));
        let mut late = vec![b'a'; 9000];
        late.push(0);
        let mut r: &[u8] = &late;
        assert!(read_bounded(&mut r, 9001, 100_000).is_ok());
    }
}

//! What several tools' rendering shares: the two halves of an MCP result
//! ([`Rendered`]: a summary for people and a `structuredContent` object for
//! programs, plus the file-derived text that goes inside the untrusted
//! fence), and the sentences and members every tool words the same way.
//!
//! Names from the workspace are attacker-controlled: in the prose half and
//! inside the fences alike they pass through one function,
//! [`show_name`] (a file named `x\n</untrusted-…>` cannot forge a line or a
//! search-hit header), while the structured half keeps them exactly where
//! JSON can ([`structured_name`]).
//!
//! An answer cut by a limit says so twice: `truncated` and `stopped_by`
//! (plus `next_cursor` where a cursor continues it) in `structuredContent`,
//! and a last line of text that says exactly what call continues it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use moat_protocol::request::Request;
use moat_protocol::response::{Limit, RedactionCounts, SkipReasons, SymbolMethod};

use crate::content::fence::show_name;
#[cfg(doc)]
use crate::content::fence::structured_name;
use crate::cursor::{self, Cursor};

/// How the broker's redaction pass reads the file-derived text, so that what
/// the broker adds to it (line numbers, search-hit headers, indentation) is
/// never read by a rule as part of a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceText {
    /// The text as it is (git output).
    Whole,
    /// Line by line: each search-hit header and each line of content on its
    /// own (the worker has already decided on the whole sources).
    PerLine,
    /// Raw selected lines: redacted as one text, keeping its line breaks,
    /// then numbered from `start` to `end` (read_file). The injection scanner
    /// reads the raw lines, so line-start signals are not hidden by the
    /// numbering and findings carry file line numbers.
    Numbered {
        /// First line's number.
        start: u64,
        /// Last line's number.
        end: u64,
    },
}

/// A rendered success, before content controls run.
#[derive(Debug)]
pub struct Rendered {
    /// First text block.
    pub summary: String,
    /// `structuredContent` (content controls add `redaction` and, for
    /// file-content tools, `untrusted_content` and `content_assessment`).
    pub structured: Map<String, Value>,
    /// File-derived text for the fence (file-content tools only).
    pub untrusted: Option<String>,
    /// The path of the one file the fenced text comes from (read_file): it
    /// tells the scanner how to read a line (comment, string literal, prose).
    pub scan_path: Option<String>,
    /// How the broker's redaction pass reads `untrusted` before it is fenced.
    pub fence_text: FenceText,
    /// What the worker's redaction of whole sources replaced (added to the
    /// result's redaction report).
    pub worker_redaction: RedactionCounts,
}

pub(crate) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// How a workspace-relative path is shown in prose: `<root>/` for the root.
pub(crate) fn display(rel: &str, root: &str) -> String {
    if rel.is_empty() || rel == "." {
        format!("{root}/")
    } else {
        show_name(rel).into_owned()
    }
}

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The notes for files a walking tool skipped: nothing it met goes
/// uncounted, and the reason is given.
pub(crate) fn skipped_notes(r: &SkipReasons, n: &mut Vec<String>) {
    let content = r.binary + r.too_large + r.hard_link;
    if content > 0 {
        n.push(format!(
            "{} skipped as binary or oversized",
            plural(content, "file", "files")
        ));
    }
    let unexamined = r.path_too_long + r.unreadable + r.vanished + r.name_not_utf8;
    if unexamined > 0 {
        let why: Vec<String> = [
            (r.path_too_long, "path too long"),
            (r.unreadable, "unreadable"),
            (r.vanished, "gone when opened"),
            (r.name_not_utf8, "name not UTF-8"),
        ]
        .iter()
        .filter(|(c, _)| *c > 0)
        .map(|(c, w)| format!("{c} {w}"))
        .collect();
        n.push(format!(
            "{} could not be examined and {} skipped ({})",
            plural(unexamined, "entry", "entries"),
            if unexamined == 1 { "was" } else { "were" },
            why.join(", ")
        ));
    }
}

/// The notes for the entries a listing passed over, `(hidden by the
/// denylist, symbolic links not followed, special files)`: none goes
/// uncounted.
pub(crate) fn passed_over_notes((hidden, symlinks, special): (u64, u64, u64), n: &mut Vec<String>) {
    if hidden > 0 {
        n.push(format!(
            "{} hidden by the denylist",
            plural(hidden, "entry", "entries")
        ));
    }
    if symlinks > 0 {
        n.push(format!(
            "{} not followed",
            plural(symlinks, "symbolic link", "symbolic links")
        ));
    }
    if special > 0 {
        n.push(format!(
            "{} (pipe, socket or device) skipped",
            plural(special, "special file", "special files")
        ));
    }
}

/// The sentence for the `n` files or paths an answer left out because the
/// denylist covers them (counted, never named).
pub(crate) fn withheld_sentence(n: u64, one: &str, many: &str) -> String {
    format!(
        "{} withheld: the denylist covers {}.",
        plural(n, one, many),
        if n == 1 { "it" } else { "them" }
    )
}

/// The non-zero skip counts, by reason.
pub(crate) fn skipped_json(r: &SkipReasons) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in [
        ("path_too_long", r.path_too_long),
        ("unreadable", r.unreadable),
        ("vanished", r.vanished),
        ("name_not_utf8", r.name_not_utf8),
        ("binary", r.binary),
        ("too_large", r.too_large),
        ("hard_link", r.hard_link),
    ] {
        if v > 0 {
            m.insert(k.into(), Value::from(v));
        }
    }
    Value::Object(m)
}

/// What each limit in `stopped_by` means for an answer that shows `shown`
/// `items` (e.g. "matches") after examining `scanned` files: which part of
/// the work was not done, and what to ask next.
pub(crate) fn limit_notes(
    stopped_by: &[Limit],
    items: &str,
    (shown, scanned): (u64, u64),
    narrow: &str,
    n: &mut Vec<String>,
) {
    for limit in stopped_by {
        match limit {
            Limit::Files => n.push(format!(
                "incomplete: the walk stopped at the file limit after {}, so files not reached may also have {items}; {narrow}",
                plural(scanned, "file", "files")
            )),
            Limit::Results => n.push(format!(
                "more {items} exist than the {shown} shown; {narrow}"
            )),
            Limit::Bytes => n.push(format!(
                "the answer's size limit stopped it after {shown} {items}, and more may exist; {narrow}"
            )),
            Limit::Entries => n.push(format!("stopped at the entry limit after {shown} {items}")),
            Limit::Lines => n.push(format!("stopped at the line limit after {shown} {items}")),
            Limit::Depth => n.push("directories at the depth limit were not expanded".to_owned()),
            Limit::Commits => n.push(format!("stopped at the commit limit after {shown} {items}")),
            Limit::Time => n.push("stopped at the time budget; what is shown is a lower bound".to_owned()),
        }
    }
}

/// The cursor continuing a paged answer after `position` items: only when
/// what stopped it was the page or the answer budget (a walk cut by its
/// file limit or the clock saw an arbitrary part of the tree, so no
/// position in it is stable) and the position is within the paging reach.
pub(crate) fn page_cursor(
    request: &Request,
    stopped_by: &[Limit],
    position: u64,
) -> Option<String> {
    let paged = stopped_by
        .iter()
        .any(|l| matches!(l, Limit::Results | Limit::Bytes));
    let unstable = stopped_by
        .iter()
        .any(|l| matches!(l, Limit::Files | Limit::Time));
    (paged && !unstable && position < moat_protocol::limits::MAX_PAGED_ITEMS).then(|| {
        cursor::encode(Cursor {
            query: super::query_fingerprint(request),
            position,
        })
    })
}

/// The last line of an answer a cursor continues: the same for every paged
/// tool.
pub(crate) fn cursor_line(tool: &str, cursor: &str) -> String {
    format!("… more: call {tool} again with the same arguments and cursor=\"{cursor}\"")
}

/// The `stopped_by` member: the limits that stopped the work, by their
/// names in the one vocabulary every tool uses (empty: complete).
pub(crate) fn stopped_json(stopped_by: &[Limit]) -> Value {
    Value::Array(stopped_by.iter().map(|l| Value::from(l.as_str())).collect())
}

pub(crate) fn notes(summary: &mut String, notes: &[String]) {
    if notes.is_empty() {
        summary.push('.');
    } else {
        let _ = write!(summary, "; {}.", notes.join("; "));
    }
}

/// The cursor continuing `request` after `position` items, when `cut` is
/// one a cursor can continue (a full page); a walk cut by the file cap or
/// the clock saw a different set of files each time, so no position in it
/// is stable.
pub(crate) fn next_cursor(request: &Request, cut: Option<Limit>, position: u64) -> Option<String> {
    matches!(cut, Some(Limit::Results | Limit::Bytes)).then(|| {
        cursor::encode(Cursor {
            query: super::query_fingerprint(request),
            position,
        })
    })
}

/// The last line of a paged answer cut by a limit.
pub(crate) fn more_line(tool: &str, cut: Limit, cursor: Option<&str>) -> String {
    match (cut, cursor) {
        (Limit::Results | Limit::Bytes, Some(c)) => cursor_line(tool, c),
        (Limit::Time, _) => format!(
            "… more: the walk stopped at the time budget; call {tool} again with a narrower path"
        ),
        _ => format!(
            "… more: the walk stopped at the file limit; call {tool} again with a narrower path"
        ),
    }
}

/// Add `truncated`, `stopped_by` and `next_cursor` to `structured`.
pub(crate) fn cut_fields(
    structured: &mut serde_json::Map<String, Value>,
    cut: Option<Limit>,
    cursor: Option<&str>,
) {
    structured.insert("truncated".into(), Value::Bool(cut.is_some()));
    structured.insert("stopped_by".into(), stopped_json(cut.as_slice()));
    if let Some(c) = cursor {
        structured.insert("next_cursor".into(), Value::from(c));
    }
}

/// A result with file-derived text for the fence, read by the redaction
/// pass as `how` says.
pub(crate) fn fenced(
    summary: String,
    structured: Map<String, Value>,
    untrusted: String,
    how: FenceText,
) -> Rendered {
    Rendered {
        summary,
        structured,
        untrusted: Some(untrusted),
        fence_text: how,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// A result with no fenced text: a listing of names and counts.
pub(crate) fn listing(summary: String, structured: serde_json::Map<String, Value>) -> Rendered {
    Rendered {
        summary,
        structured,
        untrusted: None,
        fence_text: FenceText::Whole,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// The last line of an answer a limit cut: the call that continues it,
/// with its arguments as JSON.
pub(crate) fn continue_with(tool: &str, args: &Value) -> String {
    format!("To continue, call {tool} with {args}.")
}

pub(crate) fn method_str(m: SymbolMethod) -> &'static str {
    match m {
        SymbolMethod::Parsed => "parsed",
        SymbolMethod::Pattern => "pattern",
    }
}

/// Number `text`'s lines from `start`: the number right-aligned to the width
/// of `end`, two spaces, the line. Lines are split on `\n` only (the worker
/// has already applied the line rule).
#[must_use]
pub fn number_lines(text: &str, start: u64, end: u64) -> String {
    if end == 0 {
        return String::new();
    }
    let width = decimal_digits(end);
    let lines = end.saturating_sub(start).saturating_add(1);
    let extra = usize::try_from(lines.saturating_mul(width as u64 + 2)).unwrap_or(0);
    let mut out = String::with_capacity(text.len().saturating_add(extra));
    let mut rest = text;
    let mut n = start;
    loop {
        push_right_aligned(&mut out, n, width);
        out.push_str("  ");
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => {
                out.push_str(&rest[..=i]);
                rest = &rest[i + 1..];
                n += 1;
            }
            None => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

fn decimal_digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// `n` in decimal, padded on the left with spaces to `width`.
fn push_right_aligned(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - at;
    for _ in len..width {
        out.push(' ');
    }
    for d in &digits[at..] {
        out.push(char::from(*d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering() {
        assert_eq!(number_lines("a\nb", 9, 10), " 9  a\n10  b");
        assert_eq!(number_lines("x", 1, 1), "1  x");
        assert_eq!(number_lines("", 0, 0), "");
        assert_eq!(
            number_lines("a\n\nb\n", 98, 101),
            " 98  a\n 99  \n100  b\n101  "
        );
        assert_eq!(number_lines("é", 7, 1234), "   7  é");
        // The same as the obvious formatting, for any range and text.
        let text = "x\n\ny\u{2028}z\n\r\n";
        for (start, end) in [(1, 6), (9, 14), (99_995, 100_000), (1, 1_000_000)] {
            let width = end.to_string().len();
            let expected: Vec<String> = text
                .split('\n')
                .enumerate()
                .map(|(i, l)| format!("{:>width$}  {l}", start + i as u64))
                .collect();
            assert_eq!(number_lines(text, start, end), expected.join("\n"));
        }
    }
}

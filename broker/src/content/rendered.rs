//! What a tool's rendering hands the controls: the two halves of an MCP
//! result ([`Rendered`]: a summary for people and a `structuredContent`
//! object for programs), plus the file-derived text that goes inside the
//! untrusted fence and how the redaction pass reads it ([`FenceText`]);
//! and what a failure hands them instead ([`Refusal`]).

use serde_json::{Map, Value};

use moat_protocol::response::RedactionCounts;

/// A refusal as the client sees it (worded by `error.rs`; the controls
/// redact it and build the failure result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `structuredContent.error`.
    pub code: &'static str,
    /// One sentence.
    pub message: String,
    /// What to do instead (may be empty).
    pub remedy: String,
}

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
    /// The path of the one file the fenced text comes from (read_file, a
    /// file shown by git_show; set by the tool's own rendering): it tells the
    /// scanner how to read a line (comment, string literal, prose).
    pub scan_path: Option<String>,
    /// How the broker's redaction pass reads `untrusted` before it is fenced.
    pub fence_text: FenceText,
    /// What the worker's redaction of whole sources replaced (added to the
    /// result's redaction report).
    pub worker_redaction: RedactionCounts,
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

//! Comments and literals of C and C++ found by a lexer, not a parser.
//!
//! Whether an occurrence sits in a comment or a literal is a lexical fact.
//! For C and C++ a parser is the wrong tool for it: the preprocessor means
//! most real files (macros used as statements, declarations behind
//! attributes) do not parse cleanly without their headers, and the parser's
//! error recovery is slow on exactly those files. This lexer knows the
//! token rules that decide it: `//` comments (with backslash-newline
//! continuation), `/* … */` comments, string and character literals with
//! their escapes and encoding prefixes, C++ raw strings (`R"delim(…)delim"`),
//! digit separators (`1'000`), and `#include <…>` header names. A literal
//! that reaches the end of its line unterminated ends there, as the
//! compiler's error would, so one stray quote cannot hide the rest of the
//! file. It runs in one linear pass over bytes and never fails.

use std::ops::Range;

/// The byte spans of `source` that are comments, literals or header names,
/// in order and disjoint.
fn non_code_spans(source: &str) -> Vec<Range<usize>> {
    let b = source.as_bytes();
    let n = b.len();
    let mut spans = Vec::new();
    let mut i = 0;
    // Only white space since the start of the line (a directive may start).
    let mut line_start = true;
    // Where the identifier or number being read started.
    let mut word: Option<usize> = None;
    while i < n {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            word.get_or_insert(i);
            line_start = false;
            i += 1;
            continue;
        }
        let word_start = word.take();
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = line_comment_end(b, i + 2);
                spans.push(i..end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = memchr::memmem::find(&b[i + 2..], b"*/").map_or(n, |at| i + 2 + at + 2);
                spans.push(i..end);
                i = end;
                line_start = false;
            }
            b'"' => {
                let start = literal_start(b, word_start, i);
                let end = match word_start.map(|w| &b[w..i]) {
                    Some(prefix) if is_raw_prefix(prefix) => raw_string_end(b, i + 1),
                    _ => None,
                }
                .unwrap_or_else(|| quoted_end(b, i + 1, b'"'));
                spans.push(start..end);
                i = end;
                line_start = false;
            }
            b'\'' if word_start.is_some_and(|w| b[w].is_ascii_digit()) => {
                // A digit separator: the number goes on.
                word = word_start;
                i += 1;
            }
            b'\'' => {
                let start = literal_start(b, word_start, i);
                let end = quoted_end(b, i + 1, b'\'');
                spans.push(start..end);
                i = end;
                line_start = false;
            }
            b'#' if line_start => {
                i = directive(b, i + 1, &mut spans);
                line_start = false;
            }
            _ => {
                line_start = false;
                i += 1;
            }
        }
    }
    spans
}

/// The end of a `//` comment whose text starts at `from`: the newline not
/// escaped by a backslash (which is left out), or the end.
fn line_comment_end(b: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(nl) = memchr::memchr(b'\n', &b[at..]) {
        let nl = at + nl;
        let before = if nl > 0 && b[nl - 1] == b'\r' {
            nl.saturating_sub(2)
        } else {
            nl.saturating_sub(1)
        };
        if nl > from && before >= from && b[before] == b'\\' {
            at = nl + 1;
            continue;
        }
        return nl;
    }
    b.len()
}

/// Where a literal whose quote is at `quote` starts: at its encoding or
/// raw prefix when the identifier just before the quote is one.
fn literal_start(b: &[u8], word: Option<usize>, quote: usize) -> usize {
    match word {
        Some(w) if matches!(&b[w..quote], b"L" | b"u" | b"U" | b"u8") => w,
        Some(w) if is_raw_prefix(&b[w..quote]) => w,
        _ => quote,
    }
}

/// Whether the identifier just before a `"` makes it a raw string.
fn is_raw_prefix(prefix: &[u8]) -> bool {
    matches!(prefix, b"R" | b"u8R" | b"uR" | b"UR" | b"LR")
}

/// The end (past the closing quote) of a raw string whose delimiter starts
/// at `from`, or `None` if what follows is not a raw string's opening.
fn raw_string_end(b: &[u8], from: usize) -> Option<usize> {
    let open = from + b[from..].iter().take(17).position(|&c| c == b'(')?;
    let delim = &b[from..open];
    if delim
        .iter()
        .any(|&c| matches!(c, b' ' | b')' | b'\\' | b'\t' | b'\n' | b'"'))
    {
        return None;
    }
    let mut close = Vec::with_capacity(delim.len() + 2);
    close.push(b')');
    close.extend_from_slice(delim);
    close.push(b'"');
    Some(
        memchr::memmem::find(&b[open + 1..], &close)
            .map_or(b.len(), |at| open + 1 + at + close.len()),
    )
}

/// The end (past the closing `quote`) of a literal whose text starts at
/// `from`; an unescaped newline ends it unterminated (before the newline).
fn quoted_end(b: &[u8], from: usize, quote: u8) -> usize {
    let mut j = from;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// A preprocessor directive whose name starts at (or after white space
/// from) `from`: an `#include <header>` name is a span; the rest of the
/// directive is lexed as ordinary text. Returns where to go on.
fn directive(b: &[u8], from: usize, spans: &mut Vec<Range<usize>>) -> usize {
    let skip_blank = |mut j: usize| {
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        j
    };
    let name_start = skip_blank(from);
    let mut name_end = name_start;
    while name_end < b.len() && b[name_end].is_ascii_alphabetic() {
        name_end += 1;
    }
    let name = &b[name_start..name_end];
    if matches!(name, b"include" | b"include_next" | b"import") {
        let open = skip_blank(name_end);
        if b.get(open) == Some(&b'<') {
            let end = b[open..]
                .iter()
                .position(|&c| c == b'>' || c == b'\n')
                .map_or(b.len(), |at| {
                    if b[open + at] == b'>' {
                        open + at + 1
                    } else {
                        open + at
                    }
                });
            spans.push(open..end);
            return end;
        }
    }
    name_end
}

/// Whether each of `ranges` (in ascending order of start) of the C or C++
/// `source` is code: its start lies in no comment, literal or header name.
#[must_use]
pub fn c_code_ranges(source: &str, ranges: &[Range<usize>]) -> Vec<bool> {
    let spans = non_code_spans(source);
    let mut k = 0;
    ranges
        .iter()
        .map(|r| {
            while k < spans.len() && spans[k].end <= r.start {
                k += 1;
            }
            spans.get(k).is_none_or(|s| s.start > r.start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each occurrence of `word` in `src` is code.
    fn code(src: &str, word: &str) -> Vec<bool> {
        let ranges: Vec<Range<usize>> = src
            .match_indices(word)
            .map(|(at, w)| at..at + w.len())
            .collect();
        c_code_ranges(src, &ranges)
    }

    #[test]
    fn comments_and_literals_are_not_code() {
        let src = "int x = 1; // x here\n/* x\n x */ x = 'x' + \"x\\\" x\";\nx;\n";
        assert_eq!(
            code(src, "x"),
            [true, false, false, false, true, false, false, false, true]
        );
    }

    #[test]
    fn a_line_comment_continues_past_an_escaped_newline() {
        let src = "// a \\\n x\nx\n// b \\\r\n x\r\nx";
        assert_eq!(code(src, "x"), [false, true, false, true]);
    }

    #[test]
    fn prefixes_raw_strings_and_digit_separators() {
        let src = concat!(
            "a = L\"x\"; b = u8'x'; c = 1'000'000 + x;\n",
            "d = R\"d(x \" ) x)\" x)d\" + x;\n",
            "e = R\"(x)\"; f = Rx\"x\";\n",
        );
        assert_eq!(
            code(src, "x"),
            [
                false, false, true, false, false, false, true, false, true, false
            ]
        );
    }

    #[test]
    fn header_names_are_not_code_but_the_rest_of_a_directive_is() {
        let src = "#include <x.h>\n  #  include \"x.h\"\n#define x 1\n#if x\n";
        assert_eq!(code(src, "x"), [false, false, true, true]);
    }

    #[test]
    fn an_unterminated_literal_ends_at_its_line() {
        let src = "#error don't x\nx = \"x\nx;\n/* x";
        assert_eq!(code(src, "x"), [false, true, false, true, false]);
    }

    #[test]
    fn any_bytes_lex_without_panicking() {
        for src in [
            "\"",
            "'",
            "R\"",
            "R\"(",
            "/",
            "/*",
            "//\\",
            "#",
            "#include <",
            "\\",
        ] {
            let _ = non_code_spans(src);
            assert_eq!(code(src, "x"), Vec::<bool>::new());
        }
        let s = "é'x' \"é\" /*é*/ x";
        assert_eq!(code(s, "x"), [false, true]);
    }
}

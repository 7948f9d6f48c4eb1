//! Which part of a text's lines one answer holds: lines
//! `start_line..=end_line`, the first from `start_column`, the last up to
//! `end_column`, within the line cap and the answer budget. `read_file` and
//! `git_show` (a file at a revision) answer with it.
//!
//! # Columns
//!
//! A column is a character (a Unicode scalar value) of the line as answered,
//! that is of the redacted text, 1-based: every position an answer reports is
//! a function of what it shows, never of what redaction hid.
//!
//! # Every answer makes progress
//!
//! Whole lines are given while they fit the budget (each costs its bytes and
//! its number column). The first line is the exception: when it alone does not
//! fit, the answer holds as many of its characters as the budget takes (at
//! least one) and stops inside it, with the column the next part starts at.
//! So a call that follows each answer's continuation reads every character
//! of the text exactly once, whatever the length of its lines.

use moat_protocol::limits::Limits;
use moat_protocol::response::{Columns, Limit};
use moat_protocol::wire_error::{Unsupported, WireError};

/// What to select.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    /// First line, 1-based, at most the number of lines.
    pub(crate) start_line: u64,
    /// Column of the first line to start at, 1-based.
    pub(crate) start_column: u64,
    /// Last line asked for, at least `start_line`, at most the number of
    /// lines.
    pub(crate) end_line: u64,
    /// Last column of `end_line` asked for (inclusive); `None`: its end.
    pub(crate) end_column: Option<u64>,
    /// Most lines one answer holds.
    pub(crate) max_lines: u64,
    /// Characters of numbered text one answer holds.
    pub(crate) budget: usize,
}

impl Range {
    /// The range a call asks for in a text of `total` lines (at least one):
    /// a start past the last line, or an end before the start, is refused;
    /// an end past the last line stops at it.
    pub(crate) fn asked(
        total: u64,
        start_line: u64,
        start_column: u64,
        end_line: u64,
        end_column: Option<u64>,
        limits: &Limits,
    ) -> Result<Range, WireError> {
        if start_line > total {
            return Err(WireError::Unsupported(Unsupported::LineOutOfRange {
                start: start_line,
                total,
            }));
        }
        if end_line < start_line {
            return Err(WireError::Unsupported(Unsupported::EndBeforeStart {
                start: start_line,
                end: end_line,
            }));
        }
        Ok(Range {
            start_line,
            start_column,
            end_line: end_line.min(total),
            end_column,
            max_lines: u64::from(limits.max_read_lines),
            budget: limits.answer_bytes(),
        })
    }
}

/// What was selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    /// The last line shown (in part, when `columns.end` says so).
    pub(crate) end_line: u64,
    /// Where the text starts and stops inside its lines.
    pub(crate) columns: Columns,
    /// The limit that stopped the answer before the asked range's end.
    pub(crate) cut: Option<Limit>,
    /// The lines joined by `\n`.
    pub(crate) text: String,
}

/// The byte offset of character `n` (0-based) of `line`, or its length.
fn byte_at(line: &str, n: u64) -> usize {
    usize::try_from(n)
        .ok()
        .and_then(|n| line.char_indices().nth(n))
        .map_or(line.len(), |(i, _)| i)
}

/// Select `r` of `lines` (see the module docs); `lines[0]` is line
/// number `base`.
pub(crate) fn select(lines: &[&str], base: u64, r: &Range) -> Result<Selection, WireError> {
    let line = |n: u64| -> &str {
        usize::try_from(n.saturating_sub(base))
            .ok()
            .and_then(|i| lines.get(i))
            .copied()
            .unwrap_or("")
    };
    let first = line(r.start_line);
    let first_columns = first.chars().count() as u64;
    let start_column = r.start_column.max(1);
    if start_column > first_columns.max(1) {
        return Err(WireError::Unsupported(Unsupported::ColumnOutOfRange {
            line: r.start_line,
            column: start_column,
            columns: first_columns,
        }));
    }
    if let Some(end) = r.end_column.filter(|_| r.end_line == r.start_line)
        && end < start_column
    {
        return Err(WireError::Unsupported(Unsupported::EndColumnBeforeStart {
            start: start_column,
            end,
        }));
    }
    let last = r
        .end_line
        .min(r.start_line.saturating_add(r.max_lines.max(1)) - 1);
    let width = last.to_string().len() + 3;
    // The asked end of line `n`: its length, or `end_column` on the last
    // asked line.
    let stop = |n: u64, columns: u64| match r.end_column {
        Some(c) if n == r.end_line => c.min(columns),
        _ => columns,
    };

    let from = byte_at(first, start_column - 1);
    let first_stop = stop(r.start_line, first_columns);
    let piece_columns = first_stop + 1 - start_column;
    let room = r.budget.saturating_sub(width).max(1) as u64;
    let mut columns = Columns {
        start: start_column,
        end: None,
    };
    if piece_columns > room {
        // The first line alone is over the budget: as much of it as fits.
        let shown_to = start_column - 1 + room;
        let to = from + byte_at(&first[from..], room);
        columns.end = Some((shown_to, first_columns));
        return Ok(Selection {
            end_line: r.start_line,
            columns,
            cut: Some(Limit::Bytes),
            text: first[from..to].to_owned(),
        });
    }
    let to = from + byte_at(&first[from..], piece_columns);
    let mut text = first[from..to].to_owned();
    if first_stop < first_columns {
        columns.end = Some((first_stop, first_columns));
    }
    let mut used = (to - from) + width;
    let mut end_line = r.start_line;
    let mut cut = None;
    for n in r.start_line + 1..=last {
        let l = line(n);
        let shown = match r.end_column {
            Some(c) if n == r.end_line => {
                let all = l.chars().count() as u64;
                let c = c.min(all);
                columns.end = (c < all).then_some((c, all));
                &l[..byte_at(l, c)]
            }
            _ => l,
        };
        let cost = shown.len() + width;
        if used + cost > r.budget {
            columns.end = None;
            cut = Some(Limit::Bytes);
            break;
        }
        used += cost;
        text.push('\n');
        text.push_str(shown);
        end_line = n;
    }
    if end_line < r.end_line && cut.is_none() {
        cut = Some(Limit::Lines);
    }
    Ok(Selection {
        end_line,
        columns,
        cut,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn range(start_line: u64, start_column: u64, end_line: u64, budget: usize) -> Range {
        Range {
            start_line,
            start_column,
            end_line,
            end_column: None,
            max_lines: 1000,
            budget,
        }
    }

    /// Follow every answer's continuation from the start; the pieces, put
    /// together, must be the text, and each answer must hold something.
    fn read_all(lines: &[&str], budget: usize) -> String {
        let total = lines.len() as u64;
        let (mut line, mut column) = (1u64, 1u64);
        let mut out = String::new();
        let mut calls = 0;
        loop {
            calls += 1;
            assert!(calls < 100_000, "no progress");
            let s = select(lines, 1, &range(line, column, total, budget)).unwrap();
            out.push_str(&s.text);
            match (s.cut, s.columns.end) {
                (None, _) => break,
                (Some(_), Some((c, _))) => {
                    assert!(s.end_line > line || c >= column);
                    line = s.end_line;
                    column = c + 1;
                }
                (Some(_), None) => {
                    out.push('\n');
                    line = s.end_line + 1;
                    column = 1;
                }
            }
        }
        out
    }

    #[test]
    fn a_long_first_line_is_read_in_parts() {
        let long = "é".repeat(10_000);
        let lines = ["short", long.as_str(), "after"];
        let s = select(&lines, 1, &range(1, 1, 3, 4000)).unwrap();
        assert_eq!(
            (s.end_line, s.cut, s.text.as_str()),
            (1, Some(Limit::Bytes), "short")
        );
        let s = select(&lines, 1, &range(2, 1, 3, 4000)).unwrap();
        assert_eq!(s.end_line, 2);
        assert_eq!(s.columns.start, 1);
        assert_eq!(s.columns.end, Some((3996, 10_000)));
        assert_eq!(s.text.chars().count(), 3996);
        let s = select(&lines, 1, &range(2, 9000, 3, 4000)).unwrap();
        assert_eq!(s.cut, None);
        assert_eq!(s.text, format!("{}\nafter", "é".repeat(1001)));
        assert_eq!(read_all(&lines, 4000), lines.join("\n"));
    }

    #[test]
    fn columns_out_of_range_are_refused() {
        let lines = ["abc", "de"];
        assert!(matches!(
            select(&lines, 1, &range(1, 5, 2, 4000)),
            Err(WireError::Unsupported(Unsupported::ColumnOutOfRange {
                line: 1,
                column: 5,
                columns: 3
            }))
        ));
        let mut r = range(1, 3, 1, 4000);
        r.end_column = Some(2);
        assert!(select(&lines, 1, &r).is_err());
        // An empty line has column 1.
        assert_eq!(select(&[""], 1, &range(1, 1, 1, 4000)).unwrap().text, "");
    }

    #[test]
    fn an_asked_end_column_ends_the_last_line() {
        let lines = ["abcdef", "ghijkl"];
        let mut r = range(1, 2, 1, 4000);
        r.end_column = Some(4);
        let s = select(&lines, 1, &r).unwrap();
        assert_eq!((s.text.as_str(), s.cut), ("bcd", None));
        assert_eq!(s.columns.end, Some((4, 6)));
        let mut r = range(1, 2, 2, 4000);
        r.end_column = Some(3);
        let s = select(&lines, 1, &r).unwrap();
        assert_eq!((s.text.as_str(), s.cut), ("bcdef\nghi", None));
        assert_eq!(
            s.columns,
            Columns {
                start: 2,
                end: Some((3, 6))
            }
        );
        r.end_column = Some(60);
        let s = select(&lines, 1, &r).unwrap();
        assert_eq!(s.columns.end, None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn following_the_continuations_reads_everything_once(
            lens in proptest::collection::vec(0usize..30_000, 1..8),
            budget in 4000usize..12_000,
            wide in any::<bool>(),
        ) {
            let unit = if wide { "ü" } else { "x" };
            let owned: Vec<String> = lens
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i}{}", unit.repeat(*n)))
                .collect();
            let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
            prop_assert_eq!(read_all(&lines, budget), lines.join("\n"));
            // No answer is over its budget.
            let s = select(&lines, 1, &range(1, 1, lines.len() as u64, budget)).unwrap();
            let numbered: usize = s.text.split('\n').map(|l| l.chars().count() + 4).sum();
            prop_assert!(numbered <= budget);
        }
    }
}

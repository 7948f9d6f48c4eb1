//! One line shown in part: at most a given number of characters of it,
//! centred on a match, with `…` on each side that was cut.
//!
//! * The line is the redacted one: every source is redacted whole before
//!   anything is cut from it, so no excerpt shows part of a hidden value,
//!   and its window and column are functions of the redacted text alone.
//! * A cut never falls inside a placeholder: a side that would cut one
//!   leaves it out whole.
//! * On a cut side, the word the cut ran through is dropped (up to the first
//!   character that ends a credential, [`crate::redact::ends_a_word`]),
//!   since it may be part of a credential no rule can recognise any more;
//!   never the match itself.
//! * The match sits in the middle of the window; a line end near it gives
//!   its room to the other side; a match longer than the window is shown
//!   from its start.

use std::ops::Range;

use crate::redact::ends_a_word;
use crate::sources::placeholders;

/// What a long line is cut to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The shown part, with `…` on each cut side.
    pub text: String,
    /// The match's first column in the line (1-based, in characters); 1
    /// without a match.
    pub column: u64,
}

/// The byte offset `n` characters after `at` in `line` (or its end), and
/// how many characters that is.
fn forward(line: &str, at: usize, n: usize) -> (usize, usize) {
    let mut got = 0;
    let mut end = at;
    for (i, c) in line[at..].char_indices() {
        if got == n {
            return (at + i, got);
        }
        got += 1;
        end = at + i + c.len_utf8();
    }
    (end, got)
}

/// The byte offset `n` characters before `at` in `line` (or 0), and how many
/// characters that is.
fn backward(line: &str, at: usize, n: usize) -> (usize, usize) {
    let mut got = 0;
    let mut start = at;
    for (i, _) in line[..at].char_indices().rev() {
        if got == n {
            break;
        }
        got += 1;
        start = i;
    }
    (start, got)
}

/// At most `limit` characters of `line` around `m` (a byte range of it; the
/// start of the line without one), as the module docs say.
#[must_use]
pub fn excerpt(line: &str, m: Option<Range<usize>>, limit: usize) -> Excerpt {
    let m = m
        .filter(|m| {
            m.start <= m.end
                && m.end <= line.len()
                && line.is_char_boundary(m.start)
                && line.is_char_boundary(m.end)
        })
        .unwrap_or(0..0);
    let column = line[..m.start].chars().count() as u64 + 1;
    if line.len() <= limit || line.chars().nth(limit).is_none() {
        return Excerpt {
            text: line.to_owned(),
            column,
        };
    }
    let (mut from, mut to) = {
        let match_chars = line[m.clone()].chars().take(limit).count();
        if match_chars >= limit {
            (m.start, forward(line, m.start, limit).0)
        } else {
            let slack = limit - match_chars;
            let (from, left) = backward(line, m.start, slack / 2);
            let (to, right) = forward(line, m.end, slack - left);
            let (from, _) = backward(line, from, slack - left - right);
            (from, to)
        }
    };
    for p in placeholders(line) {
        if p.start >= to {
            break;
        }
        if p.start < from && from < p.end {
            from = p.end.min(m.start).max(from);
        }
        if p.start < to && to < p.end {
            to = p.start.max(m.end).min(to);
        }
    }
    let cut_start = from > 0;
    let cut_end = to < line.len();
    if cut_start && from < m.start {
        from = line[from..m.start]
            .char_indices()
            .find(|&(_, c)| ends_a_word(c))
            .map_or(m.start, |(i, _)| from + i);
    }
    if cut_end && to > m.end {
        to = line[m.end..to]
            .char_indices()
            .rev()
            .find(|&(_, c)| ends_a_word(c))
            .map_or(m.end, |(i, c)| m.end + i + c.len_utf8());
    }
    let mut text = String::with_capacity(to - from + 8);
    if cut_start {
        text.push('…');
    }
    text.push_str(&line[from..to]);
    if cut_end {
        text.push('…');
    }
    Excerpt { text, column }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_short_line_is_whole() {
        let e = excerpt("let x = needle;", Some(8..14), 400);
        assert_eq!(e.text, "let x = needle;");
        assert_eq!(e.column, 9);
    }

    #[test]
    fn a_match_deep_in_a_long_line_is_in_the_middle() {
        let line = format!("{}needle{}", "ab cd ".repeat(2000), "ef gh ".repeat(2000));
        let at = line.find("needle").unwrap();
        let e = excerpt(&line, Some(at..at + 6), 100);
        assert!(
            e.text.starts_with('…') && e.text.ends_with('…'),
            "{}",
            e.text
        );
        assert!(e.text.contains("needle"));
        assert!(e.text.chars().count() <= 102);
        let before = e.text.find("needle").unwrap();
        let after = e.text.len() - before - 6;
        assert!(before.abs_diff(after) < 10, "{}", e.text);
        assert_eq!(e.column, 12_001);
    }

    #[test]
    fn near_an_end_the_window_leans_on_it() {
        let line = format!("needle {}", "x y ".repeat(500));
        let e = excerpt(&line, Some(0..6), 50);
        assert!(e.text.starts_with("needle "), "{}", e.text);
        assert!(e.text.ends_with('…'));
        let line = format!("{} needle", "x y ".repeat(500));
        let at = line.len() - 6;
        let e = excerpt(&line, Some(at..line.len()), 50);
        assert!(
            e.text.starts_with('…') && e.text.ends_with(" needle"),
            "{}",
            e.text
        );
    }

    #[test]
    fn no_placeholder_is_cut_and_no_cut_word_is_kept() {
        let line = format!(
            "{}[redacted:aws-key] key needle more {}",
            "w ".repeat(300),
            "z".repeat(600)
        );
        let at = line.find("needle").unwrap();
        for limit in 10..60 {
            let e = excerpt(&line, Some(at..at + 6), limit);
            let inner = e.text.trim_start_matches('…').trim_end_matches('…');
            assert!(inner.contains("needle"), "{limit}: {}", e.text);
            // Either the whole placeholder or none of it.
            let has_open = inner.contains("[redacted:");
            let has_close = inner.contains("aws-key]");
            assert_eq!(has_open, has_close, "{limit}: {}", e.text);
            assert!(
                !inner.contains('z'),
                "{limit}: a cut word is kept: {}",
                e.text
            );
        }
    }

    #[test]
    fn a_match_longer_than_the_window_is_shown_from_its_start() {
        let line = "q".repeat(1000);
        let e = excerpt(&line, Some(100..900), 50);
        assert_eq!(e.text, format!("…{}…", "q".repeat(50)));
        assert_eq!(e.column, 101);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn the_match_is_always_shown_within_the_limit(
            words in proptest::collection::vec("[a-zé ;]{0,12}", 1..200),
            pick in any::<prop::sample::Index>(),
            limit in 8usize..80,
        ) {
            let line: String = words.concat();
            if line.is_empty() {
                return Ok(());
            }
            let chars: Vec<(usize, char)> = line.char_indices().collect();
            let (at, c) = chars[pick.index(chars.len())];
            let m = at..at + c.len_utf8();
            let e = excerpt(&line, Some(m.clone()), limit);
            let inner = e.text.trim_start_matches('…').trim_end_matches('…');
            prop_assert!(inner.chars().count() <= limit.max(1));
            prop_assert!(line.contains(inner));
            prop_assert_eq!(e.column as usize, line[..at].chars().count() + 1);
            // The match is in the excerpt, where the column says.
            let first = line.find(inner).unwrap_or(0);
            prop_assert!(line[first..].starts_with(inner));
            prop_assert!(e.text.starts_with('…') == (first > 0) || line.len() <= limit || line.chars().count() <= limit);
        }
    }
}

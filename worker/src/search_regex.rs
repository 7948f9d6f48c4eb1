//! The only place a search regex is built.
//!
//! The Rust `regex` engine (under ripgrep's `grep-regex`) runs in time linear
//! in the input, so there is no catastrophic backtracking to guard against
//! and no "shape guard" that refuses legitimate nested patterns (`(a+)+b`
//! is answered quickly). What a pattern can still cost is bounded
//! when it is compiled:
//!
//! * length ≤ [`MAX_PATTERN_CHARS`] characters (checked first, in both modes);
//! * the compiled program ≤ [`SIZE_LIMIT`] bytes and the lazy DFA's cache ≤
//!   [`DFA_SIZE_LIMIT`] bytes (a counted repetition such as `\w{1000}{1000}`
//!   is refused, as `bad_pattern`, instead of exhausting memory);
//! * nesting ≤ [`NEST_LIMIT`] levels.
//!
//! Syntax: Rust `regex` (no look-around, no back-references). Literal mode
//! escapes the pattern. Matching is line by line: `\n` in a pattern is refused.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use moat_protocol::limits::MAX_PATTERN_CHARS;
use moat_protocol::wire_error::{BadPattern, WireError};

/// Largest compiled regex (bytes).
pub const SIZE_LIMIT: usize = 4 * 1024 * 1024;
/// Largest lazy-DFA cache per search thread (bytes).
pub const DFA_SIZE_LIMIT: usize = 8 * 1024 * 1024;
/// Deepest nesting of groups and repetitions.
pub const NEST_LIMIT: u32 = 64;

/// Build the matcher for `pattern`.
pub fn build(pattern: &str, regex: bool, case_sensitive: bool) -> Result<RegexMatcher, WireError> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(WireError::BadPattern(BadPattern::TooLong {
            chars: chars as u64,
            limit: MAX_PATTERN_CHARS as u64,
        }));
    }
    let mut b = RegexMatcherBuilder::new();
    // `multi_line`: `^` and `$` match at every line's start and end. The
    // searcher (and the whole-file pre-check in `tools::search_code`) run the
    // regex over buffers of many lines; without it `^def` would match only
    // at the start of a file. No match can span lines either way: the line
    // terminator is removed from the pattern.
    b.case_insensitive(!case_sensitive)
        .multi_line(true)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .line_terminator(Some(b'\n'))
        .fixed_strings(!regex);
    b.build(pattern).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("size limit") {
            WireError::BadPattern(BadPattern::TooComplex)
        } else {
            let cut: String = msg.lines().last().unwrap_or("").chars().take(200).collect();
            WireError::BadPattern(BadPattern::Invalid(cut))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_matcher::Matcher;

    /// Nested-quantifier shapes, exponential for a backtracking engine, are
    /// legitimate regexes.
    pub const NESTED_QUANTIFIER_SHAPES: [&str; 10] = [
        r"(a+)+b",
        r"(a*)*c",
        r"([a-z]+)*x",
        r"(\d+)+",
        r"(x+x+)+y",
        r"(?:a+)+b",
        r"(a{1,}){2,}",
        r"(\w+\s?)*$",
        r"(a|a)+",
        r"(a|ab)*",
    ];

    #[test]
    fn nested_quantifier_patterns_compile_and_run_fast() {
        let hay = format!("{}!", "a".repeat(100_000));
        for p in NESTED_QUANTIFIER_SHAPES {
            let m = build(p, true, true).unwrap();
            let t = std::time::Instant::now();
            let _ = m.is_match(hay.as_bytes()).unwrap();
            assert!(t.elapsed().as_secs() < 2, "{p} took {:?}", t.elapsed());
        }
    }

    #[test]
    fn limits() {
        let long = "a".repeat(513);
        assert!(matches!(
            build(&long, false, true),
            Err(WireError::BadPattern(BadPattern::TooLong {
                chars: 513,
                ..
            }))
        ));
        assert!(build(&"a".repeat(512), false, true).is_ok());
        assert_eq!(
            build(r"\w{1000}{1000}", true, true).unwrap_err(),
            WireError::BadPattern(BadPattern::TooComplex)
        );
        assert!(matches!(
            build("(unclosed", true, true),
            Err(WireError::BadPattern(BadPattern::Invalid(_)))
        ));
        // Literal mode: metacharacters are literal.
        let m = build("a.b(", false, true).unwrap();
        assert!(m.is_match(b"xa.b(y").unwrap());
        assert!(!m.is_match(b"axb(").unwrap());
        // Anchors are per line, as in ripgrep.
        let m = build(r"^def \w+\(", true, true).unwrap();
        assert!(m.is_match(b"x = 1\ndef f():\n").unwrap());
        let m = build(r"\)$", true, true).unwrap();
        assert!(m.is_match(b"f()\nx = 1\n").unwrap());
        assert!(
            !build(r"1\ndef", true, true)
                .is_ok_and(|m| m.is_match(b"x = 1\ndef f():\n").unwrap_or(true))
        );
        // Case-insensitive by default.
        assert!(
            build("engine", false, false)
                .unwrap()
                .is_match(b"class Engine")
                .unwrap()
        );
    }
}

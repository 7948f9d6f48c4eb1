//! Every position where one of a set of short literals starts, found with
//! packed (SIMD, Teddy) searchers. Redaction's anchor gate and the injection
//! scanner's literal sets both stand on it: they report candidate starts
//! here and compare their own literals in full at each one.
//!
//! One packed searcher over a hundred literals of mixed lengths matches its
//! fingerprint almost everywhere in prose, so the literals are split into
//! small groups of the same length (up to four bytes, the fingerprint Teddy
//! takes), one searcher per group. A search resumes one byte after the start
//! of its last hit, so every start of every literal is reported, overlapping
//! ones included.

use aho_corasick::Span;
use aho_corasick::packed::{Config, MatchKind, Searcher};

/// Literals per packed searcher: small groups keep the fingerprint of each of
/// Teddy's buckets narrow.
const GROUP: usize = 22;

/// Packed searchers whose literals' starts are reported together.
pub struct Starts {
    searchers: Vec<Searcher>,
}

impl Starts {
    /// Searchers over `literals`, grouped by length up to four and at most
    /// `GROUP` to a searcher; `None` where a packed searcher cannot be built
    /// (no SIMD on this CPU), for the caller to fall back to an automaton.
    pub fn grouped<L: AsRef<[u8]>>(literals: &[L]) -> Option<Starts> {
        let mut by_length: Vec<Vec<&[u8]>> = vec![Vec::new(); 5];
        for literal in literals {
            let bytes = literal.as_ref();
            by_length[bytes.len().min(4)].push(bytes);
        }
        let mut searchers = Vec::new();
        for mut group in by_length {
            group.sort_unstable();
            group.dedup();
            for part in group.chunks(GROUP) {
                searchers.push(searcher(part)?);
            }
        }
        Some(Starts { searchers })
    }

    /// One searcher over all of `literals` (for a set that is small, or
    /// searched in small chunks); `None` as for [`Starts::grouped`].
    pub fn single<L: AsRef<[u8]>>(literals: &[L]) -> Option<Starts> {
        Some(Starts {
            searchers: vec![searcher(literals)?],
        })
    }

    /// Pushes `base` plus every position of `hay` before `until` where a
    /// literal starts (unsorted, a position once per searcher that finds it).
    /// Returns how many searches that took: each resumes one byte after the
    /// last start and scans on from there, so each searcher makes one more
    /// search than the starts it reports, and no byte is scanned twice by a
    /// searcher before its hit.
    pub fn push(&self, hay: &[u8], base: usize, until: usize, out: &mut Vec<usize>) -> usize {
        let mut searches = 0;
        for searcher in &self.searchers {
            let mut at = 0;
            loop {
                searches += 1;
                let Some(hit) = searcher.find_in(hay, Span::from(at..hay.len())) else {
                    break;
                };
                if hit.start() >= until {
                    break;
                }
                out.push(base + hit.start());
                at = hit.start() + 1;
            }
        }
        searches
    }
}

fn searcher<L: AsRef<[u8]>>(literals: &[L]) -> Option<Searcher> {
    let mut builder = Config::new()
        .match_kind(MatchKind::LeftmostFirst)
        .heuristic_pattern_limits(false)
        .builder();
    builder.extend(literals);
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_searches_are_bounded_by_the_starts() {
        let literals: [&[u8]; 3] = [b"aaaa", b"aa", b"a a"];
        for hay in [
            "a".repeat(100_000),
            "a ".repeat(50_000),
            "b".repeat(100_000),
        ] {
            for literal in literals {
                let Some(set) = Starts::single(&[literal]) else {
                    panic!("a packed searcher builds");
                };
                let mut starts = Vec::new();
                let searches = set.push(hay.as_bytes(), 0, hay.len(), &mut starts);
                assert_eq!(searches, starts.len() + 1);
                assert!(starts.len() <= hay.len());
                assert!(starts.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }

    #[test]
    fn every_start_is_reported_overlapping_ones_included_and_until_bounds_them() {
        let Some(set) = Starts::grouped(&["ab", "abab", "b"]) else {
            panic!("a packed searcher builds");
        };
        let mut starts = Vec::new();
        set.push(b"xababab", 10, 7, &mut starts);
        starts.sort_unstable();
        starts.dedup();
        assert_eq!(starts, vec![11, 12, 13, 14, 15, 16]);
        starts.clear();
        set.push(b"xababab", 0, 3, &mut starts);
        starts.sort_unstable();
        starts.dedup();
        assert_eq!(starts, vec![1, 2]);
    }
}

//! A set of literals searched the way an Aho-Corasick automaton with
//! leftmost-first semantics searches them (non-overlapping; at the leftmost
//! start, the literal listed first), but with packed (SIMD, Teddy) searchers.
//!
//! The literals are split into small groups of the same prefix length, one
//! packed searcher per group, so each keeps a selective fingerprint (one
//! searcher over a hundred literals of mixed lengths matches its fingerprint
//! almost everywhere in prose). Every position where some literal starts is
//! reported by some group (a search resumes one byte after the start of its
//! last hit); at each such position the literals starting with that byte are
//! compared in full, and the leftmost-first choice is made over the positions
//! in order. The automaton is kept for the platforms where
//! no packed searcher can be built, and as the reference in the tests.

use aho_corasick::packed::{Config, MatchKind as PackedKind, Searcher};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind, Span};

/// Literals per packed searcher.
const GROUP: usize = 22;

/// The literal set.
pub(super) struct Literals {
    automaton: AhoCorasick,
    packed: Option<Packed>,
}

struct Packed {
    /// The literals, by pattern id.
    literals: Vec<Vec<u8>>,
    /// Pattern ids by first byte, ascending.
    by_first: Vec<Vec<usize>>,
    groups: Vec<Searcher>,
}

impl Literals {
    /// The set of `literals`, in priority order.
    #[expect(
        clippy::expect_used,
        reason = "the literals are constants; a test builds every set"
    )]
    pub(super) fn new(literals: &[&str]) -> Literals {
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(literals)
            .expect("literal searcher builds");
        Literals {
            automaton,
            packed: Packed::new(literals),
        }
    }

    /// The matches of the set in `hay`, as `(start, end, pattern id)`, in
    /// order: what the automaton's leftmost-first `find_iter` reports.
    pub(super) fn find(&self, hay: &str) -> Vec<(usize, usize, usize)> {
        match &self.packed {
            Some(packed) => packed.find(hay.as_bytes()),
            None => self.reference(hay),
        }
    }

    /// [`Literals::find`] through the automaton.
    pub(super) fn reference(&self, hay: &str) -> Vec<(usize, usize, usize)> {
        self.automaton
            .find_iter(hay)
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
            .collect()
    }

    /// Whether the packed search is in use.
    #[cfg(test)]
    pub(super) fn is_packed(&self) -> bool {
        self.packed.is_some()
    }
}

impl Packed {
    fn new(literals: &[&str]) -> Option<Packed> {
        // Grouped by length up to four (the fingerprint Teddy takes).
        let mut by_length: Vec<Vec<Vec<u8>>> = vec![Vec::new(); 5];
        let mut by_first = vec![Vec::new(); 256];
        for (id, literal) in literals.iter().enumerate() {
            let bytes = literal.as_bytes();
            let first = *bytes.first()?;
            by_first[usize::from(first)].push(id);
            by_length[bytes.len().min(4)].push(bytes.to_vec());
        }
        let mut groups = Vec::new();
        for mut heads in by_length {
            heads.sort_unstable();
            heads.dedup();
            for part in heads.chunks(GROUP) {
                let mut builder = Config::new()
                    .match_kind(PackedKind::LeftmostFirst)
                    .heuristic_pattern_limits(false)
                    .builder();
                builder.extend(part);
                groups.push(builder.build()?);
            }
        }
        Some(Packed {
            literals: literals.iter().map(|l| l.as_bytes().to_vec()).collect(),
            by_first,
            groups,
        })
    }

    fn find(&self, hay: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut starts = Vec::new();
        for group in &self.groups {
            all_starts(group, hay, &mut starts);
        }
        starts.sort_unstable();
        starts.dedup();
        let mut out = Vec::new();
        let mut cursor = 0;
        for start in starts {
            if start < cursor {
                continue;
            }
            let chosen = self.by_first[usize::from(hay[start])]
                .iter()
                .find(|&&id| hay[start..].starts_with(&self.literals[id]));
            if let Some(&id) = chosen {
                let end = start + self.literals[id].len();
                out.push((start, end, id));
                cursor = end;
            }
        }
        out
    }
}

/// Pushes every position of `hay` where a literal of `group` starts; returns
/// how many searches that took. Each search resumes one byte after the last
/// start and scans on from there, so the searches are at most one more than
/// the starts, and the text each scans before its hit is not scanned again.
fn all_starts(group: &Searcher, hay: &[u8], out: &mut Vec<usize>) -> usize {
    let mut searches = 1;
    let mut at = 0;
    while let Some(hit) = group.find_in(hay, Span::from(at..hay.len())) {
        out.push(hit.start());
        at = hit.start() + 1;
        searches += 1;
    }
    searches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_searches_are_bounded_by_the_starts() {
        let literals: Vec<&[u8]> = vec![b"aaaa", b"aa", b"a a"];
        for hay in [
            "a".repeat(100_000),
            "a ".repeat(50_000),
            "b".repeat(100_000),
        ] {
            for literal in &literals {
                let mut builder = Config::new()
                    .match_kind(PackedKind::LeftmostFirst)
                    .builder();
                builder.add(literal);
                let Some(group) = builder.build() else {
                    panic!("a packed searcher builds");
                };
                let mut starts = Vec::new();
                let searches = all_starts(&group, hay.as_bytes(), &mut starts);
                assert_eq!(searches, starts.len() + 1);
                assert!(starts.len() <= hay.len());
                assert!(starts.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}

//! A set of literals searched the way an Aho-Corasick automaton with
//! leftmost-first semantics searches them (non-overlapping; at the leftmost
//! start, the literal listed first), but with packed (SIMD, Teddy) searchers.
//!
//! The candidate starts come from [`moat_worker::literals::Starts`] (small
//! groups of the same prefix length, every start reported); at each one the
//! literals starting with that byte are compared in full, and the
//! leftmost-first choice is made over the positions in order. The automaton
//! is kept for the platforms where no packed searcher can be built, and as
//! the reference in the tests.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use moat_worker::literals::Starts;

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
    starts: Starts,
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
        let mut by_first = vec![Vec::new(); 256];
        for (id, literal) in literals.iter().enumerate() {
            let first = *literal.as_bytes().first()?;
            by_first[usize::from(first)].push(id);
        }
        Some(Packed {
            literals: literals.iter().map(|l| l.as_bytes().to_vec()).collect(),
            by_first,
            starts: Starts::grouped(literals)?,
        })
    }

    fn find(&self, hay: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut starts = Vec::new();
        self.starts.push(hay, 0, hay.len(), &mut starts);
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

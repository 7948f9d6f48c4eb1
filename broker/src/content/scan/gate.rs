//! One pass over the lowered text for every literal any signal needs: the
//! words a classic signal's match starts with, the anchors of the line-confined
//! families and the role words of counterfeit turns.
//!
//! The pass is one automaton (a DFA, every occurrence of every literal
//! reported, overlapping ones included), so its cost does not grow with the
//! number of literals or with how often they occur; what it finds decides
//! where the signals' patterns run at all. Real source holds few of the
//! literals in the places the patterns need them, so most of the text is read
//! by this pass alone.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::MatchKind;
use aho_corasick::dfa::DFA;
use moat_worker::Walker;

use super::classic::{Follow, PART_STARTS, PARTS};
use super::families::{FAMILY_SET, ROLE_ANCHORS};
use super::line_bounds;

/// What one literal of the automaton is for.
#[derive(Debug, Clone, Default)]
struct Uses {
    /// Bits of the families whose anchor it is.
    families: u32,
    /// The classic parts it starts, with its checks.
    parts: Vec<(usize, bool, Follow)>,
    /// A role word and its colon (counterfeit turns).
    role: bool,
}

/// The automaton and what each of its literals is for.
pub(super) struct Gate {
    /// The DFA: the reference the walk is checked against.
    #[cfg(test)]
    automaton: DFA,
    /// The same DFA as a table the walk reads.
    walker: Walker,
    uses: Vec<Uses>,
    /// The literals, by pattern id: all without ASCII upper-case letters.
    pub(super) literals: Vec<Vec<u8>>,
}

/// What the pass found in one text.
#[derive(Debug, Default)]
pub(super) struct Hits {
    /// Lines holding a family anchor, in order, with the families' bits.
    pub(super) family_lines: Vec<(Range<usize>, u32)>,
    /// Lines holding a role word and its colon, in order.
    pub(super) role_lines: Vec<Range<usize>>,
    /// For each classic part, where one of its start literals starts with
    /// the part's checks passed: ascending, no repeats.
    pub(super) starts: [Vec<usize>; PARTS],
}

/// The gate, built once per process.
pub(super) static GATE: LazyLock<Gate> = LazyLock::new(Gate::new);

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `b` starts a whitespace character: the ASCII ones, U+001C..U+001F,
/// and the lead bytes of the others (U+0085 and U+00A0; U+1680; U+2000 to
/// U+205F; U+3000).
fn starts_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ' | 0x1C..=0x1F | 0xC2 | 0xE1 | 0xE2 | 0xE3)
}

/// The bytes that may follow a start literal, when they are few enough to
/// spell the literal with each (none for [`Follow::Any`] and
/// [`Follow::NonWord`]): the same bytes [`follows`] accepts, so a spelled
/// literal matches exactly where the bare one matches and is followed as
/// its part requires (the end of the text follows neither).
fn follow_bytes(follow: Follow) -> Vec<u8> {
    match follow {
        Follow::Any | Follow::NonWord => Vec::new(),
        Follow::Space => (0..=255).filter(|&b| starts_space(b)).collect(),
        Follow::LineSpaceOrPunct => (0..=255)
            .filter(|&b| follows(Follow::LineSpaceOrPunct, Some(b)))
            .collect(),
    }
}

fn follows(follow: Follow, next: Option<u8>) -> bool {
    match (follow, next) {
        (Follow::Any, _) | (Follow::NonWord, None) => true,
        (_, None) => false,
        (Follow::NonWord, Some(b)) => !is_word(b),
        (Follow::Space, Some(b)) => starts_space(b),
        (Follow::LineSpaceOrPunct, Some(b)) => {
            b != b'\n' && (starts_space(b) || b == b':' || b == b',')
        }
    }
}

impl Gate {
    #[expect(
        clippy::expect_used,
        reason = "the literals are constants; a test builds the gate"
    )]
    fn new() -> Gate {
        let mut by_literal: HashMap<Vec<u8>, Uses> = HashMap::new();
        for (anchor, mask) in FAMILY_SET.anchors() {
            by_literal
                .entry(anchor.as_bytes().to_vec())
                .or_default()
                .families |= mask;
        }
        for role in ROLE_ANCHORS.iter() {
            by_literal.entry(role.as_bytes().to_vec()).or_default().role = true;
        }
        for (part, groups) in PART_STARTS.iter().enumerate() {
            for group in *groups {
                for literal in group.literals {
                    // A start word that must be followed by one of a few
                    // bytes is spelled with each of them: common words
                    // inside longer ones (`ai` in `main`, `act` in `exact`)
                    // then match nothing, and the walk has fewer matches to
                    // note. The byte after is checked by construction.
                    let spelled = follow_bytes(group.follow);
                    if spelled.is_empty() {
                        by_literal
                            .entry(literal.as_bytes().to_vec())
                            .or_default()
                            .parts
                            .push((part, group.word_before, group.follow));
                    }
                    for byte in spelled {
                        let mut with = literal.as_bytes().to_vec();
                        with.push(byte);
                        by_literal.entry(with).or_default().parts.push((
                            part,
                            group.word_before,
                            Follow::Any,
                        ));
                    }
                }
            }
        }
        let mut entries: Vec<(Vec<u8>, Uses)> = by_literal.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let literals: Vec<Vec<u8>> = entries.iter().map(|(l, _)| l.clone()).collect();
        let automaton = DFA::builder()
            .match_kind(MatchKind::Standard)
            .build(&literals)
            .expect("the gate's automaton builds");
        Gate {
            walker: Walker::new(&automaton, &literals).expect("the gate's rows fit their slots"),
            #[cfg(test)]
            automaton,
            uses: entries.into_iter().map(|(_, u)| u).collect(),
            literals,
        }
    }

    /// Reads `hay` (lowered text) once.
    pub(super) fn scan(&self, hay: &str) -> Hits {
        let mut found = Vec::new();
        self.occurrences(hay.as_bytes(), 0, &mut found);
        self.hits_at(hay, &found)
    }

    /// `(start, end, literal)` of every occurrence of every literal in
    /// `bytes`, in order of their ends, offsets moved by `offset`
    /// ([`Walker::occurrences`]). One that starts before an earlier one
    /// contains it (no literal holds `\n`), so lines come in order too.
    pub(super) fn occurrences(
        &self,
        bytes: &[u8],
        offset: usize,
        found: &mut Vec<(usize, usize, usize)>,
    ) {
        self.walker.occurrences(bytes, offset, found);
    }

    /// The longest literal.
    pub(super) fn max_len(&self) -> usize {
        self.walker.max_len()
    }

    /// What [`Gate::scan`] finds in `hay`, from where its literals occur
    /// there: `found` holds `(start, end, literal)` for every occurrence of
    /// every literal of [`Gate::literals`] (by index), in order of their
    /// ends, as another walk over the same text found them.
    pub(super) fn hits_at(&self, hay: &str, found: &[(usize, usize, usize)]) -> Hits {
        let mut hits = Hits::default();
        for &(start, end, literal) in found {
            if let Some(uses) = self.uses.get(literal)
                && end <= hay.len()
            {
                hits.record(uses, hay, start, end);
            }
        }
        for starts in &mut hits.starts {
            starts.sort_unstable();
            starts.dedup();
        }
        hits
    }
}

impl Hits {
    /// Notes one occurrence, `start..end` of `hay`, of a literal used as
    /// `uses` says. No literal holds `\n`, so the line holding `start` holds
    /// the whole occurrence.
    fn record(&mut self, uses: &Uses, hay: &str, start: usize, end: usize) {
        let bytes = hay.as_bytes();
        if uses.families != 0 {
            match self.family_lines.last_mut() {
                Some((line, mask)) if line.contains(&start) => *mask |= uses.families,
                _ => self
                    .family_lines
                    .push((line_bounds(hay, start), uses.families)),
            }
        }
        if uses.role && !self.role_lines.last().is_some_and(|l| l.contains(&start)) {
            self.role_lines.push(line_bounds(hay, start));
        }
        for &(part, word_before, follow) in &uses.parts {
            if word_before && start > 0 && is_word(bytes[start - 1]) {
                continue;
            }
            if follows(follow, bytes.get(end).copied()) {
                self.starts[part].push(start);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use moat_worker::literals::plain_match_ends;

    use super::*;

    #[test]
    fn the_walk_finds_every_match_the_automaton_finds() {
        let gate = &*GATE;
        // Every literal, glued, spaced and cut, among bytes no literal holds.
        let mut text: Vec<u8> = Vec::new();
        for (i, literal) in gate.literals.iter().enumerate() {
            text.extend_from_slice(literal);
            text.extend_from_slice(["", " ", "\u{e9}\u{2028}", "0", "\n"][i % 5].as_bytes());
            text.extend_from_slice(&literal[..literal.len() / 2]);
        }
        // Short texts and long ones (walked in blocks, see
        // `moat_worker::Walker`, whose own tests cut every block boundary).
        for len in [0, 1, 7, 600, 4095, text.len(), 70_000, 3 * text.len()] {
            let hay = text.repeat(3 + 70_000 / text.len());
            let hay = &hay[..len.min(hay.len())];
            let mut got = Vec::new();
            gate.walker.match_ends(hay, &mut got);
            let want = plain_match_ends(&gate.automaton, hay);
            assert!(!want.is_empty() || len < 8, "{len}");
            assert_eq!(got, want, "{len}");
        }
    }

    #[test]
    fn every_lead_byte_of_whitespace_counts_as_space() {
        for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
            if c.is_whitespace() || ('\u{1C}'..='\u{1F}').contains(&c) {
                let mut buf = [0; 4];
                let first = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(starts_space(first), "{c:?}");
            }
        }
    }
}

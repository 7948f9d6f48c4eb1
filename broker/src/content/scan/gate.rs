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

use aho_corasick::automaton::Automaton;
use aho_corasick::automaton::StateID;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};

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
    /// The DFA itself, not behind `AhoCorasick`'s dynamic dispatch: its
    /// transitions inline into the loop.
    automaton: DFA,
    uses: Vec<Uses>,
    /// The literals, by pattern id.
    #[cfg(test)]
    pub(super) literals: Vec<String>,
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
        let mut by_literal: HashMap<String, Uses> = HashMap::new();
        for (anchor, mask) in FAMILY_SET.anchors() {
            by_literal.entry((*anchor).to_owned()).or_default().families |= mask;
        }
        for role in ROLE_ANCHORS.iter() {
            by_literal.entry(role.clone()).or_default().role = true;
        }
        for (part, groups) in PART_STARTS.iter().enumerate() {
            for group in *groups {
                for literal in group.literals {
                    by_literal
                        .entry((*literal).to_owned())
                        .or_default()
                        .parts
                        .push((part, group.word_before, group.follow));
                }
            }
        }
        let mut entries: Vec<(String, Uses)> = by_literal.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let literals: Vec<String> = entries.iter().map(|(l, _)| l.clone()).collect();
        let automaton = DFA::builder()
            .match_kind(MatchKind::Standard)
            .build(&literals)
            .expect("the gate's automaton builds");
        Gate {
            automaton,
            uses: entries.into_iter().map(|(_, u)| u).collect(),
            #[cfg(test)]
            literals,
        }
    }

    /// Reads `hay` (lowered text) once.
    pub(super) fn scan(&self, hay: &str) -> Hits {
        let mut hits = Hits::default();
        let mut ends = Vec::new();
        self.match_ends(hay.as_bytes(), &mut ends);
        for (end, sid) in ends {
            for index in 0..self.automaton.match_len(sid) {
                let pattern = self.automaton.match_pattern(sid, index);
                let start = end - self.automaton.pattern_len(pattern);
                if let Some(uses) = self.uses.get(pattern.as_usize()) {
                    hits.record(uses, hay, start, end);
                }
            }
        }
        for starts in &mut hits.starts {
            starts.sort_unstable();
            starts.dedup();
        }
        hits
    }

    /// Every place in `bytes` where a literal ends, with the match state
    /// reached there, in order.
    ///
    /// One walk through a DFA waits at every byte for the previous byte's
    /// transition to load: its speed is the latency of a memory read, not the
    /// processor's throughput. So the text is cut into [`LANES`] stretches,
    /// walked side by side in one loop, each its own chain of loads. A
    /// stretch after the first starts `max_pattern_len - 1` bytes early:
    /// every literal ending inside it starts no earlier than that, so none is
    /// missed, and ends before the stretch (seen by the one before) are not
    /// kept. Matches come in the order of their ends; one that starts before
    /// an earlier one contains it (no literal holds `\n`), so lines come in
    /// order too.
    fn match_ends(&self, bytes: &[u8], out: &mut Vec<(usize, StateID)>) {
        // Opaque to the optimiser, so the walk reads the automaton through a
        // plain shared reference (whose fields cannot change under it) and
        // keeps them in registers, rather than through the static it lives in.
        walk(std::hint::black_box(&self.automaton), bytes, out);
    }
}

/// [`Gate::match_ends`] over `dfa`.
#[inline(never)]
fn walk(dfa: &DFA, bytes: &[u8], out: &mut Vec<(usize, StateID)>) {
    // An unanchored start state always exists for a DFA built without
    // an anchored-only setting; without one there is nothing to find.
    let Ok(start) = dfa.start_state(Anchored::No) else {
        return;
    };
    let is_match = |sid: StateID| dfa.is_special(sid) && dfa.is_match(sid);
    let lanes = if bytes.len() >= LANE_MIN * LANES {
        LANES
    } else {
        1
    };
    let warm = dfa.max_pattern_len().saturating_sub(1);
    let stretch = bytes.len() / lanes;
    // Lane `k` keeps the ends at or after `keep[k]` and walks
    // `from[k]..to[k]`.
    let mut keep = [0; LANES];
    let mut from = [0; LANES];
    let mut to = [0; LANES];
    for k in 0..lanes {
        keep[k] = k * stretch;
        from[k] = keep[k].saturating_sub(warm);
        to[k] = if k + 1 == lanes {
            bytes.len()
        } else {
            (k + 1) * stretch
        };
    }
    let mut found: [Vec<(usize, StateID)>; LANES] = Default::default();
    let mut sid = [start; LANES];
    // Side by side for as long as the shortest lane lasts.
    let common = (0..lanes).map(|k| to[k] - from[k]).min().unwrap_or(0);
    if lanes == LANES {
        // Equal lengths, so the loop indexes every lane without a check.
        let walks: [&[u8]; LANES] = std::array::from_fn(|k| &bytes[from[k]..from[k] + common]);
        for i in 0..common {
            for (k, walk) in walks.iter().enumerate() {
                sid[k] = dfa.next_state(Anchored::No, sid[k], walk[i]);
                if is_match(sid[k]) && from[k] + i >= keep[k] {
                    found[k].push((from[k] + i + 1, sid[k]));
                }
            }
        }
    }
    let done = if lanes == LANES { common } else { 0 };
    for k in 0..lanes {
        let first = from[k] + done;
        for (at, &byte) in (first..).zip(&bytes[first..to[k]]) {
            sid[k] = dfa.next_state(Anchored::No, sid[k], byte);
            if is_match(sid[k]) && at >= keep[k] {
                found[k].push((at + 1, sid[k]));
            }
        }
    }
    for lane in &found[..lanes] {
        out.extend_from_slice(lane);
    }
}

/// Stretches of text walked side by side (see [`Gate::match_ends`]).
const LANES: usize = 8;
/// Below this many bytes per lane, one walk: the warm-up of the others
/// would cost more than it hides.
const LANE_MIN: usize = 512;

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
    use super::*;

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

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
    /// The DFA, which says what each match state matches.
    automaton: DFA,
    /// The same DFA as a compact table, which the walk reads.
    table: Table,
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
            table: Table::new(&automaton, &literals).expect("the gate's rows fit their slots"),
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
    /// processor's throughput. So the text is cut into blocks of [`LANES`]
    /// stretches of [`LANE_BYTES`], walked side by side in one loop, each its
    /// own chain of loads; the bytes before the first block and after the
    /// last are walked alone. A stretch starts [`WARM`] bytes early (at least
    /// `max_pattern_len - 1`): every literal ending inside it starts no
    /// earlier than that, so none is missed, and the ends of those bytes
    /// (seen by the walk before) are not kept. Every lane's state and every
    /// stretch's offset stay in registers, so the loop is loads and additions
    /// only; the rare step where a lane reaches a match state is noted out of
    /// line. Matches come in the order of their ends; one that starts before
    /// an earlier one contains it (no literal holds `\n`), so lines come in
    /// order too.
    fn match_ends(&self, bytes: &[u8], out: &mut Vec<(usize, StateID)>) {
        // Opaque to the optimiser, so the walk reads the table through a
        // plain shared reference (whose fields cannot change under it) and
        // keeps them in registers, rather than through the static it lives in.
        walk(std::hint::black_box(&self.table), bytes, out);
    }
}

/// The gate's DFA as one flat table: a state is the offset of its row, a row
/// holds one next state per byte class, and every byte that occurs in no
/// literal shares one class (from any state it leads where any other such
/// byte leads: no literal continues with it). Match states come first, so a
/// state is a match state when it is below [`Table::matches`]. A step is two
/// loads and a comparison, where the general DFA's takes more: the walk runs
/// at about one and a half times its speed. The rows sit in a fixed number
/// of slots ([`TABLE_SLOTS`]), so an index masked to the slots needs no
/// bounds check; every offset plus class is below the rows' end, so the mask
/// never changes an index.
struct Table {
    /// The class of each byte.
    classes: [u8; 256],
    /// Row after row: the next state for each class.
    next: Box<[u32; TABLE_SLOTS]>,
    /// States below this are match states.
    matches: u32,
    /// The start state.
    start: u32,
    /// For each match state (by its row number), the DFA's state, which says
    /// what it matches.
    matched: Vec<StateID>,
    /// The longest literal.
    max_len: usize,
    /// Classes per row.
    width: usize,
}

impl Table {
    /// The table of `dfa`, built from its start state over every class of
    /// byte that `literals` hold.
    /// `None` when the rows do not fit [`TABLE_SLOTS`].
    fn new(dfa: &DFA, literals: &[String]) -> Option<Table> {
        let mut classes = [0_u8; 256];
        // One representative byte per class; class 0 is every byte no literal
        // holds.
        let mut representative = vec![0_u8];
        for literal in literals {
            for &byte in literal.as_bytes() {
                if classes[usize::from(byte)] == 0 {
                    classes[usize::from(byte)] = u8::try_from(representative.len()).unwrap_or(0);
                    representative.push(byte);
                }
            }
        }
        if let Some(unused) = (0..=255_u8).find(|b| classes[usize::from(*b)] == 0) {
            representative[0] = unused;
        }
        let width = representative.len();
        let is_match = |sid: StateID| dfa.is_special(sid) && dfa.is_match(sid);
        let Ok(start) = dfa.start_state(Anchored::No) else {
            return Some(Table {
                classes,
                next: slots(vec![0; width])?,
                matches: 0,
                start: 0,
                matched: Vec::new(),
                max_len: 0,
                width,
            });
        };
        // Every state reachable from the start, numbered in the order found.
        let mut states = vec![start];
        let mut number: HashMap<StateID, usize> = HashMap::from([(start, 0)]);
        let mut at = 0;
        while let Some(&sid) = states.get(at) {
            for &byte in &representative {
                let next = dfa.next_state(Anchored::No, sid, byte);
                number.entry(next).or_insert_with(|| {
                    states.push(next);
                    states.len() - 1
                });
            }
            at += 1;
        }
        // Rows: match states first.
        let mut rows: Vec<usize> = (0..states.len()).collect();
        rows.sort_by_key(|&i| (!is_match(states[i]), i));
        let mut row_of = vec![0; states.len()];
        for (row, &i) in rows.iter().enumerate() {
            row_of[i] = row;
        }
        let offset = |i: usize| u32::try_from(row_of[i] * width).unwrap_or(u32::MAX);
        let mut next = vec![0; states.len() * width];
        for (i, &sid) in states.iter().enumerate() {
            for (class, &byte) in representative.iter().enumerate() {
                let to = number[&dfa.next_state(Anchored::No, sid, byte)];
                next[row_of[i] * width + class] = offset(to);
            }
        }
        let matched: Vec<StateID> = rows
            .iter()
            .map(|&i| states[i])
            .take_while(|&sid| is_match(sid))
            .collect();
        Some(Table {
            classes,
            next: slots(next)?,
            matches: u32::try_from(matched.len() * width).unwrap_or(0),
            start: offset(0),
            matched,
            max_len: dfa.max_pattern_len(),
            width,
        })
    }

    /// The DFA state of the match state `state`.
    fn matched(&self, state: u32) -> Option<StateID> {
        let row = state as usize / self.width.max(1);
        self.matched.get(row).copied()
    }
}

/// Room for the gate's rows (about 70,000 entries today): a power of two.
const TABLE_SLOTS: usize = 1 << 17;

/// `next` in [`TABLE_SLOTS`] slots; `None` when it does not fit.
fn slots(mut next: Vec<u32>) -> Option<Box<[u32; TABLE_SLOTS]>> {
    if next.len() > TABLE_SLOTS {
        return None;
    }
    next.resize(TABLE_SLOTS, 0);
    next.into_boxed_slice().try_into().ok()
}

/// [`Gate::match_ends`] over `table`.
#[inline(never)]
fn walk(table: &Table, bytes: &[u8], out: &mut Vec<(usize, StateID)>) {
    let mut at = 0;
    if table.max_len <= WARM + 1 && bytes.len() >= WARM + BLOCK {
        walk_one(table, bytes, 0, 0, WARM, out);
        at = WARM;
        let mut lanes: [Vec<(usize, StateID)>; LANES] = Default::default();
        while let Some(window) = bytes
            .get(at - WARM..at + BLOCK)
            .and_then(|w| <&[u8; WARM + BLOCK]>::try_from(w).ok())
        {
            walk_block(table, window, at, &mut lanes);
            for lane in &mut lanes {
                out.append(lane);
            }
            at += BLOCK;
        }
    }
    let from = at.saturating_sub(table.max_len.saturating_sub(1));
    walk_one(table, bytes, from, at, bytes.len(), out);
}

/// One step of the walk: the state after `state` reads `byte`.
#[inline(always)]
fn step(next: &[u32; TABLE_SLOTS], classes: &[u8; 256], state: u32, byte: u8) -> u32 {
    next[(state as usize + usize::from(classes[usize::from(byte)])) & (TABLE_SLOTS - 1)]
}

/// Walks `bytes[from..to]` from the start state, keeping the ends of the
/// bytes at or after `keep`.
fn walk_one(
    table: &Table,
    bytes: &[u8],
    from: usize,
    keep: usize,
    to: usize,
    out: &mut Vec<(usize, StateID)>,
) {
    let Some(walked) = bytes.get(from..to) else {
        return;
    };
    let mut state = table.start;
    for (at, &byte) in (from..).zip(walked) {
        state = step(&table.next, &table.classes, state, byte);
        if state < table.matches
            && at >= keep
            && let Some(matched) = table.matched(state)
        {
            out.push((at + 1, matched));
        }
    }
}

/// Walks one block: `window` is the text from `at - WARM` on, lane `k`
/// keeps the ends of the bytes `at + k * LANE_BYTES ..` up to the next
/// lane's and walks from `WARM` bytes before them.
fn walk_block(
    table: &Table,
    window: &[u8; WARM + BLOCK],
    at: usize,
    lanes: &mut [Vec<(usize, StateID)>; LANES],
) {
    let next = &*table.next;
    let classes = &table.classes;
    let matches = table.matches;
    let mut state = [table.start; LANES];
    for i in 0..WARM {
        for k in 0..LANES {
            state[k] = step(next, classes, state[k], window[k * LANE_BYTES + i]);
        }
    }
    for i in WARM..WARM + LANE_BYTES {
        let mut matched = false;
        for k in 0..LANES {
            state[k] = step(next, classes, state[k], window[k * LANE_BYTES + i]);
            matched |= state[k] < matches;
        }
        if matched {
            note(table, lanes, state, at + i - WARM + 1);
        }
    }
}

/// Notes the lanes of `state` that are in a match state, lane `k` at the
/// end `end + k * LANE_BYTES`.
#[cold]
#[inline(never)]
fn note(
    table: &Table,
    lanes: &mut [Vec<(usize, StateID)>; LANES],
    state: [u32; LANES],
    end: usize,
) {
    for (k, (lane, state)) in lanes.iter_mut().zip(state).enumerate() {
        if state < table.matches
            && let Some(matched) = table.matched(state)
        {
            lane.push((end + k * LANE_BYTES, matched));
        }
    }
}

/// Stretches of a block walked side by side (see [`Gate::match_ends`]).
const LANES: usize = 8;
/// The bytes each lane keeps in a block.
const LANE_BYTES: usize = 2048;
/// The bytes of a block.
const BLOCK: usize = LANES * LANE_BYTES;
/// The bytes a lane walks before those it keeps: at least the longest
/// literal less one.
const WARM: usize = 32;

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
    fn the_table_finds_every_match_the_automaton_finds() {
        let gate = &*GATE;
        let dfa = &gate.automaton;
        let Ok(start) = dfa.start_state(Anchored::No) else {
            panic!("the gate has a start state");
        };
        // Every literal, glued, spaced and cut, among bytes no literal holds.
        let mut text = String::new();
        for (i, literal) in gate.literals.iter().enumerate() {
            text.push_str(literal);
            text.push_str(["", " ", "\u{e9}\u{2028}", "0", "\n"][i % 5]);
            text.push_str(&literal[..literal.len() / 2]);
        }
        // Short texts are walked in one lane; longer ones in blocks, with
        // the bytes after the last block walked alone.
        for len in [
            0,
            1,
            7,
            600,
            4095,
            4096 + 13,
            text.len(),
            WARM + BLOCK - 1,
            WARM + BLOCK,
            WARM + BLOCK + 1,
            WARM + 3 * BLOCK + LANE_BYTES + 5,
            3 * text.len(),
        ] {
            let hay = text.repeat((WARM + 4 * BLOCK) / text.len() + 1);
            let hay = &hay.as_bytes()[..len.min(hay.len())];
            let mut got = Vec::new();
            gate.match_ends(hay, &mut got);
            let mut want = Vec::new();
            let mut sid = start;
            for (at, &byte) in hay.iter().enumerate() {
                sid = dfa.next_state(Anchored::No, sid, byte);
                if dfa.is_special(sid) && dfa.is_match(sid) {
                    want.push((at + 1, sid));
                }
            }
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

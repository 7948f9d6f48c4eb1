//! Every occurrence of every literal of a set, found in one walk of a text.
//!
//! Redaction's anchor search and the injection scanner's gate both stand on
//! this: each builds an Aho-Corasick DFA over its literals (every occurrence
//! reported, overlapping ones included) and walks it over the text once with
//! [`Walker::match_ends`], so the cost of a text does not grow with the
//! number of literals or with how often they occur, and no text, however
//! built, makes the walk slower than its length allows.
//!
//! One walk through a DFA waits at every byte for the previous byte's
//! transition to load: its speed is the latency of a memory read, not the
//! processor's throughput. So the text is cut into blocks of `LANES`
//! stretches of `LANE_BYTES`, walked side by side in one loop, each its own
//! chain of loads; the bytes before the first block and after the last are
//! walked alone. A stretch starts `WARM` bytes early (at least the longest
//! literal less one): every literal ending inside it starts no earlier than
//! that, so none is missed, and the ends of those bytes (seen by the walk
//! before) are not kept. Every lane's state stays in a register, so a step
//! is loads, an addition, a mask and an `or`; the rare step where a lane
//! reaches a match state is noted out of line.

use aho_corasick::Anchored;
use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;

/// A DFA over a set of literals as one flat table, walked over a text.
///
/// A state is the offset of its row, a row holds one next state per byte
/// class, and every byte that occurs in no literal shares one class (from any
/// state it leads where any other such byte leads: no literal continues with
/// it). A state reached by a match carries `MATCH` on top of its offset,
/// so the walk learns that a lane matched by or-ing the states together,
/// one operation a byte, and the mask that keeps an index inside the table
/// strips the flag again. The rows sit in a fixed number of slots
/// (`SLOTS`), so an index masked to the slots needs no bounds check; every
/// offset plus class is below the rows' end, so the mask never changes an
/// index.
pub struct Walker {
    /// The class of each byte.
    classes: [u8; 256],
    /// Row after row: the next state for each class, `MATCH` set when that
    /// state is a match state.
    next: Box<[u32; SLOTS]>,
    /// The start state.
    start: u32,
    /// For each match state (by its row number; match states come first),
    /// the DFA's state and the literals ending there: pattern id and length.
    matched: Vec<(StateID, Vec<(usize, usize)>)>,
    /// The longest literal.
    max_len: usize,
    /// Classes per row.
    width: usize,
}

/// Room for a walker's rows: a power of two. A few hundred literals of a few
/// bytes each take well under half of it.
const SLOTS: usize = 1 << 18;

/// Set on a state the walk reaches by a match. Above every offset, so masking
/// an index to [`SLOTS`] removes it.
const MATCH: u32 = 1 << 31;

/// Stretches of a block walked side by side.
const LANES: usize = 8;
/// The bytes each lane keeps in a block.
const LANE_BYTES: usize = 2048;
/// The bytes of a block.
const BLOCK: usize = LANES * LANE_BYTES;
/// The bytes a lane walks before those it keeps: at least the longest
/// literal less one (a walker over longer literals walks every text alone).
const WARM: usize = 32;

impl Walker {
    /// The table of `dfa` (built with `MatchKind::Standard`, so that every
    /// occurrence is a match state), over every class of byte that
    /// `literals`, the DFA's literals, hold. `None` when the rows do not fit
    /// `SLOTS`.
    pub fn new<L: AsRef<[u8]>>(dfa: &DFA, literals: &[L]) -> Option<Walker> {
        Walker::build(dfa, literals, false)
    }

    /// [`Walker::new`] for a DFA over literals without ASCII upper-case
    /// letters, walked in any ASCII case: each upper-case letter is put in
    /// its lower-case letter's class, so walking a text finds exactly what
    /// walking its ASCII lower-case copy would, at the same offsets, without
    /// the copy. `None` also when a literal holds an upper-case letter.
    pub fn any_case<L: AsRef<[u8]>>(dfa: &DFA, literals: &[L]) -> Option<Walker> {
        Walker::build(dfa, literals, true)
    }

    fn build<L: AsRef<[u8]>>(dfa: &DFA, literals: &[L], any_case: bool) -> Option<Walker> {
        let mut classes = [0_u8; 256];
        // One representative byte per class; class 0 is every byte no literal
        // holds.
        let mut representative = vec![0_u8];
        for literal in literals {
            for &byte in literal.as_ref() {
                if any_case && byte.is_ascii_uppercase() {
                    return None;
                }
                if classes[usize::from(byte)] == 0 {
                    classes[usize::from(byte)] = u8::try_from(representative.len()).ok()?;
                    representative.push(byte);
                }
            }
        }
        if any_case {
            for upper in b'A'..=b'Z' {
                classes[usize::from(upper)] = classes[usize::from(upper.to_ascii_lowercase())];
            }
        }
        if let Some(unused) = (0..=255_u8).find(|b| classes[usize::from(*b)] == 0) {
            representative[0] = unused;
        }
        let width = representative.len();
        let is_match = |sid: StateID| dfa.is_special(sid) && dfa.is_match(sid);
        let Ok(start) = dfa.start_state(Anchored::No) else {
            return Some(Walker {
                classes,
                next: slots(vec![0; width])?,
                start: 0,
                matched: Vec::new(),
                max_len: 0,
                width,
            });
        };
        // Every state reachable from the start, numbered in the order found,
        // with the number of each one's next state for each class. A state id
        // of this DFA is an offset into its transition table, so the numbers
        // are kept in a vector indexed by id (grown when an id is past it),
        // not hashed: this loop runs for every state and class.
        let mut states = vec![start];
        let mut number: Vec<u32> = vec![u32::MAX; dfa.memory_usage() / 4 + 1];
        let mut transitions: Vec<u32> = Vec::new();
        set_number(&mut number, start, 0)?;
        let mut at = 0;
        while let Some(&sid) = states.get(at) {
            for &byte in &representative {
                let next = dfa.next_state(Anchored::No, sid, byte);
                let known = number.get(next.as_usize()).copied().unwrap_or(u32::MAX);
                let n = if known == u32::MAX {
                    let n = u32::try_from(states.len()).ok()?;
                    set_number(&mut number, next, n)?;
                    states.push(next);
                    n
                } else {
                    known
                };
                transitions.push(n);
            }
            at += 1;
            if states.len() * width > SLOTS {
                return None;
            }
        }
        // Rows: match states first.
        let mut rows: Vec<usize> = (0..states.len()).collect();
        rows.sort_by_key(|&i| (!is_match(states[i]), i));
        let mut row_of = vec![0; states.len()];
        for (row, &i) in rows.iter().enumerate() {
            row_of[i] = row;
        }
        let state = |i: usize| {
            let offset = u32::try_from(row_of[i] * width).unwrap_or(0);
            if is_match(states[i]) {
                offset | MATCH
            } else {
                offset
            }
        };
        // The rows sit at the front of the slots; the rest stays the zeroed
        // memory the allocator hands out, never written.
        let mut next: Box<[u32; SLOTS]> = vec![0_u32; SLOTS].into_boxed_slice().try_into().ok()?;
        for (i, row) in transitions.chunks_exact(width).enumerate() {
            let base = row_of[i] * width;
            for (class, &to) in row.iter().enumerate() {
                next[base + class] = state(to as usize);
            }
        }
        let matched: Vec<(StateID, Vec<(usize, usize)>)> = rows
            .iter()
            .map(|&i| states[i])
            .take_while(|&sid| is_match(sid))
            .map(|sid| {
                let literals = (0..dfa.match_len(sid))
                    .map(|index| {
                        let pattern = dfa.match_pattern(sid, index);
                        (pattern.as_usize(), dfa.pattern_len(pattern))
                    })
                    .collect();
                (sid, literals)
            })
            .collect();
        Some(Walker {
            classes,
            next,
            start: state(0),
            matched,
            max_len: dfa.max_pattern_len(),
            width,
        })
    }

    /// Every place in `bytes` where a literal ends, with the DFA's match
    /// state there (which says which literals end there), in order.
    pub fn match_ends(&self, bytes: &[u8], out: &mut Vec<(usize, StateID)>) {
        out.extend(
            self.ends(bytes)
                .into_iter()
                .map(|(end, row)| (end, self.matched[row].0)),
        );
    }

    /// Every occurrence of every literal in `bytes`, as `(start, end,
    /// literal)` with the literal's pattern id and the offsets moved by
    /// `offset`: in order of their ends, and at one end in the DFA's order.
    pub fn occurrences(&self, bytes: &[u8], offset: usize, out: &mut Vec<(usize, usize, usize)>) {
        for (end, row) in self.ends(bytes) {
            for &(literal, len) in &self.matched[row].1 {
                out.push((offset + end - len, offset + end, literal));
            }
        }
    }

    /// The longest literal.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The ends of literals in `bytes`, with their match states' rows.
    fn ends(&self, bytes: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        // Opaque to the optimiser, so the walk reads the table through a
        // plain shared reference (whose fields cannot change under it) and
        // keeps them in registers, rather than through a static.
        walk(std::hint::black_box(self), bytes, &mut out);
        out
    }

    /// The row of `state` when it is a match state.
    fn match_row(&self, state: u32) -> Option<usize> {
        let row = (state & !MATCH) as usize / self.width.max(1);
        (row < self.matched.len()).then_some(row)
    }
}

/// What [`Walker::match_ends`] finds, by the plain walk of `dfa` one byte
/// after another: the reference the table's walk is checked against (this
/// crate's tests and those of the broker's injection gate).
pub fn plain_match_ends(dfa: &DFA, bytes: &[u8]) -> Vec<(usize, StateID)> {
    let mut out = Vec::new();
    let Ok(mut sid) = dfa.start_state(Anchored::No) else {
        return out;
    };
    for (at, &byte) in bytes.iter().enumerate() {
        sid = dfa.next_state(Anchored::No, sid, byte);
        if dfa.is_special(sid) && dfa.is_match(sid) {
            out.push((at + 1, sid));
        }
    }
    out
}

/// Notes that DFA state `sid` is the `n`th found, growing `number` when the
/// id lies past it.
fn set_number(number: &mut Vec<u32>, sid: StateID, n: u32) -> Option<()> {
    let at = sid.as_usize();
    if at >= number.len() {
        number.resize(at.checked_add(1)?, u32::MAX);
    }
    *number.get_mut(at)? = n;
    Some(())
}

/// `next` in [`SLOTS`] slots; `None` when it does not fit.
fn slots(mut next: Vec<u32>) -> Option<Box<[u32; SLOTS]>> {
    if next.len() > SLOTS {
        return None;
    }
    next.resize(SLOTS, 0);
    next.into_boxed_slice().try_into().ok()
}

/// The walk: every end of a literal in `bytes`, in order, with the row of
/// the match state reached there.
#[inline(never)]
fn walk(table: &Walker, bytes: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut at = 0;
    if table.max_len <= WARM + 1 && bytes.len() >= WARM + BLOCK {
        walk_one(table, bytes, 0, 0, WARM, out);
        at = WARM;
        let mut lanes: [Vec<(usize, usize)>; LANES] = Default::default();
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
fn step(next: &[u32; SLOTS], classes: &[u8; 256], state: u32, byte: u8) -> u32 {
    next[(state as usize + usize::from(classes[usize::from(byte)])) & (SLOTS - 1)]
}

/// Walks `bytes[from..to]` from the start state, keeping the ends of the
/// bytes at or after `keep`.
fn walk_one(
    table: &Walker,
    bytes: &[u8],
    from: usize,
    keep: usize,
    to: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let Some(walked) = bytes.get(from..to) else {
        return;
    };
    let mut state = table.start;
    for (at, &byte) in (from..).zip(walked) {
        state = step(&table.next, &table.classes, state, byte);
        if state & MATCH != 0
            && at >= keep
            && let Some(row) = table.match_row(state)
        {
            out.push((at + 1, row));
        }
    }
}

/// Walks one block: `window` is the text from `at - WARM` on, lane `k`
/// keeps the ends of the bytes `at + k * LANE_BYTES ..` up to the next
/// lane's and walks from `WARM` bytes before them.
fn walk_block(
    table: &Walker,
    window: &[u8; WARM + BLOCK],
    at: usize,
    lanes: &mut [Vec<(usize, usize)>; LANES],
) {
    let next = &*table.next;
    let classes = &table.classes;
    let mut state = [table.start; LANES];
    for i in 0..WARM {
        for k in 0..LANES {
            state[k] = step(next, classes, state[k], window[k * LANE_BYTES + i]);
        }
    }
    for i in WARM..WARM + LANE_BYTES {
        let mut any = 0;
        for k in 0..LANES {
            state[k] = step(next, classes, state[k], window[k * LANE_BYTES + i]);
            any |= state[k];
        }
        if any & MATCH != 0 {
            note(table, lanes, state, at + i - WARM + 1);
        }
    }
}

/// Notes the lanes of `state` that are in a match state, lane `k` at the
/// end `end + k * LANE_BYTES`.
#[cold]
#[inline(never)]
fn note(table: &Walker, lanes: &mut [Vec<(usize, usize)>; LANES], state: [u32; LANES], end: usize) {
    for (k, (lane, state)) in lanes.iter_mut().zip(state).enumerate() {
        if state & MATCH != 0
            && let Some(row) = table.match_row(state)
        {
            lane.push((end + k * LANE_BYTES, row));
        }
    }
}

#[cfg(test)]
mod tests {
    use aho_corasick::MatchKind;

    use super::*;

    /// The walk against the plain DFA walk, byte by byte, on texts short
    /// enough to be walked alone and long enough for several blocks, cut one
    /// byte either side of the block threshold.
    fn check(literals: &[&str]) {
        let Ok(dfa) = DFA::builder()
            .match_kind(MatchKind::Standard)
            .build(literals)
        else {
            panic!("the DFA builds");
        };
        let Some(walker) = Walker::new(&dfa, literals) else {
            panic!("the rows fit");
        };
        // Every literal, glued, spaced and cut, among bytes no literal holds.
        let mut text = String::new();
        for (i, literal) in literals.iter().enumerate() {
            text.push_str(literal);
            text.push_str(["", " ", "\u{e9}\u{2028}", "0", "\n"][i % 5]);
            text.push_str(&literal[..literal.len() / 2]);
        }
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
            walker.match_ends(hay, &mut got);
            let want = plain_match_ends(&dfa, hay);
            assert!(!want.is_empty() || len < 8, "{len}");
            assert_eq!(got, want, "{len}");
            // The same ends, each spelled out into its literals.
            let mut occurrences = Vec::new();
            walker.occurrences(hay, 5, &mut occurrences);
            let dfa = &dfa;
            let spelled: Vec<(usize, usize, usize)> = want
                .iter()
                .flat_map(|&(end, sid)| {
                    (0..dfa.match_len(sid)).map(move |index| {
                        let pattern = dfa.match_pattern(sid, index);
                        (
                            5 + end - dfa.pattern_len(pattern),
                            5 + end,
                            pattern.as_usize(),
                        )
                    })
                })
                .collect();
            assert_eq!(occurrences, spelled, "{len}");
        }
    }

    #[test]
    fn the_walk_finds_every_match_the_automaton_finds() {
        check(&["ab", "abab", "b", "you", "your", "ignore", "<|", "](", "x"]);
        check(&[
            "AKIA",
            "ghp_",
            "sk-",
            "sk_live_",
            "://",
            "-----BEGIN ",
            "eyJ",
        ]);
    }

    #[test]
    fn an_any_case_walk_finds_what_the_walk_of_the_lower_case_text_finds() {
        let literals = ["akia", "ghp_", "ignore", "you", "sk-", "://", "-----begin "];
        let Ok(dfa) = DFA::builder()
            .match_kind(MatchKind::Standard)
            .build(literals)
        else {
            panic!("the DFA builds");
        };
        let Some(walker) = Walker::any_case(&dfa, &literals) else {
            panic!("the rows fit");
        };
        let mut text = String::new();
        for (i, literal) in literals.iter().enumerate() {
            let upper = literal.to_ascii_uppercase();
            let mixed: String = literal
                .chars()
                .enumerate()
                .map(|(j, c)| {
                    if j % 2 == i % 2 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            text.push_str(&format!("{literal} {upper}{mixed}\u{e9}[{}] ", &mixed[1..]));
        }
        let hay = text.repeat((WARM + 3 * BLOCK) / text.len() + 1);
        for len in [0, 9, 300, hay.len()] {
            let hay = &hay.as_bytes()[..len];
            let mut got = Vec::new();
            walker.match_ends(hay, &mut got);
            let want = plain_match_ends(&dfa, &hay.to_ascii_lowercase());
            assert!(!want.is_empty() || len < 9, "{len}");
            assert_eq!(got, want, "{len}");
        }
        // An upper-case literal has no any-case walk.
        let Ok(upper) = DFA::builder().build(["AKIA"]) else {
            panic!("the DFA builds");
        };
        assert!(Walker::any_case(&upper, &["AKIA"]).is_none());
    }

    #[test]
    fn literals_longer_than_the_warm_up_are_walked_alone_and_still_found() {
        let long = "z".repeat(WARM + 8);
        check(&[long.as_str(), "zz", "a"]);
    }
}

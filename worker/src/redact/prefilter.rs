//! The anchor search: every rule's literal anchors found in one scan of a
//! text, each hit handed to the rules that own its anchor.
//!
//! Built on first use ([`PREFILTER`]). The reference is one Aho-Corasick
//! automaton over every anchor, folded to lower case and matched in any
//! case; the search used is a gate of packed (SIMD) literal searchers over
//! the anchors' first bytes (the exact-case anchors over the text, the
//! any-case ones over a lower-cased copy made a chunk at a time), with every
//! anchor compared in full at each reported start. The gate finds exactly
//! the hits the automaton finds, in the same order (by end, then by start,
//! one anchor's owners in table order); where a gate cannot be built the
//! automaton is the search. A hit counts only for an owner that accepts its
//! case (exact-case rules compare the anchor as written).

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};

use super::rules::RULES;
use crate::literals::Starts;

/// The anchors of every rule in one automaton, and for each anchor the rules
/// that own it.
pub(super) struct Prefilter {
    /// Every anchor (folded to lower case), matched in any case. The
    /// reference the gate is checked against, and the search used where no
    /// gate could be built.
    automaton: AhoCorasick,
    /// For each anchor (by pattern id), the rules that own it, with the
    /// anchor as that rule wrote it.
    owners: Vec<Vec<(usize, &'static str)>>,
    /// The folded anchors, by pattern id.
    folded: Vec<String>,
    /// The anchors by their folded first byte (pattern ids).
    by_first: Vec<Vec<usize>>,
    /// The vectorised gate, when every group of it could be built.
    pub(super) gate: Option<Gate>,
}

/// Where an anchor may start ([`crate::literals::Starts`]): a gate literal is
/// an anchor's first four bytes (or the whole anchor when shorter). The
/// exact-case anchors are searched in the text itself, the any-case ones in a
/// lower-cased copy made a chunk at a time. At every reported start every
/// anchor is compared in full, so the gate finds exactly the anchor hits the
/// automaton finds whose case some owner accepts.
pub(super) struct Gate {
    exact: Starts,
    any_case: Starts,
}

/// The lower-cased copy of the text is made this many bytes at a time.
pub(super) const GATE_CHUNK: usize = 32 * 1024;

/// The longest any-case gate literal, less one: the overlap of two chunks.
const GATE_OVERLAP: usize = 3;

/// The gate over `RULES`' anchors; `None` where a searcher cannot be built.
fn build_gate() -> Option<Gate> {
    let mut exact: Vec<&[u8]> = Vec::new();
    let mut any_case: Vec<Vec<u8>> = Vec::new();
    for rule in RULES {
        for anchor in rule.anchors {
            let head = &anchor.as_bytes()[..anchor.len().min(4)];
            if rule.any_case {
                any_case.push(head.to_ascii_lowercase());
            } else {
                exact.push(head);
            }
        }
    }
    any_case.sort_unstable();
    any_case.dedup();
    Some(Gate {
        exact: Starts::grouped(&exact)?,
        any_case: Starts::single(&any_case)?,
    })
}

pub(super) static PREFILTER: LazyLock<Prefilter> = LazyLock::new(build_prefilter);

#[expect(
    clippy::expect_used,
    reason = "the anchors are constants; every test builds the automaton"
)]
fn build_prefilter() -> Prefilter {
    let mut anchors: Vec<String> = Vec::new();
    let mut owners: Vec<Vec<(usize, &'static str)>> = Vec::new();
    for (index, rule) in RULES.iter().enumerate() {
        for anchor in rule.anchors {
            let folded = anchor.to_ascii_lowercase();
            let slot = match anchors.iter().position(|a| *a == folded) {
                Some(slot) => slot,
                None => {
                    anchors.push(folded);
                    owners.push(Vec::new());
                    anchors.len() - 1
                }
            };
            owners[slot].push((index, anchor));
        }
    }
    let automaton = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&anchors)
        .expect("the redaction anchors build an automaton");
    let mut by_first = vec![Vec::new(); 256];
    for (slot, anchor) in anchors.iter().enumerate() {
        if let Some(&first) = anchor.as_bytes().first() {
            by_first[usize::from(first)].push(slot);
        }
    }
    Prefilter {
        automaton,
        owners,
        folded: anchors,
        by_first,
        gate: build_gate(),
    }
}

/// An anchor hit that one of the anchor's owners accepts as to case: the
/// hit's range and the owning rule, with the anchor as that rule wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hit {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rule: usize,
}

impl Prefilter {
    /// Every accepted anchor hit of `text`, in the order the automaton's
    /// overlapping search reports them (by end, then by start), and for one
    /// hit its owners in table order.
    pub(super) fn hits(&self, text: &str) -> Vec<Hit> {
        match &self.gate {
            Some(gate) => self.gated_hits(gate, text),
            None => self.automaton_hits(text),
        }
    }

    /// The owners of the anchor `slot` at `start..end` that accept its case.
    fn accept(&self, bytes: &[u8], slot: usize, start: usize, end: usize, out: &mut Vec<Hit>) {
        for &(rule, anchor) in &self.owners[slot] {
            if RULES[rule].any_case || &bytes[start..end] == anchor.as_bytes() {
                out.push(Hit { start, end, rule });
            }
        }
    }

    /// [`Prefilter::hits`] through the automaton: the reference.
    pub(super) fn automaton_hits(&self, text: &str) -> Vec<Hit> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        for hit in self.automaton.find_overlapping_iter(text) {
            self.accept(
                bytes,
                hit.pattern().as_usize(),
                hit.start(),
                hit.end(),
                &mut out,
            );
        }
        out
    }

    /// [`Prefilter::hits`] through the gate.
    pub(super) fn gated_hits(&self, gate: &Gate, text: &str) -> Vec<Hit> {
        let bytes = text.as_bytes();
        let mut starts = Vec::new();
        gate.exact.push(bytes, 0, bytes.len(), &mut starts);
        let mut lowered = [0_u8; GATE_CHUNK + GATE_OVERLAP];
        let mut from = 0;
        while from < bytes.len() {
            let to = (from + GATE_CHUNK).min(bytes.len());
            let reach = (to + GATE_OVERLAP).min(bytes.len());
            let chunk = &mut lowered[..reach - from];
            chunk.copy_from_slice(&bytes[from..reach]);
            chunk.make_ascii_lowercase();
            gate.any_case.push(chunk, from, to - from, &mut starts);
            from = to;
        }
        starts.sort_unstable();
        starts.dedup();
        let mut out = Vec::new();
        for start in starts {
            let first = bytes[start].to_ascii_lowercase();
            for &slot in &self.by_first[usize::from(first)] {
                let anchor = self.folded[slot].as_bytes();
                let end = start + anchor.len();
                if bytes
                    .get(start..end)
                    .is_some_and(|seen| seen.eq_ignore_ascii_case(anchor))
                {
                    self.accept(bytes, slot, start, end, &mut out);
                }
            }
        }
        // The automaton reports by end; at one end, the longer anchor first;
        // one anchor's owners in table order (the sort is stable).
        out.sort_by_key(|hit| (hit.end, hit.start));
        out
    }
}

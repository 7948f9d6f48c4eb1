//! The anchor search: every rule's literal anchors found in one scan of a
//! text, each hit handed to the rules that own its anchor.
//!
//! Built on first use ([`PREFILTER`]). The reference is one Aho-Corasick
//! automaton over every anchor, folded to lower case and matched in any
//! case. The search used is one walk ([`crate::literals::Walker::any_case`])
//! of a DFA over the same folded anchors, in which each upper-case letter
//! reads as its lower-case one: it finds exactly the automaton's hits, in
//! the same order (by end, then by start, one anchor's owners in table
//! order), and costs the same whatever the text holds. Where the walk cannot
//! be built the automaton is the search. A hit counts only for an owner
//! that accepts its case (exact-case rules compare the anchor as written).
//!
//! A caller that walks its own literals over the same text may put these
//! anchors in its automaton and hand the occurrences found over
//! ([`AnchorHits`]): one walk then serves both.

use std::sync::LazyLock;

use aho_corasick::dfa::DFA;
use aho_corasick::{AhoCorasick, MatchKind};

use super::rules::RULES;
use crate::literals::Walker;

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
    /// The folded anchors, by pattern id (slot).
    folded: Vec<String>,
    /// The gate, when it could be built: the walk over the folded anchors
    /// (pattern id = slot).
    pub(super) gate: Option<Walker>,
}

/// The gate over the folded anchors `folded` (by slot): a DFA over them,
/// walked once over the text in any case; `None` where the automaton or its
/// table cannot be built.
fn build_gate(folded: &[String]) -> Option<Walker> {
    let automaton = DFA::builder()
        .match_kind(MatchKind::Standard)
        .build(folded)
        .ok()?;
    Walker::any_case(&automaton, folded)
}

/// Occurrences, in any ASCII case, of the redaction anchors in one text, as
/// a caller's own walk found them: see [`crate::redact::Redactor::anchors`]
/// and [`crate::redact::Redactor::redact_str_with`].
#[derive(Debug, Default)]
pub struct AnchorHits {
    /// (start, end, slot) of each occurrence.
    found: Vec<(usize, usize, usize)>,
}

impl AnchorHits {
    /// No occurrence yet.
    #[must_use]
    pub fn new() -> AnchorHits {
        AnchorHits::default()
    }

    /// The anchor `slot` (its index in [`crate::redact::Redactor::anchors`])
    /// occurs at `start..end`.
    pub fn push(&mut self, start: usize, end: usize, slot: usize) {
        self.found.push((start, end, slot));
    }
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
    let gate = build_gate(&anchors);
    Prefilter {
        automaton,
        owners,
        folded: anchors,
        gate,
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
    pub(super) fn gated_hits(&self, gate: &Walker, text: &str) -> Vec<Hit> {
        let mut found = AnchorHits::new();
        gate.occurrences(text.as_bytes(), 0, &mut found.found);
        self.accepted(text, found)
    }

    /// The hits of `found` that an owner accepts as to case, ordered as the
    /// automaton reports them: by end; at one end, the longer anchor first
    /// (the earlier start); one anchor's owners in table order. A slot past
    /// the anchors is passed over.
    pub(super) fn accepted(&self, text: &str, found: AnchorHits) -> Vec<Hit> {
        let bytes = text.as_bytes();
        let mut found = found.found;
        found.sort_unstable_by_key(|&(start, end, slot)| (end, start, slot));
        found.dedup();
        let mut out = Vec::new();
        for (start, end, slot) in found {
            if slot < self.owners.len() && bytes.get(start..end).is_some() {
                self.accept(bytes, slot, start, end, &mut out);
            }
        }
        out
    }

    /// The anchors, folded to lower case, by slot.
    pub(super) fn anchors(&self) -> &[String] {
        &self.folded
    }
}

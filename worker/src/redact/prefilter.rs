//! The anchor search: every rule's literal anchors found in one scan of a
//! text, each hit handed to the rules that own its anchor.
//!
//! Built on first use ([`PREFILTER`]). The reference is one Aho-Corasick
//! automaton over every anchor, folded to lower case and matched in any
//! case. The search used is a gate: one walk ([`crate::literals::Walker`])
//! of a DFA over the exact-case anchors as written and every case variant of
//! the first (up to four) bytes of each any-case anchor, over the text
//! itself, with every any-case anchor compared in full wherever a variant of
//! its head ends. The walk costs the same whatever the text holds; it finds
//! exactly the hits the automaton finds whose case some owner accepts, in the
//! same order (by end, then by start, one anchor's owners in table order);
//! where a gate cannot be built the automaton is the search. A hit counts
//! only for an owner that accepts its case (exact-case rules compare the
//! anchor as written).

use std::sync::LazyLock;

use std::collections::BTreeMap;

use aho_corasick::automaton::Automaton;
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
    /// The gate, when it could be built.
    pub(super) gate: Option<Gate>,
}

/// The gate: a DFA over the exact-case anchors and the case variants of the
/// any-case anchors' heads, walked once over the text.
pub(super) struct Gate {
    automaton: DFA,
    walker: Walker,
    /// For each literal of the automaton (by pattern id), the anchors (by
    /// slot) it may be the start of: an exact-case anchor it spells, and the
    /// any-case anchors whose head it is one case of.
    finds: Vec<Finds>,
}

#[derive(Default)]
struct Finds {
    /// The slot of the exact-case anchor the literal is.
    exact: Option<usize>,
    /// The slots of the any-case anchors the literal is a head of.
    heads: Vec<usize>,
}

/// The longest head of an any-case anchor that the gate spells out in every
/// case: four bytes give at most sixteen variants an anchor.
const HEAD: usize = 4;

/// Every case variant of `head` (ASCII letters only have two).
fn case_variants(head: &[u8]) -> Vec<Vec<u8>> {
    let mut variants = vec![Vec::with_capacity(head.len())];
    for &byte in head {
        let (lower, upper) = (byte.to_ascii_lowercase(), byte.to_ascii_uppercase());
        if lower == upper {
            variants.iter_mut().for_each(|v| v.push(byte));
        } else {
            variants = variants
                .into_iter()
                .flat_map(|v| {
                    let mut other = v.clone();
                    other.push(upper);
                    let mut v = v;
                    v.push(lower);
                    [v, other]
                })
                .collect();
        }
    }
    variants
}

/// The gate over the folded anchors `folded` (by slot) and their owners;
/// `None` where the automaton or its table cannot be built.
fn build_gate(folded: &[String], owners: &[Vec<(usize, &'static str)>]) -> Option<Gate> {
    let mut by_literal: BTreeMap<Vec<u8>, Finds> = BTreeMap::new();
    for (slot, slot_owners) in owners.iter().enumerate() {
        for &(rule, anchor) in slot_owners {
            if RULES[rule].any_case {
                let head = &folded[slot].as_bytes()[..folded[slot].len().min(HEAD)];
                for variant in case_variants(head) {
                    let finds = by_literal.entry(variant).or_default();
                    if !finds.heads.contains(&slot) {
                        finds.heads.push(slot);
                    }
                }
            } else {
                by_literal
                    .entry(anchor.as_bytes().to_vec())
                    .or_default()
                    .exact = Some(slot);
            }
        }
    }
    let (literals, finds): (Vec<Vec<u8>>, Vec<Finds>) = by_literal.into_iter().unzip();
    let automaton = DFA::builder()
        .match_kind(MatchKind::Standard)
        .build(&literals)
        .ok()?;
    Some(Gate {
        walker: Walker::new(&automaton, &literals)?,
        automaton,
        finds,
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
    let gate = build_gate(&anchors, &owners);
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
    pub(super) fn gated_hits(&self, gate: &Gate, text: &str) -> Vec<Hit> {
        let bytes = text.as_bytes();
        let mut ends = Vec::new();
        gate.walker.match_ends(bytes, &mut ends);
        // (end, start, slot) of every anchor found.
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for (end, sid) in ends {
            for index in 0..gate.automaton.match_len(sid) {
                let pattern = gate.automaton.match_pattern(sid, index);
                let start = end - gate.automaton.pattern_len(pattern);
                let Some(finds) = gate.finds.get(pattern.as_usize()) else {
                    continue;
                };
                if let Some(slot) = finds.exact {
                    found.push((end, start, slot));
                }
                for &slot in &finds.heads {
                    let anchor = self.folded[slot].as_bytes();
                    let anchor_end = start + anchor.len();
                    if bytes
                        .get(start..anchor_end)
                        .is_some_and(|seen| seen.eq_ignore_ascii_case(anchor))
                    {
                        found.push((anchor_end, start, slot));
                    }
                }
            }
        }
        // The automaton reports by end; at one end, the longer anchor first
        // (the earlier start); one anchor's owners in table order. An anchor
        // found both as written and through its head counts once.
        found.sort_unstable();
        found.dedup();
        let mut out = Vec::new();
        for (end, start, slot) in found {
            self.accept(bytes, slot, start, end, &mut out);
        }
        out
    }
}

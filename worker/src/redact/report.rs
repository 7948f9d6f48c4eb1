//! Counting: what redaction did, by how many replacements under which rules.
//!
//! A [`RedactionReport`] names rules, never values. It holds a count and one
//! bit per rule of the table, so reports of many calls add up cheaply
//! ([`RedactionReport::merge`]) and its rule names come out sorted and
//! unique.

use serde_json::Value;

use super::rules::{MAX_RULES, RULES};

/// Words of [`RedactionReport`]'s bit set.
const REPORT_WORDS: usize = MAX_RULES / 64;

/// What redaction did: how many replacements, under which rules.
///
/// One report usually covers a whole tool result: pass the same report to every
/// call. It never holds the replaced values.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RedactionReport {
    count: u64,
    /// Bit `i % 64` of word `i / 64` is set when rule `i` of the table fired.
    fired: [u64; REPORT_WORDS],
}

impl RedactionReport {
    /// An empty report.
    pub fn new() -> RedactionReport {
        RedactionReport::default()
    }

    pub(super) fn record(&mut self, rule: usize, count: u64) {
        self.count += count;
        self.fired[rule / 64] |= 1 << (rule % 64);
    }

    /// Number of replacements.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether anything was replaced.
    pub fn applied(&self) -> bool {
        self.count > 0
    }

    /// Names of the rules that fired, sorted and unique.
    pub fn rules(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = RULES
            .iter()
            .enumerate()
            .filter(|(index, _)| self.fired[index / 64] & (1 << (index % 64)) != 0)
            .map(|(_, rule)| rule.name)
            .collect();
        names.sort_unstable();
        names
    }

    /// Adds `other` to this report.
    pub fn merge(&mut self, other: &RedactionReport) {
        self.count += other.count;
        for (mine, theirs) in self.fired.iter_mut().zip(other.fired) {
            *mine |= theirs;
        }
    }

    /// The report as it appears in `structuredContent.redaction`:
    /// `{"applied": count > 0, "count": n, "rules": [sorted names]}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "applied": self.applied(),
            "count": self.count,
            "rules": self.rules(),
        })
    }
}

//! What a rule's matcher reports, and how the reports of one text become
//! its replacements.
//!
//! Every matcher pushes a [`Found`]: the byte range of the secret alone (not
//! the key name, scheme or host around it) and the index of its rule in the
//! table. [`merge`] keeps the replacements disjoint: where secrets overlap,
//! one replacement covers them all, named after the one that starts first,
//! and among those starting together after the earliest rule.

/// A found secret, by rule index.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rule: usize,
}

/// Sorts and merges overlapping secrets; a merged secret is named after the
/// part that starts first (the one enclosing the others: a JWT whose
/// signature happens to contain `sk-…` is a JWT), and among parts starting
/// together after the earliest rule (the lowest index).
pub(super) fn merge(mut found: Vec<Found>) -> Vec<Found> {
    if found.len() < 2 {
        return found;
    }
    found.sort_unstable_by_key(|f| (f.start, f.rule));
    let mut merged: Vec<Found> = Vec::with_capacity(found.len());
    for next in found {
        match merged.last_mut() {
            Some(last) if next.start < last.end => {
                last.end = last.end.max(next.end);
            }
            _ => merged.push(next),
        }
    }
    merged
}

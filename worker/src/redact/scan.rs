//! One scan of a text: each anchor hit handed to its rule's matcher, the
//! secrets found merged into disjoint replacements.
//!
//! The rules of a scan: a hit inside a secret its own rule already found is
//! not tried again, except for headers and assignments (a header's token can
//! swallow the next header's name, a bare value the next key name on its
//! line, whose own value must still be found); a hit inside a key name the
//! assignment rule has read is not read again; a `bounded` rule's hit glued
//! to a word byte is skipped; and a private-key block with no `END` line
//! after it tells every later block that none follows.

use super::assignment::assignment_at;
use super::found::{Found, merge};
use super::key_blocks::{key_block_at, putty_at};
use super::patterns::{header_at, token_at};
use super::prefilter::{Hit, PREFILTER};
use super::rules::{Kind, RULES};
use super::text::is_word_byte;
use super::url::url_at;

/// What one scan remembers between hits.
struct Scan {
    /// Per rule, where its last accepted secret ended: a later hit of the
    /// same rule inside it is not tried again. A header and an assignment
    /// may be: a header's token can swallow the next header's name, and a
    /// bare value can swallow the next key name on its line
    /// (`credentials= api_key: 'value'`), whose own value must still be found.
    covered: Vec<usize>,
    /// Where the assignment rule last read a key name up to.
    name_end: usize,
    /// The private-key block rule found no `END` line at or after this
    /// offset, so no later block has one either (see [`key_block_at`]).
    no_end_after: Option<usize>,
}

/// Every secret of `text`, merged: sorted, no two overlapping or touching
/// the same bytes, each named after the earliest rule among those merged.
pub(super) fn find(text: &str) -> Vec<Found> {
    find_at(text, PREFILTER.hits(text))
}

/// [`find`] from the anchor hits of `text`, already found.
pub(super) fn find_at(text: &str, hits: Vec<Hit>) -> Vec<Found> {
    let bytes = text.as_bytes();
    let mut found: Vec<Found> = Vec::new();
    let mut scan = Scan {
        covered: vec![0; RULES.len()],
        name_end: 0,
        no_end_after: None,
    };
    for hit in hits {
        let index = hit.rule;
        let rule = &RULES[index];
        let (start, end) = (hit.start, hit.end);
        if start < scan.covered[index] && !matches!(rule.kind, Kind::Header | Kind::Assignment) {
            continue;
        }
        if rule.bounded && start > 0 && is_word_byte(bytes[start - 1]) {
            continue;
        }
        let before = found.len();
        match rule.kind {
            Kind::Token => token_at(text, index, rule, start, end, &mut found),
            Kind::Header => header_at(text, index, rule, start, &mut found),
            Kind::Assignment => {
                if start >= scan.name_end {
                    scan.name_end = assignment_at(text, start, end, index, &mut found);
                }
            }
            Kind::Url => url_at(text, start, index, &mut found),
            Kind::KeyBlock => key_block_at(text, start, index, &mut scan.no_end_after, &mut found),
            Kind::Putty => putty_at(text, start, index, &mut found),
        }
        if let Some(last) = found[before..].iter().map(|f| f.end).max() {
            scan.covered[index] = scan.covered[index].max(last);
        }
    }
    merge(found)
}

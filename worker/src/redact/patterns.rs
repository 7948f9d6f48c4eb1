//! The rules matched by a regex: provider tokens and structural shapes
//! (`Kind::Token`) and `Authorization:` headers (`Kind::Header`).
//!
//! A rule's pattern is expanded (`rules.rs` describes the shorthands) and
//! compiled the first time one of its anchors is seen, then kept for the
//! process. A regex runs only at its rule's anchor hits, anchored a bounded
//! distance before the hit and on a window after it (`Rule::back`,
//! `Rule::ahead`), so a hit costs a few anchored steps, never a scan of the
//! text; the text outside the window still decides the word boundaries. The
//! secret is the group named `s`, or the whole match. A secret that is a
//! placeholder or mask ([`super::exempt`]) is not reported; nor is a header
//! token that is a reference or the next `Authorization` header's name.

use std::ops::Range;
use std::sync::OnceLock;

use regex_automata::meta::Regex;
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input};

use super::exempt::{is_exempt, is_reference};
use super::found::Found;
use super::rules::{MAX_RULES, RULES, Rule};
use super::text::{ceil_boundary, floor_boundary};

/// Expands the `{B}`, `{E}`, `{S}` and `{NS}` shorthands of token patterns.
fn expand(pattern: &str) -> String {
    pattern
        .replace("{B}", r"(?-u:\b)")
        .replace("{E}", r"(?:(?-u:\b)|[^\x00-\x7F])")
        .replace("{NS}", r"[^\s\x1C-\x1F]")
        .replace("{S}", r"[\s\x1C-\x1F]")
}

/// Each token rule's regex, compiled the first time it is needed.
static COMPILED: [OnceLock<Regex>; MAX_RULES] = [const { OnceLock::new() }; MAX_RULES];

#[expect(
    clippy::expect_used,
    reason = "the patterns are constants; a test compiles every one of them"
)]
pub(super) fn compiled(index: usize) -> &'static Regex {
    COMPILED[index].get_or_init(|| {
        Regex::new(&expand(RULES[index].pattern)).expect("redaction pattern compiles")
    })
}

/// The secret of `captures`: the group `s`, or the whole match.
fn secret_of(captures: &Captures) -> Option<Range<usize>> {
    captures
        .get_group_by_name("s")
        .or_else(|| captures.get_group(0))
        .map(|span| span.start..span.end)
}

/// A token rule at the anchor hit `start..end`: the match containing the
/// hit, searched in a window around it (the text outside the window still
/// decides the word boundaries).
pub(super) fn token_at(
    text: &str,
    index: usize,
    rule: &Rule,
    start: usize,
    end: usize,
    out: &mut Vec<Found>,
) {
    let regex = compiled(index);
    let until = ceil_boundary(text, end.saturating_add(rule.ahead));
    // A match starts at most `back` bytes before the anchor: try each such
    // start anchored, nearest first is not needed (leftmost wins), so the
    // cost of a hit is a few anchored steps, not a scan of the window.
    let from = floor_boundary(text, start.saturating_sub(rule.back));
    let mut at = from;
    while at <= start {
        let input = Input::new(text).range(at..until).anchored(Anchored::Yes);
        if let Some(whole) = regex.search(&input)
            && whole.end() >= end
        {
            let mut captures = regex.create_captures();
            regex.search_captures(&input, &mut captures);
            if let Some(secret) = secret_of(&captures)
                && !secret.is_empty()
                && !is_exempt(&text[secret.clone()])
            {
                out.push(Found {
                    start: secret.start,
                    end: secret.end,
                    rule: index,
                });
            }
            return;
        }
        at = ceil_boundary(text, at + 1);
    }
}

/// `Authorization: <scheme> <token>` at the name starting at `start`.
pub(super) fn header_at(text: &str, index: usize, rule: &Rule, start: usize, out: &mut Vec<Found>) {
    let regex = compiled(index);
    let until = ceil_boundary(text, start.saturating_add(rule.ahead));
    let input = Input::new(text).range(start..until).anchored(Anchored::Yes);
    if regex.search(&input).is_none() {
        return;
    }
    let mut captures = regex.create_captures();
    regex.search_captures(&input, &mut captures);
    let Some(secret) = captures.get_match().and(secret_of(&captures)) else {
        return;
    };
    let token = &text[secret.clone()];
    // `Authorization: Bearer` with no token, then another header on the next
    // line: the next header is not this one's token.
    if starts_with_authorization(token) {
        return;
    }
    if is_exempt(token) || is_reference(token) {
        return;
    }
    out.push(Found {
        start: secret.start,
        end: secret.end,
        rule: index,
    });
}

/// Whether `text` starts with `authorization`, in any case.
pub(super) fn starts_with_authorization(text: &str) -> bool {
    text.as_bytes()
        .get(..13)
        .is_some_and(|head| head.eq_ignore_ascii_case(b"authorization"))
}

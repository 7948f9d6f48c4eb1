//! Redaction: credentials are replaced before anything leaves moat.
//!
//! The denylist keeps whole files away from the client. This control covers the
//! other case: a credential inside an ordinary file (a token hard-coded in
//! `settings.py`, a connection string in a docstring) that a tool result would
//! otherwise carry to the model, its provider's logs and every shared transcript.
//!
//! [`Redactor::redact_str`] takes a whole text (a whole file, so multi-line
//! shapes are seen whole) and replaces each secret by `[redacted:<rule>]`;
//! [`Redactor::redact_value`] does the same for every string of a JSON value;
//! [`Redactor::redact_spans`] says where the secrets of a raw text are, for a
//! caller that renders the text itself. The [`RedactionReport`] says how many
//! replacements were made under which rules. It names rules, never values.
//!
//! # Rules
//!
//! The table is in `rules.rs`, in priority order ([`Redactor::rule_names`]):
//!
//! - provider tokens with a published shape (a prefix such as `ghp_`,
//!   `xoxb-`, `glpat-`, `dop_v1_`, `sk_live_`, a structure such as
//!   SendGrid's `SG.<22>.<43>`, a length range);
//! - structural shapes: JWTs, private-key armor blocks of every kind
//!   (`BEGIN … PRIVATE KEY`, `ENCRYPTED`, `OPENSSH`, `PGP … BLOCK`, SSH2's
//!   `---- BEGIN`), PuTTY key files, URL credentials of every scheme (no user
//!   name, an unescaped `@` in the password), `Authorization:` headers,
//!   `curl -u`, `.netrc` lines;
//! - `assigned-secret` (`generic.rs`): a secret-named key (`password`,
//!   `DB_PASSWORD`, `apiToken`, `client-secret`, `private_key`, `auth`, …)
//!   and its value in any common syntax: `=`, `:`, `:=`, `=>`, quoted keys
//!   (JSON, YAML, Python dicts), env files, TOML, XML elements,
//!   `--password VALUE` flags, the value on the next line, YAML block
//!   scalars.
//!
//! Only the secret part of a match is replaced: variable names, URL schemes
//! and hosts survive, so "where is this key set?" still has an answer. Where
//! two rules' secrets overlap, one replacement covers both, named after the
//! one that starts first (the earlier rule when they start together). Placeholders (`changeme`, `xxxx…`, `${VAR}`, `<your-token>`,
//! `example`), masks (`********`), references to other variables and calls
//! are left alone.
//!
//! Redaction is idempotent: redacting the output again changes nothing. A
//! replacement can leave text that a rule now matches (a value that swallowed
//! a header's name leaves that header's token glued to the key before it), so
//! the passes repeat until one replaces nothing, at most `MAX_PASSES` times.
//!
//! # Cost
//!
//! Construction compiles nothing. The anchor search is built on first use
//! (well under a millisecond): a few packed (SIMD) literal searchers, each
//! over a small group of anchor prefixes, run over the text (the any-case
//! key words over a lower-cased copy made a chunk at a time), and at each
//! position where a prefix starts every anchor is compared in full. That
//! finds exactly what one Aho-Corasick automaton over every anchor finds (the
//! automaton stays as the reference, and as the search where a packed
//! searcher cannot be built). A rule runs only at its own anchors' hits, on a
//! window around the hit, and a rule's regex is compiled the first time one
//! of its anchors is seen. Text without any anchor costs those scans and no
//! allocation.
//!
//! # Limits
//!
//! The rules recognise shapes, not entropy: a random password in a variable
//! called `x` passes through.
//!
//! A shape must be seen whole. Where a limit cuts text (a search line at
//! `SEARCH_LINE_CHARS`, a signature at `SIGNATURE_CHARS`), a credential the
//! cut runs through loses what its rule needs (the `@` after a URL password,
//! the last characters of a token) and would pass as a fragment, possibly the
//! whole password; [`drop_cut_tail`] removes the word the cut ran through.

mod blocks;
mod generic;
mod rules;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use crate::literals::Starts;
use aho_corasick::{AhoCorasick, MatchKind};
use regex_automata::meta::Regex;
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input};
use serde_json::Value;

use rules::{Kind, RULES, Rule};

/// Most passes over one text (see [`Redactor::redact_str`]). Ordinary text
/// needs one, text with credentials two; only text built to chain rules into
/// each other needs more.
const MAX_PASSES: usize = 8;

/// The most rules the table may hold (the report's bit set and the lazily
/// compiled regexes are sized by it).
const MAX_RULES: usize = 4 * 64;

/// Words of [`RedactionReport`]'s bit set.
const REPORT_WORDS: usize = MAX_RULES / 64;

/// Values that look like credentials but are documentation, compared after
/// trimming quotes, backticks and blanks, and lower-casing.
const PLACEHOLDERS: [&str; 17] = [
    "replace_me",
    "changeme",
    "change_me",
    "your_api_key",
    "your-api-key",
    "yourapikeyhere",
    "xxxxxxxxxxxx",
    "placeholder",
    "example",
    "notarealkey",
    "dummy",
    "redacted",
    "none",
    "null",
    "undefined",
    "true",
    "false",
];

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
fn compiled(index: usize) -> &'static Regex {
    COMPILED[index].get_or_init(|| {
        Regex::new(&expand(RULES[index].pattern)).expect("redaction pattern compiles")
    })
}

/// The anchors of every rule in one automaton, and for each anchor the rules
/// that own it.
struct Prefilter {
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
    gate: Option<Gate>,
}

/// Where an anchor may start ([`crate::literals::Starts`]): a gate literal is
/// an anchor's first four bytes (or the whole anchor when shorter). The
/// exact-case anchors are searched in the text itself, the any-case ones in a
/// lower-cased copy made a chunk at a time. At every reported start every
/// anchor is compared in full, so the gate finds exactly the anchor hits the
/// automaton finds whose case some owner accepts.
struct Gate {
    exact: Starts,
    any_case: Starts,
}

/// The lower-cased copy of the text is made this many bytes at a time.
const GATE_CHUNK: usize = 32 * 1024;

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

static PREFILTER: LazyLock<Prefilter> = LazyLock::new(build_prefilter);

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
struct Hit {
    start: usize,
    end: usize,
    rule: usize,
}

impl Prefilter {
    /// Every accepted anchor hit of `text`, in the order the automaton's
    /// overlapping search reports them (by end, then by start), and for one
    /// hit its owners in table order.
    fn hits(&self, text: &str) -> Vec<Hit> {
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
    fn automaton_hits(&self, text: &str) -> Vec<Hit> {
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
    fn gated_hits(&self, gate: &Gate, text: &str) -> Vec<Hit> {
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

/// A secret found in a text: its byte range and the rule that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedSpan {
    /// Byte range of the secret in the text.
    pub range: Range<usize>,
    /// The rule's name, as in `[redacted:<rule>]`.
    pub rule: &'static str,
}

/// A found secret, by rule index.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    end: usize,
    rule: usize,
}

/// Replaces credentials in text and JSON values.
///
/// Cheap to create: nothing is compiled until the first text is redacted,
/// and then once per process. `Send + Sync`, so one instance can serve every
/// request.
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
}

impl Redactor {
    /// A redactor; when `enabled` is false it never changes anything.
    pub fn new(enabled: bool) -> Redactor {
        Redactor { enabled }
    }

    /// Whether this redactor changes anything at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The rule names, in priority order.
    pub fn rule_names() -> &'static [&'static str] {
        static NAMES: LazyLock<Vec<&'static str>> =
            LazyLock::new(|| RULES.iter().map(|rule| rule.name).collect());
        &NAMES
    }

    /// Builds what the first redaction would otherwise build: the prefilter
    /// automaton. For a process that wants that cost off its first request.
    pub fn warm_up() {
        LazyLock::force(&PREFILTER);
    }

    /// Where the secrets of `text` are, in order, without overlaps; empty
    /// when redaction is disabled. One pass over the raw text: replacing
    /// these spans by `[redacted:<rule>]` gives what [`Redactor::redact_str`]
    /// gives, except where a replacement made text that a rule matches again
    /// (`redact_str` repeats until nothing changes).
    pub fn redact_spans(&self, text: &str) -> Vec<RedactedSpan> {
        if !self.enabled || text.is_empty() {
            return Vec::new();
        }
        find(text)
            .into_iter()
            .map(|found| RedactedSpan {
                range: found.start..found.end,
                rule: RULES[found.rule].name,
            })
            .collect()
    }

    /// Redacts `text`, adding what was replaced to `report`.
    ///
    /// Returns `None` when nothing was replaced; that path does not allocate.
    /// Idempotent: redacting the output again changes nothing.
    pub fn redact_str(&self, text: &str, report: &mut RedactionReport) -> Option<String> {
        if !self.enabled || text.is_empty() {
            return None;
        }
        let mut redacted = redact_pass(text, report)?;
        for _ in 1..MAX_PASSES {
            match redact_pass(&redacted, report) {
                Some(again) => redacted = again,
                None => break,
            }
        }
        Some(redacted)
    }

    /// Redacts every string inside `value`, recursively. Object keys are left
    /// as they are.
    ///
    /// Each string is redacted on its own, as [`Redactor::redact_str`] would.
    /// A result holds hundreds of short strings (a listing's names and
    /// paths), so all of them are first scanned once, joined by `\n`: when
    /// nothing is found in the joined text, nothing is found in any one
    /// string, and the value is left as it is. That holds because every rule
    /// treats `\n` as it treats the end of the text: no shape continues over
    /// it on the same line, and a shape that reads on to the next line
    /// (a value under its key, a header's token) finds at least as much in
    /// the joined text. Anything found in the joined text sends every string
    /// through the rules one by one.
    pub fn redact_value(&self, value: &mut Value, report: &mut RedactionReport) {
        if !self.enabled {
            return;
        }
        let mut joined = String::new();
        join_strings(value, &mut joined);
        if find(&joined).is_empty() {
            return;
        }
        self.redact_each(value, report);
    }

    /// [`Redactor::redact_value`] without the joined pre-scan.
    fn redact_each(&self, value: &mut Value, report: &mut RedactionReport) {
        match value {
            Value::String(text) => {
                if let Some(redacted) = self.redact_str(text, report) {
                    *text = redacted;
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.redact_each(item, report);
                }
            }
            Value::Object(members) => {
                for (_, member) in members.iter_mut() {
                    self.redact_each(member, report);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

impl Default for Redactor {
    /// An enabled redactor.
    fn default() -> Redactor {
        Redactor::new(true)
    }
}

/// Every string in `value` (not object keys), each followed by `\n`.
fn join_strings(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| join_strings(v, out)),
        Value::Object(members) => members.values().for_each(|v| join_strings(v, out)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// One pass: every secret of `text` replaced, or `None` when there is none.
fn redact_pass(text: &str, report: &mut RedactionReport) -> Option<String> {
    let found = find(text);
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut copied = 0;
    for secret in &found {
        out.push_str(&text[copied..secret.start]);
        push_token(&mut out, RULES[secret.rule].name);
        copied = secret.end;
        report.record(secret.rule, 1);
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Appends the redaction token for `rule` to `out`.
fn push_token(out: &mut String, rule: &str) {
    out.push_str("[redacted:");
    out.push_str(rule);
    out.push(']');
}

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
    /// offset, so no later block has one either.
    no_end_after: Option<usize>,
}

/// Every secret of `text`, merged: sorted, no two overlapping or touching
/// the same bytes, each named after the earliest rule among those merged.
fn find(text: &str) -> Vec<Found> {
    let prefilter = &*PREFILTER;
    let bytes = text.as_bytes();
    let mut found: Vec<Found> = Vec::new();
    let mut scan = Scan {
        covered: vec![0; RULES.len()],
        name_end: 0,
        no_end_after: None,
    };
    for hit in prefilter.hits(text) {
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
                    scan.name_end = generic::assignment_at(text, start, end, index, &mut found);
                }
            }
            Kind::Url => blocks::url_at(text, start, index, &mut found),
            Kind::KeyBlock => blocks::key_block_at(text, start, index, &mut scan, &mut found),
            Kind::Putty => blocks::putty_at(text, start, index, &mut found),
        }
        if let Some(last) = found[before..].iter().map(|f| f.end).max() {
            scan.covered[index] = scan.covered[index].max(last);
        }
    }
    merge(found)
}

/// Sorts and merges overlapping secrets; a merged secret is named after the
/// part that starts first (the one enclosing the others: a JWT whose
/// signature happens to contain `sk-…` is a JWT), and among parts starting
/// together after the earliest rule (the lowest index).
fn merge(mut found: Vec<Found>) -> Vec<Found> {
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

/// An ASCII letter, digit or `_`.
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The largest char boundary at or before `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary at or after `at`.
fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
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
fn token_at(text: &str, index: usize, rule: &Rule, start: usize, end: usize, out: &mut Vec<Found>) {
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
fn header_at(text: &str, index: usize, rule: &Rule, start: usize, out: &mut Vec<Found>) {
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
fn starts_with_authorization(text: &str) -> bool {
    text.as_bytes()
        .get(..13)
        .is_some_and(|head| head.eq_ignore_ascii_case(b"authorization"))
}

/// Whether a header token or URL password refers to something else rather
/// than being a credential: a variable (`$TOKEN`, `${TOKEN}`, `%TOKEN%`), a
/// template (`{{ token }}`, `{token}`, `<token>`), a format directive, or the
/// end of a string being concatenated (`"Bearer " + token`). Only the start
/// counts: a token runs to the next blank and may carry text after it.
fn is_reference(secret: &str) -> bool {
    let first = secret.chars().next();
    matches!(
        first,
        Some('$' | '{' | '<' | '%' | '"' | '\'' | '`' | '+' | '#')
    )
}

/// Whether a captured secret is documentation rather than a credential: a
/// known placeholder, a mask such as `********`, or an earlier redaction token.
fn is_exempt(secret: &str) -> bool {
    let trimmed = secret.trim_matches(['"', '\'', '`', ' ', '\t']);
    if is_redaction_token(trimmed) {
        return true;
    }
    let lowered = trimmed.to_lowercase();
    if PLACEHOLDERS.contains(&lowered.as_str()) {
        return true;
    }
    let core = lowered.trim_matches(['<', '>', '{', '}', '[', ']']);
    let mut distinct: [Option<char>; 2] = [None, None];
    let mut length = 0;
    for c in core.chars() {
        length += 1;
        if distinct.contains(&Some(c)) {
            continue;
        }
        match distinct.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => *slot = Some(c),
            None => return false,
        }
    }
    length >= 4
}

/// Whether `text` is exactly `[redacted:<rule>]` for one of our rules.
fn is_redaction_token(text: &str) -> bool {
    text.strip_prefix("[redacted:")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|name| RULES.iter().any(|rule| rule.name == name))
}

/// For the property tests and the fuzz target: whether `rule` leaves
/// `secret` alone by design (a placeholder, a mask, a reference, a value that
/// reads as code rather than a credential).
#[doc(hidden)]
pub fn exempt_by_design(rule: &str, secret: &str) -> bool {
    if is_exempt(secret) {
        return true;
    }
    match rule {
        "basic-auth-header" => is_reference(secret) || starts_with_authorization(secret),
        "url-credentials" => blocks::password_is_exempt(secret),
        "assigned-secret" => {
            // Judged as the rule reads a bare value: a full stop after it is
            // not part of it.
            let bare = secret.trim_end_matches('.');
            !generic::value_is_secret(bare, false, "")
                || !generic::value_is_secret(secret, true, "")
        }
        _ => false,
    }
}

/// Characters that end a credential (with whitespace), so a cut text may end
/// after one without keeping part of a credential.
const WORD_ENDS: [char; 14] = [
    '"', '\'', '`', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '|',
];

/// For text that may have been cut at `limit` characters: when it has
/// `limit` characters or more, drops the trailing word (everything after the
/// last whitespace or one of `` "'`,;()[]{}<>| ``, which end every shape but
/// the `basic-auth-header` token, and that rule matches any remainder), which
/// may be the start of a credential no rule can recognise any more. Shorter text is returned as it
/// is. Apply before redaction.
#[must_use]
pub fn drop_cut_tail(text: &str, limit: usize) -> Cow<'_, str> {
    if text.chars().nth(limit.saturating_sub(1)).is_none() {
        return Cow::Borrowed(text);
    }
    let keep = text
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || WORD_ENDS.contains(&c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    Cow::Borrowed(&text[..keep])
}

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

    fn record(&mut self, rule: usize, count: u64) {
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

/// Field names whose values are credentials. Compared case-insensitively, with
/// `-` and `_` treated alike.
const CREDENTIAL_FIELDS: [&str; 11] = [
    "authorization",
    "proxy_authorization",
    "bearer_token",
    "token",
    "secret",
    "password",
    "passwd",
    "api_key",
    "apikey",
    "cookie",
    "set_cookie",
];

/// Suffixes that make a field name a credential name (`github_token`,
/// `db_password`, `client_secret`, `private_key`).
const CREDENTIAL_SUFFIXES: [&str; 5] = ["_token", "_password", "_passwd", "_secret", "_key"];

/// For log redaction: whether a field called `name` holds a credential.
///
/// True for `bearer_token`, `authorization`, `token`, `secret`, `password`,
/// `api_key` and a few more, and for names ending in `_token`, `_password`,
/// `_secret` or `_key`; case-insensitive, `-` counts as `_`.
pub fn is_credential_field(name: &str) -> bool {
    CREDENTIAL_FIELDS
        .iter()
        .any(|field| same_name(name.as_bytes(), field))
        || CREDENTIAL_SUFFIXES.iter().any(|suffix| {
            name.len() > suffix.len()
                && same_name(&name.as_bytes()[name.len() - suffix.len()..], suffix)
        })
}

/// ASCII case-insensitive equality where `-` equals `_`, on bytes (a suffix
/// of a name need not start on a character boundary).
fn same_name(name: &[u8], canonical: &str) -> bool {
    name.len() == canonical.len()
        && name
            .iter()
            .zip(canonical.bytes())
            .all(|(&a, b)| a.to_ascii_lowercase() == b || (a == b'-' && b == b'_'))
}

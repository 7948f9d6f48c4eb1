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
//! - `assigned-secret` (`assignment.rs`): a secret-named key (`password`,
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
//! (about half a millisecond): one DFA over every anchor folded to lower
//! case, walked once over the text in any case
//! ([`crate::literals::Walker::any_case`]); an exact-case owner compares the
//! anchor as written. Its cost is
//! the text's length, whatever the text holds. That finds exactly what one
//! Aho-Corasick automaton over every anchor finds (the automaton stays as the
//! reference, and as the search where the DFA cannot be built). A rule runs
//! only at its own anchors' hits, on a window around the hit, and a rule's
//! regex is compiled the first time one of its anchors is seen. Text without
//! any anchor costs that walk and no allocation beyond it.
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
//!
//! # Modules
//!
//! This file holds the entry points ([`Redactor`], [`RedactedSpan`],
//! [`exempt_by_design`]) and re-exports the rest of the public API.
//!
//! - `rules.rs`: the rule table;
//! - `prefilter.rs`: the anchor search over every rule's anchors;
//! - `scan.rs`: one scan of a text, each hit handed to its rule's matcher;
//! - the matchers: `patterns.rs` (regex rules: tokens, `Authorization:`
//!   headers), `url.rs` (URL credentials), `key_blocks.rs` (private-key
//!   armor blocks, PuTTY key files), and `assigned-secret` in
//!   `assignment.rs` (the syntax), `key_names.rs` (which names are
//!   secret-named) and `assigned_values.rs` (which values are credentials);
//! - shared by the matchers: `found.rs` (what a matcher reports, and the
//!   merge of overlapping secrets), `exempt.rs` (placeholders, masks,
//!   references), `text.rs` (char boundaries, word bytes);
//! - for callers: `report.rs` ([`RedactionReport`]), `cut_tail.rs`
//!   ([`drop_cut_tail`]), `credential_fields.rs` ([`is_credential_field`]).
//!
//! Imports run one way: this file imports the modules, `scan.rs` the
//! prefilter and the matchers, the matchers the shared modules and the
//! table; the shared modules import nothing but the table, and `rules.rs`
//! nothing. No module imports one that imports it.

mod assigned_values;
mod assignment;
mod credential_fields;
mod cut_tail;
mod exempt;
mod found;
mod key_blocks;
mod key_names;
mod patterns;
mod prefilter;
mod report;
mod rules;
mod scan;
#[cfg(test)]
mod tests;
mod text;
mod url;

use std::ops::Range;
use std::sync::LazyLock;

use serde_json::Value;

pub use credential_fields::is_credential_field;
pub use cut_tail::{drop_cut_tail, ends_a_word};
pub use prefilter::AnchorHits;
pub use report::RedactionReport;

use exempt::{is_exempt, is_reference};
use found::Found;
use patterns::starts_with_authorization;
use prefilter::PREFILTER;
use rules::RULES;
use scan::{find, find_at};

/// Most passes over one text (see [`Redactor::redact_str`]). Ordinary text
/// needs one, text with credentials two; only text built to chain rules into
/// each other needs more.
const MAX_PASSES: usize = 8;

/// A secret found in a text: its byte range and the rule that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedSpan {
    /// Byte range of the secret in the text.
    pub range: Range<usize>,
    /// The rule's name, as in `[redacted:<rule>]`.
    pub rule: &'static str,
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
        let first = redact_pass(text, report)?;
        Some(further_passes(first, report))
    }

    /// Every rule's anchors, in ASCII lower case: [`Redactor::redact_str_with`]
    /// takes where they occur in a text. Built on first use.
    pub fn anchors() -> &'static [String] {
        PREFILTER.anchors()
    }

    /// [`Redactor::redact_str`], with the anchor search of the first pass
    /// already done by the caller: `hits` holds every occurrence in `text`,
    /// in any ASCII case, of every anchor of [`Redactor::anchors`] (named by
    /// its index there). One walk of an automaton holding these anchors and
    /// the caller's own literals then serves both. Any further pass (text a
    /// replacement made) searches for itself.
    pub fn redact_str_with(
        &self,
        text: &str,
        hits: AnchorHits,
        report: &mut RedactionReport,
    ) -> Option<String> {
        if !self.enabled || text.is_empty() {
            return None;
        }
        let found = find_at(text, PREFILTER.accepted(text, hits));
        let first = replace(text, &found, report)?;
        Some(further_passes(first, report))
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

/// The passes after a first one that replaced something: until one
/// replaces nothing, or [`MAX_PASSES`] in all.
fn further_passes(mut redacted: String, report: &mut RedactionReport) -> String {
    for _ in 1..MAX_PASSES {
        match redact_pass(&redacted, report) {
            Some(again) => redacted = again,
            None => break,
        }
    }
    redacted
}

/// One pass: every secret of `text` replaced, or `None` when there is none.
fn redact_pass(text: &str, report: &mut RedactionReport) -> Option<String> {
    replace(text, &find(text), report)
}

/// `text` with the secrets `found` replaced by their placeholders; `None`
/// when there are none.
fn replace(text: &str, found: &[Found], report: &mut RedactionReport) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut copied = 0;
    for secret in found {
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
        "url-credentials" => url::password_is_exempt(secret),
        "assigned-secret" => {
            // Judged as the rule reads a bare value: a full stop after it is
            // not part of it.
            let bare = secret.trim_end_matches('.');
            !assigned_values::value_is_secret(bare, false, "")
                || !assigned_values::value_is_secret(secret, true, "")
        }
        _ => false,
    }
}

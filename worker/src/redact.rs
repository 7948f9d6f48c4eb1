//! Redaction: credentials are replaced before anything leaves moat.
//!
//! The denylist keeps whole files away from the client. This control covers the
//! other case: a credential inside an ordinary file (a token hard-coded in
//! `settings.py`, a connection string in a docstring) that a tool result would
//! otherwise carry to the model, its provider's logs and every shared transcript.
//!
//! Every tool result passes through [`Redactor::redact_value`] once it is fully
//! assembled (summary text, fenced content, structured members, scanner excerpts),
//! and the [`RedactionReport`] says how many replacements were made under which
//! rules. It names rules, never values.
//!
//! # Rules
//!
//! Sixteen shapes, applied **in the order of [`Redactor::rule_names`]**, each
//! over the output of the previous one, so an earlier rule wins. Only the secret
//! part of a match is replaced, by `[redacted:<rule>]`: variable names, URL
//! schemes and hosts survive, so "where is this key set?" still has an answer.
//! The private-key block is replaced whole.
//!
//! The shapes are the seed's (see `reference/seed-facts.md` §4) with these
//! differences, each covered by a test below:
//!
//! - `anthropic-key` is tried before `openai-key`. In the seed the OpenAI shape
//!   (`sk-…`) came first and swallowed `sk-ant-…` keys, so they were reported
//!   under the wrong name (seed quirk 16). The seed's documents speak of
//!   seventeen rules; its code has these sixteen, `anthropic-key` included.
//! - `assigned-secret` also accepts a key name joined to a prefix:
//!   `DB_PASSWORD = "…"`, `AWS_SECRET_ACCESS_KEY=…`, `export STRIPE_SECRET=…`,
//!   `dbPassword: "…"`. The seed required a word boundary before the key name,
//!   and `_` is a word character. Now the key name may follow anything but an
//!   ASCII letter or digit (so `_` too), or, camelCase, a lower-case letter or
//!   digit when the name starts with a capital. `secret_access_key` joined the
//!   key names so the AWS variable is caught. The value rules are unchanged: at
//!   least 12 characters of `[A-Za-z0-9_+/.=~-]`, placeholders and masks
//!   exempt, so `DB_PASSWORD = "changeme"` stays.
//! - A captured value that is already a redaction token (`[redacted:jwt]`) is not
//!   redacted again, so redacting twice changes nothing the second time.
//! - Word boundaries are ASCII ones (`(?-u:\b)`), which keeps the fast DFA
//!   engines usable on non-ASCII text. Next to the ASCII letters that start and
//!   end every shape, an ASCII boundary holds wherever a Unicode one does, so a
//!   shape the seed redacted is still redacted (a token glued to a non-ASCII
//!   letter is now redacted too).
//!
//! A captured secret is left alone when it is a documented placeholder
//! (`REPLACE_ME`, `changeme`, `your-api-key`, …) or a mask (`********`).
//!
//! # Cost
//!
//! Rules are compiled once per process. Each rule first looks for one match
//! with its own literal prefilter (`AKIA`, `ghp_`, `://`, …); text that no rule
//! matches, the usual case, costs sixteen fast scans and no allocation. Only a
//! rule that matches goes on to replace. Every step is linear in the input
//! size. (One `RegexSet` scan for all rules was measured at about 700 MB/s, the
//! sixteen prefiltered scans at about 1.5 GB/s: a set runs one DFA over every
//! byte and loses the per-rule prefilters.)
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

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// Rule names in application order.
const RULE_NAMES: [&str; RULE_COUNT] = [
    "aws-access-key-id",
    "github-token",
    "github-fine-grained-token",
    "gitlab-token",
    "slack-token",
    "stripe-key",
    "anthropic-key",
    "openai-key",
    "google-api-key",
    "npm-token",
    "hugging-face-token",
    "jwt",
    "private-key-block",
    "url-credentials",
    "basic-auth-header",
    "assigned-secret",
];

/// Number of rules.
const RULE_COUNT: usize = 16;

/// Index of the `assigned-secret` rule, which is matched partly in code.
const ASSIGNED_SECRET: usize = RULE_COUNT - 1;

/// Index of the `basic-auth-header` rule, whose token runs to the next
/// whitespace and so may hold the start of a later rule's match.
const BASIC_AUTH_HEADER: usize = RULE_COUNT - 2;

/// The pattern of each rule, in the order of [`RULE_NAMES`].
///
/// The secret is the group named `s`, or the whole match when there is none.
/// Before compiling, `{B}` becomes an ASCII word boundary, `{E}` the end-of-token
/// boundary (an ASCII boundary, or a following non-ASCII character: this holds
/// wherever the seed's Unicode `\b` did after a token ending in `-`), and `{S}` /
/// `{NS}` the whitespace class of Python's `\s` / `\S`, which counts U+001C to
/// U+001F as whitespace where Rust's `\s` does not.
const RULE_PATTERNS: [&str; RULE_COUNT] = [
    r"{B}(?P<s>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}){B}",
    r"{B}(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}){B}",
    r"{B}(?P<s>github_pat_[A-Za-z0-9_]{60,}){B}",
    r"{B}(?P<s>glpat-[A-Za-z0-9_-]{20,}){E}",
    r"{B}(?P<s>xox[abposr]-[A-Za-z0-9-]{10,}){E}",
    r"{B}(?P<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}){B}",
    r"{B}(?P<s>sk-ant-[A-Za-z0-9_-]{20,}){E}",
    r"{B}(?P<s>sk-(?:proj-)?[A-Za-z0-9_-]{20,}){E}",
    r"{B}(?P<s>AIza[0-9A-Za-z_-]{35}){E}",
    r"{B}(?P<s>npm_[A-Za-z0-9]{36}){B}",
    r"{B}(?P<s>hf_[A-Za-z0-9]{34,}){B}",
    r"{B}(?P<s>eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}){E}",
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY(?: BLOCK)?-----(?s:.)*?-----END (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY(?: BLOCK)?-----",
    r"{B}[a-z][a-z0-9+.-]*://[^\s\x1C-\x1F:/@]+:(?P<s>[^\s\x1C-\x1F/@]+)@",
    r"(?i){B}authorization{S}*:{S}*(?:basic|bearer){S}+(?P<s>{NS}+)",
    // The key name and separator only. What may come before the name, and the
    // value after it, are checked in code (`assignment_at`), which keeps the
    // literal prefilter usable and the matching linear.
    r#"(?i)(?:api[_-]?key|secret[_-]?access[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key|passwd|password|secret){S}*[:=]{S}*["']?"#,
];

/// Most passes of the rules over one text (see [`Redactor::redact_str`]).
/// Ordinary text needs one, text with credentials two; only text built to
/// chain rules into each other needs more.
const MAX_PASSES: usize = 8;

/// An `assigned-secret` value is at least this many characters long.
const MIN_ASSIGNED_VALUE_CHARS: usize = 12;

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

/// Expands the `{B}`, `{E}`, `{S}` and `{NS}` shorthands of [`RULE_PATTERNS`].
fn expand(pattern: &str) -> String {
    pattern
        .replace("{B}", r"(?-u:\b)")
        .replace("{E}", r"(?:(?-u:\b)|[^\x00-\x7F])")
        .replace("{NS}", r"[^\s\x1C-\x1F]")
        .replace("{S}", r"[\s\x1C-\x1F]")
}

/// The compiled rules, in application order, shared by every [`Redactor`] in
/// the process.
static RULES: LazyLock<Vec<Regex>> = LazyLock::new(compile_rules);

#[expect(
    clippy::expect_used,
    reason = "the patterns are constants; a test compiles every one of them"
)]
fn compile_rules() -> Vec<Regex> {
    RULE_PATTERNS
        .iter()
        .map(|pattern| Regex::new(&expand(pattern)).expect("redaction pattern compiles"))
        .collect()
}

/// Replaces credentials in text and JSON values.
///
/// Cheap to create: the rules are compiled once per process and shared.
/// `Send + Sync`, so one instance can serve every request.
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
}

impl Redactor {
    /// A redactor; when `enabled` is false it never changes anything.
    pub fn new(enabled: bool) -> Redactor {
        if enabled {
            LazyLock::force(&RULES);
        }
        Redactor { enabled }
    }

    /// Whether this redactor changes anything at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The rule names, in the order the rules are applied.
    pub fn rule_names() -> &'static [&'static str] {
        &RULE_NAMES
    }

    /// Redacts `text`, adding what was replaced to `report`.
    ///
    /// Returns `None` when nothing was replaced; that path does not allocate.
    ///
    /// Idempotent: redacting the output again changes nothing. Each rule reads
    /// the previous rules' output, so a replacement can leave text that a rule
    /// which already ran would now match (a value that swallowed a header's
    /// name leaves that header's token glued to the key name before it).
    /// Passes therefore repeat until one replaces nothing; usually the second
    /// pass is that one. Every pass that replaces something turns text that
    /// is not yet a redaction token into one, so this ends; `MAX_PASSES`
    /// bounds the work on hostile input.
    pub fn redact_str(&self, text: &str, report: &mut RedactionReport) -> Option<String> {
        if !self.enabled || text.is_empty() {
            return None;
        }
        let mut redacted = self.redact_pass(text, report)?;
        for _ in 1..MAX_PASSES {
            match self.redact_pass(&redacted, report) {
                Some(again) => redacted = again,
                None => break,
            }
        }
        Some(redacted)
    }

    /// One pass of every rule, in order, over `text`.
    fn redact_pass(&self, text: &str, report: &mut RedactionReport) -> Option<String> {
        let mut current: Cow<'_, str> = Cow::Borrowed(text);
        // A rule that fires writes the whole new text here; the two buffers
        // then swap, so at most two are ever allocated.
        let mut spare = String::new();
        for (index, regex) in RULES.iter().enumerate() {
            spare.clear();
            let count = if index == ASSIGNED_SECRET {
                redact_assignments(regex, &current, &mut spare)
            } else {
                redact_matches(regex, index, &current, &mut spare)
            };
            // Later rules see this rule's output, as in the seed.
            if count > 0 {
                report.record(index, count);
                let next = Cow::Owned(std::mem::take(&mut spare));
                if let Cow::Owned(previous) = std::mem::replace(&mut current, next) {
                    spare = previous;
                }
            }
        }
        match current {
            Cow::Owned(redacted) => Some(redacted),
            Cow::Borrowed(_) => None,
        }
    }

    /// Redacts every string inside `value`, recursively. Object keys are left
    /// as they are.
    ///
    /// Each string is redacted on its own, as [`Redactor::redact_str`] would.
    /// A result holds hundreds of short strings (a listing's names and
    /// paths), so all of them are first scanned once, joined by `\n`: when no
    /// rule replaces anything in the joined text, none replaces anything in
    /// any one string, and the value is left as it is. That holds because
    /// `\n` is neither an ASCII word character nor a value character of any
    /// rule, so every boundary test at a string's edges comes out as it does
    /// at the edge of the string alone (a `\b` before a word character holds,
    /// a token, a value or a run of non-space characters ends there), and so a
    /// replacement in one string is also one in the joined text. The converse
    /// does not matter: anything found in the joined text sends every string
    /// through the rules one by one.
    pub fn redact_value(&self, value: &mut Value, report: &mut RedactionReport) {
        if !self.enabled {
            return;
        }
        let mut joined = String::new();
        join_strings(value, &mut joined);
        if self
            .redact_str(&joined, &mut RedactionReport::default())
            .is_none()
        {
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

impl Default for Redactor {
    /// An enabled redactor.
    fn default() -> Redactor {
        Redactor::new(true)
    }
}

/// Appends the redaction token for `rule` to `out`.
fn push_token(out: &mut String, rule: &str) {
    out.push_str("[redacted:");
    out.push_str(rule);
    out.push(']');
}

/// Applies one ordinary rule: when it replaces anything, writes the new text to
/// `out` (which is empty) and returns the number of replacements, else returns
/// 0 and leaves `out` alone.
fn redact_matches(regex: &Regex, index: usize, text: &str, out: &mut String) -> u64 {
    // The common case, no match at all: one scan, no allocation.
    if regex.find(text).is_none() {
        return 0;
    }
    let mut copied = 0;
    let mut count = 0;
    let mut at = 0;
    while let Some(captures) = regex.captures_at(text, at) {
        let (Some(whole), Some(secret)) = (
            captures.get(0),
            captures.name("s").or_else(|| captures.get(0)),
        ) else {
            break;
        };
        // A secret that runs into another match ends where that match
        // starts, and the search resumes there: `basic-auth-header` takes
        // everything up to the next whitespace, which may be a second header
        // glued to the first (`Bearer a,Authorization: Bearer b`) or a later
        // rule's assignment (`Bearer a,password="…"`); taking it whole would
        // swallow the header or the key name and leave that token or value
        // bare (and redacting the output again would change it).
        // (From the secret's first character: `Bearer` then a newline, then
        // `Authorization: Bearer …` on the next line, is an empty header
        // followed by a full one, not a header whose token is
        // `Authorization:`.)
        let from = if secret.start() > whole.start() {
            secret.start()
        } else {
            next_char(text, secret.start())
        };
        let mut cut = regex
            .find_at(text, from)
            .map(|m| m.start())
            .filter(|&start| start < secret.end());
        if index == BASIC_AUTH_HEADER {
            let end = cut.unwrap_or(secret.end());
            cut = swallowed_name(text, secret.start(), end).or(cut);
        }
        at = match cut {
            Some(start) => start,
            None if whole.is_empty() => next_char(text, whole.end()),
            None => whole.end(),
        };
        let secret = secret.start()..cut.unwrap_or(secret.end());
        if secret.is_empty() || is_exempt(&text[secret.clone()]) {
            continue;
        }
        if count == 0 {
            out.reserve(text.len() + 32);
        }
        out.push_str(&text[copied..secret.start]);
        push_token(out, RULE_NAMES[index]);
        copied = secret.end;
        count += 1;
    }
    if count > 0 {
        out.push_str(&text[copied..]);
    }
    count
}

/// Applies `assigned-secret`, with the contract of [`redact_matches`]. `names`
/// matches a key name and its separator; what may precede the name and the
/// value are checked here.
///
/// Equivalent to one regex
/// `(?:\b|_|[a-z0-9](?=[A-Z]))NAME\s*[:=]\s*["']?([A-Za-z0-9_+/.=~-]{12,})`,
/// searched leftmost-first like the seed's `re.sub`. Written this way because
/// that regex defeats the literal prefilter and runs several times slower.
/// Linear: a candidate whose prefix is wrong resumes the search one character
/// later, and candidates only overlap within a key name.
fn redact_assignments(names: &Regex, text: &str, out: &mut String) -> u64 {
    let mut copied = 0;
    let mut count = 0;
    let mut at = 0;
    while let Some(found) = names.find_at(text, at) {
        let Some(mut value) = assignment_at(text, found.start(), found.end()) else {
            at = next_char(text, found.start());
            continue;
        };
        at = value.end;
        // The value may run into the next assignment's key name (YAML's
        // `api_key:` then `secret_access_key: "…"` on the next line): it ends
        // where that name starts, as taken whole it would leave the next value
        // bare. What is left must still be long enough to be a value.
        if let Some(next) = swallowed_name(text, value.start, value.end) {
            at = next;
            value.end = next;
            if text[value.clone()].chars().count() < MIN_ASSIGNED_VALUE_CHARS {
                continue;
            }
        }
        if is_exempt(&text[value.clone()]) {
            continue;
        }
        if count == 0 {
            out.reserve(text.len() + 32);
        }
        out.push_str(&text[copied..value.start]);
        push_token(out, RULE_NAMES[ASSIGNED_SECRET]);
        copied = value.end;
        count += 1;
    }
    if count > 0 {
        out.push_str(&text[copied..]);
    }
    count
}

/// Where a key name starts within `text[from..to]` (a value, a header
/// token) whose value lies past `to`, if one does: the text ran into the next
/// assignment's key name and separator, and ends where that name starts.
///
/// A name whose value starts inside the text (`a.secret=b`) is part of it.
/// The decision reads only key names, separators and the blanks around them,
/// which redaction never changes, so redacting the output again cuts at the
/// same place.
///
/// The search reads on past `to` over the whitespace, the separator, more
/// whitespace and a quote, and no further: linear in the text and the
/// whitespace after it.
fn swallowed_name(text: &str, from: usize, to: usize) -> Option<usize> {
    let names = &RULES[ASSIGNED_SECRET];
    let is_space = |c: char| c.is_whitespace() || ('\u{1C}'..='\u{1F}').contains(&c);
    let skip_space = |at: usize| text.len() - text[at..].trim_start_matches(is_space).len();
    let mut end = skip_space(to);
    end += usize::from(text[end..].starts_with([':', '=']));
    end = skip_space(end);
    end += usize::from(text[end..].starts_with(['"', '\'']));
    let hay = &text[..end];
    let mut at = from;
    while let Some(found) = names.find_at(hay, at) {
        if found.start() >= to {
            return None;
        }
        if name_starts_at(text, found.start()) && found.end() >= to {
            return Some(found.start());
        }
        at = next_char(text, found.start());
    }
    None
}

/// Whether a key name may start at `start`: after the start of the text, a
/// non-ASCII character or punctuation (the seed's word boundary, plus `_` for
/// prefixed names such as DB_PASSWORD), or camelCase (dbPassword).
fn name_starts_at(text: &str, start: usize) -> bool {
    let bytes = text.as_bytes();
    match start.checked_sub(1).map(|before| bytes[before]) {
        None => true,
        Some(before) if !before.is_ascii_alphanumeric() => true,
        Some(before) => {
            (before.is_ascii_lowercase() || before.is_ascii_digit())
                && bytes[start].is_ascii_uppercase()
        }
    }
}

/// The value of an assignment whose key name starts at `start` and whose
/// separator (and opening quote) ends at `end`, if this is one.
fn assignment_at(text: &str, start: usize, end: usize) -> Option<std::ops::Range<usize>> {
    if !name_starts_at(text, start) {
        return None;
    }
    let mut value_end = end;
    let mut chars = 0;
    for c in text[end..].chars() {
        if !is_value_char(c) {
            break;
        }
        value_end += c.len_utf8();
        chars += 1;
    }
    (chars >= MIN_ASSIGNED_VALUE_CHARS).then_some(end..value_end)
}

/// `[A-Za-z0-9_+/.=~-]` matched case-insensitively: the Kelvin sign and the
/// long s fold to ASCII letters.
fn is_value_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '_' | '+' | '/' | '.' | '=' | '~' | '-' | '\u{17F}' | '\u{212A}'
        )
}

/// The index of the character after the one at `index`.
fn next_char(text: &str, index: usize) -> usize {
    text[index..]
        .chars()
        .next()
        .map_or(text.len(), |c| index + c.len_utf8())
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
        .is_some_and(|name| RULE_NAMES.contains(&name))
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
    /// Bit `i` is set when rule `i` of [`RULE_NAMES`] fired.
    fired: u32,
}

impl RedactionReport {
    /// An empty report.
    pub fn new() -> RedactionReport {
        RedactionReport::default()
    }

    fn record(&mut self, rule: usize, count: u64) {
        self.count += count;
        self.fired |= 1 << rule;
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
        let mut names: Vec<&'static str> = RULE_NAMES
            .iter()
            .enumerate()
            .filter(|(index, _)| self.fired & (1 << index) != 0)
            .map(|(_, name)| *name)
            .collect();
        names.sort_unstable();
        names
    }

    /// Adds `other` to this report.
    pub fn merge(&mut self, other: &RedactionReport) {
        self.count += other.count;
        self.fired |= other.fired;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Credential-shaped strings that are not credentials, built by
    /// concatenation so secret scanners reading this file stay quiet.
    fn fake_aws_key() -> String {
        ["AKIA", "IOSFODNN7EXAMPLE"].concat()
    }
    fn fake_github_token() -> String {
        format!("ghp_{}", "a".repeat(36))
    }
    fn fake_slack_token() -> String {
        ["xoxb-", "1234567890", "-abcdefghijkl"].concat()
    }

    fn redact(text: &str) -> (String, RedactionReport) {
        let mut report = RedactionReport::default();
        let out = Redactor::new(true)
            .redact_str(text, &mut report)
            .unwrap_or_else(|| text.to_owned());
        (out, report)
    }

    /// One sample secret per rule, the text it sits in, and the secret itself.
    fn planted() -> Vec<(&'static str, String, String)> {
        let pem_body = "MIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEA";
        let block =
            format!("-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----");
        let jwt = [
            "eyJhbGciOiJIUzI1NiJ9",
            ".eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ]
        .concat();
        vec![
            (
                "aws-access-key-id",
                format!("key = \"{}\"", fake_aws_key()),
                fake_aws_key(),
            ),
            (
                "github-token",
                format!("token: {}", fake_github_token()),
                fake_github_token(),
            ),
            (
                "github-fine-grained-token",
                format!("GH={}", ["github_pat_", &"A1b2".repeat(16)].concat()),
                ["github_pat_", &"A1b2".repeat(16)].concat(),
            ),
            (
                "gitlab-token",
                format!("x {} y", ["glpat-", "abcDEF123_-xyzXYZ7890"].concat()),
                ["glpat-", "abcDEF123_-xyzXYZ7890"].concat(),
            ),
            (
                "slack-token",
                format!("slack={}", fake_slack_token()),
                fake_slack_token(),
            ),
            (
                "stripe-key",
                format!(
                    "s = '{}'",
                    ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].concat()
                ),
                ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].concat(),
            ),
            (
                "anthropic-key",
                format!("k={}", ["sk-ant-", "api03-AbCdEfGhIjKlMnOpQrStUv"].concat()),
                ["sk-ant-", "api03-AbCdEfGhIjKlMnOpQrStUv"].concat(),
            ),
            (
                "openai-key",
                format!(
                    "k={}",
                    ["sk-", "proj-", "AbCdEfGhIjKlMnOpQrStUvWx"].concat()
                ),
                ["sk-", "proj-", "AbCdEfGhIjKlMnOpQrStUvWx"].concat(),
            ),
            (
                "google-api-key",
                format!("AIza{}", "B".repeat(35)),
                format!("AIza{}", "B".repeat(35)),
            ),
            (
                "npm-token",
                format!("npm_{}", "c".repeat(36)),
                format!("npm_{}", "c".repeat(36)),
            ),
            (
                "hugging-face-token",
                format!("HF {}", ["hf_", &"Zy9".repeat(12)].concat()),
                ["hf_", &"Zy9".repeat(12)].concat(),
            ),
            ("jwt", format!("Cookie: session={jwt}"), jwt.clone()),
            (
                "private-key-block",
                format!("before\n{block}\nafter"),
                pem_body.to_owned(),
            ),
            (
                "url-credentials",
                "url = postgres://user:sup3rs3cret@host/db".to_owned(),
                "sup3rs3cret".to_owned(),
            ),
            (
                "basic-auth-header",
                "Authorization: Bearer abcdefghijklmnop".to_owned(),
                "abcdefghijklmnop".to_owned(),
            ),
            (
                "assigned-secret",
                "client_secret = \"q8Rk2mZp4Lx7Wn3v\"".to_owned(),
                "q8Rk2mZp4Lx7Wn3v".to_owned(),
            ),
        ]
    }

    #[test]
    fn every_rule_compiles_and_the_tables_agree() {
        assert_eq!(RULES.len(), RULE_COUNT);
        assert_eq!(Redactor::rule_names(), RULE_NAMES);
        assert_eq!(RULE_NAMES[ASSIGNED_SECRET], "assigned-secret");
        let mut unique = RULE_NAMES.to_vec();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), RULE_COUNT, "rule names are unique");
    }

    #[test]
    fn rules_are_applied_in_the_seed_order_with_anthropic_before_openai() {
        let names = Redactor::rule_names();
        let position = |name: &str| names.iter().position(|n| *n == name);
        assert!(position("anthropic-key") < position("openai-key"));
        assert_eq!(names.first(), Some(&"aws-access-key-id"));
        assert_eq!(names.last(), Some(&"assigned-secret"));
        assert!(position("stripe-key") < position("anthropic-key"));
        assert!(position("google-api-key") > position("openai-key"));
    }

    #[test]
    fn one_planted_secret_per_rule_is_gone_and_named() {
        let samples = planted();
        assert_eq!(samples.len(), RULE_COUNT, "a sample for every rule");
        for (rule, text, secret) in samples {
            let (out, report) = redact(&text);
            assert!(!out.contains(&secret), "{rule}: secret survived in {out:?}");
            assert!(
                out.contains(&format!("[redacted:{rule}]")),
                "{rule}: {out:?}"
            );
            assert_eq!(report.rules(), vec![rule], "{rule}: {out:?}");
            assert_eq!(report.count(), 1, "{rule}");
        }
    }

    // Seed: TestRedaction.test_recognised_credentials_are_replaced (7 cases).
    #[test]
    fn recognised_credentials_are_replaced() {
        let cases = [
            (format!("key = \"{}\"", fake_aws_key()), "aws-access-key-id"),
            (format!("token: {}", fake_github_token()), "github-token"),
            (format!("slack={}", fake_slack_token()), "slack-token"),
            (format!("AIza{}", "B".repeat(35)), "google-api-key"),
            (format!("npm_{}", "c".repeat(36)), "npm-token"),
            (
                "url = postgres://user:sup3rs3cret@host/db".to_owned(),
                "url-credentials",
            ),
            (
                "Authorization: Bearer abcdefghijklmnop".to_owned(),
                "basic-auth-header",
            ),
        ];
        for (text, rule) in cases {
            let (out, report) = redact(&text);
            assert!(report.applied(), "{text}");
            assert!(report.rules().contains(&rule), "{text}");
            assert!(out.contains(&format!("[redacted:{rule}]")), "{out}");
        }
    }

    #[test]
    fn the_secret_itself_does_not_survive() {
        let (out, _) = redact(&format!("AWS_ACCESS_KEY_ID = \"{}\"", fake_aws_key()));
        assert!(!out.contains(&fake_aws_key()));
    }

    #[test]
    fn the_surrounding_context_does_survive() {
        let (out, _) = redact(&format!("AWS_ACCESS_KEY_ID = \"{}\"", fake_aws_key()));
        assert_eq!(out, "AWS_ACCESS_KEY_ID = \"[redacted:aws-access-key-id]\"");
    }

    #[test]
    fn a_url_keeps_its_host() {
        let (out, _) = redact("postgres://demo:hunter2@db.internal:5432/demo");
        assert_eq!(
            out,
            "postgres://demo:[redacted:url-credentials]@db.internal:5432/demo"
        );
    }

    #[test]
    fn a_private_key_block_is_replaced_whole() {
        let block = "-----BEGIN PRIVATE KEY-----\nMIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEA\n-----END PRIVATE KEY-----";
        let (out, report) = redact(&format!("key:\n{block}\ndone"));
        assert_eq!(out, "key:\n[redacted:private-key-block]\ndone");
        assert_eq!(report.count(), 1);
        for kind in ["RSA ", "EC ", "DSA ", "OPENSSH ", "PGP "] {
            let block = format!(
                "-----BEGIN {kind}PRIVATE KEY-----\nabc\n\ndef\n-----END {kind}PRIVATE KEY-----"
            );
            assert_eq!(redact(&block).0, "[redacted:private-key-block]", "{kind}");
        }
        let pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nxyz\n-----END PGP PRIVATE KEY BLOCK-----";
        assert_eq!(redact(pgp).0, "[redacted:private-key-block]");
    }

    #[test]
    fn two_private_key_blocks_are_replaced_separately_and_the_text_between_survives() {
        let one = "-----BEGIN EC PRIVATE KEY-----\naaa\n-----END EC PRIVATE KEY-----";
        let (out, report) = redact(&format!("{one}\nkeep me\n{one}"));
        assert_eq!(
            out,
            "[redacted:private-key-block]\nkeep me\n[redacted:private-key-block]"
        );
        assert_eq!(report.count(), 2);
    }

    #[test]
    fn an_unterminated_private_key_block_is_not_a_match() {
        let text = "-----BEGIN PRIVATE KEY-----\nno end marker";
        assert_eq!(redact(text).1.count(), 0);
    }

    // Seed: test_documented_placeholders_are_left_alone (4 cases).
    #[test]
    fn documented_placeholders_are_left_alone() {
        for text in [
            r#"API_KEY = "REPLACE_ME""#,
            r#"password = "changeme""#,
            r#"secret = "xxxxxxxxxxxx""#,
            r#"token = "your-api-key""#,
        ] {
            let mut report = RedactionReport::default();
            assert_eq!(
                Redactor::new(true).redact_str(text, &mut report),
                None,
                "{text}"
            );
            assert!(!report.applied());
        }
    }

    #[test]
    fn placeholders_and_masks_are_left_alone_under_prefixed_names() {
        for text in [
            r#"DB_PASSWORD = "xxxxxxxxxxxx""#,
            r#"export STRIPE_SECRET=************"#,
            r#"AWS_SECRET_ACCESS_KEY="<xxxxxxxxxxxxxxx>""#,
            r#"MY_API_KEY = "yourapikeyhere""#,
            "Authorization: Bearer PLACEHOLDER",
            "Authorization: Basic `changeme`",
            "postgres://user:********@host/db",
            "postgres://user:example@host/db",
        ] {
            let (out, report) = redact(text);
            assert_eq!(out, text);
            assert_eq!(report.count(), 0, "{text}");
        }
    }

    #[test]
    fn name_prefixed_assignments_are_caught() {
        let cases = [
            (
                r#"DB_PASSWORD = "hunter2hunter2""#,
                r#"DB_PASSWORD = "[redacted:assigned-secret]""#,
            ),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "AWS_SECRET_ACCESS_KEY=[redacted:assigned-secret]",
            ),
            (
                "export STRIPE_SECRET=whsec_abcdefghijklmnop",
                "export STRIPE_SECRET=[redacted:assigned-secret]",
            ),
            (
                "app.client-secret: q8Rk2mZp4Lx7Wn3v",
                "app.client-secret: [redacted:assigned-secret]",
            ),
            (
                r#"const dbPassword = "p4ssw0rd-p4ssw0rd";"#,
                r#"const dbPassword = "[redacted:assigned-secret]";"#,
            ),
            (
                r#"awsSecretAccessKey: 'wJalrXUtnFEMIK7MDENG'"#,
                r#"awsSecretAccessKey: '[redacted:assigned-secret]'"#,
            ),
            (
                "MYSQL_ROOT_PASSWD=abcdefghijkl",
                "MYSQL_ROOT_PASSWD=[redacted:assigned-secret]",
            ),
        ];
        for (text, expected) in cases {
            let (out, report) = redact(text);
            assert_eq!(out, expected);
            assert_eq!(report.rules(), vec!["assigned-secret"], "{text}");
        }
    }

    #[test]
    fn the_seed_assignments_are_still_caught() {
        for (text, expected) in [
            (
                "password = s3cr3t-v4lu3-xyz",
                "password = [redacted:assigned-secret]",
            ),
            (
                "api-key: 'abcdefghijklmnop'",
                "api-key: '[redacted:assigned-secret]'",
            ),
            (
                "spring.datasource.password=abcdefghijkl",
                "spring.datasource.password=[redacted:assigned-secret]",
            ),
            (
                "SECRET_KEY = \"django-insecure-abcdef\"",
                "SECRET_KEY = \"[redacted:assigned-secret]\"",
            ),
            (
                "secret:=abcdefghijklmn",
                "secret:[redacted:assigned-secret]",
            ),
        ] {
            assert_eq!(redact(text).0, expected);
        }
    }

    #[test]
    fn assignments_that_are_not_credentials_are_left_alone() {
        for text in [
            "mypassword = abcdefghijklmnop",  // no separator before the key name
            "DBPassword = abcdefghijklmnop",  // upper case before an upper-case name
            "password = abcdefghijk",         // eleven characters
            "password = \"abc def ghi jkl\"", // the value stops at a blank
            "password_hash = abcdefghijklmnop", // not a key name
            "PASSWORD_RESET_TIMEOUT = 259200",
            "password = ${DB_PASSWORD}",
        ] {
            assert_eq!(redact(text).1.count(), 0, "{text}");
        }
    }

    #[test]
    fn a_rejected_name_does_not_hide_a_later_assignment() {
        let (out, _) = redact("xpassword=secret=abcdefghijklmnopq");
        assert_eq!(out, "xpassword=secret=[redacted:assigned-secret]");
        let (out, _) = redact("mysecret_key=1 client_secret=abcdefghijklmn");
        assert_eq!(
            out,
            "mysecret_key=1 client_secret=[redacted:assigned-secret]"
        );
    }

    #[test]
    fn anthropic_keys_are_named_anthropic_and_openai_keys_openai() {
        let anthropic = ["sk-ant-", "api03-", &"Q".repeat(40)].concat();
        let (out, report) = redact(&format!("ANTHROPIC_API_KEY={anthropic}"));
        assert_eq!(out, "ANTHROPIC_API_KEY=[redacted:anthropic-key]");
        assert_eq!(report.rules(), vec!["anthropic-key"]);

        for openai in [
            ["sk-", &"a1B2".repeat(6)].concat(),
            ["sk-", "proj-", &"a1B2".repeat(10)].concat(),
        ] {
            let (out, report) = redact(&format!("key {openai} end"));
            assert_eq!(out, "key [redacted:openai-key] end");
            assert_eq!(report.rules(), vec!["openai-key"]);
        }
    }

    #[test]
    fn stripe_and_openai_keys_do_not_collide() {
        let stripe = ["sk_test_", &"4eC39HqLyjWDarjt".repeat(2)].concat();
        let (_, report) = redact(&stripe);
        assert_eq!(report.rules(), vec!["stripe-key"]);
    }

    #[test]
    fn plain_source_is_untouched() {
        let source = "def add(a, b):\n    return a + b\n";
        let mut report = RedactionReport::default();
        assert_eq!(Redactor::new(true).redact_str(source, &mut report), None);
        assert_eq!(report.count(), 0);
    }

    #[test]
    fn redaction_reports_what_it_did() {
        let (_, report) = redact(&format!("{} and {}", fake_aws_key(), fake_github_token()));
        assert_eq!(report.count(), 2);
        assert_eq!(report.rules(), vec!["aws-access-key-id", "github-token"]);
        assert_eq!(
            report.to_json(),
            serde_json::json!({"applied": true, "count": 2, "rules": ["aws-access-key-id", "github-token"]})
        );
    }

    #[test]
    fn an_empty_report_says_so() {
        assert_eq!(
            RedactionReport::default().to_json(),
            serde_json::json!({"applied": false, "count": 0, "rules": []})
        );
    }

    #[test]
    fn reports_add_up_and_list_rules_sorted_and_unique() {
        let redactor = Redactor::new(true);
        let mut report = RedactionReport::default();
        for _ in 0..2 {
            redactor.redact_str(&fake_github_token(), &mut report);
            redactor.redact_str(&fake_aws_key(), &mut report);
        }
        assert_eq!(report.count(), 4);
        assert_eq!(report.rules(), vec!["aws-access-key-id", "github-token"]);
        let mut total = RedactionReport::new();
        total.merge(&report);
        total.merge(&report);
        assert_eq!(total.count(), 8);
        assert_eq!(total.rules(), report.rules());
    }

    #[test]
    fn redaction_can_be_disabled_and_then_changes_nothing() {
        let mut report = RedactionReport::default();
        let redactor = Redactor::new(false);
        assert!(!redactor.enabled());
        assert_eq!(redactor.redact_str(&fake_aws_key(), &mut report), None);
        let mut value = serde_json::json!({"k": fake_aws_key()});
        redactor.redact_value(&mut value, &mut report);
        assert_eq!(value, serde_json::json!({"k": fake_aws_key()}));
        assert!(!report.applied());
    }

    // Seed: test_an_empty_rule_set_is_a_no_op. Our rule set is fixed, so the
    // nearest equivalents: empty text, and text that no rule can match.
    #[test]
    fn empty_text_and_text_no_rule_matches_are_no_ops() {
        let mut report = RedactionReport::default();
        let redactor = Redactor::new(true);
        assert_eq!(redactor.redact_str("", &mut report), None);
        assert_eq!(redactor.redact_str("fn main() {}\n", &mut report), None);
        assert_eq!(report, RedactionReport::default());
    }

    #[test]
    fn a_match_that_is_only_a_placeholder_returns_none() {
        // The rule set says assigned-secret can match; nothing is replaced.
        let mut report = RedactionReport::default();
        let text = "password = undefined";
        assert_eq!(Redactor::new(true).redact_str(text, &mut report), None);
        let text = "secret = xxxxxxxxxxxxxxxxxxxx";
        assert_eq!(Redactor::new(true).redact_str(text, &mut report), None);
        assert_eq!(report.count(), 0);
    }

    #[test]
    fn redacting_twice_changes_nothing_the_second_time() {
        let mut text = String::new();
        for (_, sample, _) in planted() {
            text.push_str(&sample);
            text.push('\n');
        }
        text.push_str("curl -H 'Authorization: Bearer ");
        text.push_str(&fake_github_token());
        text.push_str("' https://u:");
        text.push_str(&fake_github_token());
        text.push_str("@example.com/\n");
        let (once, first) = redact(&text);
        assert!(first.count() >= RULE_COUNT as u64);
        let mut report = RedactionReport::default();
        assert_eq!(
            Redactor::new(true).redact_str(&once, &mut report),
            None,
            "{once}"
        );
        assert_eq!(report.count(), 0);
        // A secret redacted by an earlier rule is counted once.
        let (out, report) = redact(&format!("https://u:{}@example.com", fake_github_token()));
        assert_eq!(out, "https://u:[redacted:github-token]@example.com");
        assert_eq!(report.count(), 1);
    }

    // See: fuzz/redact, first, second and sixth findings. The header's token runs
    // to the next whitespace, so a second header glued to the first, or a
    // later rule's key name, was swallowed into the first token and the second
    // token, or the value, left bare.
    #[test]
    fn r_fuzz_a_header_token_ends_where_the_next_credential_starts() {
        for text in [
            "Authorization:Bearer Q7xabcdefgh)<Authorization:Bearer Q7x012345 .",
            "Authorization: Basic dXNlcjpwYXNz,authorization: bearer Q7x012345",
        ] {
            let (out, report) = redact(text);
            assert!(!out.contains("Q7x012345"), "{out}");
            assert_eq!(report.count(), 2, "{out}");
            assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
        }
        for text in [
            "Authorization:Bearer Q7xabcdefgh[<secret_access_key = \"Q7x0123456789ABCDEF\";)",
            "|AUTHORIZATION:  Bearer Q7xabcde]|dbPassword: Q7x0123456789ABCDEF\"",
        ] {
            let (out, report) = redact(text);
            assert!(!out.contains("Q7x0123456789ABCDEF"), "{out}");
            assert_eq!(report.rules(), ["assigned-secret", "basic-auth-header"]);
            assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
        }
        // An assignment whose value is inside the token is part of it.
        let (out, _) = redact("Authorization: Bearer abc,password=Q7x0123456789ABCDEF end");
        assert_eq!(
            out,
            "Authorization: Bearer [redacted:basic-auth-header] end"
        );
        // A header without a token, then a full one on the next line.
        let (out, _) = redact("Authorization: Bearer\nAuthorization: Bearer Q7x012345abc\n");
        assert_eq!(
            out,
            "Authorization: Bearer\nAuthorization: Bearer [redacted:basic-auth-header]\n"
        );
        // Separated headers, as before.
        let (out, _) = redact("Authorization: Bearer tok1abcdef Authorization: Bearer tok2abcdef");
        assert_eq!(
            out,
            "Authorization: Bearer [redacted:basic-auth-header] Authorization: Bearer [redacted:basic-auth-header]"
        );
    }

    // See: fuzz/redact, third and fourth findings. An assignment's value may run over
    // whitespace into the next assignment's key name, which was then taken
    // for the value, and the next value left bare (YAML, below).
    #[test]
    fn r_fuzz_an_assignment_value_is_not_the_next_key_name() {
        let yaml = "aws:\n  api_key:\n    secret_access_key: \"wJalrXUtnFEMIK7MDENGbPxRfiCY\"\n";
        let (out, report) = redact(yaml);
        assert_eq!(
            out,
            "aws:\n  api_key:\n    secret_access_key: \"[redacted:assigned-secret]\"\n"
        );
        assert_eq!(report.count(), 1);
        assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
        let (out, _) = redact("password=\r\nsecret_access_key = \"Q7xm123456789ABCDEFGHIJ\"");
        assert!(!out.contains("Q7xm123456789ABCDEFGHIJ"), "{out}");
        // A name whose separator is inside the value is part of the value.
        let (out, _) = redact("password=abcdefghijklmnop.api_key=qrstuvwxyz0123");
        assert_eq!(out, "password=[redacted:assigned-secret]");
        // The cut does not depend on what redaction changes (fourth finding:
        // chained camelCase assignments were cut differently the second time).
        let chained = "dbPassword=bPassword=zbPassword=bPassword=Q7x0123456789ABCDEF";
        let (out, _) = redact(chained);
        assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
    }

    // See: fuzz/redact, fifth finding. An assignment's value swallowed the
    // name of a header glued to it, which left that header's token glued to
    // the key name before it; a second redaction then replaced the lot.
    #[test]
    fn r_fuzz_redacting_twice_changes_nothing_even_when_rules_chain() {
        let text = "\nAUTHORIZATION: bearer Q7x0123456789ABCDEFGHIJKLM'\0\0\0``apikey:\"AUTHORIZATION: bearer Q7x0123456789ABCDEFGHIJKLM \0m)";
        let (out, _) = redact(text);
        assert!(!out.contains("Q7x0123456789ABCDEFGHIJKLM"), "{out}");
        assert_eq!(redact(&out).1.count(), 0, "redacting again: {out}");
    }

    #[test]
    fn every_redaction_token_is_inert() {
        for name in Redactor::rule_names() {
            let token = format!("[redacted:{name}]");
            for text in [
                token.clone(),
                format!("password = {token}"),
                format!("Authorization: Bearer {token}"),
            ] {
                let mut report = RedactionReport::default();
                assert_eq!(
                    Redactor::new(true).redact_str(&text, &mut report),
                    None,
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn later_rules_see_earlier_output() {
        // The github rule replaces the token first; url-credentials then sees a
        // redaction token as the password and leaves it.
        let text = format!("git clone https://x:{}@github.com/o/r", fake_github_token());
        let (out, report) = redact(&text);
        assert_eq!(
            out,
            "git clone https://x:[redacted:github-token]@github.com/o/r"
        );
        assert_eq!(report.rules(), vec!["github-token"]);
        // Both fire when both secrets are there.
        let text = format!("{} postgres://a:hunter22@h/", fake_aws_key());
        assert_eq!(
            redact(&text).1.rules(),
            vec!["aws-access-key-id", "url-credentials"]
        );
    }

    #[test]
    fn word_boundaries_apply() {
        // The seed's shapes are word-bounded: an AWS-looking run inside a longer
        // word is not a key.
        for text in [
            format!("X{}", fake_aws_key()),
            format!("{}Z", fake_aws_key()),
            format!("ghp_{}", "a".repeat(300)),
            format!("npm_{}", "c".repeat(37)),
        ] {
            assert_eq!(redact(&text).1.count(), 0, "{text}");
        }
    }

    #[test]
    fn non_ascii_neighbours_do_not_hide_a_secret() {
        for (text, rule) in [
            (format!("é{}é", fake_aws_key()), "aws-access-key-id"),
            (format!("«{}»", fake_github_token()), "github-token"),
            (
                format!("日本{}語", ["glpat-", "abcDEF123_-xyzXYZ789-"].concat()),
                "gitlab-token",
            ),
            (format!("κλειδί AIza{}-ü", "B".repeat(34)), "google-api-key"),
            (
                "пароль: password=abcdefghijklmnopд".to_owned(),
                "assigned-secret",
            ),
        ] {
            let (out, report) = redact(&text);
            assert_eq!(report.rules(), vec![rule], "{text} -> {out}");
        }
    }

    #[test]
    fn whitespace_follows_python() {
        // Python's \s counts U+001C..U+001F and U+2028; a header split by them
        // still has its token redacted.
        let (out, _) = redact("authorization:\u{1F}bearer\u{2028}abcdefghijkl");
        assert_eq!(
            out,
            "authorization:\u{1F}bearer\u{2028}[redacted:basic-auth-header]"
        );
        let (out, _) = redact("AUTHORIZATION : Basic dXNlcjpwYXNz");
        assert_eq!(out, "AUTHORIZATION : Basic [redacted:basic-auth-header]");
    }

    // Seed fixture `src/demo/settings.py`, as TestSecretsDoNotLeave reads it.
    #[test]
    fn the_settings_fixture_keeps_names_and_placeholders_and_loses_secrets() {
        let settings = format!(
            "'''Settings with a credential nobody meant to commit.'''\n\nAWS_ACCESS_KEY_ID = \"{}\"\nGITHUB_TOKEN = \"{}\"\nAPI_KEY = \"REPLACE_ME\"\nDATABASE_URL = \"postgresql://demo:hunter2@db.internal:5432/demo\"\n",
            fake_aws_key(),
            fake_github_token()
        );
        let (out, report) = redact(&settings);
        assert!(!out.contains(&fake_aws_key()));
        assert!(!out.contains(&fake_github_token()));
        assert!(!out.contains("hunter2"));
        assert!(out.contains("[redacted:aws-access-key-id]"));
        assert!(out.contains("AWS_ACCESS_KEY_ID"));
        assert!(out.contains("db.internal"));
        assert!(out.contains("REPLACE_ME"));
        assert!(report.count() >= 3);
        assert!(report.rules().contains(&"aws-access-key-id"));
        // The README gives applied false.
        let (_, readme) = redact("# Demo\n\nA fixture project.\n");
        assert!(!readme.applied());
    }

    #[test]
    fn nested_values_are_redacted_and_keys_are_not() {
        let token = fake_github_token();
        let mut value = serde_json::json!({
            "nested": {"deep": [{"value": token}, 7, null, true]},
            token.clone(): "the key stays",
            "text": format!("a {} b", fake_aws_key()),
        });
        let mut report = RedactionReport::default();
        Redactor::new(true).redact_value(&mut value, &mut report);
        assert_eq!(
            value["nested"]["deep"][0]["value"],
            "[redacted:github-token]"
        );
        assert_eq!(value[token.as_str()], "the key stays");
        assert_eq!(value["text"], "a [redacted:aws-access-key-id] b");
        assert_eq!(report.count(), 2);
    }

    #[test]
    fn a_search_result_carries_no_credential_in_either_half() {
        // search_code for TOKEN: the matched line is in the fenced text and in
        // matches[].text, so it is counted twice.
        let line = format!("GITHUB_TOKEN = \"{}\"", fake_github_token());
        let mut result = serde_json::json!({
            "content": [{"type": "text", "text": format!("<untrusted-search-results id=0123456789abcdef>\nsrc/demo/settings.py:4:{line}\n</untrusted-search-results id=0123456789abcdef>")}],
            "structuredContent": {"matches": [{"path": "src/demo/settings.py", "line": 4, "text": line}]},
        });
        let mut report = RedactionReport::default();
        Redactor::new(true).redact_value(&mut result, &mut report);
        let rendered = result.to_string();
        assert!(!rendered.contains(&fake_github_token()));
        assert!(rendered.contains("GITHUB_TOKEN"));
        assert_eq!(report.count(), 2);
        assert!(rendered.contains("</untrusted-search-results id=0123456789abcdef>"));
    }

    #[test]
    fn credential_field_names() {
        for name in [
            "bearer_token",
            "Authorization",
            "token",
            "SECRET",
            "password",
            "api_key",
            "API-KEY",
            "github_token",
            "db_password",
            "client_secret",
            "private_key",
            "x-api-key",
            "passwd",
            "ä_key",
        ] {
            assert!(is_credential_field(name), "{name}");
        }
        for name in [
            "method",
            "tool",
            "tokens",
            "keyboard",
            "secretary",
            "_key",
            "",
            "monkey",
            "pässword",
            "é_tokeñ",
        ] {
            assert!(!is_credential_field(name), "{name}");
        }
    }

    #[test]
    fn a_word_cut_by_a_limit_is_dropped() {
        let password = ["S3cret", "Passw0rd"].concat();
        let cut = format!("dsn = \"postgres://app:{password}");
        let n = cut.chars().count();
        assert_eq!(drop_cut_tail(&cut, n), "dsn = \"");
        assert_eq!(drop_cut_tail(&cut, n - 1), "dsn = \"");
        // Shorter than the limit: not cut, kept whole.
        assert_eq!(drop_cut_tail(&cut, n + 1), cut);
        assert_eq!(drop_cut_tail("a(b", 3), "a(");
        assert_eq!(drop_cut_tail("abc", 3), "");
        assert_eq!(drop_cut_tail("ab é", 4), "ab ");
        assert_eq!(drop_cut_tail("", 0), "");
    }

    #[test]
    fn redactor_is_send_sync_and_cheap_to_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<Redactor>();
        assert_send_sync::<RedactionReport>();
    }

    #[test]
    fn large_inputs_stay_linear() {
        // Adversarial shapes for the assignment search: many rejected names,
        // one long value, and many near-miss private-key headers.
        let pieces = [
            "xpassword=".repeat(50_000),
            format!("password={}", "a".repeat(500_000)),
            "-----BEGIN PRIVATE KEY-----".repeat(20_000),
            "password ".repeat(60_000),
            "_secret=abc ".repeat(40_000),
        ];
        for text in pieces {
            let started = std::time::Instant::now();
            let _ = redact(&text);
            assert!(
                started.elapsed() < std::time::Duration::from_secs(2),
                "{}",
                &text[..20]
            );
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Text that can sit next to a secret: anything, ending and starting
        /// with a character that cannot extend the secret's shape.
        fn surrounding() -> impl Strategy<Value = String> {
            ("[ -~\u{a0}-\u{2fff}\n\t]{0,40}", "[ \n\t;,()]")
                .prop_map(|(body, edge)| format!("{body}{edge}"))
        }

        fn surrounding_after() -> impl Strategy<Value = String> {
            ("[ \n\t;,()]", "[ -~\u{a0}-\u{2fff}\n\t]{0,40}")
                .prop_map(|(edge, body)| format!("{edge}{body}"))
        }

        /// A secret of each rule's shape, with its rule name.
        fn secret() -> impl Strategy<Value = (&'static str, String, String)> {
            prop_oneof![
                ("(AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}").prop_map(|s| ("aws-access-key-id", s.clone(), s)),
                ("gh[pousr]_[A-Za-z0-9]{36,80}").prop_map(|s| ("github-token", s.clone(), s)),
                ("github_pat_[A-Za-z0-9_]{60,90}").prop_map(|s| ("github-fine-grained-token", s.clone(), s)),
                ("glpat-[A-Za-z0-9_-]{19,40}[A-Za-z0-9]").prop_map(|s| ("gitlab-token", s.clone(), s)),
                ("xox[abposr]-[A-Za-z0-9-]{9,40}[A-Za-z0-9]").prop_map(|s| ("slack-token", s.clone(), s)),
                ("(sk|rk)_(live|test)_[A-Za-z0-9]{16,40}").prop_map(|s| ("stripe-key", s.clone(), s)),
                ("sk-ant-[A-Za-z0-9_-]{19,60}[A-Za-z0-9]").prop_map(|s| ("anthropic-key", s.clone(), s)),
                ("sk-(proj-)?[B-Zb-z0-9_][A-Za-z0-9_-]{18,60}[A-Za-z0-9]").prop_map(|s| ("openai-key", s.clone(), s)),
                ("AIza[0-9A-Za-z_-]{34}[0-9A-Za-z]").prop_map(|s| ("google-api-key", s.clone(), s)),
                ("npm_[A-Za-z0-9]{36}").prop_map(|s| ("npm-token", s.clone(), s)),
                ("hf_[A-Za-z0-9]{34,60}").prop_map(|s| ("hugging-face-token", s.clone(), s)),
                ("eyJ[A-Za-z0-9_-]{10,30}\\.[A-Za-z0-9_-]{10,30}\\.[A-Za-z0-9_-]{9,40}[A-Za-z0-9]").prop_map(|s| ("jwt", s.clone(), s)),
                ("[A-Za-z0-9+/=\n]{15,200}[0-9]").prop_map(|body| {
                    ("private-key-block", format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"), body)
                }),
                ("[a-z][a-z0-9+.-]{0,8}", "[A-Za-z0-9._%!-]{1,12}", "[A-Za-z0-9._%!~*+-]{6,30}[0-9]", "[a-z0-9.-]{1,20}").prop_map(|(scheme, user, pass, host)| {
                    ("url-credentials", format!("{scheme}://{user}:{pass}@{host}"), pass)
                }),
                ("(?i:authorization)", "[ \t]{0,3}", "[ \t]{0,3}", "(?i:basic|bearer)", "[ \t]{1,3}", "[!-~]{5,40}[0-9]").prop_map(|(a, s1, s2, kind, s3, token)| {
                    ("basic-auth-header", format!("{a}{s1}:{s2}{kind}{s3}{token}"), token)
                }),
                ("([A-Z]{1,8}_)?", "(?i:api_key|secret_key|access_token|auth_token|client_secret|private_key|passwd|password|secret|secret_access_key)", "[ \t]{0,2}[:=][ \t]{0,2}", "[\"']?", "[A-Za-z0-9_+/.=~-]{11,40}[0-9]").prop_map(|(prefix, name, sep, quote, value)| {
                    ("assigned-secret", format!("{prefix}{name}{sep}{quote}{value}{quote}"), value)
                }),
            ]
            .prop_filter("a placeholder or mask is exempt by design", |(_, _, secret)| !is_exempt(secret))
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

            #[test]
            fn a_planted_secret_never_survives(before in surrounding(), (rule, shaped, secret) in secret(), after in surrounding_after()) {
                let text = format!("{before}{shaped}{after}");
                let (out, report) = redact(&text);
                prop_assert!(!out.contains(&secret), "{rule}: {text:?} -> {out:?}");
                prop_assert!(report.applied());
            }

            #[test]
            fn a_secret_alone_is_named_by_its_rule((rule, shaped, _secret) in secret()) {
                let (out, report) = redact(&shaped);
                prop_assert!(report.rules().contains(&rule), "{rule}: {shaped:?} -> {out:?} {:?}", report.rules());
            }

            #[test]
            fn redaction_is_idempotent(text in "[ -~\n\u{a0}-\u{3ff}]{0,200}", (_r, shaped, _s) in secret()) {
                let (once, _) = redact(&format!("{text}{shaped}{text}"));
                let mut report = RedactionReport::default();
                prop_assert_eq!(Redactor::new(true).redact_str(&once, &mut report), None);
            }

            #[test]
            fn the_joined_prescan_changes_nothing(
                parts in proptest::collection::vec(
                    prop_oneof![
                        "[ -~\n\t\u{a0}-\u{3ff}]{0,60}".prop_map(|t| t),
                        secret().prop_map(|(_, shaped, _)| shaped),
                        (surrounding(), secret(), surrounding_after()).prop_map(|(b, (_, s, _), a)| format!("{b}{s}{a}")),
                        "(?i:authorization: bearer|password =|-----BEGIN PRIVATE KEY-----|-----END PRIVATE KEY-----|changeme|\\*{8}|https://u)".prop_map(|t| t),
                    ],
                    0..8,
                )
            ) {
                let value = Value::Array(parts.iter().cloned().map(Value::String).collect());
                let redactor = Redactor::new(true);
                let (mut fast, mut fast_report) = (value.clone(), RedactionReport::default());
                redactor.redact_value(&mut fast, &mut fast_report);
                let (mut each, mut each_report) = (value, RedactionReport::default());
                redactor.redact_each(&mut each, &mut each_report);
                prop_assert_eq!(fast, each);
                prop_assert_eq!(fast_report.to_json(), each_report.to_json());
            }

            #[test]
            fn unchanged_text_is_reported_as_unchanged(text in "\\PC{0,300}") {
                let mut report = RedactionReport::default();
                match Redactor::new(true).redact_str(&text, &mut report) {
                    None => prop_assert_eq!(report.count(), 0),
                    Some(out) => {
                        prop_assert!(report.count() > 0);
                        prop_assert_ne!(out, text);
                    }
                }
            }
        }
    }
}

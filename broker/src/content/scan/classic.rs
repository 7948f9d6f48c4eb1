//! The ten classic signals, INJ01 to INJ10, matched over the whole lowered
//! text.
//!
//! Case-insensitive matching with Unicode word boundaries is done as follows.
//! After NFKC folding, ASCII case-insensitivity is the same thing (the only
//! non-ASCII characters whose simple case folding is an ASCII letter, the
//! Kelvin sign and the long s, are folded to ASCII by NFKC), so the folded text
//! is lower-cased byte for byte (offsets do not move) and matched
//! case-sensitively. Word boundaries are ASCII ones; next to the ASCII
//! keywords an ASCII boundary holds wherever a Unicode one does (a keyword
//! glued to a non-ASCII letter matches too).
//!
//! No regex here searches the text. Every match of a signal starts with one
//! of a few words (its *start literals*, [`PART_STARTS`]); the gate
//! (`super::gate`) finds where they occur, with the boundary before them and
//! the byte after them checked, in the one pass it makes for all signals, and
//! each regex is tried there only, anchored: the leftmost match is at the
//! first start where the anchored search succeeds, and the same one a search
//! of the whole text would report. The two signals anchored at a line start
//! (INJ05 and half of INJ06) are found from their tail and then checked with
//! the full regex on the line; INJ02, INJ06 and INJ09 are split into
//! alternatives, each with its own start literals, matched as a union. Every
//! step is linear in the input size.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use regex_automata::{Anchored, Input, meta};

// Patterns run on lower-cased NFKC text. `{B}` is an ASCII word boundary, `{S}`
// Python's `\s` (Rust's `\s` plus U+001C..U+001F) and `{HS}` the same without
// `\n` (`[^\S\n]`).
pub(super) const INJ01: &str = r"{B}(?:ignore|disregard|forget|override){B}[^.\n]{0,40}?{B}(?:previous|prior|earlier|above|all){B}[^.\n]{0,20}?{B}(?:instructions|instruction|prompts|prompt|rules|rule|context|directions|direction)";
// The signal as one regex; the tests check the split form against it.
#[cfg(test)]
pub(super) const INJ02: &str = r"{B}(?:ai|llm|assistant|agent|model|copilot|claude|chatgpt|gpt|gemini|cursor){B}{HS}{0,3}[:,]{S}*(?:please{S}+)?[a-z]";
// INJ02 is matched in two parts (see MATCHERS).
pub(super) const INJ02_AI: &str = r"{B}ai{B}{HS}{0,3}[:,]{S}*(?:please{S}+)?[a-z]";
pub(super) const INJ02_WORDS: &str = r"{B}(?:llm|assistant|agent|model|copilot|claude|chatgpt|gpt|gemini|cursor){B}{HS}{0,3}[:,]{S}*(?:please{S}+)?[a-z]";
// "The configuration" is what documentation prints and shows all the time;
// only "your configuration" asks the reader about itself.
pub(super) const INJ03: &str = r"{B}(?:print|show|reveal|repeat|output|display|dump){B}[^.\n]{0,30}?(?:{B}your{B}[^.\n]{0,20}?{B}(?:system{S}+prompt|instructions|configuration|rules|guidelines)|{B}the{B}[^.\n]{0,20}?{B}(?:system{S}+prompt|(?:initial|original|hidden|secret){S}+(?:instructions|rules|guidelines))){B}";
// "You are now ready" and "you are no longer required to" are what
// documentation says; a new persona or freedom from rules is not.
pub(super) const INJ04: &str = r"{B}you{S}+are{S}+(?:now{S}+(?:(?:an?|the|my){S}+)?(?:(?:[a-z]+{S}+){0,2}(?:ai|assistant|bot|chatbot|model|llm|character|persona|dan){B}|(?:called|named|known{S}+as|acting|playing|in{S}+(?:[a-z]+{S}+)?mode|free{S}+(?:of|from)|unrestricted|unfiltered|uncensored|jailbroken|dan|evil|rogue){B})|no{S}+longer{S}+(?:bound{S}+by|subject{S}+to{S}+(?:any|the|your)|obliged|obligated|chatgpt|claude|gpt|an{S}+ai|an{S}+assistant|a{S}+language{S}+model){B})|{B}(?:god|dan|jailbreak|unrestricted){S}+mode{B}|{B}developer{S}+mode{S}+(?:enabled|activated|output|response){B}|{B}act{S}+as{S}+(?:if{S}+you|an?{S}+unrestricted){B}";
pub(super) const INJ05_FULL: &str = r"(?m)^{S}*(?:#|//|/\*|--|<!--)?{S}*(?:new{S}+instructions?|system{S}+(?:prompt|message)|important{S}+instructions?){S}*:";
pub(super) const INJ05_TAIL: &str =
    r"(?:new{S}+instructions?|system{S}+(?:prompt|message)|important{S}+instructions?){S}*:";
pub(super) const INJ05_MARKERS: &[&str] = &["<!--", "--", "//", "/*", "#"];
pub(super) const INJ06_TOKENS: &str = r"<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>";
pub(super) const INJ06_ROLE_FULL: &str =
    r"(?m)^{S}*(?:###{S}*)?(?:system|assistant|human){S}*:{S}*$";
pub(super) const INJ06_ROLE_TAIL: &str = r"(?m)(?:system|assistant|human){S}*:{S}*$";
pub(super) const INJ06_MARKERS: &[&str] = &["###"];
// Exfiltration needs data worth taking and a place outside to put it: a verb
// near a link ("upload artifacts to https://…", "post the notes to the
// forum") is documentation.
pub(super) const INJ07: &str = r"{B}(?:send|post|upload|exfiltrate|transmit|curl|fetch){B}[^.\n]{0,60}?{B}(?:secrets?|credentials?|passwords?|api{S}?keys?|private{S}+keys?|ssh{S}+keys?|(?:access|auth|session|api){S}+tokens?|tokens|cookies|conversation|chat{S}+history|system{S}+prompt|env(?:ironment)?{S}+variables|personal{S}+(?:data|information)){B}[^.\n]{0,60}?{B}(?:to|into|at|via){S}+(?:https?://|www\.|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/|[a-z0-9._%+-]+@[a-z0-9-]+\.|{B}webhook{B}|my{S}+(?:server|endpoint|webhook))";
// An install one-liner (`curl … | sh`) in documentation is documentation.
pub(super) const INJ08: &str = r"{B}(?:run|execute|invoke){B}[^.\n]{0,25}?{B}(?:the{S}+following|this){B}[^.\n]{0,15}?{B}(?:command|script|shell|code){B}";
// The signal as one regex; the tests check the split form against it.
#[cfg(test)]
pub(super) const INJ09: &str = r"{B}(?:this{S}+(?:message|instruction){S}+(?:overrides|supersedes|takes{S}+precedence)){B}|(?:^|[^a-z0-9_\-])(?:admin|administrator|owner|developer){S}+(?:override|instructions?){B}";
// INJ09 is matched as `INJ09_THIS|(?:^|[^a-z0-9_\-])INJ09_ROLE` (see MATCHERS).
pub(super) const INJ09_THIS: &str =
    r"{B}(?:this{S}+(?:message|instruction){S}+(?:overrides|supersedes|takes{S}+precedence)){B}";
pub(super) const INJ09_ROLE: &str =
    r"(?:admin|administrator|owner|developer){S}+(?:override|instructions?){B}";
pub(super) const INJ10: &str = r"{B}(?:do{S}+not|don't|never){B}[^.\n]{0,25}?{B}(?:tell|mention|inform|reveal{S}+to|show){B}[^.\n]{0,20}?{B}(?:the{S}+)?(?:user|developer|human|operator){B}";

/// Expands the `{B}`, `{S}` and `{HS}` shorthands.
pub(super) fn expand(pattern: &str) -> String {
    pattern
        .replace("{B}", r"(?-u:\b)")
        .replace("{HS}", r"[\s\x1C-\x1F&&[^\n]]")
        .replace("{S}", r"[\s\x1C-\x1F]")
}

#[expect(
    clippy::expect_used,
    reason = "the patterns are constants; a test compiles every one of them"
)]
pub(super) fn compile(pattern: &str) -> Regex {
    Regex::new(&expand(pattern)).expect("signal pattern compiles")
}

/// Index of each classic part in [`PART_STARTS`] (a part is one regex a
/// [`Matcher`] confirms at gate hits).
pub(super) const PARTS: usize = 13;

/// What must follow a classic start literal for its pattern to match there.
/// A superset of what the pattern allows: the pattern decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Follow {
    /// Anything, the end of the text included.
    Any,
    /// No ASCII letter, digit or `_` (an ASCII word boundary).
    NonWord,
    /// The first byte of a whitespace character (Unicode `White_Space` or
    /// U+001C..U+001F).
    Space,
    /// As [`Follow::Space`] but not `\n`, or `:` or `,`.
    LineSpaceOrPunct,
}

/// One group of start literals of a classic part.
pub(super) struct StartGroup {
    pub(super) literals: &'static [&'static str],
    /// The match needs an ASCII word boundary before the literal (its first
    /// character is a word character).
    pub(super) word_before: bool,
    pub(super) follow: Follow,
}

const fn group(literals: &'static [&'static str], word_before: bool, follow: Follow) -> StartGroup {
    StartGroup {
        literals,
        word_before,
        follow,
    }
}

/// Where each part's matches start: the literals its regex begins with
/// (after its zero-width assertions), and what must surround them. The tests
/// check every part against its regex searched the ordinary way.
pub(super) static PART_STARTS: [&[StartGroup]; PARTS] = [
    // 0: INJ01
    &[group(
        &["ignore", "disregard", "forget", "override"],
        true,
        Follow::NonWord,
    )],
    // 1: INJ02, "ai"
    &[group(&["ai"], true, Follow::LineSpaceOrPunct)],
    // 2: INJ02, the other names
    &[group(
        &[
            "llm",
            "assistant",
            "agent",
            "model",
            "copilot",
            "claude",
            "chatgpt",
            "gpt",
            "gemini",
            "cursor",
        ],
        true,
        Follow::LineSpaceOrPunct,
    )],
    // 3: INJ03
    &[group(
        &[
            "print", "show", "reveal", "repeat", "output", "display", "dump",
        ],
        true,
        Follow::NonWord,
    )],
    // 4: INJ04
    &[group(
        &[
            "you",
            "god",
            "dan",
            "jailbreak",
            "unrestricted",
            "developer",
            "act",
        ],
        true,
        Follow::Space,
    )],
    // 5: INJ05's tail
    &[group(&["new", "system", "important"], false, Follow::Space)],
    // 6: INJ06's tokens
    &[group(&["<|"], false, Follow::Any)],
    // 7: INJ06's role line tail
    &[group(&["system", "assistant", "human"], false, Follow::Any)],
    // 8: INJ07
    &[group(
        &[
            "send",
            "post",
            "upload",
            "exfiltrate",
            "transmit",
            "curl",
            "fetch",
        ],
        true,
        Follow::NonWord,
    )],
    // 9: INJ08
    &[group(&["run", "execute", "invoke"], true, Follow::NonWord)],
    // 10: INJ09, "this message overrides"
    &[group(&["this"], true, Follow::Space)],
    // 11: INJ09's role tail
    &[group(
        &["admin", "administrator", "owner", "developer"],
        false,
        Follow::Space,
    )],
    // 12: INJ10
    &[
        group(&["do"], true, Follow::Space),
        group(&["don't", "never"], true, Follow::NonWord),
    ],
];

/// How one signal is found. Every regex here is confirmed only where the
/// gate found one of its part's start literals, with an anchored search that
/// still sees the text around (for `\b` and `^`).
pub(super) enum Matcher {
    /// Every match of one regex.
    Plain { regex: meta::Regex, part: usize },
    /// A regex that starts with `^{S}*(?:marker)?{S}*`: found from `tail` (the
    /// rest of it), then confirmed with `full` on the line where it starts.
    LineStart {
        full: Regex,
        tail: meta::Regex,
        part: usize,
        markers: &'static [&'static str],
    },
    /// `(?:^|[^a-z0-9_\-])TAIL`: a match of `tail` at the start of the text
    /// or after a character other than an ASCII lower-case letter, digit,
    /// `_` or `-`, that character included.
    AfterNonWord { tail: meta::Regex, part: usize },
    /// The alternatives of one signal regex, split so that each part starts
    /// with its own literals, matched as their union: leftmost first, and at
    /// equal starts the earlier part, as in a single alternation.
    Union(Vec<Matcher>),
}

/// The first match of `regex` starting at one of `starts` at or after `pos`.
fn next_anchored(
    regex: &meta::Regex,
    hay: &str,
    starts: &[usize],
    pos: usize,
) -> Option<Range<usize>> {
    let from = starts.partition_point(|&s| s < pos);
    starts[from..].iter().find_map(|&start| {
        let input = Input::new(hay).range(start..).anchored(Anchored::Yes);
        regex.search(&input).map(|m| m.range())
    })
}

impl Matcher {
    /// The match Python's `finditer` yields next when the previous match ended
    /// at `pos` (or `pos` is 0): the leftmost one starting at or after `pos`.
    fn first_at(
        &self,
        hay: &str,
        pos: usize,
        starts: &[Vec<usize>; PARTS],
    ) -> Option<Range<usize>> {
        match self {
            Matcher::Plain { regex, part } => next_anchored(regex, hay, &starts[*part], pos),
            Matcher::LineStart {
                full,
                tail,
                part,
                markers,
            } => line_start_at(full, tail, &starts[*part], markers, hay, pos),
            Matcher::AfterNonWord { tail, part } => {
                after_non_word_at(tail, &starts[*part], hay, pos)
            }
            Matcher::Union(parts) => parts
                .iter()
                .filter_map(|part| part.first_at(hay, pos, starts))
                .fold(None, |best: Option<Range<usize>>, span| match best {
                    Some(best) if best.start <= span.start => Some(best),
                    _ => Some(span),
                }),
        }
    }

    /// Pushes the first `limit` matches in `hay`, leftmost-first and
    /// non-overlapping, as Python's `finditer` yields them; `starts` are the
    /// gate's hits in `hay`.
    pub(super) fn find(
        &self,
        hay: &str,
        starts: &[Vec<usize>; PARTS],
        limit: usize,
        out: &mut Vec<Range<usize>>,
    ) {
        match self {
            Matcher::Plain { .. } | Matcher::LineStart { .. } | Matcher::AfterNonWord { .. } => {
                let mut pos = 0;
                for _ in 0..limit {
                    let Some(span) = self.first_at(hay, pos, starts) else {
                        return;
                    };
                    pos = after(hay, &span);
                    out.push(span);
                }
            }
            Matcher::Union(parts) => {
                // Each part's next match, kept until the union moves past its
                // start: a part with no match from `p` on has none from later.
                let mut next: Vec<Option<Range<usize>>> = parts
                    .iter()
                    .map(|part| part.first_at(hay, 0, starts))
                    .collect();
                let mut pos = 0;
                for _ in 0..limit {
                    for (part, slot) in parts.iter().zip(next.iter_mut()) {
                        if slot.as_ref().is_some_and(|span| span.start < pos) {
                            *slot = part.first_at(hay, pos, starts);
                        }
                    }
                    let mut best: Option<&Range<usize>> = None;
                    for span in next.iter().flatten() {
                        if best.is_none_or(|best| span.start < best.start) {
                            best = Some(span);
                        }
                    }
                    let Some(span) = best.cloned() else {
                        return;
                    };
                    pos = after(hay, &span);
                    out.push(span);
                }
            }
        }
    }
}

/// The first match of `(?:^|[^a-z0-9_\-])TAIL` starting at or after `pos`:
/// the first match of `tail` at or after `pos` whose preceding character
/// exists, starts at or after `pos` and is outside that class, or which
/// starts the text. `tail` starts with a letter, so two of its matches that
/// are tried never share their preceding character, and trying the next
/// match from one character on is linear.
fn after_non_word_at(
    tail: &meta::Regex,
    starts: &[usize],
    hay: &str,
    pos: usize,
) -> Option<Range<usize>> {
    let mut at = pos;
    while at <= hay.len() {
        let m = next_anchored(tail, hay, starts, at)?;
        if m.start == 0 {
            return Some(m);
        }
        if let Some(c) = hay[..m.start].chars().next_back() {
            let start = m.start - c.len_utf8();
            if start >= pos
                && !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
            {
                return Some(start..m.end);
            }
        }
        at = next_char(hay, m.start);
    }
    None
}

/// Where the search for the next match starts after `span`.
fn after(hay: &str, span: &Range<usize>) -> usize {
    if span.is_empty() {
        next_char(hay, span.end)
    } else {
        span.end
    }
}

/// The first match of `full`, a regex of the form `^{S}*(?:marker)?{S}*TAIL`,
/// starting at or after `pos`.
///
/// Each match contains a match of `tail`, preceded on its left by whitespace,
/// at most one marker and more whitespace, back to a line start. So: find the
/// next `tail`, walk back over that prefix, and run `full` on the slice from
/// the first line start in reach to the end of the tail match. The slice starts
/// at a real line start, so `^` means the same in it as in the whole text.
/// Linear: the stretches walked back over are whitespace and markers, so they
/// never overlap from one candidate to the next.
fn line_start_at(
    full: &Regex,
    tail: &meta::Regex,
    starts: &[usize],
    markers: &[&str],
    hay: &str,
    pos: usize,
) -> Option<Range<usize>> {
    let bytes = hay.as_bytes();
    let mut at = pos;
    while at <= hay.len() {
        let candidate = next_anchored(tail, hay, starts, at)?;
        let mut reach = skip_space_back(hay, candidate.start);
        if let Some(marker) = markers.iter().find(|m| hay[..reach].ends_with(**m)) {
            reach = skip_space_back(hay, reach - marker.len());
        }
        let from = reach.max(pos);
        let line_start = if from == 0 || bytes[from - 1] == b'\n' {
            Some(from)
        } else {
            memchr::memchr(b'\n', &bytes[from..candidate.start]).map(|i| from + i + 1)
        };
        let confirmed = line_start.and_then(|start| {
            full.find(&hay[start..candidate.end])
                .map(|m| start + m.start()..start + m.end())
        });
        if confirmed.is_some() {
            return confirmed;
        }
        at = next_char(hay, candidate.start);
    }
    None
}

/// The start of the whitespace run that ends at `end`.
fn skip_space_back(hay: &str, end: usize) -> usize {
    let mut start = end;
    for c in hay[..end].chars().rev() {
        if !is_python_space(c) {
            break;
        }
        start -= c.len_utf8();
    }
    start
}

/// The index of the character after the one at `index` (past the end at the
/// end).
fn next_char(text: &str, index: usize) -> usize {
    text[index..]
        .chars()
        .next()
        .map_or(text.len() + 1, |c| index + c.len_utf8())
}

/// Python's `str.isspace()`: Unicode White_Space plus U+001C..U+001F.
pub(super) fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1C}'..='\u{1F}').contains(&c)
}

#[expect(
    clippy::expect_used,
    reason = "the patterns are constants; a test compiles every one of them"
)]
fn compile_meta(pattern: &str) -> meta::Regex {
    meta::Regex::new(&expand(pattern)).expect("signal pattern compiles")
}

/// The regex of `pattern`, searched with or without a `prefilter` (see
/// `signals::Family::prefilter`): the same matches either way.
#[expect(
    clippy::expect_used,
    reason = "the patterns are constants; a test compiles every one of them"
)]
pub(super) fn compile_searcher(pattern: &str, prefilter: bool) -> meta::Regex {
    meta::Regex::builder()
        .configure(meta::Config::new().auto_prefilter(prefilter))
        .build(&expand(pattern))
        .expect("signal pattern compiles")
}

pub(super) static MATCHERS: LazyLock<[Matcher; 10]> = LazyLock::new(|| {
    let plain = |pattern: &str, part| Matcher::Plain {
        regex: compile_meta(pattern),
        part,
    };
    let line_start = |full: &str, tail: &str, part, markers| Matcher::LineStart {
        full: compile(full),
        tail: compile_meta(tail),
        part,
        markers,
    };
    [
        plain(INJ01, 0),
        Matcher::Union(vec![plain(INJ02_AI, 1), plain(INJ02_WORDS, 2)]),
        plain(INJ03, 3),
        plain(INJ04, 4),
        line_start(INJ05_FULL, INJ05_TAIL, 5, INJ05_MARKERS),
        Matcher::Union(vec![
            plain(INJ06_TOKENS, 6),
            line_start(INJ06_ROLE_FULL, INJ06_ROLE_TAIL, 7, INJ06_MARKERS),
        ]),
        plain(INJ07, 8),
        plain(INJ08, 9),
        Matcher::Union(vec![
            plain(INJ09_THIS, 10),
            Matcher::AfterNonWord {
                tail: compile_meta(INJ09_ROLE),
                part: 11,
            },
        ]),
        plain(INJ10, 12),
    ]
});

//! How much one hit weighs: its signal's weight, less where the words are
//! not aimed at the reader (an assistant's name used as a word, an order
//! that is negated) or where such words are ordinary (an instruction to the
//! reader in documentation prose, which speaks to a human reader, or in
//! code).

use super::context::{Kind, classify};
use super::{Hit, SIGNALS, line_bounds};

/// Index of INJ07 (exfiltration).
const EXFILTRATION: usize = 6;
/// Index of INJ26 (an instruction to the one reading).
const DIRECTIVE: usize = 25;

/// What an instruction to the reader weighs where it sits. A comment, data
/// and markup are read by whoever reads the file, a model included, and
/// rarely speak to it: full weight. Documentation prose speaks to its human
/// reader in the second person all the time, and a string literal is
/// usually the program's own text (a message, a prompt it sends): less.
/// Code itself rarely holds a sentence at all.
fn where_it_sits(context: &str) -> f64 {
    match context {
        "Markdown prose" | "string literal" => 0.75,
        "code" => 0.5,
        _ => 1.0,
    }
}

/// Whether the words just before `at` on its line negate the order that
/// starts there ("never send your password to …", "do not post secrets
/// to …").
fn negated(lowered: &str, at: usize) -> bool {
    /// How far back a negation is looked for.
    const REACH: usize = 24;
    let line = line_bounds(lowered, at);
    let mut from = at.saturating_sub(REACH).max(line.start);
    while !lowered.is_char_boundary(from) {
        from += 1;
    }
    let before = &lowered[from..at];
    before
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .any(|word| {
            matches!(
                word,
                "never"
                    | "not"
                    | "don't"
                    | "dont"
                    | "no"
                    | "cannot"
                    | "can't"
                    | "won't"
                    | "shouldn't"
                    | "mustn't"
            )
        })
}

/// Weight of INJ02 when the name is not used as a form of address.
const NOT_ADDRESSED_WEIGHT: f64 = 0.1;

/// Words that, after `assistant:` or `model,`, make the line an order to the
/// one named (`AI: ignore …`, `Claude, please …`); anything else after the
/// name (`model, which …`, `Model: XPS 13`) is the word used in a sentence or
/// a label.
const IMPERATIVES: &[&str] = &[
    "please",
    "ignore",
    "disregard",
    "forget",
    "don't",
    "never",
    "delete",
    "remove",
    "execute",
    "print",
    "reveal",
    "tell",
    "send",
    "stop",
    "approve",
    "say",
    "output",
    "go",
    "obey",
    "follow",
    "summarize",
    "summarise",
    "translate",
    "answer",
    "reply",
    "respond",
    "skip",
    "merge",
    "push",
    "commit",
    "install",
    "download",
    "upload",
    "visit",
    "act",
    "pretend",
    "imagine",
];

/// The weight one hit gives its signal. INJ02 (a name of an assistant, then
/// `:` or `,`) counts fully only when the name is a form of address: at the
/// start of a line or sentence (after comment markers, `AI`, `hey`, `dear`),
/// outside code, followed by an order. Otherwise it is the word in a
/// sentence (`the model, which`), an identifier (`model: Type`) or a label,
/// and counts for little.
pub(super) fn hit_weight(index: usize, kind: Kind, lowered: &str, hit: &Hit) -> f64 {
    let weight = SIGNALS[index].weight;
    let Hit::Folded(span) = hit else {
        return weight;
    };
    if matches!(index, EXFILTRATION | DIRECTIVE) && negated(lowered, span.start) {
        return NOT_ADDRESSED_WEIGHT;
    }
    if index == DIRECTIVE {
        let line = line_bounds(lowered, span.start);
        let context = classify(kind, &lowered[line.clone()], span.start - line.start);
        return weight * where_it_sits(context);
    }
    if index != 1 {
        return weight;
    }
    let line = line_bounds(lowered, span.start);
    if classify(kind, &lowered[line.clone()], span.start - line.start) == "code" {
        return NOT_ADDRESSED_WEIGHT;
    }
    let mut before = lowered[line.start..span.start].trim_end();
    for word in [
        "ai",
        "dear",
        "hey",
        "hi",
        "hello",
        "attention",
        "ok",
        "okay",
    ] {
        if let Some(rest) = before.strip_suffix(word)
            && !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            before = rest.trim_end();
            break;
        }
    }
    let at_start =
        before.is_empty() || before.ends_with(|c: char| "#/*-;>!\"'<.?:([{|@`=+~".contains(c));
    // The text after `name:` or `name,` on the line.
    let after = lowered[span.start..line.end]
        .split_once([':', ','])
        .map_or("", |(_, rest)| rest)
        .trim_start();
    let next: &str = after
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .next()
        .unwrap_or("");
    if at_start && IMPERATIVES.contains(&next) {
        weight
    } else {
        NOT_ADDRESSED_WEIGHT
    }
}

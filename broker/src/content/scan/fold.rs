//! Folding: the NFKC-folded, lower-cased text the signals read, and the
//! invisible formatting characters counted on the raw text.

use std::borrow::Cow;
use std::ops::Range;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// The text as the signals see it: NFKC-folded, then ASCII lower-cased, in one
/// buffer. Lower-casing changes no lengths, so offsets in `lowered` are offsets
/// in the folded text; [`Folded::original`] gives back the folded text of a
/// span with its case, for excerpts.
pub(super) struct Folded<'a> {
    raw: &'a str,
    pub(super) lowered: String,
    /// The pieces folding changed, in order: where each came from in `raw`,
    /// where it starts in the folded text, and what it became.
    pub(super) changes: Vec<Change>,
}

pub(super) struct Change {
    raw: Range<usize>,
    folded_start: usize,
    folded: String,
}

impl Change {
    fn folded_end(&self) -> usize {
        self.folded_start + self.folded.len()
    }
}

impl<'a> Folded<'a> {
    /// Folds `raw`.
    ///
    /// NFKC never reaches across a character that is a starter (combining
    /// class 0) and NFKC quick-check "yes": nothing composes with it from the
    /// left and nothing reorders across it. Every ASCII character is one. So
    /// the text is cut before each such character, and only the pieces holding
    /// some other character are normalised; the rest, nearly always almost all
    /// of it, is copied as it is.
    pub(super) fn new(raw: &'a str) -> Folded<'a> {
        let bytes = raw.as_bytes();
        let mut changes = Vec::new();
        let note = |from: usize, to: usize, changes: &mut Vec<Change>| {
            let piece = &raw[from..to];
            let folded: String = piece.nfkc().collect();
            if folded != piece {
                changes.push(Change {
                    raw: from..to,
                    folded_start: 0,
                    folded,
                });
            }
        };
        let mut at = next_non_ascii(bytes, 0);
        while at < bytes.len() {
            // The ASCII character before this run is where a piece may start.
            let mut boundary = at.saturating_sub(1);
            let mut pending = false;
            let mut end = at;
            for c in raw[at..].chars() {
                if c.is_ascii() {
                    break;
                }
                if is_stable(c) {
                    if pending {
                        note(boundary, end, &mut changes);
                        pending = false;
                    }
                    boundary = end;
                } else {
                    pending = true;
                }
                end += c.len_utf8();
            }
            if pending {
                note(boundary, end, &mut changes);
            }
            at = next_non_ascii(bytes, end);
        }

        let growth: usize = changes
            .iter()
            .map(|c| c.folded.len().saturating_sub(c.raw.len()))
            .sum();
        let mut lowered = String::with_capacity(raw.len() + growth);
        let mut copied = 0;
        for change in &mut changes {
            lowered.push_str(&raw[copied..change.raw.start]);
            change.folded_start = lowered.len();
            lowered.push_str(&change.folded);
            copied = change.raw.end;
        }
        lowered.push_str(&raw[copied..]);
        lowered.make_ascii_lowercase();
        Folded {
            raw,
            lowered,
            changes,
        }
    }

    /// Each piece folding changed: its range in the raw text and in the
    /// folded one, in order. Between two of them, and before the first and
    /// after the last, the texts are the same but for ASCII case.
    pub(super) fn changed(&self) -> impl Iterator<Item = (Range<usize>, Range<usize>)> + '_ {
        self.changes
            .iter()
            .map(|change| (change.raw.clone(), change.folded_start..change.folded_end()))
    }

    /// The folded text of `span` (offsets in the folded text), with its case.
    pub(super) fn original(&self, span: Range<usize>) -> Cow<'a, str> {
        if self.changes.is_empty() {
            return Cow::Borrowed(&self.raw[span]);
        }
        // Outside the changes, folded and raw text are the same, `shift` apart.
        let mut shift = 0_isize;
        let raw = |folded: usize, shift: isize| folded.wrapping_sub_signed(shift);
        let mut out = String::with_capacity(span.len());
        let mut at = span.start;
        for change in &self.changes {
            if at >= span.end {
                break;
            }
            let end = change.folded_end();
            if end > at {
                let unchanged_to = span.end.min(change.folded_start);
                if at < unchanged_to {
                    out.push_str(&self.raw[raw(at, shift)..raw(unchanged_to, shift)]);
                    at = unchanged_to;
                }
                if at >= span.end {
                    break;
                }
                let to = span.end.min(end);
                out.push_str(&change.folded[at - change.folded_start..to - change.folded_start]);
                at = to;
            }
            shift = end as isize - change.raw.end as isize;
        }
        if at < span.end {
            out.push_str(&self.raw[raw(at, shift)..raw(span.end, shift)]);
        }
        Cow::Owned(out)
    }
}

/// Whether NFKC leaves `c` alone whatever surrounds it.
fn is_stable(c: char) -> bool {
    unicode_normalization::char::canonical_combining_class(c) == 0
        && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
}

/// The index of the first non-ASCII byte at or after `from`, or the length.
/// Whole blocks of 64 bytes are or-ed together first (a loop the compiler
/// turns into vector instructions): source text is nearly all ASCII, so most
/// blocks are passed over at once, and the byte is then found in the block.
fn next_non_ascii(bytes: &[u8], from: usize) -> usize {
    let rest = bytes.get(from..).unwrap_or_default();
    let (blocks, _) = rest.as_chunks::<64>();
    let ascii = blocks
        .iter()
        .position(|block| block.iter().fold(0, |any, &b| any | b) >= 0x80)
        .unwrap_or(blocks.len());
    let skipped = 64 * ascii;
    rest[skipped..]
        .iter()
        .position(|b| !b.is_ascii())
        .map_or(bytes.len(), |offset| from + skipped + offset)
}

/// Whether `c` is an invisible formatting character: taken out before the
/// signals read the text, and counted as evidence where it splits words.
pub(super) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{206A}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{E0000}'..='\u{E007F}')
        || is_variation_selector(c)
}

/// Whether `c` is a variation selector (U+FE00..U+FE0F, U+E0100..U+E01EF).
/// After an emoji or a CJK ideograph one chooses how it is drawn; between
/// Latin letters it only splits a word, and a run of them can carry bytes.
pub(super) fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Counts invisible formatting characters in the raw text: all of them, and
/// those that are evidence. Every one of them is encoded with a lead byte of
/// 0xE2, 0xEF or 0xF3.
///
/// Zero-width spaces and joiners and the left-to-right and right-to-left marks
/// (U+200B to U+200F) are how Persian, Arabic, Hebrew, the Indic scripts, Thai
/// or Khmer are written: next to a non-ASCII letter they are orthography, not
/// evidence. Next to ASCII letters (`ig\u{200B}nore`) they split words.
pub(super) fn count_invisible(text: &str) -> (u64, u64) {
    if text.is_ascii() {
        return (0, 0);
    }
    let mut all = 0;
    let mut evidence = 0;
    for i in memchr::memchr3_iter(0xE2, 0xEF, 0xF3, text.as_bytes()) {
        let Some(c) = text[i..].chars().next().filter(|&c| is_invisible(c)) else {
            continue;
        };
        if is_variation_selector(c)
            && !text[..i]
                .chars()
                .next_back()
                .is_some_and(|p| p.is_ascii_alphanumeric() || is_variation_selector(p))
        {
            // Choosing how an emoji or an ideograph is drawn: not hidden, not
            // counted.
            continue;
        }
        all += 1;
        let script = |c: Option<char>| {
            c.is_some_and(|c| !c.is_ascii() && !c.is_whitespace() && !is_invisible(c))
        };
        let orthography = match c {
            '\u{200B}'..='\u{200D}' => {
                script(text[..i].chars().next_back())
                    || script(text[i + c.len_utf8()..].chars().next())
            }
            '\u{200E}' | '\u{200F}' => {
                let start = memchr::memrchr(b'\n', &text.as_bytes()[..i]).map_or(0, |n| n + 1);
                let end =
                    memchr::memchr(b'\n', &text.as_bytes()[i..]).map_or(text.len(), |n| i + n);
                text[start..end].chars().any(is_right_to_left)
            }
            _ => false,
        };
        if !orthography {
            evidence += 1;
        }
    }
    (all, evidence)
}

/// Whether `c` is a letter of a right-to-left script (Hebrew, Arabic, Syriac,
/// Thaana, N'Ko and their presentation forms).
fn is_right_to_left(c: char) -> bool {
    matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFE}')
}

/// A Cyrillic or Greek letter that looks like an ASCII one, and that letter.
fn look_alike(c: char) -> Option<char> {
    Some(match c {
        'а' | 'α' | 'А' | 'Α' | 'ɑ' => 'a',
        'в' | 'В' | 'Β' | 'β' => 'b',
        'с' | 'С' | 'ϲ' => 'c',
        'ԁ' | 'ɗ' => 'd',
        'е' | 'Е' | 'Ε' | 'ε' => 'e',
        'һ' | 'Н' | 'Η' => 'h',
        'і' | 'І' | 'ι' | 'Ι' => 'i',
        'ј' | 'Ј' => 'j',
        'к' | 'К' | 'κ' | 'Κ' => 'k',
        'М' | 'Μ' => 'm',
        'η' | 'Ν' => 'n',
        'о' | 'О' | 'ο' | 'Ο' => 'o',
        'р' | 'Р' | 'ρ' | 'Ρ' => 'p',
        'ԛ' => 'q',
        'ѕ' | 'Ѕ' => 's',
        'т' | 'Т' | 'τ' | 'Τ' => 't',
        'υ' | 'ս' => 'u',
        'ν' | 'ѵ' | 'Ѵ' => 'v',
        'ɡ' | 'ց' => 'g',
        'ѡ' | 'ԝ' => 'w',
        'х' | 'Х' | 'χ' | 'Χ' => 'x',
        'у' | 'У' | 'γ' | 'Υ' => 'y',
        'Ζ' => 'z',
        _ => return None,
    })
}

/// `raw` as a reader sees it: invisible formatting characters removed (they
/// split words: `ig\u{200B}nore`), and Cyrillic or Greek look-alike letters
/// that touch an ASCII letter replaced by that ASCII letter (`ignоre` with a
/// Cyrillic `о`). `None` when that changes nothing; otherwise the text and
/// where in it the first look-alike letter was replaced, if one was. Line
/// breaks are kept, so line numbers stay those of `raw`.
pub(super) fn deobfuscate(raw: &str, invisible: u64) -> Option<(String, Option<usize>)> {
    let bytes = raw.as_bytes();
    if invisible == 0 && !has_look_alike_lead(bytes) {
        return None;
    }
    let mut out = String::new();
    let mut copied = 0;
    let mut replaced = None;
    // Whether the last character kept (or put in its place) is an ASCII
    // letter, as of the raw offset `known_at`; after that offset the raw
    // text is kept as it is, so its last character tells.
    let mut letter_before = false;
    let mut known_at = 0;
    let mut at = 0;
    while let Some(found) = bytes[at..]
        .iter()
        .position(|&b| CANDIDATE_LEADS[usize::from(b)])
    {
        let start = at + found;
        let Some(c) = raw[start..].chars().next() else {
            break;
        };
        let end = start + c.len_utf8();
        at = end;
        let prev_letter = if start == known_at {
            letter_before
        } else {
            raw[..start]
                .chars()
                .next_back()
                .is_some_and(|p| p.is_ascii_alphabetic())
        };
        known_at = end;
        if is_invisible(c) {
            out.push_str(&raw[copied..start]);
            copied = end;
            letter_before = prev_letter;
            continue;
        }
        if let Some(ascii) = look_alike(c) {
            let next_letter = raw[end..]
                .chars()
                .next()
                .is_some_and(|n| n.is_ascii_alphabetic());
            if prev_letter || next_letter {
                out.push_str(&raw[copied..start]);
                replaced = replaced.or(Some(out.len()));
                out.push(ascii);
                copied = end;
                letter_before = true;
                continue;
            }
            if let Some(word_end) = disguised_word(raw, start) {
                out.push_str(&raw[copied..start]);
                replaced = replaced.or(Some(out.len()));
                out.extend(
                    raw[start..word_end]
                        .chars()
                        .map(|w| look_alike(w).unwrap_or(w)),
                );
                copied = word_end;
                at = word_end;
                known_at = word_end;
                letter_before = true;
                continue;
            }
        }
        letter_before = false;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&raw[copied..]);
    Some((out, replaced))
}

/// The end of the word starting at `start` with a look-alike letter, when
/// the word is Latin text spelled with letters of another script: it mixes
/// look-alike letters with ASCII ones only (`Іɡnоrе`, the first two not
/// Latin), or it is all look-alike letters and a Latin word stands next to
/// it on the line (`the соԁе`, all of `соԁе` Cyrillic). A word of Cyrillic
/// or Greek text has letters without a Latin look-alike, or neighbours in
/// its own script, and is left alone.
fn disguised_word(raw: &str, start: usize) -> Option<usize> {
    /// Spaces and sentence punctuation passed over to reach the neighbouring
    /// word (quotes and brackets end the look: in code they part a string in
    /// another script from the Latin identifiers around it).
    const GAP: usize = 3;
    if raw[..start]
        .chars()
        .next_back()
        .is_some_and(char::is_alphabetic)
    {
        return None;
    }
    let (end, latin) = latin_word(&raw[start..])?;
    if latin {
        return Some(start + end);
    }
    // A one-letter word (Russian `в`, `с`, `о`) is no evidence either way.
    if raw[start..start + end].chars().count() < 2 {
        return None;
    }
    let end = start + end;
    let near = |text: &str, backwards: bool| {
        let mut chars: Box<dyn Iterator<Item = (usize, char)>> = if backwards {
            Box::new(text.char_indices().rev())
        } else {
            Box::new(text.char_indices())
        };
        let mut gap = 0;
        for (i, c) in chars.by_ref() {
            if c.is_alphabetic() {
                let word = if backwards {
                    let from = text[..i + c.len_utf8()]
                        .char_indices()
                        .rev()
                        .take_while(|(_, w)| w.is_alphabetic())
                        .last()
                        .map_or(i, |(j, _)| j);
                    &text[from..]
                } else {
                    &text[i..]
                };
                return latin_word(word).is_some_and(|(len, latin)| latin && len > 1);
            }
            gap += 1;
            if c == '\n' || gap > GAP || !(c.is_whitespace() || ",.;:!?".contains(c)) {
                return false;
            }
        }
        false
    };
    (near(&raw[..start], true) || near(&raw[end..], false)).then_some(end)
}

/// The length of the word `text` starts with, and whether it holds an
/// ASCII letter, when its letters are ASCII or look-alike ones only.
fn latin_word(text: &str) -> Option<(usize, bool)> {
    let mut end = 0;
    let mut latin = false;
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            latin = true;
        } else if c.is_alphabetic() || is_invisible(c) {
            look_alike(c)?;
        } else {
            break;
        }
        end += c.len_utf8();
    }
    Some((end, latin))
}

/// Lead bytes of the characters [`deobfuscate`] may remove or replace: the
/// invisible ones (0xE2, 0xEF, 0xF3) and the look-alike letters (IPA,
/// Greek, Cyrillic, Cyrillic Supplement and Armenian: 0xC9, 0xCE, 0xCF,
/// 0xD0, 0xD1, 0xD2, 0xD4, 0xD5, 0xD6). Everything else is copied as it
/// stands, not read character by character.
static CANDIDATE_LEADS: [bool; 256] = {
    let mut leads = [false; 256];
    let mut i = 0;
    let list = [
        0xC9, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD4, 0xD5, 0xD6, 0xE2, 0xEF, 0xF3,
    ];
    while i < list.len() {
        leads[list[i]] = true;
        i += 1;
    }
    leads
};

/// Whether `bytes` holds a lead byte of a look-alike letter (IPA, Greek,
/// Cyrillic, Cyrillic Supplement, Armenian: 0xC9, 0xCE, 0xCF, 0xD0, 0xD1,
/// 0xD2, 0xD4, 0xD5, 0xD6). Whole blocks of 64 bytes are first tested for a
/// byte in 0xC9..=0xD6 with comparisons only (a loop the compiler turns into
/// vector instructions), one pass over the text; only a block holding one
/// is looked at byte by byte.
fn has_look_alike_lead(bytes: &[u8]) -> bool {
    let lead = |b: u8| {
        matches!(
            b,
            0xC9 | 0xCE | 0xCF | 0xD0 | 0xD1 | 0xD2 | 0xD4 | 0xD5 | 0xD6
        )
    };
    let (blocks, tail) = bytes.as_chunks::<64>();
    blocks.iter().any(|block| {
        block
            .iter()
            .fold(false, |any, &b| any | (b.wrapping_sub(0xC9) <= 0xD6 - 0xC9))
            && block.iter().any(|&b| lead(b))
    }) || tail.iter().any(|&b| lead(b))
}

/// [`deobfuscate`] read character by character: the reference its
/// skipping must agree with.
#[cfg(test)]
pub(super) fn deobfuscate_by_char(raw: &str) -> Option<(String, Option<usize>)> {
    let mut out = String::with_capacity(raw.len());
    let mut changed = false;
    let mut replaced = None;
    let mut prev_ascii_letter = false;
    let mut skip_to = 0;
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if i < skip_to {
            continue;
        }
        if is_invisible(c) {
            changed = true;
            continue;
        }
        if let Some(ascii) = look_alike(c) {
            let next_ascii_letter = chars.peek().is_some_and(|(_, n)| n.is_ascii_alphabetic());
            if prev_ascii_letter || next_ascii_letter {
                replaced = replaced.or(Some(out.len()));
                out.push(ascii);
                changed = true;
                prev_ascii_letter = true;
                continue;
            }
            if let Some(end) = disguised_word(raw, i) {
                replaced = replaced.or(Some(out.len()));
                out.extend(raw[i..end].chars().map(|w| look_alike(w).unwrap_or(w)));
                changed = true;
                prev_ascii_letter = true;
                skip_to = end;
                continue;
            }
        }
        prev_ascii_letter = c.is_ascii_alphabetic();
        out.push(c);
    }
    changed.then_some((out, replaced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_alike_lead_is_found_wherever_it_stands() {
        let leads = [0xC9_u8, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD4, 0xD5, 0xD6];
        for len in [0, 1, 63, 64, 65, 130, 200] {
            let plain = vec![b'a'; len];
            assert!(!has_look_alike_lead(&plain));
            // Bytes near the range that are not leads.
            let near: Vec<u8> = (0..len)
                .map(|i| [0xCA, 0xCD, 0xD3, 0xC8, 0xD7][i % 5])
                .collect();
            assert!(!has_look_alike_lead(&near), "{len}");
            for at in 0..len {
                for &lead in &leads {
                    let mut bytes = plain.clone();
                    bytes[at] = lead;
                    assert!(has_look_alike_lead(&bytes), "{len} {at} {lead:x}");
                }
            }
        }
    }

    #[test]
    fn every_character_deobfuscation_changes_has_a_candidate_lead_byte() {
        for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
            if is_invisible(c) || look_alike(c).is_some() {
                let mut buf = [0; 4];
                let lead = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(CANDIDATE_LEADS[usize::from(lead)], "{c:?}");
            }
        }
    }
}

#[cfg(test)]
mod next_non_ascii_tests {
    use super::next_non_ascii;

    #[test]
    fn the_first_non_ascii_byte_is_found_in_and_across_blocks() {
        for len in [0, 1, 63, 64, 65, 200] {
            let ascii = "a".repeat(len);
            assert_eq!(next_non_ascii(ascii.as_bytes(), 0), len);
            for at in 0..len {
                let mut text = ascii.clone();
                text.replace_range(at..=at, "\u{e9}");
                for from in [0, at.saturating_sub(1), at] {
                    assert_eq!(
                        next_non_ascii(text.as_bytes(), from),
                        at,
                        "{len} {at} {from}"
                    );
                }
                assert_eq!(
                    next_non_ascii(text.as_bytes(), at + 2),
                    text.len().max(at + 2)
                );
            }
        }
    }
}

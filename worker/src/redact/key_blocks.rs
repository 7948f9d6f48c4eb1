//! Private keys in files: armor blocks (`private-key-block`) and PuTTY key
//! files.
//!
//! An armor block of any kind (`BEGIN … PRIVATE KEY`, `ENCRYPTED`,
//! `OPENSSH`, `PGP … BLOCK`, SSH2's `---- BEGIN … ----`) is replaced whole,
//! from its `BEGIN` marker to the end of the first `END` marker after it;
//! without an `END` line (a file cut short) the base64 body lines after
//! `BEGIN` are the secret. Of a PuTTY key file, the private lines and the
//! MAC are.

use super::found::Found;
use super::text::{ceil_boundary, floor_boundary};

/// The armor line `-----BEGIN <words> PRIVATE KEY[ BLOCK]-----` (or SSH2's
/// `---- BEGIN … ----`) starting at `start`: the length of the line's marker,
/// if it is one.
fn armor_at(text: &str, start: usize, word: &str) -> Option<usize> {
    let rest = &text[start..];
    let dashes = rest.bytes().take_while(|&b| b == b'-').count();
    if !(4..=5).contains(&dashes) {
        return None;
    }
    let mut at = dashes;
    if rest[at..].starts_with(' ') {
        at += 1;
    }
    let after_word = rest[at..].strip_prefix(word)?;
    at = rest.len() - after_word.len();
    // Upper-case words and spaces, up to and including `PRIVATE KEY`.
    let bound = floor_boundary(rest, at + 80);
    let line_end = rest[at..bound].find(['\n', '\r']).map_or(bound, |n| at + n);
    let label = &rest[at..line_end];
    let key = label.find("PRIVATE KEY")?;
    if !label[..key]
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
    {
        return None;
    }
    let mut tail = key + "PRIVATE KEY".len();
    if label[tail..].starts_with(" BLOCK") {
        tail += " BLOCK".len();
    }
    let closing = label[tail..].trim_start_matches(' ');
    let close = closing.bytes().take_while(|&b| b == b'-').count();
    if !(4..=5).contains(&close) {
        return None;
    }
    Some(at + label.len() - closing.len() + close)
}

/// A private-key block whose `BEGIN` line starts at the hit: from the `BEGIN`
/// marker to the end of the first `END` marker after it. Without an `END`
/// line (a file cut short), the base64 body lines that follow the `BEGIN`
/// line are the secret. `no_end_after` is the scan's memory that no `END`
/// line stands at or after that offset, so a text of many `BEGIN` lines and
/// no `END` is searched for one once.
pub(super) fn key_block_at(
    text: &str,
    start: usize,
    index: usize,
    no_end_after: &mut Option<usize>,
    out: &mut Vec<Found>,
) {
    // The hit is `-----BEGIN ` or `---- BEGIN `; SSH2's marker may also be
    // reached from its second dash.
    let Some(header) = armor_at(text, start, "BEGIN ") else {
        return;
    };
    let body = start + header;
    if no_end_after.is_none_or(|none| body < none) {
        let mut from = body;
        while let Some(offset) = text[from..].find("END ") {
            let word = from + offset;
            let marker = word.saturating_sub(5);
            if marker >= body
                && text.is_char_boundary(marker)
                && matches!(&text[marker..word], "-----" | "---- ")
                && let Some(length) = armor_at(text, marker, "END ")
            {
                out.push(Found {
                    start,
                    end: marker + length,
                    rule: index,
                });
                return;
            }
            from = word + 4;
        }
        *no_end_after = Some(body);
    }
    // No END line: the body lines, while they are base64 or armor headers.
    let mut end = body;
    let mut material = false;
    loop {
        let limit = ceil_boundary(text, end + 4096);
        let Some(newline) = text[end..limit]
            .find('\n')
            .map(|n| end + n + 1)
            .or((limit == text.len()).then_some(limit))
        else {
            break;
        };
        let line = &text[end..newline];
        let content = line.trim();
        let base64 = !content.is_empty()
            && content
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
        let armor_header = content.split_once(": ").is_some_and(|(name, _)| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
        if base64 {
            material |= content.len() >= 16;
        } else if !(armor_header || content.is_empty()) {
            break;
        }
        end = newline;
        if end >= text.len() {
            break;
        }
    }
    let end = text[..end].trim_end().len();
    if material {
        out.push(Found {
            start,
            end,
            rule: index,
        });
    }
}

/// A PuTTY key file (`PuTTY-User-Key-File-2: ssh-rsa` …): the lines after
/// `Private-Lines: N` and the `Private-MAC` line are the secret.
pub(super) fn putty_at(text: &str, start: usize, index: usize, out: &mut Vec<Found>) {
    let window = &text[start..ceil_boundary(text, start + 16 * 1024)];
    let Some(at) = window.find("Private-Lines:") else {
        return;
    };
    let after = &window[at..];
    let Some(line_end) = after.find('\n') else {
        return;
    };
    let lines: usize = after["Private-Lines:".len()..line_end]
        .trim()
        .parse()
        .unwrap_or(0);
    let body = start + at + line_end + 1;
    let mut end = body;
    for (n, line) in text[body..].split_inclusive('\n').enumerate() {
        if n >= lines && !line.starts_with("Private-MAC:") && !line.starts_with("Private-Hash:") {
            break;
        }
        end += line.len();
        if line.starts_with("Private-MAC:") || line.starts_with("Private-Hash:") {
            break;
        }
    }
    let end = text[..end].trim_end().len();
    if end > body {
        out.push(Found {
            start: body,
            end,
            rule: index,
        });
    }
}

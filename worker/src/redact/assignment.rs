//! `assigned-secret`: a secret-named key and its value, in any common
//! syntax. This module reads the syntax: where the key name around an anchor
//! hit starts and ends, how it is joined to its value, and where the value
//! is. Whether the name is secret-named is `key_names.rs`'s to say, whether
//! the value is a credential `assigned_values.rs`'s.
//!
//! Syntaxes: `name = v`, `name: v`, `name := v`, `name => v`, `name ?= v`,
//! a quoted key (`"name": v`, `'name' => v`, `["name"] = v`,
//! `put("name", "v")`), `<name>v</name>`, `--name v` / `--name=v`, a type
//! annotation (`name: str = v`), the value alone on the next line
//! (`name:` ⏎ `  v`, `name = \` ⏎ `v`), and YAML block scalars (`name: |`
//! ⏎ indented lines, all of which are the secret).
//!
//! A key name is read at most `NAME_REACH` bytes either side of the hit and
//! a value at most `VALUE_REACH` bytes, so the work per hit is bounded on
//! hostile text.

use super::assigned_values::value_is_secret;
use super::exempt::is_exempt;
use super::found::Found;
use super::key_names::{is_name_byte, secret_word};
use super::text::{ceil_boundary, floor_boundary};

/// How far a key name is read either side of the anchor hit.
const NAME_REACH: usize = 64;

/// The longest value read; a longer run is not a credential's shape, and the
/// bound keeps the work per anchor hit constant on hostile text (one long
/// line holding many key names).
const VALUE_REACH: usize = 4096;

/// How the key was joined to its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Separator {
    /// `=`, `:=`, `=>`, `?=`.
    Assign,
    /// `:` (YAML, JSON, headers, dicts).
    Colon,
    /// `,` after a quoted key: `put("password", "v")`.
    Comma,
    /// Blanks after a `--flag`.
    Flag,
}

/// Tries the key name around the anchor hit `hit_start..hit_end`; pushes its
/// value when it is a credential. Returns where the key name ends, so other
/// anchors inside the same name are not tried again.
pub(super) fn assignment_at(
    text: &str,
    hit_start: usize,
    hit_end: usize,
    index: usize,
    out: &mut Vec<Found>,
) -> usize {
    let bytes = text.as_bytes();
    let mut start = hit_start;
    while start > 0 && hit_start - start < NAME_REACH && is_name_byte(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = hit_end;
    while end < bytes.len() && end - hit_end < NAME_REACH && is_name_byte(bytes[end]) {
        end += 1;
    }
    let name_end = end;
    let dashes = bytes[start..end].iter().take_while(|&&b| b == b'-').count();
    let name_start = start + dashes;
    let mut trimmed = end;
    while trimmed > name_start && matches!(bytes[trimmed - 1], b'.' | b'-') {
        trimmed -= 1;
    }
    if trimmed <= name_start {
        return name_end;
    }
    let Some(word) = secret_word(&text[name_start..trimmed]) else {
        return name_end;
    };
    let before = name_start.checked_sub(1).map(|i| bytes[i]);
    let mut pos = end;
    let mut quoted_key = false;
    if dashes == 0 {
        if let Some(quote) = before.filter(|b| matches!(b, b'"' | b'\'' | b'`')) {
            if bytes.get(pos) == Some(&quote) {
                pos += 1;
                quoted_key = true;
            } else if bytes.get(pos) == Some(&b'\\') && bytes.get(pos + 1) == Some(&quote) {
                pos += 2;
                quoted_key = true;
            }
        }
        if before == Some(b'<') && bytes.get(pos) == Some(&b'>') {
            xml_element(text, pos + 1, &word, index, out);
            return name_end;
        }
        if quoted_key && bytes.get(pos) == Some(&b']') {
            pos += 1;
        }
    }
    let blank_start = pos;
    pos = skip_blanks(bytes, pos);
    let separator = match (bytes.get(pos), bytes.get(pos + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) | (Some(b'?'), Some(b'=')) => {
            pos += 2;
            Separator::Assign
        }
        // A comparison with a literal is a hard-coded credential too.
        (Some(b'='), Some(b'=')) => {
            pos += 2;
            pos += usize::from(bytes.get(pos) == Some(&b'='));
            Separator::Assign
        }
        (Some(b':'), Some(b':')) => return name_end,
        (Some(b'='), _) => {
            pos += 1;
            Separator::Assign
        }
        (Some(b':'), _) => {
            pos += 1;
            Separator::Colon
        }
        (Some(b','), _) if quoted_key => {
            pos += 1;
            Separator::Comma
        }
        _ if dashes == 2
            && pos > blank_start
            && bytes.get(pos).is_some_and(|b| *b != b'\n' && *b != b'\r') =>
        {
            Separator::Flag
        }
        _ => return name_end,
    };
    pos = skip_blanks(bytes, pos);
    if separator == Separator::Colon {
        pos = skip_type_annotation(bytes, pos);
    }
    // A YAML block scalar: every indented line under the key.
    if separator == Separator::Colon && matches!(bytes.get(pos), Some(b'|' | b'>')) {
        let mut at = pos + 1;
        while at < bytes.len() && matches!(bytes[at], b'+' | b'-' | b'0'..=b'9') {
            at += 1;
        }
        at = skip_blanks(bytes, at);
        if at >= bytes.len() || matches!(bytes[at], b'\n' | b'\r' | b'#') {
            block_scalar(text, name_start, at, index, out);
            return name_end;
        }
    }
    let at_line_end = |at: usize| at >= bytes.len() || matches!(bytes[at], b'\n' | b'\r');
    let continued = bytes.get(pos) == Some(&b'\\') && at_line_end(pos + 1);
    if matches!(separator, Separator::Assign | Separator::Colon) && (at_line_end(pos) || continued)
    {
        // The value alone on the next line.
        let Some(line) = next_line_start(text, pos) else {
            return name_end;
        };
        let content = skip_blanks(bytes, line);
        if at_line_end(content) || !next_line_is_a_value(&text[content..line_end(text, content)]) {
            return name_end;
        }
        pos = content;
    }
    let Some((value, quoted)) = value_at(text, pos) else {
        return name_end;
    };
    if value.len() >= VALUE_REACH {
        return value.end;
    }
    if separator == Separator::Comma && !quoted {
        return name_end;
    }
    if separator == Separator::Colon
        && !quoted
        && before == Some(b'@')
        && prose_follows(bytes, value.end)
    {
        // A documentation tag (kernel-doc's `@bus_token: domain-specific
        // data`, and the `@name:` of other doc-comment styles) followed by a
        // sentence describes the name; a value alone after such a tag is
        // still judged.
        return name_end;
    }
    if value_is_secret(&text[value.clone()], quoted, &word) {
        out.push(Found {
            start: value.start,
            end: value.end,
            rule: index,
        });
    }
    name_end
}

/// Whether the line goes on after `at` with blanks and then a word of
/// letters: the value is the first word of a sentence.
fn prose_follows(bytes: &[u8], at: usize) -> bool {
    let next = skip_blanks(bytes, at);
    next > at
        && bytes[next..]
            .iter()
            .take_while(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .all(u8::is_ascii_alphabetic)
        && bytes.get(next).is_some_and(u8::is_ascii_alphabetic)
}

/// Skips spaces and tabs.
fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
        at += 1;
    }
    at
}

/// After `name:`, a type annotation followed by `=` (`password: str = v`):
/// where the value starts, or `at` when there is none.
fn skip_type_annotation(bytes: &[u8], at: usize) -> usize {
    let Some(end) = type_end(bytes, at, 0) else {
        return at;
    };
    // A type is made of names (`str`, `Optional[str]`, `typing.Final`); a
    // part shaped like a secret means this is the value, not a type.
    let secret_part = std::str::from_utf8(&bytes[at..end]).is_ok_and(|annotation| {
        annotation
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|part| value_is_secret(part, false, ""))
    });
    if secret_part {
        return at;
    }
    // `name: Type = value` has a blank before the `=`; `name: a=b` is a
    // value holding `=`. With nothing after the `=` on its line there is no
    // typed value, and what stood after the colon is the value itself.
    let eq = skip_blanks(bytes, end);
    if eq > end && bytes.get(eq) == Some(&b'=') && !matches!(bytes.get(eq + 1), Some(b'=' | b'>')) {
        let value = skip_blanks(bytes, eq + 1);
        match bytes.get(value) {
            None | Some(b'\n' | b'\r') => at,
            Some(_) => value,
        }
    } else {
        at
    }
}

/// How deep type arguments may nest (`dict[str, list[int]]` is 2).
const TYPE_DEPTH: usize = 8;

/// Where the type expression starting at `at` ends, or `None` when what
/// stands there is not one. A type is dotted names (`typing.Final`), each
/// optionally with bracketed arguments separated by commas
/// (`dict[str, int]`, `string[]`) and a `?` (`String?`), joined by `|` (`str | None`).
/// Anything else — runs of dots, an unopened `]`, a `?` inside a name — is a
/// value that happens to be followed by `=`, not a type.
fn type_end(bytes: &[u8], mut at: usize, depth: usize) -> Option<usize> {
    if depth > TYPE_DEPTH {
        return None;
    }
    loop {
        // One dotted name.
        loop {
            if !bytes
                .get(at)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            {
                return None;
            }
            while bytes
                .get(at)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                at += 1;
            }
            if bytes.get(at) != Some(&b'.') {
                break;
            }
            at += 1;
        }
        if bytes.get(at) == Some(&b'[') {
            at = skip_blanks(bytes, at + 1);
            // `string[]`: an array type has no arguments.
            while bytes.get(at) != Some(&b']') {
                at = skip_blanks(bytes, type_end(bytes, at, depth + 1)?);
                match bytes.get(at) {
                    Some(b',') => at = skip_blanks(bytes, at + 1),
                    Some(b']') => {}
                    _ => return None,
                }
            }
            at += 1;
        }
        if bytes.get(at) == Some(&b'?') {
            at += 1;
        }
        let bar = skip_blanks(bytes, at);
        if bytes.get(bar) != Some(&b'|') {
            return Some(at);
        }
        at = skip_blanks(bytes, bar + 1);
    }
}

/// Where the line after the one holding `at` starts.
fn next_line_start(text: &str, at: usize) -> Option<usize> {
    let limit = ceil_boundary(text, at + VALUE_REACH);
    text[at..limit].find('\n').map(|n| at + n + 1)
}

/// Where the line holding `at` ends (before `\r\n` or `\n`).
fn line_end(text: &str, at: usize) -> usize {
    let limit = ceil_boundary(text, at + VALUE_REACH);
    let end = text[at..limit].find('\n').map_or(limit, |n| at + n);
    if end > at && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// Whether the line after a key with no value on its own line is that key's
/// value, rather than the next key, a comment or structure.
fn next_line_is_a_value(line: &str) -> bool {
    let line = line.trim();
    if line.starts_with(['"', '\'']) {
        return true;
    }
    !(line.is_empty()
        || line.starts_with(['-', '#', '/', '*', '{', '}', '[', ']', '<', '(', ')'])
        || line.contains(':')
        || line.contains('='))
}

/// The value starting at `at`: its range (inside the quotes when quoted) and
/// whether it was quoted.
fn value_at(text: &str, mut at: usize) -> Option<(std::ops::Range<usize>, bool)> {
    let bytes = text.as_bytes();
    let is_quote = |b: Option<&u8>| matches!(b, Some(b'"' | b'\'' | b'`'));
    // String prefixes: Python's b"", r"", f"", u"", C#'s @"".
    if matches!(
        bytes.get(at),
        Some(b'b' | b'r' | b'f' | b'u' | b'B' | b'R' | b'F' | b'U' | b'@')
    ) && is_quote(bytes.get(at + 1))
    {
        at += 1;
    }
    let escaped = bytes.get(at) == Some(&b'\\') && is_quote(bytes.get(at + 1));
    if escaped {
        at += 1;
    }
    if is_quote(bytes.get(at)) {
        let quote = bytes[at];
        if bytes.get(at + 1) == Some(&quote) && bytes.get(at + 2) == Some(&quote) {
            return None;
        }
        let open = at + 1;
        let mut i = open;
        while i < bytes.len().min(open + VALUE_REACH) {
            match bytes[i] {
                b'\n' => return None,
                b'\\' if escaped && bytes.get(i + 1) == Some(&quote) => {
                    return Some((open..i, true));
                }
                b'\\' => i += 1,
                b if b == quote && !escaped => return Some((open..i, true)),
                _ => {}
            }
            i += 1;
        }
        return None;
    }
    let mut end = at;
    loop {
        if end - at >= VALUE_REACH {
            // Too long for a credential; the caller skips the key names in it.
            return Some((at..end, false));
        }
        let Some(&b) = bytes.get(end) else {
            break;
        };
        // A pipe ends a bare value as `;`, `,` and `&` do: it separates
        // commands, table cells and alternatives far more often than it
        // stands inside an unquoted password. Any control byte ends one too
        // (vertical tab and NUL included, which `is_ascii_whitespace` does
        // not cover): the value before it is judged on its own instead of the
        // whole run being refused as "contains a control character". The `>`
        // of `->` (member access through a pointer) does not end it: the
        // whole chain is judged, as `self.token` is; only between two names
        // (`a->b`), so a value whose dashes run into a `>` ends there.
        let name_byte = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
        let arrow = b == b'>'
            && end >= at + 2
            && bytes[end - 1] == b'-'
            && name_byte(&bytes[end - 2])
            && bytes
                .get(end + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
        if !arrow
            && (b.is_ascii_whitespace()
                || b.is_ascii_control()
                || matches!(
                    b,
                    b'"' | b'\''
                        | b'`'
                        | b';'
                        | b','
                        | b'&'
                        | b'|'
                        | b'<'
                        | b'>'
                        | b'('
                        | b')'
                        | b'['
                        | b']'
                        | b'{'
                        | b'}'
                ))
        {
            break;
        }
        end += 1;
    }
    // A full stop after the value is not part of it.
    while end > at && bytes[end - 1] == b'.' {
        end -= 1;
    }
    (end > at).then_some((at..end, false))
}

/// `<password>value</password>`: the value up to the next `<` on its line.
fn xml_element(text: &str, at: usize, word: &str, index: usize, out: &mut Vec<Found>) {
    let end = line_end(text, at);
    let Some(close) = text[at..end].find('<') else {
        return;
    };
    let raw = &text[at..at + close];
    let value = raw.trim();
    if value.is_empty() {
        return;
    }
    let start = at + (raw.len() - raw.trim_start().len());
    if value_is_secret(value, true, word) {
        out.push(Found {
            start,
            end: start + value.len(),
            rule: index,
        });
    }
}

/// The lines of a YAML block scalar whose indicator line ends at `at`, under
/// a key starting at `key`: every following line indented deeper than the
/// key (blank lines included), from its first character to the end of the
/// last non-blank one.
fn block_scalar(text: &str, key: usize, at: usize, index: usize, out: &mut Vec<Found>) {
    let reach = floor_boundary(text, key.saturating_sub(VALUE_REACH));
    let line_start = text[reach..key]
        .rfind('\n')
        .map_or(reach, |n| reach + n + 1);
    let indent = text[line_start..key]
        .bytes()
        .take_while(|b| *b == b' ')
        .count();
    let Some(mut line) = next_line_start(text, at) else {
        return;
    };
    let (mut first, mut last) = (None, None);
    while line < text.len() {
        let end = line_end(text, line);
        let content = &text[line..end];
        let depth = content.bytes().take_while(|b| *b == b' ').count();
        // Blank lines belong to the block; the first line at the key's depth
        // or shallower ends it.
        if !content.trim().is_empty() {
            if depth <= indent {
                break;
            }
            first.get_or_insert(line + depth);
            last = Some(end);
        }
        line = match next_line_start(text, line) {
            Some(next) => next,
            None => break,
        };
    }
    let (Some(first), Some(last)) = (first, last) else {
        return;
    };
    let body = &text[first..last];
    if body.trim().len() < 8 || body.starts_with("{{") || body.starts_with("${") || is_exempt(body)
    {
        return;
    }
    out.push(Found {
        start: first,
        end: last,
        rule: index,
    });
}

//! `assigned-secret`: a secret-named key and its value, in any common syntax.
//!
//! A key name is secret-named when its last word (split at `_`, `-`, `.` and
//! camelCase) is a credential word: `password`, `passwd`, `pwd`, `pass`,
//! `passphrase`, `secret`, `token`, `credential(s)`, `creds`, `auth`, or
//! `key` after a qualifier (`api`, `access`, `secret`, `private`, `signing`,
//! `client`, `account`, …), or ends in one (`dbpassword`, `apikey`). So
//! `DB_PASSWORD`, `apiToken`, `client-secret`, `spring.datasource.password`,
//! `awsSecretAccessKey`, `_authToken` are, and `password_hash`, `max_tokens`,
//! `tokenizer`, `keyboard` are not.
//!
//! Syntaxes: `name = v`, `name: v`, `name := v`, `name => v`, `name ?= v`,
//! a quoted key (`"name": v`, `'name' => v`, `["name"] = v`,
//! `put("name", "v")`), `<name>v</name>`, `--name v` / `--name=v`, a type
//! annotation (`name: str = v`), the value alone on the next line
//! (`name:` ⏎ `  v`, `name = \` ⏎ `v`), and YAML block scalars (`name: |`
//! ⏎ indented lines, all of which are the secret).
//!
//! A value is a credential unless it reads as something else: a placeholder
//! (`changeme`, `<your-token>`, `xxxx`, anything with `example`), a
//! reference (`${VAR}`, `$VAR`, `os.environ[…]`, `{{ secrets.X }}`), a call or
//! expression (`get_password()`, `self.token`, `tokens[0]`), a path or URL,
//! an identifier (`next_token`, `accessToken`, `GITHUB_TOKEN`), a word
//! shorter than 12 letters, or an obvious test value (`test123`).

use super::{Found, is_exempt};

/// How far a key name is read either side of the anchor hit.
const NAME_REACH: usize = 64;

/// The longest value read; a longer run is not a credential's shape, and the
/// bound keeps the work per anchor hit constant on hostile text (one long
/// line holding many key names).
const VALUE_REACH: usize = 4096;

/// Whether `b` can be part of a key name.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Short words that make a key name secret-named as its whole last word.
const SECRET_WORDS: [&str; 6] = ["pwd", "pass", "auth", "creds", "passcode", "pw"];

/// Endings that make a key name secret-named (after dropping `_` and `-`
/// and lower-casing: `dbpassword`, `githubtoken`, `clientsecret`).
const SECRET_ENDINGS: [&str; 8] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "credentials",
    "privatekey",
];

/// Words before `key` that make it a credential's key name.
const KEY_QUALIFIERS: [&str; 30] = [
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "crypt",
    "master",
    "app",
    "account",
    "auth",
    "client",
    "service",
    "license",
    "licence",
    "shared",
    "webhook",
    "consumer",
    "hmac",
    "jwt",
    "session",
    "admin",
    "deploy",
    "ingest",
    "subscription",
    "storage",
    "server",
    "sas",
];

/// Values that are test values, not credentials.
const TEST_VALUES: [&str; 24] = [
    "password",
    "password1",
    "password123",
    "passw0rd",
    "secret",
    "secret123",
    "admin",
    "admin123",
    "root",
    "test",
    "test123",
    "test1234",
    "testing",
    "testing123",
    "123456",
    "1234567",
    "12345678",
    "123456789",
    "qwerty",
    "letmein",
    "foobar",
    "abc123",
    "abcdef",
    "pass123",
];

/// Parts that mark a value as documentation (compared lower-cased).
const PLACEHOLDER_PARTS: [&str; 26] = [
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourpass",
    "yoursecret",
    "yourtoken",
    "yourkey",
    "replace_",
    "replace-",
    "replaceme",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "...",
    "redacted",
    "fake",
    "insert_",
    "insert-",
    "notreal",
    "not_real",
    "not-real",
];

/// Parts that mark a value as a reference to something else.
const REFERENCE_PARTS: [&str; 18] = [
    "${",
    "{{",
    "}}",
    "#{",
    "%(",
    "<%",
    "{}",
    "{0",
    "()",
    "::",
    "->",
    "os.environ",
    "process.env",
    "getenv",
    "environ[",
    "env(",
    "env[",
    "secrets.",
];

/// ASCII case-insensitive `ends_with`.
fn ends_with_ci(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text.as_bytes()[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// The last word of `name` before `end` (split at `_`, `-` and camelCase,
/// trailing digits kept), and where the text before it ends.
fn last_word(name: &[u8], mut end: usize) -> Option<(usize, usize)> {
    while end > 0 && matches!(name[end - 1], b'_' | b'-') {
        end -= 1;
    }
    if end == 0 {
        return None;
    }
    let mut start = end;
    while start > 0 && name[start - 1].is_ascii_digit() {
        start -= 1;
    }
    if start > 0 && name[start - 1].is_ascii_lowercase() {
        while start > 0
            && (name[start - 1].is_ascii_lowercase() || name[start - 1].is_ascii_digit())
        {
            start -= 1;
        }
        if start > 0 && name[start - 1].is_ascii_uppercase() {
            start -= 1;
        }
    } else {
        while start > 0
            && (name[start - 1].is_ascii_uppercase() || name[start - 1].is_ascii_digit())
        {
            start -= 1;
        }
    }
    (start < end).then_some((start, end))
}

/// The credential word `name` ends in, lower-cased, if it is secret-named.
///
/// The last `.`-component is read with `_` and `-` dropped and lower-cased,
/// so any spelling of a name matches (`api_key`, `apiKey`, `API-KEY`,
/// `ApI_kEy`); the short words (`pwd`, `pass`, `auth`) only as a whole last
/// word, so `bypass`, `oauth` and `compass` are not credential names.
fn secret_word(name: &str) -> Option<String> {
    let component = name.rsplit('.').next().unwrap_or(name);
    let normalized: String = component
        .bytes()
        .filter(|b| !matches!(b, b'_' | b'-'))
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect();
    let normalized = normalized.trim_end_matches(|c: char| c.is_ascii_digit());
    if let Some(ending) = SECRET_ENDINGS.iter().find(|e| normalized.ends_with(*e)) {
        return Some((*ending).to_owned());
    }
    if let Some(stem) = normalized.strip_suffix("key")
        && KEY_QUALIFIERS.iter().any(|q| stem.ends_with(q))
    {
        return Some("key".to_owned());
    }
    let bytes = component.as_bytes();
    let (start, end) = last_word(bytes, bytes.len())?;
    let word = String::from_utf8_lossy(&bytes[start..end]).to_ascii_lowercase();
    let word = word.trim_end_matches(|c: char| c.is_ascii_digit());
    SECRET_WORDS.contains(&word).then(|| word.to_owned())
}

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
    if value_is_secret(&text[value.clone()], quoted, &word) {
        out.push(Found {
            start: value.start,
            end: value.end,
            rule: index,
        });
    }
    name_end
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
    let limit = super::ceil_boundary(text, at + VALUE_REACH);
    text[at..limit].find('\n').map(|n| at + n + 1)
}

/// Where the line holding `at` ends (before `\r\n` or `\n`).
fn line_end(text: &str, at: usize) -> usize {
    let limit = super::ceil_boundary(text, at + VALUE_REACH);
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
        // whole run being refused as "contains a control character".
        if b.is_ascii_whitespace()
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
            )
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
    let reach = super::floor_boundary(text, key.saturating_sub(VALUE_REACH));
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

/// Whether `value`, assigned to a key whose credential word is `word`, is a
/// credential rather than a placeholder, a reference, code or a test value.
pub(crate) fn value_is_secret(value: &str, quoted: bool, word: &str) -> bool {
    let chars = value.chars().count();
    if chars < if quoted { 6 } else { 8 } {
        return false;
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control())
        || is_exempt(value)
        || value.contains("[redacted:")
    {
        return false;
    }
    let lower = value.to_lowercase();
    // A placeholder word marks a short value, or one it opens
    // (`example-password-1`, `your-api-key-here`), not long random material
    // that happens to hold it.
    let placeholder = PLACEHOLDER_PARTS
        .iter()
        .any(|part| lower.starts_with(part) || (chars < 20 && lower.contains(part)));
    // The key's own word, alone or with a few characters (`password123`).
    let own_word = word.len() >= 4 && lower.starts_with(word) && chars <= word.len() + 4;
    if TEST_VALUES.contains(&lower.as_str())
        || placeholder
        || own_word
        || REFERENCE_PARTS.iter().any(|part| lower.contains(part))
    {
        return false;
    }
    let first = value.as_bytes()[0];
    if matches!(first, b'$' | b'%' | b'<' | b'{' | b'!' | b'&' | b'*') || (!quoted && first == b'@')
    {
        return false;
    }
    if is_path_or_url(value) {
        return false;
    }
    let shape = Shape::of(value);
    if quoted {
        quoted_is_secret(value, &shape)
    } else {
        bare_is_secret(value, &shape)
    }
}

/// Whether `value` is a file path or a URL.
fn is_path_or_url(value: &str) -> bool {
    const FILES: [&str; 16] = [
        ".pem",
        ".key",
        ".json",
        ".txt",
        ".crt",
        ".p12",
        ".pfx",
        ".yaml",
        ".yml",
        ".env",
        ".gpg",
        ".asc",
        ".der",
        ".jks",
        ".ppk",
        ".keystore",
    ];
    value.starts_with(['/', '\\'])
        || value.starts_with("~/")
        || value.starts_with("./")
        || value.starts_with("../")
        || value.contains("://")
        || value.as_bytes().get(1..3) == Some(b":\\")
        || FILES.iter().any(|ext| ends_with_ci(value, ext))
}

/// What a value is made of.
struct Shape {
    lower: bool,
    upper: bool,
    digit: bool,
    /// A digit followed, later, by a letter (`S3cret`, not `token2`).
    digit_inside: bool,
    /// Only ASCII letters, digits and `_`.
    identifier: bool,
    underscore: bool,
    dot: bool,
    /// Letter case changes (`aB`, `Ab`).
    case_changes: usize,
}

impl Shape {
    fn of(value: &str) -> Shape {
        let mut shape = Shape {
            lower: false,
            upper: false,
            digit: false,
            digit_inside: false,
            identifier: true,
            underscore: false,
            dot: false,
            case_changes: 0,
        };
        let mut previous: Option<u8> = None;
        for b in value.bytes() {
            match b {
                b'a'..=b'z' => shape.lower = true,
                b'A'..=b'Z' => shape.upper = true,
                b'0'..=b'9' => shape.digit = true,
                b'_' => shape.underscore = true,
                b'.' => {
                    shape.dot = true;
                    shape.identifier = false;
                }
                _ => shape.identifier = false,
            }
            if b.is_ascii_alphabetic() && shape.digit {
                shape.digit_inside = true;
            }
            if let Some(p) = previous
                && p.is_ascii_alphabetic()
                && b.is_ascii_alphabetic()
                && p.is_ascii_lowercase() != b.is_ascii_lowercase()
            {
                shape.case_changes += 1;
            }
            previous = Some(b);
        }
        shape
    }
}

/// An unquoted value (env file, YAML, INI, a flag's argument, code).
fn bare_is_secret(value: &str, shape: &Shape) -> bool {
    let chars = value.len();
    if value.contains(['(', ')', '[', ']', '{', '}']) {
        return false;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) || (value.starts_with("0x") && chars <= 18) {
        return false;
    }
    // An attribute chain: `self.token`, `settings.SECRET_KEY`.
    if shape.dot
        && value.split('.').all(|part| {
            part.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    {
        return false;
    }
    if shape.identifier {
        return identifier_is_secret(value, chars, shape);
    }
    true
}

/// Whether a value made only of letters, digits and `_` reads as a secret
/// rather than an identifier.
fn identifier_is_secret(value: &str, chars: usize, shape: &Shape) -> bool {
    if shape.underscore {
        // snake_case and CONSTANT_CASE are names; random material may hold `_`.
        return (chars >= 16 && shape.lower && shape.upper && shape.digit_inside)
            || value.split('_').any(|part| part.len() >= 12);
    }
    match (shape.lower && shape.upper, shape.digit) {
        // camelCase words change case about once a word; random letters often.
        (true, false) => chars >= 16 && shape.case_changes * 3 >= chars,
        (false, false) => chars >= 12,
        (_, true) => shape.digit_inside || chars >= 12,
    }
}

/// A quoted value.
fn quoted_is_secret(value: &str, shape: &Shape) -> bool {
    let chars = value.len();
    let only = |ok: fn(u8) -> bool| value.bytes().all(ok);
    if !shape.digit {
        // Words and names: `bearer`, `access_token`, `auth.token.expired`,
        // `GITHUB_TOKEN`, `accessToken`.
        if only(|b| b.is_ascii_lowercase()) || only(|b| b.is_ascii_uppercase()) {
            return chars >= 12;
        }
        if only(|b| b.is_ascii_lowercase() || b == b'_' || b == b'.')
            || only(|b| b.is_ascii_uppercase() || b == b'_')
        {
            return false;
        }
        if shape.identifier && shape.lower && shape.upper && !shape.underscore {
            return chars >= 16 && shape.case_changes * 3 >= chars;
        }
    }
    if shape.identifier && shape.underscore && !(shape.lower && shape.upper) && !shape.digit_inside
    {
        return false;
    }
    true
}

//! The text as a reader reads it: a paragraph or a comment block is one
//! run of words, whatever the carrier did to it. Comments put a marker
//! before every line (`#`, `//`, `///`, ` * `, `--`), quotes put `>`,
//! docstrings and reStructuredText indent, and everything is wrapped at
//! 72 to 80 columns, so a sentence is cut across lines at any word. The
//! phrase signals read the *prose view*: each paragraph of two lines or
//! more that holds one of the gate's literals, its lines' markers and
//! indentation taken out and its line breaks read as one space, one
//! paragraph per line of the view. Every byte of the view maps back to the
//! lowered text, so findings keep their line numbers.
//!
//! Which lines continue a paragraph: two non-empty lines behind the same
//! kind of marker; in prose, not when the second opens a block (a heading,
//! a list item, a fence, a table row, a directive, an underline) or the
//! first is a heading or introduces a literal block (`::`); between code
//! lines without a marker (docstrings), only where both read as prose
//! (the first ends in a word or a comma, the second starts with a letter,
//! neither holds `;`, `{`, `}` or `=`).

use std::ops::Range;

use super::context::Kind;

/// How a line is carried: the marker in front of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// No marker (prose, a docstring, a block scalar, code).
    Plain,
    /// `#`.
    Hash,
    /// `//`, `///`, `//!`.
    Slashes,
    /// `/*`, `/**` and the ` * ` lines of a block comment.
    Star,
    /// `--`.
    Dashes,
    /// `>` (a quote, possibly nested).
    Quote,
    /// `;`.
    Semicolon,
}

/// One line of the lowered text: where its content (after the marker and
/// the spaces) starts and ends, and its marker.
#[derive(Debug, Clone, Copy)]
struct Line {
    /// The line's first byte.
    start: usize,
    /// Its content's first byte.
    content: usize,
    /// Its content's end (before trailing spaces and a closing `*/`).
    end: usize,
    /// The `\n` ending it, or the end of the text.
    stop: usize,
    marker: Marker,
    /// Whether its content reads as code (see [`has_code`]); worked out
    /// only for lines without a marker in files where that is asked.
    code: bool,
}

impl Line {
    fn is_empty(&self) -> bool {
        self.content >= self.end
    }
}

/// The prose view of a text (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Prose {
    /// The paragraphs, one per line.
    pub(super) text: String,
    /// `(view offset, lowered offset)` where each piece of a line starts,
    /// in order; the byte at view offset `v` in piece `k` is the lowered
    /// text's byte `lowered + (v - view)`.
    pieces: Vec<(usize, usize)>,
}

/// Paragraphs longer than this many lines are cut (a generated comment
/// block); the view stays linear in the text either way.
const MAX_LINES: usize = 200;

impl Prose {
    /// The view of the paragraphs of `lowered` (a file of `kind`) that hold
    /// one of `hits` (ascending byte offsets).
    ///
    /// Each line is read once: the paragraph of a hit is walked back from
    /// the hit's line to its first line, then on from the hit's line to its
    /// last, and its lines go into the view as they come (the first one
    /// held back until a second shows the paragraph has two).
    pub(super) fn new(lowered: &str, kind: Kind, hits: &[usize]) -> Prose {
        let bytes = lowered.as_bytes();
        let carrier = Carrier::of(kind);
        let mut prose = Prose::default();
        let mut covered = 0;
        // The lines before the hit's line, last first.
        let mut back: Vec<Line> = Vec::new();
        for &hit in hits {
            if hit < covered || hit >= bytes.len() {
                continue;
            }
            let line = line_at(bytes, hit, &carrier);
            // A line of code continues nothing: passed over before its
            // neighbours are read (most hits in source are in code).
            if line.is_empty() || (carrier.code && line.marker == Marker::Plain && line.code) {
                covered = line.stop + 1;
                continue;
            }
            back.clear();
            let mut first = line;
            while first.start > covered && first.start > 0 && back.len() + 1 < MAX_LINES {
                let prev = line_before(bytes, &first, &carrier);
                if !continues(bytes, kind, &prev, &first) {
                    break;
                }
                back.push(prev);
                first = prev;
            }
            let mut count = back.len() + 1;
            let mut last = line;
            let mut next = None;
            if last.stop < bytes.len() && count < MAX_LINES {
                let after = line_after(bytes, &last, &carrier);
                if continues(bytes, kind, &last, &after) {
                    next = Some(after);
                }
            }
            if count < 2 && next.is_none() {
                covered = last.stop + 1;
                continue;
            }
            if prose.text.is_empty() {
                // The view is never longer than the text (it holds parts of
                // its lines and one byte for each line break): room for all
                // of it at once, rather than copies as it grows.
                prose.text.reserve(lowered.len() + 1);
            }
            let mut lines = back.iter().rev().chain(std::iter::once(&line));
            if let Some(first) = lines.next() {
                prose.push(lowered, first, true);
            }
            for line in lines {
                prose.push(lowered, line, false);
            }
            while let Some(line) = next.take() {
                prose.push(lowered, &line, false);
                count += 1;
                last = line;
                if last.stop < bytes.len() && count < MAX_LINES {
                    let after = line_after(bytes, &last, &carrier);
                    if continues(bytes, kind, &last, &after) {
                        next = Some(after);
                    }
                }
            }
            prose.text.push('\n');
            covered = last.stop + 1;
        }
        prose
    }

    /// Adds the content of `line` to the paragraph being written, after a
    /// space unless it is the paragraph's `first` line.
    fn push(&mut self, lowered: &str, line: &Line, first: bool) {
        if !first {
            self.text.push(' ');
        }
        self.pieces.push((self.text.len(), line.content));
        self.text.push_str(&lowered[line.content..line.end]);
    }

    /// The lowered offset of view offset `at`. A space that joins two lines
    /// maps to the end of the first.
    fn to_lowered(&self, at: usize) -> usize {
        let k = self.pieces.partition_point(|&(view, _)| view <= at);
        match k.checked_sub(1).and_then(|k| self.pieces.get(k)) {
            Some(&(view, lowered)) => lowered + (at - view),
            None => at,
        }
    }

    /// The lowered span of the view's span `span`.
    pub(super) fn span(&self, span: &Range<usize>) -> Range<usize> {
        let start = self.to_lowered(span.start);
        let end = self.to_lowered(span.end.saturating_sub(1).max(span.start)) + 1;
        start..end.max(start)
    }
}

/// What a file's kind says about how its lines are carried: which
/// markers it has, and whether a line without one may be code.
#[derive(Debug, Clone, Copy)]
struct Carrier {
    /// `//`, `///`, `/*` and ` * ` are markers.
    slashes: bool,
    /// `#` is a marker.
    hashes: bool,
    /// `--` is a marker.
    dashes: bool,
    /// `;` is a marker.
    semicolons: bool,
    /// `>` is a marker (a quote).
    quotes: bool,
    /// A line without a marker is read for code (see [`has_code`]).
    reads_code: bool,
    /// The file is source code.
    code: bool,
}

impl Carrier {
    fn of(kind: Kind) -> Carrier {
        let has = |marker: &str| matches!(kind, Kind::Code(m) if m.contains(&marker));
        let unknown = matches!(kind, Kind::Unknown);
        Carrier {
            slashes: has("//") || unknown,
            hashes: has("#") || matches!(kind, Kind::Unknown | Kind::Data),
            dashes: has("--") || unknown,
            semicolons: matches!(kind, Kind::Unknown | Kind::Data),
            quotes: matches!(kind, Kind::Prose | Kind::Unknown),
            reads_code: matches!(kind, Kind::Code(_) | Kind::Data | Kind::Unknown),
            code: matches!(kind, Kind::Code(_)),
        }
    }
}

/// The line of `bytes` holding `at`, read as a line of a file carried as
/// `carrier` says.
fn line_at(bytes: &[u8], at: usize, carrier: &Carrier) -> Line {
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
    read_line(bytes, start, end, carrier)
}

/// The line before `line` (which does not start the text).
fn line_before(bytes: &[u8], line: &Line, carrier: &Carrier) -> Line {
    let end = line.start - 1;
    let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |i| i + 1);
    read_line(bytes, start, end, carrier)
}

/// The line after `line` (which ends in `\n`).
fn line_after(bytes: &[u8], line: &Line, carrier: &Carrier) -> Line {
    let start = line.stop + 1;
    let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
    read_line(bytes, start, end, carrier)
}

/// The line `start..end` of `bytes` (`end` its `\n` or the end of the text).
fn read_line(bytes: &[u8], start: usize, end: usize, carrier: &Carrier) -> Line {
    let mut i = start;
    while i < end && matches!(bytes[i], b' ' | b'\t') {
        i += 1;
    }
    let (marker, skip) = marker_in(&bytes[i..end], carrier);
    i += skip;
    while i < end && matches!(bytes[i], b' ' | b'\t') {
        i += 1;
    }
    let mut content_end = end;
    while content_end > i && matches!(bytes[content_end - 1], b' ' | b'\t' | b'\r') {
        content_end -= 1;
    }
    // The end of a block comment or a docstring on the line closes it.
    for close in [&b"*/"[..], b"\"\"\"", b"'''", b"-->"] {
        if bytes[i..content_end].ends_with(close) {
            content_end -= close.len();
            while content_end > i && matches!(bytes[content_end - 1], b' ' | b'\t') {
                content_end -= 1;
            }
        }
    }
    let code = marker == Marker::Plain
        && carrier.reads_code
        && i < content_end
        && has_code(&bytes[i..content_end]);
    Line {
        start,
        content: i,
        end: content_end,
        stop: end,
        marker,
        code,
    }
}

/// The marker `rest` (a line after its indentation) starts with in a file
/// of `kind`, and its length.
fn marker_at(rest: &[u8], kind: Kind) -> (Marker, usize) {
    marker_in(rest, &Carrier::of(kind))
}

/// The marker `rest` (a line after its indentation) starts with in a file
/// carried as `carrier` says, and its length.
fn marker_in(rest: &[u8], carrier: &Carrier) -> (Marker, usize) {
    let run = |b: u8| rest.iter().take_while(|&&c| c == b).count();
    match rest.first() {
        Some(b'/') if carrier.slashes && rest.get(1) == Some(&b'/') => {
            let n = run(b'/');
            (Marker::Slashes, n + usize::from(rest.get(n) == Some(&b'!')))
        }
        Some(b'/') if carrier.slashes && rest.get(1) == Some(&b'*') => {
            (Marker::Star, 1 + run_from(rest, 1, b'*'))
        }
        Some(b'*') if carrier.slashes && rest.get(1) != Some(&b'/') => (Marker::Star, run(b'*')),
        Some(b'#') if carrier.hashes => (
            Marker::Hash,
            run(b'#') + usize::from(rest.get(run(b'#')) == Some(&b'!')),
        ),
        Some(b'-') if carrier.dashes && rest.get(1) == Some(&b'-') => (Marker::Dashes, run(b'-')),
        Some(b';') if carrier.semicolons => (Marker::Semicolon, run(b';')),
        Some(b'>') if carrier.quotes => {
            // `>`, `> >`, `>>`.
            let n = rest.iter().take_while(|&&c| c == b'>' || c == b' ').count();
            (Marker::Quote, n)
        }
        Some(b'"') if rest.starts_with(b"\"\"\"") => (Marker::Plain, 3),
        Some(b'\'') if rest.starts_with(b"'''") => (Marker::Plain, 3),
        _ => (Marker::Plain, 0),
    }
}

fn run_from(rest: &[u8], from: usize, b: u8) -> usize {
    rest[from..].iter().take_while(|&&c| c == b).count()
}

/// Whether `next` continues the paragraph `prev` ends.
fn continues(bytes: &[u8], kind: Kind, prev: &Line, next: &Line) -> bool {
    if prev.is_empty() || next.is_empty() || prev.marker != next.marker {
        return false;
    }
    let a = &bytes[prev.content..prev.end];
    let b = &bytes[next.content..next.end];
    if opens_block(b) || closes_block(a) {
        return false;
    }
    match (kind, prev.marker) {
        (Kind::Code(_) | Kind::Data | Kind::Unknown, Marker::Plain) => {
            let last = a[a.len() - 1];
            (last.is_ascii_alphanumeric() || matches!(last, b',' | b'"' | b'\''))
                && b[0].is_ascii_alphabetic()
                && !prev.code
                && !next.code
        }
        _ => true,
    }
}

/// Whether a line (its content) opens a block of its own rather than
/// continuing a sentence.
fn opens_block(content: &[u8]) -> bool {
    let first = content[0];
    let second = content.get(1).copied().unwrap_or(b' ');
    match first {
        b'#' | b'|' | b'<' | b'@' | b':' => true,
        b'-' | b'*' | b'+' => second == b' ' || second == first,
        b'=' | b'~' | b'^' | b'`' => true,
        b'.' => content.starts_with(b".. "),
        b'0'..=b'9' => {
            let digits = content.iter().take_while(|c| c.is_ascii_digit()).count();
            matches!(content.get(digits), Some(b'.' | b')'))
                && content.get(digits + 1).is_none_or(|c| *c == b' ')
        }
        _ => false,
    }
}

/// Whether a line (its content) ends a block: a heading, an underline, or
/// the introduction of a literal block (`::`).
fn closes_block(content: &[u8]) -> bool {
    content.ends_with(b"::")
        || content.first() == Some(&b'#')
        || content
            .iter()
            .all(|c| matches!(c, b'=' | b'-' | b'~' | b'^' | b'*' | b'#'))
}

/// Whether a line without a marker reads as code: it holds `;`, `{`, `}` or
/// `=`. (Every byte is looked at, without a branch, so the compiler
/// vectorises the loop.)
fn has_code(content: &[u8]) -> bool {
    content
        .iter()
        .fold(false, |any, c| any | matches!(c, b';' | b'{' | b'}' | b'='))
}

/// Takes the carrier's markers out of the lines after the first with words
/// of `text` (an excerpt of a file of `kind`, with its case) and joins them
/// with one space: the sentence a finding cites, as a reader reads it.
pub(super) fn joined_excerpt(text: &str, kind: Kind) -> String {
    let mut out = String::with_capacity(text.len());
    // Whether a line with words has been taken (kept as a flag: looking at
    // `out` again for every line would be quadratic in its blank lines).
    let mut started = false;
    for line in text.split('\n') {
        // The line where the words start keeps what stands before them (a
        // match may start with the marker of its own line).
        if !started {
            out.push_str(line);
            started = !line.trim().is_empty();
            continue;
        }
        out.push(' ');
        let bytes = line.as_bytes();
        let mut at = bytes
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
        let (_, skip) = marker_at(&bytes[at..], kind);
        at += skip;
        out.push_str(line[at..].trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    // The view as it was built before each line was read once: what
    // `Prose::new` must agree with.

    fn reference(lowered: &str, kind: Kind, hits: &[usize]) -> Prose {
        let bytes = lowered.as_bytes();
        let mut prose = Prose::default();
        let mut covered = 0;
        for &hit in hits {
            if hit < covered || hit >= bytes.len() {
                continue;
            }
            let line = reference_line_at(bytes, hit, kind);
            // A line of code continues nothing: passed over before its
            // neighbours are read (most hits in source are in code).
            if line.is_empty()
                || (matches!(kind, Kind::Code(_))
                    && line.marker == Marker::Plain
                    && has_code(&bytes[line.content..line.end]))
            {
                covered = line.stop + 1;
                continue;
            }
            let mut first = line;
            let mut count = 1;
            while first.start > covered && first.start > 0 && count < MAX_LINES {
                let prev = reference_line_at(bytes, first.start - 1, kind);
                if !reference_continues(bytes, kind, &prev, &first) {
                    break;
                }
                first = prev;
                count += 1;
            }
            let mut lines = vec![first];
            let mut at = first;
            while at.stop < bytes.len() && lines.len() < MAX_LINES {
                let next = reference_line_at(bytes, at.stop + 1, kind);
                if !reference_continues(bytes, kind, &at, &next) {
                    break;
                }
                lines.push(next);
                at = next;
            }
            covered = at.stop + 1;
            if lines.len() < 2 {
                continue;
            }
            for (i, line) in lines.iter().enumerate() {
                if i > 0 {
                    prose.text.push(' ');
                }
                prose.pieces.push((prose.text.len(), line.content));
                prose.text.push_str(&lowered[line.content..line.end]);
            }
            prose.text.push('\n');
        }
        prose
    }

    fn reference_line_at(bytes: &[u8], at: usize, kind: Kind) -> Line {
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        let mut i = start;
        while i < end && matches!(bytes[i], b' ' | b'\t') {
            i += 1;
        }
        let (marker, skip) = reference_marker_at(&bytes[i..end], kind);
        i += skip;
        while i < end && matches!(bytes[i], b' ' | b'\t') {
            i += 1;
        }
        let mut content_end = end;
        while content_end > i && matches!(bytes[content_end - 1], b' ' | b'\t' | b'\r') {
            content_end -= 1;
        }
        // The end of a block comment or a docstring on the line closes it.
        for close in [&b"*/"[..], b"\"\"\"", b"'''", b"-->"] {
            if bytes[i..content_end].ends_with(close) {
                content_end -= close.len();
                while content_end > i && matches!(bytes[content_end - 1], b' ' | b'\t') {
                    content_end -= 1;
                }
            }
        }
        Line {
            start,
            content: i,
            end: content_end,
            stop: end,
            marker,
            code: false,
        }
    }

    fn reference_marker_at(rest: &[u8], kind: Kind) -> (Marker, usize) {
        let run = |b: u8| rest.iter().take_while(|&&c| c == b).count();
        let slashes =
            matches!(kind, Kind::Code(m) if m.contains(&"//")) || matches!(kind, Kind::Unknown);
        let hashes = matches!(kind, Kind::Code(m) if m.contains(&"#"))
            || matches!(kind, Kind::Unknown | Kind::Data);
        let dashes =
            matches!(kind, Kind::Code(m) if m.contains(&"--")) || matches!(kind, Kind::Unknown);
        match rest.first() {
            Some(b'/') if slashes && rest.get(1) == Some(&b'/') => {
                let n = run(b'/');
                (Marker::Slashes, n + usize::from(rest.get(n) == Some(&b'!')))
            }
            Some(b'/') if slashes && rest.get(1) == Some(&b'*') => {
                (Marker::Star, 1 + run_from(rest, 1, b'*'))
            }
            Some(b'*') if slashes && rest.get(1) != Some(&b'/') => (Marker::Star, run(b'*')),
            Some(b'#') if hashes => (
                Marker::Hash,
                run(b'#') + usize::from(rest.get(run(b'#')) == Some(&b'!')),
            ),
            Some(b'-') if dashes && rest.get(1) == Some(&b'-') => (Marker::Dashes, run(b'-')),
            Some(b';') if matches!(kind, Kind::Unknown | Kind::Data) => {
                (Marker::Semicolon, run(b';'))
            }
            Some(b'>') if matches!(kind, Kind::Prose | Kind::Unknown) => {
                // `>`, `> >`, `>>`.
                let n = rest.iter().take_while(|&&c| c == b'>' || c == b' ').count();
                (Marker::Quote, n)
            }
            Some(b'"') if rest.starts_with(b"\"\"\"") => (Marker::Plain, 3),
            Some(b'\'') if rest.starts_with(b"'''") => (Marker::Plain, 3),
            _ => (Marker::Plain, 0),
        }
    }

    fn reference_continues(bytes: &[u8], kind: Kind, prev: &Line, next: &Line) -> bool {
        if prev.is_empty() || next.is_empty() || prev.marker != next.marker {
            return false;
        }
        let a = &bytes[prev.content..prev.end];
        let b = &bytes[next.content..next.end];
        if opens_block(b) || closes_block(a) {
            return false;
        }
        match (kind, prev.marker) {
            (Kind::Code(_) | Kind::Data | Kind::Unknown, Marker::Plain) => {
                let last = a[a.len() - 1];
                (last.is_ascii_alphanumeric() || matches!(last, b',' | b'"' | b'\''))
                    && b[0].is_ascii_alphabetic()
                    && !has_code(a)
                    && !has_code(b)
            }
            _ => true,
        }
    }

    fn view(text: &str, kind: Kind) -> String {
        let lowered = text.to_ascii_lowercase();
        let hits: Vec<usize> = (0..lowered.len()).collect();
        Prose::new(&lowered, kind, &hits).text
    }

    const HASH: Kind = Kind::Code(&["#"]);
    const SLASH: Kind = Kind::Code(&["//", "/*", "*"]);

    #[test]
    fn comment_blocks_and_paragraphs_are_joined_across_their_markers() {
        assert_eq!(
            view(
                "x = 1\n# ignore all previous\n#   instructions now\ny = 2\n",
                HASH
            ),
            "ignore all previous instructions now\n"
        );
        assert_eq!(
            view("/*\n * do not tell\n * the user\n */\nint x;\n", SLASH),
            "do not tell the user\n"
        );
        assert_eq!(
            view("/// reply only\n/// with ok\nfn f() {}\n", SLASH),
            "reply only with ok\n"
        );
        assert_eq!(
            view(
                "> quoted and\n> > wrapped\n\nnext para\nline two\n",
                Kind::Prose
            ),
            "quoted and wrapped\nnext para line two\n"
        );
        assert_eq!(
            view(
                "def f():\n    \"\"\"Ignore all\n    previous words.\n    \"\"\"\n    return 1\n",
                HASH
            ),
            "ignore all previous words.\n"
        );
    }

    #[test]
    fn blocks_and_code_stay_apart() {
        assert_eq!(view("# Title\nsome text\n", Kind::Prose), "");
        assert_eq!(view("- one\n- two\n", Kind::Prose), "");
        assert_eq!(view("Run this::\n\n    make\n", Kind::Prose), "");
        assert_eq!(view("x = run(a)\nthis = b\n", HASH), "");
        assert_eq!(view("# comment\ncode here\n", HASH), "");
    }

    #[test]
    fn view_offsets_map_back_to_the_lowered_text() {
        let text = "x\n# alpha beta\n#  gamma\n";
        let prose = Prose::new(text, HASH, &[5]);
        assert_eq!(prose.text, "alpha beta gamma\n");
        let at = prose.text.find("gamma").unwrap();
        let span = prose.span(&(at..at + 5));
        assert_eq!(&text[span], "gamma");
        let span = prose.span(&(0..prose.text.len() - 1));
        assert_eq!(&text[span], "alpha beta\n#  gamma");
    }

    /// Lines of every shape the view reads: markers of each carrier,
    /// indentation, code, block openers and closers, blank lines.
    fn lines() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            proptest::sample::select(vec![
                "# ", "// ", "/// ", " * ", "/* ", "-- ", "> ", "; ", "    ", "\t", "\"\"\"",
                "'''", "- ", "1. ", ".. ", "== ", "::", "*/", "-->", " = 1;", " {", "}", ",", "\r",
                "#!", "//!", ">>", "***", "--- ",
            ])
            .prop_map(str::to_owned),
            "[a-z]{1,8}( [a-z]{1,8}){0,6}",
            "[A-Za-z0-9 ,.:'\"]{0,20}",
        ];
        proptest::collection::vec(
            proptest::collection::vec(piece, 0..4).prop_map(|p| p.concat()),
            0..40,
        )
        .prop_map(|lines| lines.join("\n"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// The view read line by line once is the view the earlier reading
        /// (`reference`) built: the same text, the same pieces, for every
        /// kind of file and any hits.
        #[test]
        fn the_view_is_the_reference_view(
            text in lines(),
            picks in proptest::collection::vec(any::<u16>(), 0..12),
            kind in 0..5_usize,
        ) {
            let kind = [Kind::Unknown, Kind::Prose, HASH, SLASH, Kind::Data][kind];
            let mut hits: Vec<usize> = picks
                .iter()
                .map(|p| usize::from(*p) % (text.len() + 1))
                .collect();
            hits.sort_unstable();
            hits.dedup();
            let got = Prose::new(&text, kind, &hits);
            let want = reference(&text, kind, &hits);
            prop_assert_eq!(&got.text, &want.text);
            prop_assert_eq!(&got.pieces, &want.pieces);
        }
    }

    #[test]
    fn excerpts_lose_their_markers() {
        assert_eq!(
            joined_excerpt("Ignore all previous\n#   instructions", HASH),
            "Ignore all previous instructions"
        );
        assert_eq!(
            joined_excerpt("Do not tell\n * the user", SLASH),
            "Do not tell the user"
        );
    }
}

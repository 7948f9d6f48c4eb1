//! `search_code`: literal or regex search over the workspace with ripgrep's
//! libraries (`ignore` walks in parallel, `grep-searcher` searches).
//!
//! * A file up to `max_file_bytes` is read once, whole, through a no-follow
//!   open beneath the root, and searched whole, so that its redaction is
//!   decided on the whole source; a larger one is streamed in pages, each
//!   judged with the lines around it (the private `large` module). Binary files
//!   (a NUL byte anywhere), hard-linked files and files that change kind
//!   under us are skipped and counted.
//! * Output is deterministic: matches sorted by path, then line, whatever the
//!   order the threads finished in. Only the first `skip + max_results`
//!   matches (in that order) are kept in memory while searching; a later
//!   page (`skip` from a cursor) drops the first `skip` of them.
//! * `file_glob` entries use globset syntax (`*` also crosses `/`, `**`,
//!   `{a,b}`), matched against the relative path and against the base name.
//! * The deadline is checked between files: past it the search stops and
//!   returns what it found with `timed_out`, or `timed_out` as an error if it
//!   found nothing.
//! * Lines are split on `\n` (a trailing `\r` is dropped); a reported line
//!   longer than 400 characters is cut to an excerpt of them centred on its
//!   first match (`…` on each cut side), with the match's column; a context
//!   line to its first 400.
//!
//! # Redaction, and why search is no oracle
//!
//! Every file is redacted whole ([`crate::sources::redact_text`]) before the
//! pattern is applied, and searched once, in its redacted form; a matching
//! line is kept only when one of its matches neither overlaps nor touches
//! a `[redacted:…]` placeholder.
//!
//! The answer is therefore a function of the redacted text alone: two files
//! that differ only in what their placeholders hide give the same answer,
//! and probing a hidden value with prefix patterns learns nothing. So is
//! the work: which files are read, redacted and searched, and how many
//! bytes each step takes, depends on the files and the request, never on
//! whether the pattern would have matched inside a hidden value, so the
//! time an answer takes tells nothing either (redaction's own cost depends
//! on the text it judges, never on the pattern). A page's `skip` counts
//! kept matches in the same order, so paging is a function of the redacted
//! text as well.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Mutex;

use globset::{Glob, GlobSet, GlobSetBuilder};
use grep_matcher::Matcher as _;
use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use moat_protocol::limits::SEARCH_LINE_CHARS;
use moat_protocol::request::SearchCodeArgs;
use moat_protocol::response::{Limit, SearchCodeOutput, SearchMatch, SkipReasons, ToolOutput};
use moat_protocol::wire_error::{BadPattern, Missing, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::containment;
use crate::fs::open::{self, Kind};
use crate::redact::RedactionReport;
use crate::search_regex;
use crate::sources;
use crate::walk;

// A file over `max_file_bytes`, searched page by page.
mod large;

/// Run `search_code`.
pub fn run(
    ws: &Workspace,
    args: &SearchCodeArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let start = containment::resolve(ws, &args.path)?;
    let meta = open::stat(ws, &start).map_err(|_| WireError::NotFound(Missing::Path))?;
    let matcher = search_regex::build(&args.pattern, args.regex, args.case_sensitive)?;
    let globs = build_globs(&args.file_globs)?;
    let max_results = args.max_results.clamp(1, ws.limits().max_search_results) as usize;
    // A later page finds the matches before it again (in the same order)
    // and skips them.
    let skip = usize::try_from(args.skip.min(moat_protocol::limits::MAX_PAGED_ITEMS)).unwrap_or(0);
    let keep = max_results + skip;
    let context = usize::from(
        args.context_lines
            .min(moat_protocol::limits::MAX_SEARCH_CONTEXT_LINES),
    );

    let results = Results::new(keep);
    let mut summary = walk::Summary::default();
    match meta.kind {
        Kind::File => {
            // A single file: searched alone (globs do not apply).
            summary.files = 1;
            let mut searcher = new_searcher();
            let scan = Scan {
                ws,
                matcher: &matcher,
                context,
                max: keep,
                deadline,
            };
            scan_file(&scan, start.rel(), &mut searcher, &results);
        }
        Kind::Directory => {
            let opts = walk::Options {
                respect_gitignore: args.respect_gitignore,
                include_generated: args.include_generated,
                max_files: ws.limits().max_search_files,
            };
            summary = walk::walk(ws, &start, opts, deadline, || {
                let matcher = matcher.clone();
                let mut searcher = new_searcher();
                let globs = globs.as_ref();
                let results = &results;
                move |found: walk::Found<'_>| {
                    let scan = Scan {
                        ws,
                        matcher: &matcher,
                        context,
                        max: keep,
                        deadline,
                    };
                    // Globs read names as the answer shows them.
                    if let Some(g) = globs
                        && !g.is_match(ws.shown(found.rel).as_ref())
                        && !g.is_match(ws.shown(found.name).as_ref())
                    {
                        return true;
                    }
                    scan_file(&scan, found.rel, &mut searcher, results);
                    true
                }
            });
        }
        Kind::Special(k) => return Err(WireError::SpecialFile(k)),
        Kind::Symlink => {
            return Err(WireError::DeniedPath(
                moat_protocol::wire_error::Denial::Symlink,
            ));
        }
    }

    let mut collected = results.into_inner();
    // What the walk itself could not examine counts with what the reader
    // skipped.
    collected.skipped.add(&summary.skipped);
    let mut matches = Vec::new();
    let mut rendered = 0usize;
    let byte_cap = ws.limits().result_bytes();
    let mut stopped_by = Vec::new();
    if summary.capped {
        stopped_by.push(Limit::Files);
    }
    let mut more_matches = collected.total > collected.kept;
    let mut bytes_cut = false;
    let mut before = 0usize;
    let mut report = RedactionReport::default();
    for (_, file_report) in collected.files.values() {
        report.merge(file_report);
    }
    'outer: for (_, (file_matches, _)) in collected.files {
        for m in file_matches {
            if before < skip {
                before += 1;
                continue;
            }
            let block = rendered_len(&m) + usize::from(!matches.is_empty());
            if matches.len() >= max_results {
                more_matches = true;
                break 'outer;
            }
            if rendered + block > byte_cap {
                bytes_cut = true;
                break 'outer;
            }
            rendered += block;
            matches.push(m);
        }
    }
    if more_matches {
        stopped_by.push(Limit::Results);
    }
    if bytes_cut {
        stopped_by.push(Limit::Bytes);
    }
    let timed_out = summary.timed_out || collected.timed_out;
    if timed_out {
        stopped_by.push(Limit::Time);
    }
    let truncated = !stopped_by.is_empty();
    if timed_out && matches.is_empty() {
        return Err(WireError::TimedOut {
            budget_ms: u64::try_from(deadline.budget().as_millis()).unwrap_or(u64::MAX),
        });
    }
    Ok(ToolOutput::SearchCode(SearchCodeOutput {
        path: start.display().to_owned(),
        matches,
        files_scanned: collected.scanned,
        files_skipped: collected.skipped.total(),
        skipped_reasons: collected.skipped,
        truncated,
        timed_out,
        stopped_by,
        redaction: sources::counts(&report),
    }))
}

pub(crate) fn build_globs(globs: &[String]) -> Result<Option<GlobSet>, WireError> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob = Glob::new(g).map_err(|_| {
            WireError::BadPattern(BadPattern::BadGlob(g.chars().take(200).collect()))
        })?;
        b.add(glob);
    }
    b.build()
        .map(Some)
        .map_err(|_| WireError::BadPattern(BadPattern::BadGlob(String::new())))
}

fn new_searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::none())
        .build()
}

/// Characters the text rendering of one match takes: the header line and
/// two-space-indented context and match lines.
fn rendered_len(m: &SearchMatch) -> usize {
    let number = (m.line + m.after.len() as u64).to_string().len();
    let header = m.path.chars().count() + 2 + m.line.to_string().len();
    // Each line: a line break, two blanks, its number, its mark and a blank.
    let lines: usize = m
        .before
        .iter()
        .chain(std::iter::once(&m.text))
        .chain(&m.after)
        .map(|l| 5 + number + l.chars().count())
        .sum();
    header + lines
}

#[derive(Default)]
struct Collected {
    /// Matches per file, at most the first `max_results` files' worth kept,
    /// each with what redacting that file replaced. The answer's redaction
    /// report is theirs: the files that hold the page's matches or the
    /// matches before it, whatever order the threads searched in.
    /// Keyed by (the path as answers show it, the raw path): the answer's
    /// order is that of the shown paths.
    files: BTreeMap<(String, String), (Vec<SearchMatch>, RedactionReport)>,
    /// Matches found in total.
    total: u64,
    /// Matches currently kept.
    kept: u64,
    scanned: u64,
    skipped: SkipReasons,
    /// The deadline passed inside a large file.
    timed_out: bool,
}

/// A file's place in the answer: its path as answers show it, then its raw
/// path (which orders only paths that are shown alike).
fn key(ws: &Workspace, rel: &str) -> (String, String) {
    (ws.shown(rel).into_owned(), rel.to_owned())
}

struct Results {
    inner: Mutex<Collected>,
    max: usize,
}

impl Results {
    fn new(max: usize) -> Results {
        Results {
            inner: Mutex::new(Collected::default()),
            max,
        }
    }

    fn skipped(&self, reason: walk::SkipReason) {
        if let Ok(mut c) = self.inner.lock() {
            reason.count(&mut c.skipped);
        }
    }

    fn add(&self, ws: &Workspace, rel: &str, hits: FileHits) {
        let Ok(mut c) = self.inner.lock() else { return };
        c.scanned += 1;
        c.total += hits.found;
        c.timed_out |= hits.timed_out;
        let mut matches = hits.matches;
        if matches.is_empty() {
            return;
        }
        for m in &mut matches {
            rel.clone_into(&mut m.path);
        }
        c.kept += matches.len() as u64;
        c.files.insert(key(ws, rel), (matches, hits.report));
        // Drop the last files (in path order) that cannot be among the first
        // `max` matches.
        while let Some(last_len) = c.files.last_key_value().map(|(_, v)| v.0.len() as u64) {
            if c.kept - last_len < self.max as u64 {
                break;
            }
            c.files.pop_last();
            c.kept -= last_len;
        }
    }

    /// Whether nothing in the file `rel` can change the answer any more:
    /// the first `max` matches are held, at least one more is known (so the
    /// answer is cut by results whatever else is found), and `rel` sorts
    /// after the last file holding one of them, so its matches would be
    /// dropped. Both only tighten as the search goes on (the held files
    /// only move earlier, the matches found only grow), so a file passed
    /// over here is one the finished search would have dropped. Only held
    /// matches decide it, and they come from redacted text: passing a file
    /// over reveals nothing of what a placeholder hides.
    fn settled(&self, ws: &Workspace, rel: &str) -> bool {
        let Ok(c) = self.inner.lock() else {
            return false;
        };
        c.kept >= self.max as u64
            && c.total > c.kept
            && c.files
                .last_key_value()
                .is_some_and(|(last, _)| key(ws, rel) > *last)
    }

    fn into_inner(self) -> Collected {
        self.inner.into_inner().unwrap_or_default()
    }
}

/// Collects matching line numbers and texts of one file.
struct Collect<'m> {
    /// Each kept line's number and its excerpt around its first match.
    lines: Vec<(u64, sources::Excerpt)>,
    /// The pattern, to find where a kept line's match is.
    matcher: &'m RegexMatcher,
    found: u64,
    max: usize,
    /// The lines whose matches count (the rest is context for the redactor).
    answered: std::ops::RangeInclusive<u64>,
    /// Over redacted text: the matcher, to keep only lines with a match clear
    /// of every placeholder.
    clear_of_placeholders: Option<&'m RegexMatcher>,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let line = m.line_number().unwrap_or(0);
        if line > *self.answered.end() {
            return Ok(false);
        }
        if line < *self.answered.start() {
            return Ok(true);
        }
        if let Some(matcher) = self.clear_of_placeholders
            && !clear_match(matcher, m.bytes())
        {
            return Ok(true);
        }
        self.found += 1;
        if self.lines.len() < self.max {
            self.lines
                .push((line, matched_line(self.matcher, m.bytes())));
        }
        Ok(true)
    }
}

/// Whether `line` (of redacted text) has a match of `matcher` that neither
/// overlaps nor touches a placeholder.
fn clear_match(matcher: &RegexMatcher, line: &[u8]) -> bool {
    if !sources::has_placeholder(line) {
        return true;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    first_clear_match(matcher, text).is_some()
}

/// The first match of `matcher` in `line` that neither overlaps nor touches
/// a placeholder.
fn first_clear_match(matcher: &RegexMatcher, line: &str) -> Option<std::ops::Range<usize>> {
    let placeholders = sources::has_placeholder(line.as_bytes());
    let mut found = None;
    let _ = matcher.find_iter(line.as_bytes(), |m| {
        let range = m.start()..m.end();
        if placeholders && sources::touches_placeholder(line, &range) {
            return true;
        }
        found = Some(range);
        false
    });
    found
}

/// A line without its terminator, decoded.
fn decoded_line(bytes: &[u8]) -> Cow<'_, str> {
    let mut b = bytes;
    while let [rest @ .., b'\n' | b'\r'] = b {
        b = rest;
    }
    crate::sources::decode(b)
}

/// A matching line as the answer shows it: an excerpt around its first
/// match clear of placeholders, with that match's column.
fn matched_line(matcher: &RegexMatcher, bytes: &[u8]) -> sources::Excerpt {
    let line = decoded_line(bytes);
    let m = first_clear_match(matcher, &line);
    sources::excerpt(&line, m, SEARCH_LINE_CHARS)
}

/// A context line as the answer shows it: its start, when it is long.
fn line_text(bytes: &[u8]) -> String {
    sources::excerpt(&decoded_line(bytes), None, SEARCH_LINE_CHARS).text
}

/// What every file of one search is searched with.
struct Scan<'a> {
    ws: &'a Workspace,
    matcher: &'a RegexMatcher,
    /// Context lines on each side of a match.
    context: usize,
    /// Matches kept per file.
    max: usize,
    deadline: &'a Deadline,
}

fn scan_file(scan: &Scan<'_>, rel: &str, searcher: &mut Searcher, results: &Results) {
    let &Scan {
        ws,
        matcher,
        context,
        max,
        deadline,
    } = scan;
    let limit = ws.limits().max_file_bytes;
    let (file, size) = match open::open_for_scan(ws, rel) {
        Ok(opened) => opened,
        Err(why) => return results.skipped(why.into()),
    };
    // A file that sorts after a full page, when one more match is already
    // known, can only be dropped: it is not read at all. Only the matches
    // held decide it, and they come from redacted text.
    if results.settled(ws, rel) {
        return results.add(ws, rel, FileHits::default());
    }
    let want = Want {
        context,
        max,
        work: deadline.work(),
    };
    let hits = if size > limit {
        // Larger than one answer may hold: searched page by page.
        deadline
            .work()
            .read(usize::try_from(size).unwrap_or(usize::MAX));
        match large::scan(ws, file, matcher, searcher, &want, deadline) {
            Ok(hits) => hits,
            Err(why) => return results.skipped(why),
        }
    } else {
        let bytes = match open::read_opened(file, size, limit) {
            Ok(b) => b,
            Err(why) => return results.skipped(why.into()),
        };
        deadline.work().read(bytes.len());
        if memchr::memchr(0, &bytes).is_some() {
            return results.skipped(walk::SkipReason::Binary);
        }
        match search_text(ws, &bytes, &Span::WHOLE, matcher, searcher, &want) {
            Some(hits) => hits,
            None => return results.skipped(walk::SkipReason::Unreadable),
        }
    };
    results.add(ws, rel, hits);
}

/// Which lines of a searched text are answered for, and what file lines
/// they are: the whole file, or the middle of one page of a large file.
pub(super) struct Span {
    /// The text's lines (1-based, inclusive) whose matches count.
    pub(super) answered: std::ops::RangeInclusive<u64>,
    /// The text's first line that is a line of the file (the one before it
    /// can be a PEM block's `BEGIN` line put there for the redactor).
    pub(super) first_real: u64,
    /// The file's number of the text's line `first_real`.
    pub(super) first_file_line: u64,
}

impl Span {
    const WHOLE: Span = Span {
        answered: 1..=u64::MAX,
        first_real: 1,
        first_file_line: 1,
    };

    fn file_line(&self, line: u64) -> Option<u64> {
        line.checked_sub(self.first_real)
            .map(|n| n + self.first_file_line)
    }
}

/// What one search of a text is for.
pub(super) struct Want<'a> {
    /// Context lines on each side of a match.
    pub(super) context: usize,
    /// Matches kept.
    pub(super) max: usize,
    /// The request's work account.
    pub(super) work: &'a crate::work::Account,
}

/// What searching one file gave.
#[derive(Default)]
pub(super) struct FileHits {
    /// Matching lines clear of placeholders.
    pub(super) found: u64,
    /// The first `max` of them.
    pub(super) matches: Vec<SearchMatch>,
    /// What redacting the text replaced (empty when nothing matched).
    pub(super) report: RedactionReport,
    /// The deadline passed before the whole file was searched.
    pub(super) timed_out: bool,
}

/// Search `bytes` for the lines `span` answers for, over the text redacted
/// whole (see the module docs). `None` if the searcher failed.
pub(super) fn search_text(
    ws: &Workspace,
    bytes: &[u8],
    span: &Span,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    want: &Want<'_>,
) -> Option<FileHits> {
    let &Want { context, max, work } = want;
    let redactor = ws.redactor();
    // Redaction is decided on the whole text before the pattern is looked
    // at, whatever the pattern: the work done for a file, and so the time
    // it takes, depends on the file alone, never on whether the pattern
    // matches inside a value a placeholder hides.
    let mut report = RedactionReport::default();
    let text: Cow<'_, [u8]> = if redactor.enabled() {
        match crate::sources::decode(bytes) {
            Cow::Borrowed(shown) => {
                match sources::redact_text(redactor, shown, &mut report, work) {
                    Cow::Borrowed(_) => Cow::Borrowed(bytes),
                    Cow::Owned(redacted) => Cow::Owned(redacted.into_bytes()),
                }
            }
            Cow::Owned(shown) => Cow::Owned(
                sources::redact_text(redactor, &shown, &mut report, work)
                    .into_owned()
                    .into_bytes(),
            ),
        }
    } else {
        Cow::Borrowed(bytes)
    };
    let text: &[u8] = &text;
    let mut sink = Collect {
        lines: Vec::new(),
        found: 0,
        max,
        answered: span.answered.clone(),
        matcher,
        clear_of_placeholders: (report.count() > 0).then_some(matcher),
    };
    work.searched(text.len());
    searcher.search_slice(matcher, text, &mut sink).ok()?;
    let starts = if context > 0 && !sink.lines.is_empty() {
        line_starts(text)
    } else {
        Vec::new()
    };
    let matches = sink
        .lines
        .into_iter()
        .map(|(line, excerpt)| {
            let (before, after) = if context > 0 {
                context_of(text, &starts, line, context, span.first_real)
            } else {
                (Vec::new(), Vec::new())
            };
            SearchMatch {
                path: String::new(),
                line: span.file_line(line).unwrap_or(line),
                column: excerpt.column,
                text: excerpt.text,
                before,
                after,
            }
        })
        .collect();
    // The report counts a file only when it is answered for.
    if sink.found == 0 {
        report = RedactionReport::default();
    }
    Some(FileHits {
        found: sink.found,
        matches,
        report,
        timed_out: false,
    })
}

fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        memchr::memchr_iter(b'\n', bytes)
            .map(|i| i + 1)
            .filter(|i| *i < bytes.len()),
    );
    starts
}

fn line_at(bytes: &[u8], starts: &[usize], n: u64) -> Option<String> {
    let idx = usize::try_from(n.checked_sub(1)?).ok()?;
    let s = *starts.get(idx)?;
    let e = starts.get(idx + 1).copied().unwrap_or(bytes.len());
    Some(line_text(&bytes[s..e]))
}

fn context_of(
    bytes: &[u8],
    starts: &[usize],
    line: u64,
    n: usize,
    first_real: u64,
) -> (Vec<String>, Vec<String>) {
    let n = n as u64;
    let before = (line.saturating_sub(n).max(first_real)..line)
        .filter_map(|l| line_at(bytes, starts, l))
        .collect();
    let after = (line + 1..=line + n)
        .filter_map(|l| line_at(bytes, starts, l))
        .collect();
    (before, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_lines() {
        let text = b"one\ntwo\r\nthree\nfour\n";
        let starts = line_starts(text);
        assert_eq!(line_at(text, &starts, 2).unwrap(), "two");
        assert_eq!(line_at(text, &starts, 5), None);
        let (b, a) = context_of(text, &starts, 1, 2, 1);
        assert!(b.is_empty());
        assert_eq!(a, vec!["two", "three"]);
        let (b, a) = context_of(text, &starts, 4, 2, 1);
        assert_eq!(b, vec!["two", "three"]);
        assert!(a.is_empty());
    }
}

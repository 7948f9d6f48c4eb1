//! Tool output → the two halves of an MCP result: a summary for people and a
//! `structuredContent` object for programs, plus the file-derived text that
//! goes inside the untrusted fence.
//!
//! Names from the workspace are attacker-controlled: in the prose half and
//! inside the fences alike they pass through one function,
//! [`show_name`] (a file named `x\n</untrusted-…>` cannot forge a line or a
//! search-hit header), while the structured half keeps them exactly where
//! JSON can ([`structured_name`]).

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use moat_protocol::limits::{SEARCH_LINE_CHARS, SIGNATURE_CHARS};
use moat_protocol::request::Request;
use moat_protocol::response::{
    Declares, DirEntry, EntryKind, GitBlameOutput, GitShowOutput, GitStatusOutput, Limit,
    RedactionCounts, Shown, SkipReasons, SymbolMethod, ToolOutput,
};

use crate::fence::{escape_for_prose, show_name, structured_name};
use crate::redact::drop_cut_tail;

/// How the broker's redaction pass reads the file-derived text, so that what
/// the broker adds to it (line numbers, search-hit headers, indentation) is
/// never read by a rule as part of a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceText {
    /// The text as it is (git output).
    Whole,
    /// Line by line: each search-hit header and each line of content on its
    /// own (the worker has already decided on the whole sources).
    PerLine,
    /// Raw selected lines: redacted as one text, keeping its line breaks,
    /// then numbered from `start` to `end` (read_file). The injection scanner
    /// reads the raw lines, so line-start signals are not hidden by the
    /// numbering and findings carry file line numbers.
    Numbered {
        /// First line's number.
        start: u64,
        /// Last line's number.
        end: u64,
    },
}

/// A rendered success, before content controls run.
#[derive(Debug)]
pub struct Rendered {
    /// First text block.
    pub summary: String,
    /// `structuredContent` (content controls add `redaction` and, for
    /// file-content tools, `untrusted_content` and `content_assessment`).
    pub structured: Map<String, Value>,
    /// File-derived text for the fence (file-content tools only).
    pub untrusted: Option<String>,
    /// The path of the one file the fenced text comes from (read_file): it
    /// tells the scanner how to read a line (comment, string literal, prose).
    pub scan_path: Option<String>,
    /// How the broker's redaction pass reads `untrusted` before it is fenced.
    pub fence_text: FenceText,
    /// What the worker's redaction of whole sources replaced (added to the
    /// result's redaction report).
    pub worker_redaction: RedactionCounts,
}

pub(crate) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// How a workspace-relative path is shown in prose: `<root>/` for the root.
pub(crate) fn display(rel: &str, root: &str) -> String {
    if rel.is_empty() || rel == "." {
        format!("{root}/")
    } else {
        show_name(rel).into_owned()
    }
}

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The notes for files a walking tool skipped: nothing it met goes
/// uncounted, and the reason is given.
pub(crate) fn skipped_notes(r: &SkipReasons, n: &mut Vec<String>) {
    let content = r.binary + r.too_large + r.hard_link;
    if content > 0 {
        n.push(format!(
            "{} skipped as binary or oversized",
            plural(content, "file", "files")
        ));
    }
    let unexamined = r.path_too_long + r.unreadable + r.vanished + r.name_not_utf8;
    if unexamined > 0 {
        let why: Vec<String> = [
            (r.path_too_long, "path too long"),
            (r.unreadable, "unreadable"),
            (r.vanished, "gone when opened"),
            (r.name_not_utf8, "name not UTF-8"),
        ]
        .iter()
        .filter(|(c, _)| *c > 0)
        .map(|(c, w)| format!("{c} {w}"))
        .collect();
        n.push(format!(
            "{} could not be examined and {} skipped ({})",
            plural(unexamined, "entry", "entries"),
            if unexamined == 1 { "was" } else { "were" },
            why.join(", ")
        ));
    }
}

/// The non-zero skip counts, by reason.
pub(crate) fn skipped_json(r: &SkipReasons) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in [
        ("path_too_long", r.path_too_long),
        ("unreadable", r.unreadable),
        ("vanished", r.vanished),
        ("name_not_utf8", r.name_not_utf8),
        ("binary", r.binary),
        ("too_large", r.too_large),
        ("hard_link", r.hard_link),
    ] {
        if v > 0 {
            m.insert(k.into(), Value::from(v));
        }
    }
    Value::Object(m)
}

/// What each limit in `stopped_by` means for an answer that shows `shown`
/// `items` (e.g. "matches") after examining `scanned` files: which part of
/// the work was not done, and what to ask next.
fn limit_notes(
    stopped_by: &[Limit],
    items: &str,
    (shown, scanned): (u64, u64),
    narrow: &str,
    n: &mut Vec<String>,
) {
    for limit in stopped_by {
        match limit {
            Limit::Files => n.push(format!(
                "incomplete: the walk stopped at the file limit after {}, so files not reached may also have {items}; {narrow}",
                plural(scanned, "file", "files")
            )),
            Limit::Results => n.push(format!(
                "more {items} exist than the {shown} shown; {narrow}"
            )),
            Limit::Bytes => n.push(format!(
                "the answer's size limit stopped it after {shown} {items}, and more may exist; {narrow}"
            )),
            Limit::Entries => n.push(format!("stopped at the entry limit after {shown} {items}")),
            Limit::Lines => n.push(format!("stopped at the line limit after {shown} {items}")),
            Limit::Depth => n.push("directories at the depth limit were not expanded".to_owned()),
            Limit::Commits => n.push(format!("stopped at the commit limit after {shown} {items}")),
            Limit::Time => n.push("stopped at the time budget; what is shown is a lower bound".to_owned()),
        }
    }
}

/// The cursor continuing a paged answer after `position` items: only when
/// what stopped it was the page or the answer budget (a walk cut by its
/// file limit or the clock saw an arbitrary part of the tree, so no
/// position in it is stable) and the position is within the paging reach.
fn page_cursor(request: &Request, stopped_by: &[Limit], position: u64) -> Option<String> {
    let paged = stopped_by
        .iter()
        .any(|l| matches!(l, Limit::Results | Limit::Bytes));
    let unstable = stopped_by
        .iter()
        .any(|l| matches!(l, Limit::Files | Limit::Time));
    (paged && !unstable && position < moat_protocol::limits::MAX_PAGED_ITEMS).then(|| {
        crate::cursor::encode(crate::cursor::Cursor {
            query: crate::tools::query_fingerprint(request),
            position,
        })
    })
}

/// The last line of an answer a cursor continues: the same for every paged
/// tool.
pub(crate) fn cursor_line(tool: &str, cursor: &str) -> String {
    format!("… more: call {tool} again with the same arguments and cursor=\"{cursor}\"")
}

/// The `stopped_by` member: the limits that stopped the work, by their
/// names in the one vocabulary every tool uses (empty: complete).
pub(crate) fn stopped_json(stopped_by: &[Limit]) -> Value {
    Value::Array(stopped_by.iter().map(|l| Value::from(l.as_str())).collect())
}

pub(crate) fn notes(summary: &mut String, notes: &[String]) {
    if notes.is_empty() {
        summary.push('.');
    } else {
        let _ = write!(summary, "; {}.", notes.join("; "));
    }
}

/// About how many bytes of text rendering `out` reads (and the content
/// controls redact and score): what decides whether the work is done where
/// the answer arrived or handed to a thread of its own.
#[must_use]
pub fn work_estimate(out: &ToolOutput) -> usize {
    /// A generous allowance for one listed item's names and fields.
    const ITEM: usize = 256;
    match out {
        ToolOutput::ReadFile(o) => o.text.len(),
        ToolOutput::GitDiff(o) => o.diff.len(),
        ToolOutput::GitShow(o) => match &o.shown {
            Shown::Commit(c) => c.message.len() + c.text.len(),
            Shown::File(f) => f.text.len(),
        },
        ToolOutput::GitStatus(o) => ITEM * (o.staged.len() + o.unstaged.len() + o.untracked.len()),
        ToolOutput::GitBlame(o) => o
            .groups
            .iter()
            .map(|g| ITEM + g.lines.iter().map(String::len).sum::<usize>())
            .sum(),
        ToolOutput::SearchCode(o) => o
            .matches
            .iter()
            .map(|m| {
                ITEM + m.text.len()
                    + m.before
                        .iter()
                        .chain(&m.after)
                        .map(String::len)
                        .sum::<usize>()
            })
            .sum(),
        ToolOutput::FindSymbol(o) => {
            ITEM * (o.definitions.len() + o.unparseable_files.len())
                + o.definitions
                    .iter()
                    .map(|d| d.signature.len())
                    .sum::<usize>()
        }
        ToolOutput::ListDirectory(o) => ITEM * o.entries.len(),
        ToolOutput::GitLog(o) => ITEM * o.commits.len(),
        ToolOutput::FindFiles(o) => ITEM * o.files.len(),
        ToolOutput::DirectoryTree(o) => ITEM * o.entries.len(),
        ToolOutput::FileOutline(o) => o
            .items
            .iter()
            .map(|i| ITEM + i.signature.len())
            .sum::<usize>(),
        ToolOutput::FindReferences(o) => o.references.iter().map(|r| ITEM + r.text.len()).sum(),
        ToolOutput::ProjectOverview(o) => {
            ITEM * (o.languages.len()
                + o.manifests.len()
                + o.entry_points.len()
                + o.largest_files.len())
        }
    }
}

/// Render `out`, the answer to `request`. `root` is the workspace base name.
/// `out` is taken by value so its text moves into the result, not copied.
#[must_use]
pub fn render(request: &Request, mut out: ToolOutput, root: &str) -> Rendered {
    let worker_redaction = match &mut out {
        ToolOutput::ReadFile(o) => std::mem::take(&mut o.redaction),
        ToolOutput::SearchCode(o) => std::mem::take(&mut o.redaction),
        ToolOutput::FindSymbol(o) => std::mem::take(&mut o.redaction),
        ToolOutput::ProjectOverview(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitLog(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitDiff(o) => std::mem::take(&mut o.redaction),
        ToolOutput::FileOutline(o) => std::mem::take(&mut o.redaction),
        ToolOutput::FindReferences(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitShow(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitBlame(o) => std::mem::take(&mut o.redaction),
        ToolOutput::ListDirectory(_)
        | ToolOutput::FindFiles(_)
        | ToolOutput::DirectoryTree(_)
        | ToolOutput::GitStatus(_) => RedactionCounts::default(),
    };
    let scan_path = match &out {
        ToolOutput::ReadFile(o) => Some(o.path.clone()),
        ToolOutput::GitShow(GitShowOutput {
            shown: Shown::File(f),
            ..
        }) => Some(f.path.clone()),
        _ => None,
    };
    Rendered {
        worker_redaction,
        scan_path,
        ..render_output(request, out, root)
    }
}

fn render_output(request: &Request, out: ToolOutput, root: &str) -> Rendered {
    match out {
        ToolOutput::FindFiles(o) => crate::render_nav::find_files(request, o, root),
        ToolOutput::DirectoryTree(o) => crate::render_nav::directory_tree(o, root),
        ToolOutput::FileOutline(o) => crate::render_nav::file_outline(o),
        ToolOutput::FindReferences(o) => crate::render_nav::find_references(request, o, root),
        ToolOutput::ReadFile(o) => {
            let summary = if o.total_lines == 0 {
                format!(
                    "{}: empty file, {} bytes.",
                    show_name(&o.path),
                    o.size_bytes
                )
            } else {
                let mut s = format!(
                    "{}: lines {}-{} of {}{}, {} bytes.",
                    show_name(&o.path),
                    o.start_line,
                    o.end_line,
                    o.total_lines,
                    if o.cut.is_some() { " (truncated)" } else { "" },
                    o.size_bytes
                );
                if o.cut.is_some() {
                    s.push_str(&format!(
                        " More: read_file with start_line={}.",
                        o.end_line + 1
                    ));
                }
                s
            };
            let mut structured = obj(json!({
                "path": structured_name(&o.path), "size_bytes": o.size_bytes, "total_lines": o.total_lines,
                "start_line": o.start_line, "end_line": o.end_line, "truncated": o.cut.is_some(),
                "stopped_by": stopped_json(o.cut.as_slice())
            }));
            if o.cut.is_some() {
                structured.insert("next_start_line".into(), json!(o.end_line + 1));
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(o.text),
                fence_text: FenceText::Numbered {
                    start: o.start_line,
                    end: o.end_line,
                },
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::ListDirectory(o) => {
            let shown = if o.path == "." {
                ".".to_owned()
            } else {
                show_name(&o.path).into_owned()
            };
            let mut summary = format!(
                "{shown}/: {}",
                plural(o.entries.len() as u64, "entry", "entries")
            );
            let mut n = Vec::new();
            if o.hidden_by_denylist > 0 {
                n.push(format!(
                    "{} hidden by the denylist",
                    plural(o.hidden_by_denylist, "entry", "entries")
                ));
            }
            if o.symlinks_skipped > 0 {
                n.push(format!(
                    "{} not followed",
                    plural(o.symlinks_skipped, "symbolic link", "symbolic links")
                ));
            }
            if o.special_skipped > 0 {
                n.push(format!(
                    "{} (pipe, socket or device) skipped",
                    plural(o.special_skipped, "special file", "special files")
                ));
            }
            let skip = match request {
                Request::ListDirectory(a) => a.skip,
                _ => 0,
            };
            let shown = o.entries.len() as u64;
            let range = format!(
                "showing {}-{} of {}",
                skip.saturating_add(1),
                skip.saturating_add(shown),
                o.directories + o.files
            );
            if o.truncated {
                n.push(format!("listing truncated at {shown} entries ({range})"));
            } else if skip > 0 {
                n.push(if shown == 0 {
                    format!("none after the first {skip}")
                } else {
                    range
                });
            }
            notes(&mut summary, &n);
            for e in &o.entries {
                let name = show_name(&e.name);
                match e.kind {
                    EntryKind::Directory => {
                        let _ = write!(summary, "\ndir   {name}");
                    }
                    EntryKind::File => {
                        let _ = write!(summary, "\nfile  {name}  ({} bytes)", e.size_bytes);
                    }
                }
            }
            // The entries are sorted, so a count of those shown is a stable
            // position in the listing.
            let next = o.truncated.then(|| {
                crate::cursor::encode(crate::cursor::Cursor {
                    query: crate::tools::query_fingerprint(request),
                    position: skip.saturating_add(shown),
                })
            });
            if let Some(c) = &next {
                summary.push('\n');
                summary.push_str(&cursor_line("list_directory", c));
            }
            let entries: Vec<Value> = o.entries.into_iter().map(entry_json).collect();
            let mut structured = obj(json!({
                "path": structured_name(&o.path), "entries": entries, "directories": o.directories, "files": o.files,
                "hidden_by_denylist": o.hidden_by_denylist, "symlinks_skipped": o.symlinks_skipped,
                "special_skipped": o.special_skipped, "truncated": o.truncated,
                "stopped_by": stopped_json(if o.truncated { &[Limit::Entries] } else { &[] })
            }));
            if let Some(c) = next {
                structured.insert("next_cursor".into(), Value::from(c));
            }
            Rendered {
                summary,
                structured,
                untrusted: None,
                fence_text: FenceText::Whole,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::SearchCode(o) => {
            let (pattern, regex) = match request {
                Request::SearchCode(a) => (a.pattern.as_str(), a.regex),
                _ => ("", false),
            };
            let count = o.matches.len() as u64;
            let mut summary = format!(
                "{} for {} in {} searched under {}",
                plural(count, "match", "matches"),
                crate::error::quote_pattern(pattern),
                plural(o.files_scanned, "file", "files"),
                display(&o.path, root)
            );
            let mut n = Vec::new();
            limit_notes(
                &o.stopped_by,
                "matches",
                (count, o.files_scanned),
                "narrow it with path or file_glob, or a more specific pattern",
                &mut n,
            );
            skipped_notes(&o.skipped_reasons, &mut n);
            notes(&mut summary, &n);
            let skip = match request {
                Request::SearchCode(a) => a.skip,
                _ => 0,
            };
            let next = page_cursor(request, &o.stopped_by, skip + count);
            if let Some(c) = &next {
                summary.push('\n');
                summary.push_str(&cursor_line("search_code", c));
            }
            let mut body = String::new();
            let mut matches = Vec::with_capacity(o.matches.len());
            // A line the worker cut at its limit may end in part of a
            // credential that redaction can no longer recognise.
            let uncut = |l: &str| drop_cut_tail(l, SEARCH_LINE_CHARS).into_owned();
            for m in &o.matches {
                let (text, before, after) = (
                    uncut(&m.text),
                    m.before.iter().map(|l| uncut(l)).collect::<Vec<_>>(),
                    m.after.iter().map(|l| uncut(l)).collect::<Vec<_>>(),
                );
                if !body.is_empty() {
                    body.push('\n');
                }
                // Each line numbered, the matching one marked `:` and its
                // context `-` (as grep and ripgrep mark them).
                let _ = write!(body, "{}:{}:", show_name(&m.path), m.line);
                let first = m.line.saturating_sub(before.len() as u64);
                let width = (m.line + after.len() as u64).to_string().len();
                let lines = before.iter().chain(std::iter::once(&text)).chain(&after);
                for (number, l) in (first..).zip(lines) {
                    let mark = if number == m.line { ':' } else { '-' };
                    let _ = write!(body, "\n  {number:>width$}{mark}");
                    if !l.is_empty() {
                        let _ = write!(body, " {l}");
                    }
                }
                matches.push(json!({"path": structured_name(&m.path), "line": m.line, "text": text, "before": before, "after": after}));
            }
            let mut structured = obj(json!({
                "pattern": pattern, "regex": regex, "path": structured_name(&o.path), "matches": matches,
                "match_count": count, "files_scanned": o.files_scanned, "files_skipped": o.files_skipped,
                "skipped_reasons": skipped_json(&o.skipped_reasons),
                "truncated": o.truncated, "timed_out": o.timed_out, "stopped_by": stopped_json(&o.stopped_by)
            }));
            if let Some(c) = next {
                structured.insert("next_cursor".into(), Value::from(c));
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(body),
                fence_text: FenceText::PerLine,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::FindSymbol(o) => {
            let (symbol, exact, kind) = match request {
                Request::FindSymbol(a) => (
                    a.symbol.trim(),
                    a.exact,
                    a.kind.map_or("any", |k| k.as_str()),
                ),
                _ => ("", true, "any"),
            };
            let parsed = o
                .definitions
                .iter()
                .filter(|d| d.method == SymbolMethod::Parsed)
                .count() as u64;
            let pattern = o.definitions.len() as u64 - parsed;
            let files: std::collections::BTreeSet<&str> =
                o.definitions.iter().map(|d| d.path.as_str()).collect();
            let mut summary = format!(
                "{} of {} across {}; {parsed} from parsing, {pattern} from patterns",
                plural(o.definitions.len() as u64, "definition", "definitions"),
                crate::error::quote(symbol),
                plural(files.len() as u64, "file", "files"),
            );
            let mut n = Vec::new();
            if !o.unparseable_files.is_empty() {
                n.push(format!(
                    "{} did not parse and fell back to patterns",
                    plural(o.unparseable_files.len() as u64, "file", "files")
                ));
            }
            limit_notes(
                &o.stopped_by,
                "definitions",
                (o.definitions.len() as u64, o.files_scanned),
                "narrow it with path, kind or exact=true",
                &mut n,
            );
            if !o.other_kinds.is_empty() {
                let others: Vec<String> = o
                    .other_kinds
                    .iter()
                    .map(|(k, c)| format!("{} ({c})", k.as_str()))
                    .collect();
                n.push(format!(
                    "no {kind} has this name, but these kinds do: {}; call find_symbol again without kind, or with one of them",
                    others.join(", ")
                ));
            }
            skipped_notes(&o.skipped_reasons, &mut n);
            notes(&mut summary, &n);
            let skip = match request {
                Request::FindSymbol(a) => a.skip,
                _ => 0,
            };
            let next = page_cursor(request, &o.stopped_by, skip + o.definitions.len() as u64);
            if let Some(c) = &next {
                summary.push('\n');
                summary.push_str(&cursor_line("find_symbol", c));
            }
            let mut body = String::new();
            let mut defs = Vec::with_capacity(o.definitions.len());
            for d in &o.definitions {
                let signature = drop_cut_tail(&d.signature, SIGNATURE_CHARS);
                if !body.is_empty() {
                    body.push('\n');
                }
                let method = method_str(d.method);
                let language_kind = if d.language_kind.is_empty() {
                    d.kind.as_str()
                } else {
                    d.language_kind.as_str()
                };
                let _ = write!(
                    body,
                    "{}:{}  [{language_kind}, {method}]  {}",
                    show_name(&d.path),
                    d.line,
                    signature
                );
                defs.push(json!({
                    "name": d.name, "qualified_name": d.qualified_name, "kind": d.kind.as_str(),
                    "language_kind": language_kind,
                    "line": d.line, "signature": signature, "path": structured_name(&d.path), "language": d.language,
                    "method": method
                }));
            }
            let mut structured = obj(json!({
                "symbol": symbol, "exact": exact, "kind": kind, "definitions": defs,
                "definition_count": o.definitions.len(), "parsed_count": parsed, "pattern_count": pattern,
                "unparseable_files": o.unparseable_files.iter().map(|f| structured_name(f)).collect::<Vec<_>>(), "files_scanned": o.files_scanned,
                "files_skipped": o.files_skipped, "skipped_reasons": skipped_json(&o.skipped_reasons),
                "truncated": o.truncated, "timed_out": o.timed_out, "stopped_by": stopped_json(&o.stopped_by)
            }));
            if !o.other_kinds.is_empty() {
                let others: serde_json::Map<String, Value> = o
                    .other_kinds
                    .iter()
                    .map(|(k, c)| (k.as_str().to_owned(), Value::from(*c)))
                    .collect();
                structured.insert("other_kinds".into(), Value::Object(others));
            }
            if let Some(c) = next {
                structured.insert("next_cursor".into(), Value::from(c));
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(body),
                fence_text: FenceText::PerLine,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::ProjectOverview(o) => {
            let mut summary = format!(
                "{}, {} bytes under {}\nVersion control: {}.",
                plural(o.total_files, "file", "files"),
                o.total_bytes,
                display(&o.path, root),
                o.version_control
            );
            if !o.languages.is_empty() {
                let langs: Vec<String> = o
                    .languages
                    .iter()
                    .take(8)
                    .map(|l| {
                        format!(
                            "{} ({}, {})",
                            l.language,
                            plural(l.files, "file", "files"),
                            plural(l.lines, "line", "lines")
                        )
                    })
                    .collect();
                let _ = write!(summary, "\nLanguages: {}.", langs.join(", "));
            }
            if !o.manifests.is_empty() {
                let names: Vec<String> = o
                    .manifests
                    .iter()
                    .map(|m| show_name(&m.file).into_owned())
                    .collect();
                let _ = write!(summary, "\nManifests: {}.", names.join(", "));
            }
            if !o.entry_points.is_empty() {
                let eps: Vec<String> = o
                    .entry_points
                    .iter()
                    .take(10)
                    .map(|e| show_name(e).into_owned())
                    .collect();
                let _ = write!(summary, "\nEntry points: {}.", eps.join(", "));
            }
            let _ = write!(summary, "\nTest files: {}.", o.test_files);
            if o.stopped_by.contains(&Limit::Files) {
                let _ = write!(
                    summary,
                    "\nIncomplete: the walk stopped at the file limit after {}; every count is a lower bound. Survey a subdirectory with path for exact counts.",
                    plural(o.total_files, "file", "files")
                );
            }
            if o.timed_out {
                summary.push_str(
                    "\nThe walk stopped at the time budget; the counts are a lower bound.",
                );
            }
            let manifests: Vec<Value> = o
                .manifests
                .iter()
                .map(|m| match &m.declares {
                    Some(d) => {
                        json!({"file": structured_name(&m.file), "declares": declares_json(d)})
                    }
                    None => json!({"file": structured_name(&m.file)}),
                })
                .collect();
            Rendered {
                summary,
                structured: obj(json!({
                    "path": structured_name(&o.path), "total_files": o.total_files, "total_bytes": o.total_bytes,
                    "languages": o.languages.iter().map(|l| json!({"language": l.language, "files": l.files, "lines": l.lines, "bytes": l.bytes})).collect::<Vec<_>>(),
                    "manifests": manifests, "entry_points": o.entry_points.iter().map(|e| structured_name(e)).collect::<Vec<_>>(), "test_files": o.test_files,
                    "largest_files": o.largest_files.iter().map(|f| json!({"path": structured_name(&f.path), "size_bytes": f.size_bytes})).collect::<Vec<_>>(),
                    "version_control": o.version_control, "timed_out": o.timed_out,
                    "truncated": !o.stopped_by.is_empty(), "stopped_by": stopped_json(&o.stopped_by)
                })),
                untrusted: None,
                fence_text: FenceText::Whole,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::GitLog(o) => {
            let n = o.commits.len() as u64;
            let mut summary = plural(n, "commit", "commits");
            if !o.path.is_empty() {
                let _ = write!(summary, " for {}", escape_for_prose(&o.path));
            }
            summary.push('.');
            let skip = match request {
                Request::GitLog(a) => a.skip,
                _ => 0,
            };
            let next = page_cursor(request, &o.stopped_by, skip + n);
            if o.stopped_by.contains(&Limit::Results) {
                let _ = write!(
                    summary,
                    " Older commits exist past the {n} shown (the commit limit)."
                );
            } else if o.stopped_by.contains(&Limit::Bytes) {
                let _ = write!(summary, " The answer's size limit stopped it after {n}.");
            }
            match &next {
                Some(c) => {
                    summary.push('\n');
                    summary.push_str(&cursor_line("git_log", c));
                }
                None if o.truncated => {
                    summary.push_str(" Narrow it with revision or path to see older commits.");
                }
                None => {}
            }
            let body: Vec<String> = o
                .commits
                .iter()
                .map(|c| {
                    let date: String = c.authored_at.chars().take(10).collect();
                    // Parsed fields, escaped like file names: no author or
                    // subject can start a line of its own.
                    format!(
                        "{}  {date}  {}  {}",
                        c.short,
                        escape_for_prose(&c.author),
                        escape_for_prose(&c.subject)
                    )
                })
                .collect();
            let mut structured = obj(json!({
                "commits": o.commits.iter().map(|c| json!({"commit": c.commit, "short": c.short, "author": c.author, "authored_at": c.authored_at, "subject": c.subject})).collect::<Vec<_>>(),
                "commit_count": n, "path": o.path, "truncated": o.truncated, "stopped_by": stopped_json(&o.stopped_by)
            }));
            if let Some(c) = next {
                structured.insert("next_cursor".into(), Value::from(c));
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(body.join("\n")),
                fence_text: FenceText::Whole,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::GitDiff(o) => {
            let for_path = if o.path.is_empty() {
                String::new()
            } else {
                format!(" for {}", escape_for_prose(&o.path))
            };
            let mut summary = if o.diff.trim().is_empty() {
                format!("No changes{for_path}.")
            } else {
                format!(
                    "{} changed{for_path}: +{} -{}.",
                    plural(o.files_changed, "file", "files"),
                    o.lines_added,
                    o.lines_removed
                )
            };
            if o.truncated {
                match &o.next_path {
                    Some(next) => {
                        let _ = write!(
                            summary,
                            " The answer's size limit cut the diff at {}; the totals count every file. More: git_diff with path={} (or stat_only=true for the whole summary).",
                            escape_for_prose(next),
                            escape_for_prose(next)
                        );
                    }
                    None => summary.push_str(" Cut at the answer's size limit."),
                }
            }
            if o.withheld_by_denylist > 0 {
                let _ = write!(
                    summary,
                    " {} withheld: the denylist covers {}.",
                    plural(o.withheld_by_denylist, "file", "files"),
                    if o.withheld_by_denylist == 1 {
                        "it"
                    } else {
                        "them"
                    }
                );
            }
            if o.withheld_unreadable > 0 {
                let _ = write!(
                    summary,
                    " {} not read (see the notices).",
                    plural(o.withheld_unreadable, "work-tree file", "work-tree files"),
                );
            }
            let mut structured = obj(json!({
                    "files_changed": o.files_changed, "lines_added": o.lines_added, "lines_removed": o.lines_removed,
                    "path": o.path, "staged": o.staged, "stat_only": o.stat_only, "truncated": o.truncated,
                    "withheld_by_denylist": o.withheld_by_denylist, "withheld_unreadable": o.withheld_unreadable,
                    "stopped_by": stopped_json(&o.stopped_by)
            }));
            if let Some(next) = &o.next_path {
                structured.insert(
                    "next_path".into(),
                    Value::from(structured_name(next).into_owned()),
                );
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(o.diff.clone()),
                fence_text: FenceText::Whole,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        ToolOutput::GitShow(o) => render_git_show(o),
        ToolOutput::GitBlame(o) => render_git_blame(o),
        ToolOutput::GitStatus(o) => render_git_status(request, o),
    }
}

fn render_git_status(request: &Request, o: GitStatusOutput) -> Rendered {
    let mut summary = match (&o.branch, &o.head) {
        (Some(b), None) => format!("On branch {}, no commits yet.", show_name(b)),
        (Some(b), Some(_)) => format!("On branch {}.", show_name(b)),
        (None, Some(h)) => format!(
            "HEAD detached at {}.",
            h.chars().take(12).collect::<String>()
        ),
        (None, None) => "HEAD names no commit.".to_owned(),
    };
    if let Some(u) = &o.upstream {
        match (u.ahead, u.behind) {
            (Some(a), Some(b)) => {
                let _ = write!(
                    summary,
                    " Upstream {}: ahead {a}, behind {b}.",
                    show_name(&u.name)
                );
            }
            _ => {
                let _ = write!(
                    summary,
                    " Upstream {}: ahead and behind not counted (no local ref, or history too long).",
                    show_name(&u.name)
                );
            }
        }
    }
    let section = |summary: &mut String,
                   title: &str,
                   list: &[moat_protocol::response::StatusEntry],
                   total: u64| {
        if total == 0 {
            return;
        }
        let _ = write!(summary, "\n{title} ({total}):");
        for e in list {
            let _ = write!(summary, "\n  {}  {}", e.status, show_name(&e.path));
        }
        if (list.len() as u64) < total {
            let _ = write!(summary, "\n  … {} more", total - list.len() as u64);
        }
    };
    section(&mut summary, "Staged", &o.staged, o.staged_count);
    section(&mut summary, "Not staged", &o.unstaged, o.unstaged_count);
    section(&mut summary, "Untracked", &o.untracked, o.untracked_count);
    if o.staged_count + o.unstaged_count + o.untracked_count == 0 && o.truncation.is_none() {
        summary.push_str("\nNothing to commit, working tree clean.");
    }
    if o.withheld_by_denylist > 0 {
        let _ = write!(
            summary,
            "\n{} withheld: the denylist covers {}.",
            plural(o.withheld_by_denylist, "path", "paths"),
            if o.withheld_by_denylist == 1 {
                "it"
            } else {
                "them"
            }
        );
    }
    let asked = match request {
        Request::GitStatus(a) => a.max_entries,
        _ => 0,
    };
    match o.truncation {
        Some(Limit::Entries) => {
            let total = o.staged_count + o.unstaged_count + o.untracked_count;
            let _ = write!(
                summary,
                "\nListed {asked} of {total} paths (the entry limit)."
            );
            let cap = u64::from(o.entry_cap);
            let next = if u64::from(asked) < total.min(cap) {
                continue_with("git_status", &json!({"max_entries": total.min(cap)}))
            } else {
                continue_with("git_diff", &json!({"stat_only": true}))
            };
            let _ = write!(summary, "\n{next}");
        }
        Some(t @ (Limit::Files | Limit::Time)) => {
            let _ = write!(
                summary,
                "\nThe status stopped at {} before every path was looked at; the lists are incomplete.\n{}",
                if t == Limit::Files {
                    "the work-tree walk's entry limit"
                } else {
                    "the time budget"
                },
                continue_with("git_status", &json!({"untracked": false}))
            );
        }
        _ => {}
    }
    let list = |v: &[moat_protocol::response::StatusEntry]| -> Vec<Value> {
        v.iter()
            .map(|e| json!({"path": structured_name(&e.path), "status": e.status.to_string()}))
            .collect()
    };
    let mut structured = obj(json!({
        "branch": o.branch.clone().unwrap_or_default(), "detached": o.branch.is_none(),
        "head": o.head.clone().unwrap_or_default(),
        "upstream": o.upstream.as_ref().map_or(String::new(), |u| u.name.clone()),
        "staged": list(&o.staged), "unstaged": list(&o.unstaged), "untracked": list(&o.untracked),
        "staged_count": o.staged_count, "unstaged_count": o.unstaged_count,
        "untracked_count": o.untracked_count, "withheld_by_denylist": o.withheld_by_denylist,
        "truncated": o.truncation.is_some(), "stopped_by": stopped_json(o.truncation.as_slice())
    }));
    if let Some(u) = &o.upstream
        && let (Some(a), Some(b)) = (u.ahead, u.behind)
    {
        structured.insert("ahead".into(), json!(a));
        structured.insert("behind".into(), json!(b));
    }
    Rendered {
        summary,
        structured,
        untrusted: None,
        fence_text: FenceText::Whole,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

fn render_git_blame(o: GitBlameOutput) -> Rendered {
    let short: String = o.revision.chars().take(12).collect();
    let mut commits: Vec<&str> = o.groups.iter().map(|g| g.commit.commit.as_str()).collect();
    commits.sort_unstable();
    commits.dedup();
    let mut summary = if o.total_lines == 0 {
        format!("Blame of {} at {short}: empty file.", show_name(&o.path))
    } else {
        format!(
            "Blame of {} at {short}: lines {}-{} of {}, {} from {} ({} walked).",
            show_name(&o.path),
            o.start_line,
            o.end_line,
            o.total_lines,
            plural(o.groups.len() as u64, "group", "groups"),
            plural(commits.len() as u64, "commit", "commits"),
            o.commits_walked
        )
    };
    match o.truncation {
        Some(Limit::Lines) => {
            let _ = write!(
                summary,
                " Cut at the {}-line limit.\n{}",
                moat_protocol::limits::MAX_BLAME_LINES,
                continue_with(
                    "git_blame",
                    &json!({"path": show_name(&o.path), "revision": o.revision, "start_line": o.end_line + 1})
                )
            );
        }
        Some(t @ (Limit::Commits | Limit::Time)) => {
            let why = if t == Limit::Commits {
                format!(
                    "the {}-commit limit",
                    moat_protocol::limits::MAX_BLAME_COMMITS
                )
            } else {
                "the time budget".to_owned()
            };
            let _ = write!(
                summary,
                " The walk stopped at {why} before every line was attributed: groups marked boundary are given to the oldest commit reached and are that old or older."
            );
            if let Some(g) = o.groups.iter().find(|g| g.boundary) {
                let _ = write!(
                    summary,
                    "\n{}",
                    continue_with(
                        "git_blame",
                        &json!({
                            "path": show_name(&o.path), "revision": g.commit.commit,
                            "start_line": g.source_line,
                            "end_line": g.source_line + (g.end_line - g.start_line)
                        })
                    )
                );
            }
        }
        _ => {}
    }
    let width = o.end_line.to_string().len();
    let mut body = String::new();
    let mut groups = Vec::with_capacity(o.groups.len());
    for g in &o.groups {
        if !body.is_empty() {
            body.push('\n');
        }
        let date: String = g.commit.authored_at.chars().take(10).collect();
        // Parsed fields, escaped: no author or subject can start a line;
        // every line of content is numbered.
        let _ = write!(
            body,
            "{} {date} {} lines {}-{}{}: {}",
            g.commit.short,
            escape_for_prose(&g.commit.author),
            g.start_line,
            g.end_line,
            if g.boundary { " (boundary)" } else { "" },
            escape_for_prose(&g.commit.subject)
        );
        for (i, line) in g.lines.iter().enumerate() {
            let _ = write!(body, "\n{:>width$}  {line}", g.start_line + i as u64);
        }
        groups.push(json!({
            "commit": g.commit.commit, "short": g.commit.short, "author": g.commit.author,
            "authored_at": g.commit.authored_at, "subject": g.commit.subject,
            "start_line": g.start_line, "end_line": g.end_line, "source_line": g.source_line,
            "boundary": g.boundary, "lines": g.lines
        }));
    }
    Rendered {
        summary,
        structured: obj(json!({
            "path": structured_name(&o.path), "revision": o.revision, "total_lines": o.total_lines,
            "start_line": o.start_line, "end_line": o.end_line, "groups": groups,
            "group_count": o.groups.len(), "commits_walked": o.commits_walked,
            "truncated": o.truncation.is_some(), "stopped_by": stopped_json(o.truncation.as_slice())
        })),
        untrusted: Some(body),
        fence_text: FenceText::PerLine,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// The last line of an answer a limit cut: the call that continues it,
/// with its arguments as JSON.
fn continue_with(tool: &str, args: &Value) -> String {
    format!("To continue, call {tool} with {args}.")
}

fn render_git_show(o: GitShowOutput) -> Rendered {
    let c = &o.commit;
    let mut structured = obj(json!({
        "commit": c.commit, "short": c.short, "author": c.author, "authored_at": c.authored_at,
        "subject": c.subject, "parents": o.parents,
        "truncated": o.truncation.is_some(), "stopped_by": stopped_json(o.truncation.as_slice())
    }));
    match o.shown {
        Shown::File(f) => {
            let mut summary = if f.total_lines == 0 {
                format!(
                    "{} at {}: empty file, {} bytes.",
                    show_name(&f.path),
                    c.short,
                    f.size_bytes
                )
            } else {
                format!(
                    "{} at {}: lines {}-{} of {}, {} bytes.",
                    show_name(&f.path),
                    c.short,
                    f.start_line,
                    f.end_line,
                    f.total_lines,
                    f.size_bytes
                )
            };
            if o.truncation.is_some() {
                let _ = write!(
                    summary,
                    " Cut at the {}-line limit.\n{}",
                    f.end_line - f.start_line + 1,
                    continue_with(
                        "git_show",
                        &json!({"revision": c.commit, "path": show_name(&f.path), "start_line": f.end_line + 1})
                    )
                );
            }
            for (k, v) in [
                ("kind", json!("file")),
                ("path", json!(structured_name(&f.path))),
                ("size_bytes", json!(f.size_bytes)),
                ("total_lines", json!(f.total_lines)),
                ("start_line", json!(f.start_line)),
                ("end_line", json!(f.end_line)),
            ] {
                structured.insert(k.into(), v);
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(f.text),
                fence_text: FenceText::Numbered {
                    start: f.start_line,
                    end: f.end_line,
                },
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
        Shown::Commit(s) => {
            let mut summary = format!(
                "Commit {}: {} changed, +{} -{}.",
                c.short,
                plural(s.files_changed, "file", "files"),
                s.lines_added,
                s.lines_removed
            );
            if s.withheld_by_denylist > 0 {
                let _ = write!(
                    summary,
                    " {} withheld: the denylist covers {}.",
                    plural(s.withheld_by_denylist, "file", "files"),
                    if s.withheld_by_denylist == 1 {
                        "it"
                    } else {
                        "them"
                    }
                );
            }
            if let (Some(_), Some(next)) = (o.truncation, &s.next_not_shown) {
                let next = show_name(next);
                let (tool, args) = match o.parents.first() {
                    Some(p) => (
                        "git_diff",
                        json!({"revision": format!("{p}..{}", c.commit), "path": next}),
                    ),
                    None => ("git_show", json!({"revision": c.commit, "path": next})),
                };
                let _ = write!(
                    summary,
                    " Output cut at the {}-byte limit: {} not shown or cut short, from {next} on{}.\n{}",
                    moat_protocol::limits::GIT_OUTPUT_BYTES,
                    plural(s.files_not_shown, "file", "files"),
                    if s.stat_only {
                        ""
                    } else {
                        " (the stat lists every changed file)"
                    },
                    continue_with(tool, &args)
                );
            }
            // The header lines are the commit's parsed fields, escaped so
            // that no author can start a line of its own; the message is
            // indented, each line escaped, so no line of it can pass for a
            // header or a diff line.
            let mut body = format!("commit {}\n", c.commit);
            if o.parents.len() > 1 {
                let shorts: Vec<String> = o
                    .parents
                    .iter()
                    .map(|p| p.chars().take(12).collect())
                    .collect();
                let _ = writeln!(body, "Merge: {}", shorts.join(" "));
            }
            let _ = writeln!(body, "Author: {}", escape_for_prose(&c.author));
            let _ = writeln!(body, "Date:   {}\n", c.authored_at);
            for line in s.message.trim_end().lines() {
                if line.is_empty() {
                    body.push('\n');
                } else {
                    let _ = writeln!(body, "    {}", escape_for_prose(line));
                }
            }
            if !s.text.is_empty() {
                body.push('\n');
                body.push_str(&s.text);
            }
            for (k, v) in [
                ("kind", json!("commit")),
                ("message", json!(s.message)),
                ("stat_only", json!(s.stat_only)),
                ("files_changed", json!(s.files_changed)),
                ("lines_added", json!(s.lines_added)),
                ("lines_removed", json!(s.lines_removed)),
                ("withheld_by_denylist", json!(s.withheld_by_denylist)),
                ("files_not_shown", json!(s.files_not_shown)),
            ] {
                structured.insert(k.into(), v);
            }
            Rendered {
                summary,
                structured,
                untrusted: Some(body),
                fence_text: FenceText::Whole,
                worker_redaction: RedactionCounts::default(),
                scan_path: None,
            }
        }
    }
}

pub(crate) fn method_str(m: SymbolMethod) -> &'static str {
    match m {
        SymbolMethod::Parsed => "parsed",
        SymbolMethod::Pattern => "pattern",
    }
}

/// One listed entry, without what every entry would repeat: its path is the
/// listing's `path` joined with its name, only files have a size, and
/// `walked_by_search` appears only on the directories searches skip.
fn entry_json(e: DirEntry) -> Value {
    let mut m = Map::new();
    m.insert(
        "name".into(),
        Value::from(structured_name(&e.name).into_owned()),
    );
    let kind = match e.kind {
        EntryKind::Directory => "directory",
        EntryKind::File => "file",
    };
    m.insert("type".into(), Value::from(kind));
    if e.kind == EntryKind::File {
        m.insert("size_bytes".into(), Value::from(e.size_bytes));
    }
    if e.walked_by_search == Some(false) {
        m.insert("walked_by_search".into(), Value::Bool(false));
    }
    Value::Object(m)
}

fn declares_json(d: &Declares) -> Value {
    match d {
        Declares::Pyproject {
            name,
            version,
            requires_python,
            dependencies,
        } => {
            json!({"name": name, "version": version, "requires_python": requires_python, "dependencies": dependencies})
        }
        Declares::PackageJson {
            name,
            version,
            dependencies,
            scripts,
        } => {
            json!({"name": name, "version": version, "dependencies": dependencies, "scripts": scripts})
        }
        Declares::Cargo {
            name,
            version,
            dependencies,
        } => {
            json!({"name": name, "version": version, "dependencies": dependencies})
        }
        Declares::GoMod {
            name,
            go_version,
            dependencies,
        } => {
            json!({"name": name, "go_version": go_version, "dependencies": dependencies})
        }
        Declares::ParseError(e) => json!({"parse_error": e}),
    }
}

/// Number `text`'s lines from `start`: the number right-aligned to the width
/// of `end`, two spaces, the line. Lines are split on `\n` only (the worker
/// has already applied the line rule).
#[must_use]
pub fn number_lines(text: &str, start: u64, end: u64) -> String {
    if end == 0 {
        return String::new();
    }
    let width = decimal_digits(end);
    let lines = end.saturating_sub(start).saturating_add(1);
    let extra = usize::try_from(lines.saturating_mul(width as u64 + 2)).unwrap_or(0);
    let mut out = String::with_capacity(text.len().saturating_add(extra));
    let mut rest = text;
    let mut n = start;
    loop {
        push_right_aligned(&mut out, n, width);
        out.push_str("  ");
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => {
                out.push_str(&rest[..=i]);
                rest = &rest[i + 1..];
                n += 1;
            }
            None => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

fn decimal_digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// `n` in decimal, padded on the left with spaces to `width`.
fn push_right_aligned(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - at;
    for _ in len..width {
        out.push(' ');
    }
    for d in &digits[at..] {
        out.push(char::from(*d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering() {
        assert_eq!(number_lines("a\nb", 9, 10), " 9  a\n10  b");
        assert_eq!(number_lines("x", 1, 1), "1  x");
        assert_eq!(number_lines("", 0, 0), "");
        assert_eq!(
            number_lines("a\n\nb\n", 98, 101),
            " 98  a\n 99  \n100  b\n101  "
        );
        assert_eq!(number_lines("é", 7, 1234), "   7  é");
        // The same as the obvious formatting, for any range and text.
        let text = "x\n\ny\u{2028}z\n\r\n";
        for (start, end) in [(1, 6), (9, 14), (99_995, 100_000), (1, 1_000_000)] {
            let width = end.to_string().len();
            let expected: Vec<String> = text
                .split('\n')
                .enumerate()
                .map(|(i, l)| format!("{:>width$}  {l}", start + i as u64))
                .collect();
            assert_eq!(number_lines(text, start, end), expected.join("\n"));
        }
    }
}

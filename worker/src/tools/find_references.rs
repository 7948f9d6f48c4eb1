//! `find_references`: where an identifier is used.
//!
//! * Whole-word, case-sensitive matches of the identifier (letters, digits
//!   and `_`, not starting with a digit; re-checked here).
//! * The walk is `search_code`'s (`.gitignore`, skip list, denylist, no
//!   symbolic link, special files never opened, hard links and oversized or
//!   binary files skipped and counted), and so is the reader.
//! * In a language with a parser (`find_symbol`'s tree-sitter grammars), an
//!   occurrence inside a string literal or a comment is not a reference; a
//!   file of another language, or one that does not parse cleanly, is
//!   matched as text and counted in `text_files`.
//! * Sorted by path, line and column over the whole walk, so the pages of
//!   one query neither repeat nor skip; a walk cut by the file cap or the
//!   deadline is reported with that cut and offers no further page.
//! * Each reference shows its line; a line over 400 characters is cut to an
//!   excerpt centred on the reference, `…` on each cut side.
//!
//! # Redaction, and why this is no oracle
//!
//! As in `search_code`: every file is redacted whole before the identifier
//! is looked for, and searched once, in its redacted form; only matches that
//! neither overlap nor touch a `[redacted:…]` placeholder are kept, and the
//! parser reads the redacted text. Everything the answer says about a file
//! (its references, their count, whether it was parsed, its redaction
//! report) is a function of the redacted text alone, so an identifier equal
//! to a hidden value finds nothing, exactly as an identifier that occurs
//! nowhere; and the work done for a file (read, redacted, searched, parsed
//! when a reference is clear of every placeholder) depends on the redacted
//! text and the request alone, so its time tells nothing either.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;

use moat_protocol::limits::{MAX_SYMBOL_CHARS, SEARCH_LINE_CHARS};
use moat_protocol::request::FindReferencesArgs;
use moat_protocol::response::{FindReferencesOutput, Limit, Reference, SkipReasons, ToolOutput};
use moat_protocol::wire_error::{BadPattern, Missing, WireError};
use regex::Regex;

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::containment;
use crate::fs::open::{self, Kind};
use crate::redact::RedactionReport;
use crate::sources;
use crate::symbols::{self, Language};
use crate::tools::search_code::build_globs;
use crate::walk;

/// Whether `s` is an identifier this tool accepts.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= MAX_SYMBOL_CHARS
}

#[derive(Default)]
struct Acc {
    /// (line, column) of each reference, per file; only the files that can
    /// hold one of the first `need` references (in path order) are kept.
    /// Keyed by (the path as answers show it, the raw path).
    files: BTreeMap<(String, String), Vec<(u64, u64)>>,
    kept: u64,
    total: u64,
    scanned: u64,
    parsed: u64,
    text: u64,
    skipped: SkipReasons,
    report: RedactionReport,
    timed_out: bool,
}

/// The redacted text of a walked file, or why it was skipped.
fn read_text(ws: &Workspace, rel: &str) -> Result<String, walk::SkipReason> {
    let bytes =
        open::read_for_scan(ws, rel, ws.limits().max_file_bytes).map_err(walk::SkipReason::from)?;
    if memchr::memchr(0, &bytes).is_some() {
        return Err(walk::SkipReason::Binary);
    }
    // Valid UTF-8 (nearly every source file) is taken as is, without the
    // lossy decoder's walk or a copy.
    Ok(String::from_utf8(bytes).unwrap_or_else(|e| sources::decode(e.as_bytes()).into_owned()))
}

/// The matches in `text` that neither overlap nor touch a placeholder.
fn clear_matches(re: &Regex, text: &str) -> Vec<Range<usize>> {
    let holes: Vec<Range<usize>> = sources::placeholders(text).collect();
    re.find_iter(text)
        .map(|m| m.range())
        .filter(|m| !holes.iter().any(|p| m.start <= p.end && p.start <= m.end))
        .collect()
}

/// (line, column) of each byte offset in `text`, both 1-based, the column
/// in characters. Lines end at `\n`.
fn positions(text: &str, ranges: &[Range<usize>]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut line = 1u64;
    let mut line_start = 0usize;
    let mut at = 0usize;
    for r in ranges {
        for i in memchr::memchr_iter(b'\n', &text.as_bytes()[at..r.start]) {
            line += 1;
            line_start = at + i + 1;
        }
        at = r.start;
        let column = text
            .get(line_start..r.start)
            .map_or(0, |s| s.chars().count() as u64)
            + 1;
        out.push((line, column));
    }
    out
}

/// Run `find_references`.
pub fn run(
    ws: &Workspace,
    args: &FindReferencesArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let ident = args.identifier.trim();
    if ident.is_empty() {
        return Err(WireError::NotFound(Missing::EmptySymbol));
    }
    if !is_identifier(ident) {
        return Err(WireError::BadPattern(BadPattern::Invalid(
            "the identifier must be letters, digits and _, not starting with a digit".into(),
        )));
    }
    let re = Regex::new(&format!(r"\b{}\b", regex::escape(ident)))
        .map_err(|_| WireError::BadPattern(BadPattern::TooComplex))?;
    let start = containment::resolve(ws, &args.path)?;
    let meta = open::stat(ws, &start).map_err(|_| WireError::NotFound(Missing::Path))?;
    let globs = build_globs(&args.file_globs)?;
    let page = args.max_results.clamp(1, ws.limits().max_search_results) as usize;
    let need = args.skip.saturating_add(page as u64);
    let acc = Mutex::new(Acc::default());
    let visit = |rel: &str| -> bool {
        if deadline.expired() {
            if let Ok(mut a) = acc.lock() {
                a.timed_out = true;
            }
            return false;
        }
        let raw = match read_text(ws, rel) {
            Ok(t) => t,
            Err(why) => {
                if let Ok(mut a) = acc.lock() {
                    why.count(&mut a.skipped);
                }
                return true;
            }
        };
        let mut report = RedactionReport::default();
        let mut found: Vec<(u64, u64)> = Vec::new();
        let mut parsed = false;
        deadline.work().read(raw.len());
        let text = sources::redact_text(ws.redactor(), &raw, &mut report, deadline.work());
        deadline.work().searched(text.len());
        if re.is_match(&text) {
            let mut hits = clear_matches(&re, &text);
            if !hits.is_empty()
                && let Some(lang) = Language::from_path(rel)
                && let Some(code) =
                    symbols::code_ranges(lang, rel, &text, &hits, Some(deadline.instant()))
            {
                parsed = true;
                let mut keep = code.into_iter();
                hits.retain(|_| keep.next().unwrap_or(true));
            }
            found = positions(&text, &hits);
        }
        let Ok(mut a) = acc.lock() else { return false };
        a.scanned += 1;
        if found.is_empty() {
            // Neither the report nor the parse of a file without references
            // shows: whether the raw text matched must not show through.
            return true;
        }
        if parsed {
            a.parsed += 1;
        } else {
            a.text += 1;
        }
        a.report.merge(&report);
        a.total += found.len() as u64;
        a.kept += found.len() as u64;
        a.files
            .insert((ws.shown(rel).into_owned(), rel.to_owned()), found);
        // Drop the last files (in path order) that cannot hold one of the
        // first `need` references.
        while let Some(last) = a.files.last_key_value().map(|(_, v)| v.len() as u64) {
            if a.kept - last < need {
                break;
            }
            a.files.pop_last();
            a.kept -= last;
        }
        true
    };
    let mut summary = walk::Summary::default();
    match meta.kind {
        Kind::File => {
            summary.files = 1;
            let _ = visit(start.rel());
        }
        Kind::Directory => {
            let opts = walk::Options {
                respect_gitignore: args.respect_gitignore,
                include_generated: args.include_generated,
                max_files: ws.limits().max_search_files,
            };
            summary = walk::walk(ws, &start, opts, deadline, || {
                let globs = globs.as_ref();
                let visit = &visit;
                move |found: walk::Found<'_>| {
                    // Globs read names as the answer shows them.
                    if let Some(g) = globs
                        && !g.is_match(ws.shown(found.rel).as_ref())
                        && !g.is_match(ws.shown(found.name).as_ref())
                    {
                        return true;
                    }
                    visit(found.rel)
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
    let mut a = acc.into_inner().unwrap_or_default();
    a.skipped.add(&summary.skipped);
    let byte_cap = ws.limits().result_bytes();
    let mut references: Vec<Reference> = Vec::new();
    let mut position = 0u64;
    let mut bytes = 0usize;
    let mut cut = None;
    'files: for ((_, rel), found) in &a.files {
        let first = position;
        position += found.len() as u64;
        if position <= args.skip {
            continue;
        }
        // The page's lines, cut from the redacted text read again (only the
        // page's files are read twice).
        let text = read_text(ws, rel)
            .map(|raw| {
                sources::redact_text(
                    ws.redactor(),
                    &raw,
                    &mut RedactionReport::default(),
                    deadline.work(),
                )
                .into_owned()
            })
            .unwrap_or_default();
        let lines: Vec<&str> = text.split('\n').collect();
        for (i, &(line, column)) in found.iter().enumerate() {
            if first + (i as u64) < args.skip {
                continue;
            }
            if references.len() >= page {
                cut = Some(Limit::Results);
                break 'files;
            }
            let shown = usize::try_from(line - 1)
                .ok()
                .and_then(|l| lines.get(l))
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .unwrap_or("");
            // The reference's bytes in its line, from its column.
            let at = usize::try_from(column - 1)
                .ok()
                .and_then(|c| shown.char_indices().nth(c))
                .map(|(i, _)| i);
            let shown =
                sources::excerpt(shown, at.map(|at| at..at + ident.len()), SEARCH_LINE_CHARS).text;
            let cost = rel.len() + shown.len() + 32;
            if !references.is_empty() && bytes + cost > byte_cap {
                cut = Some(Limit::Bytes);
                break 'files;
            }
            bytes += cost;
            references.push(Reference {
                path: rel.clone(),
                line,
                column,
                text: shown,
            });
        }
    }
    if cut.is_none() && args.skip.saturating_add(references.len() as u64) < a.total {
        cut = Some(Limit::Results);
    }
    if a.timed_out || summary.timed_out {
        if references.is_empty() && a.total == 0 {
            return Err(WireError::TimedOut {
                budget_ms: deadline.budget_ms(),
            });
        }
        cut = Some(Limit::Time);
    } else if summary.capped {
        cut = Some(Limit::Files);
    }
    Ok(ToolOutput::FindReferences(FindReferencesOutput {
        path: start.display().to_owned(),
        references,
        total_references: a.total,
        files_scanned: a.scanned,
        parsed_files: a.parsed,
        text_files: a.text,
        skipped_reasons: a.skipped,
        cut,
        redaction: sources::counts(&a.report),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_lines_and_character_columns() {
        let text = "ab x\né x\n\nx";
        let re = Regex::new(r"\bx\b").unwrap();
        let hits: Vec<_> = re.find_iter(text).map(|m| m.range()).collect();
        assert_eq!(positions(text, &hits), [(1, 4), (2, 3), (4, 1)]);
    }

    #[test]
    fn identifiers_are_ascii_words_not_starting_with_a_digit() {
        assert!(is_identifier("parse_args"));
        assert!(is_identifier("_x9"));
        for bad in ["", "9x", "a-b", "a b", "é", "a.b"] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn a_match_touching_a_placeholder_is_not_clear() {
        let re = Regex::new(r"\bredacted\b").unwrap();
        assert!(clear_matches(&re, "x = [redacted:generic-secret]").is_empty());
        assert_eq!(clear_matches(&re, "redacted = 1").len(), 1);
    }
}

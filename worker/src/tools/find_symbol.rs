//! `find_symbol`: where a name is defined, by parser where one fits (exact,
//! `method: parsed`) and by five patterns elsewhere (`method: pattern`).
//!
//! A file path searches that file alone and a missing path is `not_found`,
//! as in `search_code`; nested functions and full signatures are the
//! parsers' business (`crate::symbols`).
//!
//! Every file is redacted whole before it is parsed, so a name is matched
//! and a signature cut from the redacted text alone: a definition whose
//! name a placeholder hides is found by no query.

use std::sync::Mutex;

use moat_protocol::request::FindSymbolArgs;
use moat_protocol::response::{Definition, FindSymbolOutput, Limit, SkipReasons, ToolOutput};
use moat_protocol::wire_error::{Missing, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::containment;
use crate::fs::open::{self, Kind};
use crate::redact::RedactionReport;
use crate::sources;
use crate::symbols::{self, CompiledQuery, Language, Query};
use crate::walk;

#[derive(Default)]
struct Acc {
    definitions: Vec<Definition>,
    found: u64,
    unparseable: Vec<String>,
    scanned: u64,
    skipped: SkipReasons,
    timed_out: bool,
    report: RedactionReport,
    other_kinds: symbols::KindCounts,
}

/// Run `find_symbol`.
pub fn run(
    ws: &Workspace,
    args: &FindSymbolArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let name = args.symbol.trim();
    if name.is_empty() {
        return Err(WireError::NotFound(Missing::EmptySymbol));
    }
    let start = containment::resolve(ws, &args.path)?;
    let meta = open::stat(ws, &start).map_err(|_| WireError::NotFound(Missing::Path))?;
    let max = ws.limits().max_search_results as usize;
    // A later page finds the definitions before it again (in the same
    // order) and skips them.
    let skip = usize::try_from(args.skip.min(moat_protocol::limits::MAX_PAGED_ITEMS)).unwrap_or(0);
    let keep = max + skip;
    let query = CompiledQuery::new(&Query {
        name,
        exact: args.exact,
        kind: args.kind,
    })
    .map_err(|_| WireError::NotFound(Missing::EmptySymbol))?
    // One more than are kept: a file holding more than `keep` definitions
    // then shows as more found than kept (truncated), not as exactly `keep`.
    .with_max_results(keep + 1);
    let file_cap = ws.limits().max_file_bytes;
    let acc = Mutex::new(Acc::default());
    let visit = |rel: &str| -> bool {
        let Some(lang) = Language::from_path(rel) else {
            // Examined and ruled out by its name: counted, so that a walk
            // stopped at the file limit reports the files the limit counts.
            if let Ok(mut a) = acc.lock() {
                a.scanned += 1;
            }
            return true;
        };
        let bytes = match open::read_for_scan(ws, rel, file_cap) {
            Ok(b) => b,
            Err(why) => {
                if let Ok(mut a) = acc.lock() {
                    walk::SkipReason::from(why).count(&mut a.skipped);
                }
                return true;
            }
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            if let Ok(mut a) = acc.lock() {
                walk::SkipReason::Binary.count(&mut a.skipped);
            }
            return true;
        };
        // Every file is redacted whole before it is parsed, whatever the
        // query: names are matched and signatures cut from the redacted
        // text alone, and the work done for a file does not depend on
        // whether the query would have matched a hidden value.
        deadline.work().read(bytes.len());
        let mut report = RedactionReport::default();
        let text = sources::redact_text(ws.redactor(), text, &mut report, deadline.work());
        deadline.work().searched(text.len());
        let found = query.find_in_source_until(lang, rel, &text, Some(deadline.instant()));
        let Ok(mut a) = acc.lock() else { return false };
        // The report counts a file only when it is answered for.
        if !found.definitions.is_empty() {
            a.report.merge(&report);
        }
        a.scanned += 1;
        if found.timed_out {
            a.timed_out = true;
            return false;
        }
        if found.unparseable {
            a.unparseable.push(rel.to_owned());
        }
        a.other_kinds.merge(&found.other_kinds);
        a.found += found.definitions.len() as u64;
        a.definitions.extend(found.definitions);
        if a.definitions.len() > keep.saturating_mul(4) {
            symbols::sort_definitions(&mut a.definitions);
            a.definitions.truncate(keep);
        }
        true
    };
    let mut walk_timed_out = false;
    let mut walk_capped = false;
    let mut walk_skipped = SkipReasons::default();
    match meta.kind {
        Kind::File => {
            let _ = visit(start.rel());
        }
        Kind::Directory => {
            let opts = walk::Options {
                respect_gitignore: args.respect_gitignore,
                include_generated: args.include_generated,
                max_files: ws.limits().max_search_files,
            };
            let summary = walk::walk(ws, &start, opts, deadline, || {
                |found: walk::Found<'_>| visit(found.rel)
            });
            walk_timed_out = summary.timed_out;
            walk_capped = summary.capped;
            walk_skipped = summary.skipped;
        }
        Kind::Special(k) => return Err(WireError::SpecialFile(k)),
        Kind::Symlink => {
            return Err(WireError::DeniedPath(
                moat_protocol::wire_error::Denial::Symlink,
            ));
        }
    }
    let mut a = acc.into_inner().unwrap_or_default();
    a.skipped.add(&walk_skipped);
    symbols::sort_definitions(&mut a.definitions);
    let timed_out = a.timed_out || walk_timed_out;
    a.definitions.truncate(keep);
    a.definitions.drain(..skip.min(a.definitions.len()));
    // The answer budget: each definition is one line of path, line, kind,
    // method and signature.
    let budget = ws.limits().answer_bytes();
    let mut used = 0usize;
    let fits = a
        .definitions
        .iter()
        .take_while(|d| {
            used += d.path.len() + d.signature.len() + 40;
            used <= budget
        })
        .count();
    let bytes_cut = fits < a.definitions.len();
    a.definitions.truncate(fits.max(1));
    let stopped_by: Vec<Limit> = [
        (walk_capped, Limit::Files),
        (a.found > keep as u64, Limit::Results),
        (bytes_cut, Limit::Bytes),
        (timed_out, Limit::Time),
    ]
    .into_iter()
    .filter_map(|(hit, limit)| hit.then_some(limit))
    .collect();
    let truncated = !stopped_by.is_empty();
    a.unparseable.sort();
    // A kind filter that found nothing in a complete search: the answer
    // says which other kinds the name was found under instead of only
    // "0 definitions" (counted during the same walk).
    let other_kinds = if args.kind.is_some() && a.definitions.is_empty() && !truncated && skip == 0
    {
        std::mem::take(&mut a.other_kinds).into_vec()
    } else {
        Vec::new()
    };
    Ok(ToolOutput::FindSymbol(FindSymbolOutput {
        definitions: a.definitions,
        unparseable_files: a.unparseable,
        files_scanned: a.scanned,
        files_skipped: a.skipped.total(),
        skipped_reasons: a.skipped,
        truncated,
        timed_out,
        stopped_by,
        redaction: sources::counts(&a.report),
        other_kinds,
    }))
}

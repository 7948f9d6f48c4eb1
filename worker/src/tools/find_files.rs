//! `find_files`: workspace files by glob and/or name substring, sorted by
//! path and paged.
//!
//! * The walk is `search_code`'s ([`crate::walk`]): `.gitignore`-aware,
//!   the generated-tree skip list, no symbolic link followed, denied names
//!   pruned before they are yielded, so a credential file is never named.
//! * Names only: no file is opened. Each match is looked at with a no-follow
//!   stat for its size; one that is no longer a regular file is counted as
//!   gone, and a regular file with more than one hard link (which may be the
//!   other name of a file outside the workspace, whose size would show) is
//!   counted as a hard link and not listed, unless hard links are allowed.
//! * Names are filtered as answers show them: the glob and the name
//!   substring read each path redacted ([`Workspace::shown`]), so a filter
//!   never matches inside a value a placeholder hides.
//! * The whole walk is sorted by the text form of the path as answers show
//!   it (byte order; paths shown alike by their raw form), so
//!   pages of one query neither repeat nor skip: page `k` is the sorted list
//!   from `skip`. A walk cut by the file cap or the deadline saw an
//!   arbitrary subset (threads race), so it is reported with that cut and
//!   no page after it is offered.

use std::sync::Mutex;

use moat_protocol::request::FindFilesArgs;
use moat_protocol::response::{FindFilesOutput, FoundFile, Limit, SkipReasons, ToolOutput};
use moat_protocol::wire_error::{Missing, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::containment;
use crate::fs::open::{self, Kind};
use crate::tools::search_code::build_globs;
use crate::walk;

/// Characters one listed path costs in the rendered answer besides the
/// path (the size and separators); the page stops at `max_result_bytes`.
const LINE_OVERHEAD: usize = 24;

/// Run `find_files`.
pub fn run(
    ws: &Workspace,
    args: &FindFilesArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let start = containment::resolve(ws, &args.path)?;
    let meta = open::stat(ws, &start).map_err(|_| WireError::NotFound(Missing::Directory))?;
    match meta.kind {
        Kind::Directory => {}
        Kind::File => return Err(WireError::NotADirectory),
        Kind::Special(k) => return Err(WireError::SpecialFile(k)),
        Kind::Symlink => {
            return Err(WireError::DeniedPath(
                moat_protocol::wire_error::Denial::Symlink,
            ));
        }
    }
    let globs = build_globs(args.glob.as_slice())?;
    let needle = args.name.as_deref().map(str::to_lowercase);
    // (the path as answers show it, the raw path)
    let matched: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let opts = walk::Options {
        respect_gitignore: args.respect_gitignore,
        include_generated: args.include_generated,
        // Names only: no file is opened, so the walk reaches trees far
        // larger than a content search's file cap.
        max_files: u32::try_from(walk::MAX_NAMES).unwrap_or(u32::MAX),
    };
    let summary = walk::walk(ws, &start, opts, deadline, || {
        let globs = globs.as_ref();
        let needle = needle.as_deref();
        let matched = &matched;
        move |found: walk::Found<'_>| {
            // Filters read names as the answer shows them.
            let rel = ws.shown(found.rel);
            if globs.is_some() || needle.is_some() {
                let name = ws.shown(found.name);
                if let Some(g) = globs
                    && !g.is_match(rel.as_ref())
                    && !g.is_match(name.as_ref())
                {
                    return true;
                }
                if let Some(n) = needle
                    && !name.to_lowercase().contains(n)
                {
                    return true;
                }
            }
            if let Ok(mut m) = matched.lock() {
                m.push((rel.into_owned(), found.rel.to_owned()));
            }
            true
        }
    });
    let mut matched = matched.into_inner().unwrap_or_default();
    matched.sort_unstable();
    let mut skipped = summary.skipped;
    let mut listed: Vec<FoundFile> = Vec::new();
    let mut total = 0u64;
    let mut bytes = 0usize;
    let page = args.max_results.clamp(1, ws.limits().max_search_results) as usize;
    let byte_cap = ws.limits().result_bytes();
    let mut cut = None;
    for (_, rel) in matched {
        let Some(size) = listable_size(ws, &rel, &mut skipped) else {
            continue;
        };
        total += 1;
        if total <= args.skip || cut.is_some() {
            continue;
        }
        let cost = rel.len() + LINE_OVERHEAD;
        if listed.len() >= page {
            cut = Some(Limit::Results);
        } else if !listed.is_empty() && bytes + cost > byte_cap {
            cut = Some(Limit::Bytes);
        } else {
            bytes += cost;
            listed.push(FoundFile {
                path: rel,
                size_bytes: size,
            });
        }
    }
    // A walk that stopped early saw an arbitrary part of the tree: say so,
    // whatever the page did.
    if summary.timed_out {
        cut = Some(Limit::Time);
    } else if summary.capped {
        cut = Some(Limit::Files);
    }
    Ok(ToolOutput::FindFiles(FindFilesOutput {
        path: start.display().to_owned(),
        files: listed,
        total_matches: total,
        files_scanned: summary.files,
        cut,
        skipped_reasons: skipped,
    }))
}

/// The size of a walked file that may be listed, or `None` (counted in
/// `skipped`) when it is gone, no longer a regular file, or a hard link
/// that may not be served.
fn listable_size(ws: &Workspace, rel: &str, skipped: &mut SkipReasons) -> Option<u64> {
    let meta = match open::stat_rel(ws, rel) {
        Ok(m) => m,
        Err(e) => {
            walk::skip_reason_of(&e).count(skipped);
            return None;
        }
    };
    if meta.kind != Kind::File {
        walk::SkipReason::Vanished.count(skipped);
        return None;
    }
    if meta.nlink > 1 && !ws.allow_hard_links() {
        walk::SkipReason::HardLink.count(skipped);
        return None;
    }
    Some(meta.size)
}

//! `find_files`: its declaration, its request and its rendering.

use std::fmt::Write as _;

use serde_json::{Value, json};

use moat_protocol::limits;
use moat_protocol::request::{FindFilesArgs, Request};
use moat_protocol::response::{FindFilesOutput, Limit};

use super::render::{
    cut_fields, display, listing, more_line, next_cursor, notes, obj, plural, skipped_json,
    skipped_notes,
};
use super::schema::{
    cursor_schema, include_generated_schema, path_schema, respect_gitignore_schema, scalars,
    skipped_reasons_schema,
};
use super::{Args, ITEM, Spec};
use crate::content::Rendered;
use crate::content::fence::{show_name, structured_name};

pub(super) const SPEC: Spec = Spec {
    name: "find_files",
    title: "Find files by name",
    description: "Find files by glob (e.g. **/*.rs, src/**/test_*.py; matched against the workspace-relative \
                 path or the base name) and/or by a case-insensitive substring of the base name. Cheap: names \
                 only, no file is opened. Same walk as search_code: .gitignored files, generated and vendored \
                 trees are skipped; credential files are never listed. Sorted by path. Paged: when the answer \
                 ends with a 'more:' line, call again with the same arguments and the cursor it gives.",
    fence_label: None,
    optional_outputs: &[],
    required_inputs: &[],
    input,
    output,
    to_request,
};

fn input() -> Value {
    json!({
        "glob": {"type": "string", "minLength": 1, "maxLength": limits::MAX_GLOB_CHARS, "description": "Glob the relative path or the base name must match (* also crosses /, **, {a,b}). Default: any."},
        "name": {"type": "string", "minLength": 1, "maxLength": limits::MAX_SYMBOL_CHARS, "description": "Case-insensitive substring the base name must contain. Default: any."},
        "path": path_schema("Directory to search beneath. Default: the root."),
        "respect_gitignore": respect_gitignore_schema(),
        "include_generated": include_generated_schema(),
        "max_results": {"type": "integer", "minimum": 1, "maximum": limits::MAX_SEARCH_RESULTS_MAX, "description": "Most paths in this page (capped by the server). Default: the server's cap."},
        "cursor": cursor_schema()
    })
}

fn output() -> Value {
    let (int, boolean, string, _) = scalars();
    json!({
        "path": string,
        "files": {"type": "array", "items": {
            "type": "object", "additionalProperties": false,
            "required": ["path", "size_bytes"],
            "properties": {"path": string, "size_bytes": int}
        }},
        "file_count": int, "total_matches": int, "files_scanned": int,
        "skipped_reasons": skipped_reasons_schema(),
        "truncated": boolean, "next_cursor": string
    })
}

fn to_request(a: &Args<'_>, caps: &limits::Limits) -> Request {
    Request::FindFiles(FindFilesArgs {
        path: a.path(),
        glob: a.str("glob"),
        name: a.str("name"),
        respect_gitignore: a.bool("respect_gitignore", true),
        include_generated: a.bool("include_generated", false),
        max_results: a.capped(
            "max_results",
            caps.max_search_results,
            caps.max_search_results,
        ),
        skip: 0,
    })
}

/// About how many bytes of text rendering `o` reads.
pub(super) fn work(o: &FindFilesOutput) -> usize {
    ITEM * o.files.len()
}

/// The answer's summary, `structuredContent` and fenced text.
pub(super) fn render(request: &Request, o: FindFilesOutput, root: &str) -> Rendered {
    let (skip, what) = match request {
        Request::FindFiles(a) => {
            let mut what = Vec::new();
            if let Some(g) = &a.glob {
                what.push(format!("glob {}", crate::error::quote(g)));
            }
            if let Some(n) = &a.name {
                what.push(format!("name containing {}", crate::error::quote(n)));
            }
            (a.skip, what)
        }
        _ => (0, Vec::new()),
    };
    let shown = o.files.len() as u64;
    // A walk the file limit or the clock stopped saw only part of the tree:
    // "0 files" would read as "none exist".
    let partial = matches!(o.cut, Some(Limit::Files | Limit::Time));
    let mut summary = if partial && o.total_matches == 0 {
        format!("No file found under {}", display(&o.path, root))
    } else {
        format!(
            "{} under {}",
            plural(o.total_matches, "file", "files"),
            display(&o.path, root)
        )
    };
    if !what.is_empty() {
        let _ = write!(summary, " matching {}", what.join(" and "));
    }
    let mut n = Vec::new();
    if partial {
        n.push(format!(
            "incomplete: the walk stopped at {} after {}, so files not reached may also match",
            if o.cut == Some(Limit::Files) {
                "the file limit"
            } else {
                "the time budget"
            },
            plural(o.files_scanned, "file", "files")
        ));
    }
    if shown < o.total_matches || skip > 0 {
        if shown == 0 {
            n.push(format!("none after the first {skip}"));
        } else {
            n.push(format!(
                "showing {}-{}",
                skip.saturating_add(1),
                skip.saturating_add(shown)
            ));
        }
    }
    skipped_notes(&o.skipped_reasons, &mut n);
    notes(&mut summary, &n);
    for f in &o.files {
        let _ = write!(
            summary,
            "\n{}  ({} bytes)",
            show_name(&f.path),
            f.size_bytes
        );
    }
    let cursor = next_cursor(request, o.cut, skip.saturating_add(shown));
    if let Some(c) = o.cut {
        summary.push('\n');
        summary.push_str(&more_line("find_files", c, cursor.as_deref()));
    }
    let files: Vec<Value> = o
        .files
        .iter()
        .map(|f| json!({"path": structured_name(&f.path), "size_bytes": f.size_bytes}))
        .collect();
    let mut structured = obj(json!({
        "path": structured_name(&o.path), "files": files, "file_count": shown,
        "total_matches": o.total_matches, "files_scanned": o.files_scanned,
        "skipped_reasons": skipped_json(&o.skipped_reasons)
    }));
    cut_fields(&mut structured, o.cut, cursor.as_deref());
    listing(summary, structured)
}

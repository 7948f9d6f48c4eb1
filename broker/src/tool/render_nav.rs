//! Rendering of the navigation tools (`find_files`, `directory_tree`,
//! `file_outline`, `find_references`), with the rules of [`crate::tool::render`]:
//! every workspace name goes through [`show_name`] in text and
//! [`structured_name`] in `structuredContent`.
//!
//! An answer cut by a limit says so twice: `truncated` and
//! `stopped_by` (plus `next_cursor` where a cursor continues it) in
//! `structuredContent`, and a last line of text starting `… more:` that says
//! exactly what call continues it.

use std::fmt::Write as _;

use serde_json::{Value, json};

use moat_protocol::limits::{MAX_TREE_DEPTH, SEARCH_LINE_CHARS, SIGNATURE_CHARS};
use moat_protocol::request::Request;
use moat_protocol::response::{
    DirectoryTreeOutput, EntryKind, FileOutlineOutput, FindFilesOutput, FindReferencesOutput,
    Limit, RedactionCounts,
};

use crate::content::fence::{show_name, structured_name};
use crate::cursor::{self, Cursor};
use crate::redact::drop_cut_tail;
use crate::tool::query_fingerprint;
use crate::tool::render::{
    FenceText, Rendered, cursor_line, display, method_str, notes, obj, plural, skipped_json,
    skipped_notes, stopped_json,
};

/// The cursor continuing `request` after `position` items, when `cut` is
/// one a cursor can continue (a full page); a walk cut by the file cap or
/// the clock saw a different set of files each time, so no position in it
/// is stable.
fn next_cursor(request: &Request, cut: Option<Limit>, position: u64) -> Option<String> {
    matches!(cut, Some(Limit::Results | Limit::Bytes)).then(|| {
        cursor::encode(Cursor {
            query: query_fingerprint(request),
            position,
        })
    })
}

/// The last line of a paged answer cut by a limit.
fn more_line(tool: &str, cut: Limit, cursor: Option<&str>) -> String {
    match (cut, cursor) {
        (Limit::Results | Limit::Bytes, Some(c)) => cursor_line(tool, c),
        (Limit::Time, _) => format!(
            "… more: the walk stopped at the time budget; call {tool} again with a narrower path"
        ),
        _ => format!(
            "… more: the walk stopped at the file limit; call {tool} again with a narrower path"
        ),
    }
}

/// Add `truncated`, `stopped_by` and `next_cursor` to `structured`.
fn cut_fields(
    structured: &mut serde_json::Map<String, Value>,
    cut: Option<Limit>,
    cursor: Option<&str>,
) {
    structured.insert("truncated".into(), Value::Bool(cut.is_some()));
    structured.insert("stopped_by".into(), stopped_json(cut.as_slice()));
    if let Some(c) = cursor {
        structured.insert("next_cursor".into(), Value::from(c));
    }
}

fn listing(summary: String, structured: serde_json::Map<String, Value>) -> Rendered {
    Rendered {
        summary,
        structured,
        untrusted: None,
        fence_text: FenceText::Whole,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// `find_files`.
pub(crate) fn find_files(request: &Request, o: FindFilesOutput, root: &str) -> Rendered {
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
    let mut summary = format!(
        "{} under {}",
        plural(o.total_matches, "file", "files"),
        display(&o.path, root)
    );
    if !what.is_empty() {
        let _ = write!(summary, " matching {}", what.join(" and "));
    }
    let mut n = Vec::new();
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
        "total_matches": o.total_matches, "skipped_reasons": skipped_json(&o.skipped_reasons)
    }));
    cut_fields(&mut structured, o.cut, cursor.as_deref());
    listing(summary, structured)
}

/// `directory_tree`.
pub(crate) fn directory_tree(o: DirectoryTreeOutput, root: &str) -> Rendered {
    let mut summary = format!(
        "{}: {} in {}",
        display(&o.path, root),
        plural(o.entries.len() as u64, "entry", "entries"),
        plural(u64::from(o.depth), "level", "levels"),
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
    if o.unreadable > 0 {
        n.push(format!(
            "{} could not be listed",
            plural(o.unreadable, "directory", "directories")
        ));
    }
    notes(&mut summary, &n);
    let top = if o.path == "." {
        ".".to_owned()
    } else {
        show_name(&o.path).into_owned()
    };
    let _ = write!(summary, "\n{top}/");
    let mut entries = Vec::with_capacity(o.entries.len());
    for e in &o.entries {
        let indent = "  ".repeat(usize::from(e.depth));
        let name = show_name(&e.name);
        match e.kind {
            EntryKind::Directory => {
                let _ = write!(summary, "\n{indent}{name}/");
                if let Some(k) = e.unexpanded {
                    let _ = write!(
                        summary,
                        "  [not expanded: {}]",
                        plural(k, "entry", "entries")
                    );
                }
            }
            EntryKind::File => {
                let _ = write!(summary, "\n{indent}{name}  ({} bytes)", e.size_bytes);
            }
        }
        let mut v = json!({
            "name": structured_name(&e.name), "depth": e.depth,
            "type": if e.kind == EntryKind::Directory { "directory" } else { "file" }
        });
        if e.kind == EntryKind::File {
            v["size_bytes"] = Value::from(e.size_bytes);
        }
        if let Some(k) = e.unexpanded {
            v["unexpanded_entries"] = Value::from(k);
        }
        entries.push(v);
    }
    match o.cut {
        Some(Limit::Depth) => {
            let _ = write!(
                summary,
                "\n… more: directories marked [not expanded] hold more; call directory_tree again with path set to one of them{}",
                if o.depth < MAX_TREE_DEPTH {
                    format!(
                        ", or with a depth above {} (at most {MAX_TREE_DEPTH})",
                        o.depth
                    )
                } else {
                    String::new()
                }
            );
        }
        Some(_) => {
            let _ = write!(
                summary,
                "\n… more: the tree stopped at {} (max_entries); call directory_tree again with path set to a subdirectory, a smaller depth, or a larger max_entries",
                plural(o.entries.len() as u64, "entry", "entries")
            );
        }
        None => {}
    }
    let mut structured = obj(json!({
        "path": structured_name(&o.path), "depth": o.depth, "entries": entries,
        "entry_count": o.entries.len(), "hidden_by_denylist": o.hidden_by_denylist,
        "symlinks_skipped": o.symlinks_skipped, "special_skipped": o.special_skipped,
        "unreadable": o.unreadable
    }));
    cut_fields(&mut structured, o.cut, None);
    listing(summary, structured)
}

/// `file_outline`.
pub(crate) fn file_outline(o: FileOutlineOutput) -> Rendered {
    let language = o.language.clone().unwrap_or_else(|| "unknown".to_owned());
    let method = o.method.map_or("none", method_str);
    let mut summary = match o.method {
        Some(_) => format!(
            "{}: {} ({language}, {})",
            show_name(&o.path),
            plural(o.items.len() as u64, "definition", "definitions"),
            if method == "parsed" {
                "parsed: exact"
            } else {
                "patterns: may include false positives"
            }
        ),
        None => format!(
            "{}: no outline; its language is not one moat recognises",
            show_name(&o.path)
        ),
    };
    summary.push('.');
    let mut body = String::new();
    let mut items = Vec::with_capacity(o.items.len());
    for i in &o.items {
        let signature = drop_cut_tail(&i.signature, SIGNATURE_CHARS);
        let depth = if i.parent.is_empty() {
            0
        } else {
            i.parent.matches('.').count() + 1
        };
        if !body.is_empty() {
            body.push('\n');
        }
        let _ = write!(
            body,
            "{}-{}  {}{} {}  {}",
            i.line,
            i.end_line,
            "  ".repeat(depth.min(16)),
            i.kind,
            i.name,
            signature
        );
        items.push(json!({
            "name": i.name, "kind": i.kind, "symbol_kind": i.symbol_kind.as_str(),
            "line": i.line, "end_line": i.end_line, "parent": i.parent, "signature": signature
        }));
    }
    if o.truncated {
        let _ = write!(
            summary,
            "\n… more: the outline stopped at {} (max_items); use read_file with start_line after line {} for the rest",
            plural(o.items.len() as u64, "definition", "definitions"),
            o.items.last().map_or(0, |i| i.line)
        );
    }
    let mut structured = obj(json!({
        "path": structured_name(&o.path), "language": language, "method": method,
        "items": items, "item_count": o.items.len()
    }));
    cut_fields(&mut structured, o.truncated.then_some(Limit::Results), None);
    Rendered {
        summary,
        structured,
        untrusted: Some(body),
        fence_text: FenceText::PerLine,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// `find_references`.
pub(crate) fn find_references(request: &Request, o: FindReferencesOutput, root: &str) -> Rendered {
    let (identifier, skip) = match request {
        Request::FindReferences(a) => (a.identifier.as_str(), a.skip),
        _ => ("", 0),
    };
    let shown = o.references.len() as u64;
    let files: std::collections::BTreeSet<&str> =
        o.references.iter().map(|r| r.path.as_str()).collect();
    let mut summary = format!(
        "{} of {} under {} ({} scanned: {} parsed, strings and comments skipped; {} matched as text)",
        plural(o.total_references, "reference", "references"),
        crate::error::quote(identifier),
        display(&o.path, root),
        plural(o.files_scanned, "file", "files"),
        o.parsed_files,
        o.text_files
    );
    let mut n = Vec::new();
    if shown < o.total_references || skip > 0 {
        if shown == 0 {
            n.push(format!("none after the first {skip}"));
        } else {
            n.push(format!(
                "showing {}-{} in {}",
                skip.saturating_add(1),
                skip.saturating_add(shown),
                plural(files.len() as u64, "file", "files")
            ));
        }
    }
    skipped_notes(&o.skipped_reasons, &mut n);
    notes(&mut summary, &n);
    let cursor = next_cursor(request, o.cut, skip.saturating_add(shown));
    if let Some(c) = o.cut {
        summary.push('\n');
        summary.push_str(&more_line("find_references", c, cursor.as_deref()));
    }
    let mut body = String::new();
    let mut refs = Vec::with_capacity(o.references.len());
    for r in &o.references {
        // A line the worker cut at its limit may end in part of a
        // credential that redaction can no longer recognise.
        let text = drop_cut_tail(&r.text, SEARCH_LINE_CHARS);
        if !body.is_empty() {
            body.push('\n');
        }
        let _ = write!(
            body,
            "{}:{}:{}:\n  {text}",
            show_name(&r.path),
            r.line,
            r.column
        );
        refs.push(json!({"path": structured_name(&r.path), "line": r.line, "column": r.column, "text": text}));
    }
    let mut structured = obj(json!({
        "identifier": identifier, "path": structured_name(&o.path), "references": refs,
        "reference_count": shown, "total_references": o.total_references,
        "files_scanned": o.files_scanned, "parsed_files": o.parsed_files, "text_files": o.text_files,
        "files_skipped": o.skipped_reasons.total(), "skipped_reasons": skipped_json(&o.skipped_reasons)
    }));
    cut_fields(&mut structured, o.cut, cursor.as_deref());
    Rendered {
        summary,
        structured,
        untrusted: Some(body),
        fence_text: FenceText::PerLine,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

//! `directory_tree`: its declaration, its request and its rendering.

use std::fmt::Write as _;

use serde_json::{Value, json};

use moat_protocol::limits::{self, MAX_TREE_DEPTH};
use moat_protocol::request::{DirectoryTreeArgs, Request};
use moat_protocol::response::{DirectoryTreeOutput, EntryKind, Limit};

use super::render::{
    cursor_line, cut_fields, display, listing, notes, obj, page_cursor, passed_over_notes, plural,
};
use super::schema::{cursor_schema, path_schema, scalars};
use super::{Args, ITEM, Spec};
use crate::content::Rendered;
use crate::content::fence::{show_name, structured_name};

pub(super) const SPEC: Spec = Spec {
    name: "directory_tree",
    title: "Show a directory tree",
    description: "Show the directory tree under a path, a few levels deep (depth, default 3), as an indented \
                 tree: directories first, files with sizes. Use it to get the shape of a project or a \
                 subtree in one call; use list_directory for one level with more detail. Bounded by depth and \
                 max_entries; directories not expanded say how many entries they hold. An answer cut at \
                 max_entries ends with a 'more:' line: call again with the same arguments and the cursor it \
                 gives for the next entries (on a later page, an entry whose directory was shown earlier \
                 comes under that directory's path). Cut by depth, it says how to see more (a deeper or \
                 narrower call). Symbolic links are not followed; credential files are counted, never named.",
    fence_label: None,
    optional_outputs: &[],
    required_inputs: &[],
    input,
    output,
    to_request,
};

fn input() -> Value {
    json!({
        "path": path_schema("Directory at the top of the tree. Default: the root."),
        "depth": {"type": "integer", "minimum": 1, "maximum": limits::MAX_TREE_DEPTH, "description": "Levels to show below path (1 = its immediate contents). Default 3."},
        "max_entries": {"type": "integer", "minimum": 1, "maximum": limits::MAX_DIRECTORY_ENTRIES_MAX, "description": "Most entries in the tree (capped by the server). Default: the server's cap."},
        "include_hidden": {"type": "boolean", "description": "Include names starting with '.' (.github is always included). Default false."},
        "cursor": cursor_schema()
    })
}

fn output() -> Value {
    let (int, boolean, string, _) = scalars();
    json!({
        "path": string, "depth": int,
        "entries": {"type": "array", "items": {
            "type": "object", "additionalProperties": false,
            "required": ["depth", "name", "type"],
            "properties": {
                "name": string, "depth": int,
                "type": {"type": "string", "enum": ["directory", "file"]},
                "size_bytes": int, "unexpanded_entries": int,
                "dir": string
            }
        }},
        "entry_count": int, "hidden_by_denylist": int, "symlinks_skipped": int,
        "special_skipped": int, "unreadable": int,
        "truncated": boolean, "next_cursor": string
    })
}

fn to_request(a: &Args<'_>, caps: &limits::Limits) -> Request {
    Request::DirectoryTree(DirectoryTreeArgs {
        path: a.path(),
        depth: a
            .small("depth")
            .unwrap_or(limits::TREE_DEPTH_DEFAULT)
            .clamp(1, limits::MAX_TREE_DEPTH),
        max_entries: a.capped(
            "max_entries",
            caps.max_directory_entries,
            caps.max_directory_entries,
        ),
        include_hidden: a.bool("include_hidden", false),
        skip: 0,
    })
}

/// About how many bytes of text rendering `o` reads.
pub(super) fn work(o: &DirectoryTreeOutput) -> usize {
    ITEM * o.entries.len()
}

/// The answer's summary, `structuredContent` and fenced text.
pub(super) fn render(request: &Request, o: DirectoryTreeOutput, root: &str) -> Rendered {
    let mut summary = format!(
        "{}: {} in {}",
        display(&o.path, root),
        plural(o.entries.len() as u64, "entry", "entries"),
        plural(u64::from(o.depth), "level", "levels"),
    );
    let mut n = Vec::new();
    passed_over_notes(
        (o.hidden_by_denylist, o.symlinks_skipped, o.special_skipped),
        &mut n,
    );
    let skip = match request {
        Request::DirectoryTree(a) => a.skip,
        _ => 0,
    };
    let shown = o.entries.len() as u64;
    if skip > 0 {
        n.push(if shown == 0 {
            format!("none after the first {skip}")
        } else {
            format!(
                "entries {}-{} of the tree in breadth-first order",
                skip.saturating_add(1),
                skip.saturating_add(shown)
            )
        });
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
    // On a later page, entries whose directory was shown earlier come under
    // a line naming that directory's path from the top, and they and their
    // descendants are indented from it.
    let mut under: Option<&str> = None;
    let mut offset = 0u8;
    for e in &o.entries {
        if let Some(d) = e.dir.as_deref()
            && under != Some(d)
        {
            under = Some(d);
            if d.is_empty() {
                offset = 0;
            } else {
                offset = e.depth.saturating_sub(2);
                let _ = write!(summary, "\n  {}/", show_name(d));
            }
        }
        let indent = "  ".repeat(usize::from(e.depth.saturating_sub(offset)));
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
        if let Some(d) = &e.dir {
            v["dir"] = Value::from(structured_name(d));
        }
        entries.push(v);
    }
    // The breadth-first order is fixed by the tree, so a count of the
    // entries given is a stable position in it.
    let next = page_cursor(request, o.cut.as_slice(), skip.saturating_add(shown));
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
        Some(Limit::Entries | Limit::Bytes) if next.is_some() => {}
        Some(_) => {
            let _ = write!(
                summary,
                "\n… more: the tree stopped at {} (max_entries); call directory_tree again with path set to a subdirectory, a smaller depth, or a larger max_entries",
                plural(o.entries.len() as u64, "entry", "entries")
            );
        }
        None => {}
    }
    if let Some(c) = &next {
        summary.push('\n');
        summary.push_str(&cursor_line("directory_tree", c));
    }
    let mut structured = obj(json!({
        "path": structured_name(&o.path), "depth": o.depth, "entries": entries,
        "entry_count": o.entries.len(), "hidden_by_denylist": o.hidden_by_denylist,
        "symlinks_skipped": o.symlinks_skipped, "special_skipped": o.special_skipped,
        "unreadable": o.unreadable
    }));
    cut_fields(&mut structured, o.cut, next.as_deref());
    listing(summary, structured)
}

//! `list_directory`: its declaration, its request and its rendering.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use moat_protocol::limits;
use moat_protocol::request::{ListDirectoryArgs, Request};
use moat_protocol::response::{DirEntry, EntryKind, Limit, ListDirectoryOutput};

use super::render::{cursor_line, listing, notes, obj, passed_over_notes, plural, stopped_json};
use super::schema::{cursor_schema, path_schema, scalars};
use super::{Args, ITEM, Spec};
use crate::content::Rendered;
use crate::content::fence::{show_name, structured_name};

pub(super) const SPEC: Spec = Spec {
    name: "list_directory",
    title: "List a directory",
    description: "List the immediate contents of a workspace directory: directories first, then files with \
                 their sizes. Symbolic links are reported as skipped, not followed; entries on the denylist \
                 (credentials, keys) are counted, never named. Paged: when the answer ends with a 'more:' \
                 line, call again with the same arguments and the cursor it gives.",
    fence_label: None,
    optional_outputs: &[],
    required_inputs: &[],
    input,
    output,
    to_request,
};

fn input() -> Value {
    json!({
        "path": path_schema("Directory, relative to the workspace root. Default: the root."),
        "include_hidden": {"type": "boolean", "description": "Include names starting with '.' (.github is always included). Default false."},
        "cursor": cursor_schema()
    })
}

fn output() -> Value {
    let (int, boolean, string, _) = scalars();
    json!({
        "path": string,
        "entries": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["name", "type"],
            "properties": {
                "name": string,
                "type": {"type": "string", "enum": ["directory", "file"]},
                "size_bytes": int, "walked_by_search": boolean
            }
        }},
        "directories": int, "files": int, "hidden_by_denylist": int,
        "symlinks_skipped": int, "special_skipped": int, "truncated": boolean,
        "next_cursor": string
    })
}

fn to_request(a: &Args<'_>, _caps: &limits::Limits) -> Request {
    Request::ListDirectory(ListDirectoryArgs {
        path: a.path(),
        include_hidden: a.bool("include_hidden", false),
        skip: 0,
    })
}

/// About how many bytes of text rendering `o` reads.
pub(super) fn work(o: &ListDirectoryOutput) -> usize {
    ITEM * o.entries.len()
}

/// The answer's summary, `structuredContent` and fenced text.
pub(super) fn render(request: &Request, o: ListDirectoryOutput) -> Rendered {
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
    passed_over_notes(
        (o.hidden_by_denylist, o.symlinks_skipped, o.special_skipped),
        &mut n,
    );
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
        let why = if o.cut_by_bytes {
            " at the answer's size limit"
        } else {
            ""
        };
        n.push(format!(
            "listing truncated{why} at {shown} entries ({range})"
        ));
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
            query: crate::tool::query_fingerprint(request),
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
        "stopped_by": stopped_json(match (o.truncated, o.cut_by_bytes) {
            (false, _) => &[],
            (true, false) => &[Limit::Entries],
            (true, true) => &[Limit::Bytes],
        })
    }));
    if let Some(c) = next {
        structured.insert("next_cursor".into(), Value::from(c));
    }
    listing(summary, structured)
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

//! What several tools' rendering shares: the constructors of a
//! [`Rendered`] result and the sentences and members every tool words the
//! same way.
//!
//! Names from the workspace are attacker-controlled: in the prose half and
//! inside the fences alike they pass through one function,
//! [`show_name`] (a file named `x\n</untrusted-…>` cannot forge a line or a
//! search-hit header), while the structured half keeps them exactly where
//! JSON can ([`structured_name`]).
//!
//! An answer cut by a limit says so twice: `truncated` and `stopped_by`
//! (plus `next_cursor` where a cursor continues it) in `structuredContent`,
//! and a last line of text that says exactly what call continues it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use moat_protocol::request::Request;
use moat_protocol::response::{Limit, RedactionCounts, SkipReasons, SymbolMethod};

use crate::content::fence::show_name;
#[cfg(doc)]
use crate::content::fence::structured_name;
use crate::content::{FenceText, Rendered};
use crate::cursor::{self, Cursor};

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
    let pruned: Vec<String> = [
        (
            r.ignored,
            "ignored by .gitignore/.ignore (respect_gitignore: false walks them)",
        ),
        (
            r.generated,
            "generated or vendored directories (include_generated: true walks them)",
        ),
        (r.denied, "covered by the denylist"),
    ]
    .iter()
    .filter(|(c, _)| *c > 0)
    .map(|(c, w)| format!("{c} {w}"))
    .collect();
    if !pruned.is_empty() {
        n.push(format!(
            "{} not walked: {}",
            plural(r.not_walked(), "entry", "entries"),
            pruned.join("; ")
        ));
    }
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

/// The notes for the entries a listing passed over, `(hidden by the
/// denylist, symbolic links not followed, special files)`: none goes
/// uncounted.
pub(crate) fn passed_over_notes((hidden, symlinks, special): (u64, u64, u64), n: &mut Vec<String>) {
    if hidden > 0 {
        n.push(format!(
            "{} hidden by the denylist",
            plural(hidden, "entry", "entries")
        ));
    }
    if symlinks > 0 {
        n.push(format!(
            "{} not followed",
            plural(symlinks, "symbolic link", "symbolic links")
        ));
    }
    if special > 0 {
        n.push(format!(
            "{} (pipe, socket or device) skipped",
            plural(special, "special file", "special files")
        ));
    }
}

/// The sentence for the `n` files or paths an answer left out because the
/// denylist covers them (counted, never named).
pub(crate) fn withheld_sentence(n: u64, one: &str, many: &str) -> String {
    format!(
        "{} withheld: the denylist covers {}.",
        plural(n, one, many),
        if n == 1 { "it" } else { "them" }
    )
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
        ("ignored", r.ignored),
        ("generated", r.generated),
        ("denied", r.denied),
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
pub(crate) fn limit_notes(
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
/// what stopped it was the page (of results, or of a tree's entries) or the
/// answer budget (a walk cut by its
/// file limit or the clock saw an arbitrary part of the tree, so no
/// position in it is stable) and the position is within the paging reach.
pub(crate) fn page_cursor(
    request: &Request,
    stopped_by: &[Limit],
    position: u64,
) -> Option<String> {
    let paged = stopped_by
        .iter()
        .any(|l| matches!(l, Limit::Results | Limit::Entries | Limit::Bytes));
    let unstable = stopped_by
        .iter()
        .any(|l| matches!(l, Limit::Files | Limit::Time));
    (paged && !unstable && position < moat_protocol::limits::MAX_PAGED_ITEMS).then(|| {
        cursor::encode(Cursor {
            query: super::query_fingerprint(request),
            position,
        })
    })
}

/// The last line of an answer a cursor continues: the same for every paged
/// tool.
pub(crate) fn cursor_line(tool: &str, cursor: &str) -> String {
    format!("… more: call {tool} again with the same arguments and cursor=\"{cursor}\"")
}

/// The last line of an answer cut by `stopped_by`: the cursor line when a
/// cursor continues it, else what to do about a walk the file limit or the
/// clock stopped; `None` when nothing stopped it (or a limit whose words
/// are in the summary already).
pub(crate) fn walk_last_line(
    tool: &str,
    stopped_by: &[Limit],
    cursor: Option<&str>,
) -> Option<String> {
    if let Some(c) = cursor {
        return Some(cursor_line(tool, c));
    }
    [Limit::Files, Limit::Time]
        .into_iter()
        .find(|l| stopped_by.contains(l))
        .map(|l| more_line(tool, l, None))
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

/// The cursor continuing `request` after `position` items, when `cut` is
/// one a cursor can continue (a full page); a walk cut by the file cap or
/// the clock saw a different set of files each time, so no position in it
/// is stable.
pub(crate) fn next_cursor(request: &Request, cut: Option<Limit>, position: u64) -> Option<String> {
    matches!(cut, Some(Limit::Results | Limit::Bytes)).then(|| {
        cursor::encode(Cursor {
            query: super::query_fingerprint(request),
            position,
        })
    })
}

/// The last line of a paged answer cut by a limit.
pub(crate) fn more_line(tool: &str, cut: Limit, cursor: Option<&str>) -> String {
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
pub(crate) fn cut_fields(
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

/// A result with file-derived text for the fence, read by the redaction
/// pass as `how` says.
pub(crate) fn fenced(
    summary: String,
    structured: Map<String, Value>,
    untrusted: String,
    how: FenceText,
) -> Rendered {
    Rendered {
        summary,
        structured,
        untrusted: Some(untrusted),
        fence_text: how,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// A result with no fenced text: a listing of names and counts.
pub(crate) fn listing(summary: String, structured: serde_json::Map<String, Value>) -> Rendered {
    Rendered {
        summary,
        structured,
        untrusted: None,
        fence_text: FenceText::Whole,
        worker_redaction: RedactionCounts::default(),
        scan_path: None,
    }
}

/// The last line of an answer a limit cut when going on takes other
/// arguments: the call that continues it, with its arguments as JSON; and
/// the same call for structuredContent's `next_call` (see [`next_call`]).
pub(crate) fn continue_with(tool: &str, args: &Value) -> (String, Value) {
    (
        format!("To continue, call {tool} with {args}."),
        serde_json::json!({"tool": tool, "arguments": args}),
    )
}

/// Add the `next_call` member (`{tool, arguments}`), the structured twin of
/// a [`continue_with`] line, when the answer has one.
pub(crate) fn next_call(structured: &mut Map<String, Value>, call: Option<Value>) {
    if let Some(call) = call {
        structured.insert("next_call".into(), call);
    }
}

pub(crate) fn method_str(m: SymbolMethod) -> &'static str {
    match m {
        SymbolMethod::Parsed => "parsed",
        SymbolMethod::Partial => "partial",
        SymbolMethod::Pattern => "pattern",
    }
}

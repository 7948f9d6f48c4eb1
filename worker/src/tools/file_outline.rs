//! `file_outline`: the definitions in one file, with what the language
//! calls each, its line range and its enclosing definition.
//!
//! The file is opened exactly as `read_file` opens it (containment, the
//! denylist, no symbolic link, no special file, no second hard link, the
//! file cap, binary refused). It is redacted whole first and the outline is
//! built from the redacted text alone, so no name or signature can carry
//! what a placeholder hides, and nothing about the hidden values changes the
//! answer. The parser is `find_symbol`'s (exact where the language has one
//! and the file parses); otherwise its patterns, and `method` says which.

use moat_protocol::limits::OUTLINE_MAX_ITEMS;
use moat_protocol::request::FileOutlineArgs;
use moat_protocol::response::{FileOutlineOutput, OutlineItem, ToolOutput};
use moat_protocol::wire_error::WireError;

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::{containment, open};
use crate::redact::RedactionReport;
use crate::sources;
use crate::symbols::{self, Language};
use crate::tools::read_file::read_bounded;

/// Run `file_outline`.
pub fn run(
    ws: &Workspace,
    args: &FileOutlineArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let path = containment::resolve(ws, &args.path)?;
    if path.is_root() {
        return Err(WireError::NotAFile);
    }
    let limit = ws.limits().max_file_bytes;
    let mut opened = open::open_file(ws, &path, limit)?;
    let bytes = read_bounded(&mut opened.file, opened.size, limit)?;
    deadline.work().read(bytes.len());
    let rel = path.rel();
    let Some(lang) = Language::from_path(rel) else {
        return Ok(ToolOutput::FileOutline(FileOutlineOutput {
            path: path.display().to_owned(),
            language: None,
            method: None,
            items: Vec::new(),
            truncated: false,
            redaction: Default::default(),
        }));
    };
    let mut report = RedactionReport::default();
    let text = sources::redact_source_bytes(ws.redactor(), &bytes, &mut report, deadline.work());
    let outline = symbols::outline(
        lang,
        rel,
        &text,
        OUTLINE_MAX_ITEMS,
        Some(deadline.instant()),
    );
    let Some(method) = outline.method else {
        return Err(WireError::TimedOut {
            budget_ms: deadline.budget_ms(),
        });
    };
    let items = outline
        .entries
        .into_iter()
        .map(|e| {
            let d = e.definition;
            let parent = d
                .qualified_name
                .strip_suffix(d.name.as_str())
                .map(|p| p.trim_end_matches('.').to_owned())
                .unwrap_or_default();
            OutlineItem {
                group: e.group,
                kind: e.kind.to_owned(),
                symbol_kind: d.kind,
                line: d.line,
                end_line: e.end_line,
                parent,
                signature: d.signature,
                name: d.name,
            }
        })
        .collect();
    Ok(ToolOutput::FileOutline(FileOutlineOutput {
        path: path.display().to_owned(),
        language: Some(lang.name().to_owned()),
        method: Some(method),
        items,
        truncated: outline.truncated,
        redaction: sources::counts(&report),
    }))
}

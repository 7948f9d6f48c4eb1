//! `list_directory`: the immediate contents of one directory.
//!
//! What it shows and passes over is the listing rule of `fs/listing.rs`:
//! symbolic links, denied entries, FIFOs, sockets and devices are counted,
//! never followed, named or opened.

use moat_protocol::request::ListDirectoryArgs;
use moat_protocol::response::{DirEntry, EntryKind, ListDirectoryOutput, ToolOutput};
use moat_protocol::wire_error::WireError;

use crate::fs::Workspace;
use crate::fs::listing::{self, PassedOver};
use crate::fs::{containment, open, skiplist};

/// What one entry's line adds to its name in the answer's text, at most
/// (`file  `, the size in bytes, the line break).
pub(crate) const ENTRY_CHARS: usize = 40;

/// Run `list_directory`.
pub fn run(ws: &Workspace, args: &ListDirectoryArgs) -> Result<ToolOutput, WireError> {
    let path = containment::resolve(ws, &args.path)?;
    let raw = open::read_dir(ws, &path)?;
    let mut passed = PassedOver::default();
    let shown = listing::visible(ws, &path, raw, args.include_hidden, &mut passed);
    let mut out = ListDirectoryOutput {
        path: path.display().to_owned(),
        entries: Vec::new(),
        directories: shown.iter().filter(|s| s.is_dir).count() as u64,
        files: shown.iter().filter(|s| !s.is_dir).count() as u64,
        hidden_by_denylist: passed.denied,
        symlinks_skipped: passed.symlinks,
        special_skipped: passed.special,
        truncated: false,
        cut_by_bytes: false,
    };
    // A later page lists the same sorted entries and skips those earlier
    // pages showed; a page ends at the entry cap or where its text would pass
    // the answer budget (each entry costs its name and its line's words), and
    // holds at least one entry.
    let cap = ws.limits().max_directory_entries as usize;
    let budget = ws.limits().answer_bytes();
    let skip = usize::try_from(args.skip).unwrap_or(usize::MAX);
    let left = shown.len().saturating_sub(skip);
    let mut used = 0usize;
    let mut taken = 0usize;
    for s in shown.iter().skip(skip).take(cap) {
        // The name as the answer shows it: where a page ends tells nothing
        // of what a placeholder hides.
        used += ws.shown(&s.name).len() + ENTRY_CHARS;
        if used > budget && taken > 0 {
            out.cut_by_bytes = true;
            break;
        }
        taken += 1;
    }
    out.truncated = left > taken;
    out.entries = shown
        .into_iter()
        .skip(skip)
        .take(taken)
        .map(|s| {
            let child = path.child(&s.name);
            DirEntry {
                walked_by_search: s.is_dir.then(|| !skiplist::is_skipped(&s.name)),
                path: child.display().to_owned(),
                kind: if s.is_dir {
                    EntryKind::Directory
                } else {
                    EntryKind::File
                },
                size_bytes: s.size,
                name: s.name,
            }
        })
        .collect();
    Ok(ToolOutput::ListDirectory(out))
}

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
    };
    // A later page lists the same sorted entries and skips those earlier
    // pages showed.
    let cap = ws.limits().max_directory_entries as usize;
    let skip = usize::try_from(args.skip).unwrap_or(usize::MAX);
    out.truncated = shown.len().saturating_sub(skip) > cap;
    out.entries = shown
        .into_iter()
        .skip(skip)
        .take(cap)
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

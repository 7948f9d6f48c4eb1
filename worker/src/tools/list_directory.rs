//! `list_directory`: the immediate contents of one directory.
//!
//! Symbolic links are counted and skipped, never followed; denied entries are
//! counted, never named; FIFOs, sockets and devices are counted and skipped
//! (never opened: entries are classified by a no-follow `fstatat`).

use moat_protocol::request::ListDirectoryArgs;
use moat_protocol::response::{DirEntry, EntryKind, ListDirectoryOutput, ToolOutput};
use moat_protocol::wire_error::WireError;

use crate::fs::Workspace;
use crate::fs::open::{self, Kind};
use crate::fs::{containment, skiplist};

/// Run `list_directory`.
pub fn run(ws: &Workspace, args: &ListDirectoryArgs) -> Result<ToolOutput, WireError> {
    let path = containment::resolve(ws, &args.path)?;
    let mut raw = open::read_dir(ws, &path)?;
    raw.sort_by_cached_key(|e| (e.name.to_lowercase(), e.name.clone()));

    let mut out = ListDirectoryOutput {
        path: path.display().to_owned(),
        entries: Vec::new(),
        directories: 0,
        files: 0,
        hidden_by_denylist: 0,
        symlinks_skipped: 0,
        special_skipped: 0,
        truncated: false,
    };
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for entry in raw {
        let Some(meta) = entry.meta else { continue };
        if meta.kind == Kind::Symlink {
            out.symlinks_skipped += 1;
            continue;
        }
        if !args.include_hidden && entry.name.starts_with('.') && entry.name != ".github" {
            continue;
        }
        let child = path.child(&entry.name);
        if ws.denylist().check_last(child.rel()).is_some() {
            out.hidden_by_denylist += 1;
            continue;
        }
        match meta.kind {
            Kind::Directory => dirs.push(DirEntry {
                walked_by_search: Some(!skiplist::is_skipped(&entry.name)),
                name: entry.name,
                path: child.display().to_owned(),
                kind: EntryKind::Directory,
                size_bytes: 0,
            }),
            Kind::File => files.push(DirEntry {
                walked_by_search: None,
                name: entry.name,
                path: child.display().to_owned(),
                kind: EntryKind::File,
                size_bytes: meta.size,
            }),
            Kind::Special(_) | Kind::Symlink => out.special_skipped += 1,
        }
    }
    out.directories = dirs.len() as u64;
    out.files = files.len() as u64;
    dirs.extend(files);
    // A later page lists the same sorted entries and skips those earlier
    // pages showed.
    let cap = ws.limits().max_directory_entries as usize;
    let skip = usize::try_from(args.skip).unwrap_or(usize::MAX);
    out.truncated = dirs.len().saturating_sub(skip) > cap;
    out.entries = dirs.into_iter().skip(skip).take(cap).collect();
    Ok(ToolOutput::ListDirectory(out))
}

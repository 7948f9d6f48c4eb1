//! One directory as the listing tools show it (`list_directory`, and each
//! level of `directory_tree`), so the rule for what a listing names is kept
//! in one place:
//!
//! * symbolic links are counted, never followed or named;
//! * names starting with `.` are left out unless asked for, but for
//!   `.github`, which is always shown;
//! * denied entries are counted, never named;
//! * FIFOs, sockets and devices are counted, never opened (entries are
//!   classified by the opener's no-follow `fstatat`).
//!
//! What is shown comes directories first, then files, each group by
//! lower-cased name (then by name, so the order is total and a page
//! position in it is stable).

use super::Workspace;
use super::containment::ContainedPath;
use super::open::{Kind, RawEntry};

/// What a listing passed over, by why.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassedOver {
    /// On the denylist.
    pub denied: u64,
    /// Symbolic links.
    pub symlinks: u64,
    /// FIFOs, sockets and devices.
    pub special: u64,
}

/// One entry a listing shows.
#[derive(Debug)]
pub struct Shown {
    /// Its name in `dir`.
    pub name: String,
    /// A directory (else a regular file).
    pub is_dir: bool,
    /// Size in bytes, as the no-follow stat saw it (0 for a directory).
    pub size: u64,
}

/// The entries of `dir` (its raw listing `raw`) a listing shows, in order;
/// what was left out is added to `passed`.
pub fn visible(
    ws: &Workspace,
    dir: &ContainedPath,
    raw: Vec<RawEntry>,
    include_hidden: bool,
    passed: &mut PassedOver,
) -> Vec<Shown> {
    let mut out = Vec::new();
    for entry in raw {
        let Some(meta) = entry.meta else { continue };
        if meta.kind == Kind::Symlink {
            passed.symlinks += 1;
            continue;
        }
        if !include_hidden && entry.name.starts_with('.') && entry.name != ".github" {
            continue;
        }
        if ws
            .denylist()
            .check_last(dir.child(&entry.name).rel())
            .is_some()
        {
            passed.denied += 1;
            continue;
        }
        match meta.kind {
            Kind::Directory => out.push(Shown {
                name: entry.name,
                is_dir: true,
                size: 0,
            }),
            Kind::File => out.push(Shown {
                name: entry.name,
                is_dir: false,
                size: meta.size,
            }),
            Kind::Special(_) | Kind::Symlink => passed.special += 1,
        }
    }
    // Ordered by the names as answers show them (redacted), so the order
    // tells nothing of what a placeholder hides.
    out.sort_by_cached_key(|s| {
        let shown = ws.shown(&s.name).into_owned();
        (!s.is_dir, shown.to_lowercase(), shown, s.name.clone())
    });
    out
}

//! Whether a repository is safe to read, decided before any git code opens
//! it, with moat's own opener (`openat2` beneath the workspace root, no link
//! followed, the opened descriptor inspected).
//!
//! The rules, each with its own [`UnsafeRule`]:
//!
//! * `.git` at the workspace root is a directory, or a regular file holding
//!   `gitdir: <path>` whose target is a directory inside the workspace reached
//!   without a symbolic link;
//! * its control files — `HEAD`, `config`, `index`, `packed-refs`, `shallow`,
//!   `commondir`, `gitdir`, `ORIG_HEAD`, `FETCH_HEAD`, `MERGE_HEAD`,
//!   `objects/info/alternates`, every file under `refs/` and `logs/` — are
//!   regular files (not symbolic links, FIFOs or devices) with one link
//!   each: a second name may be the other name of a file outside the
//!   workspace, and these files are read as they are (a ref names any
//!   object, a config names paths);
//! * the object store's files — packs, their indexes and reverse indexes,
//!   `objects/info/packs`, the commit graph — are regular files too, but may
//!   have more than one link: `git clone` of a local repository hard-links
//!   them into the clone (and so gives the original's files a second link).
//!   They are content-addressed: every object read from them is hashed and
//!   must equal the id a control file or the caller named
//!   ([`super::Repo::load`]), and a file that is not a pack or a commit
//!   graph does not parse as one, so another file's content can never be
//!   read through such a link;
//! * the directories git walks (`refs`, `logs`, `objects`, its fan-out and
//!   `pack`) are real directories, not links;
//! * `commondir` and every `objects/info/alternates` line name a directory
//!   inside the workspace.
//!
//! Loose objects are not checked one by one (there may be millions): they are
//! zlib streams whose content must hash to their name to be used, and in the
//! confined worker Landlock stops any read outside the workspace anyway.

use moat_protocol::wire_error::{UnsafeRule, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::open::{self, Kind};

/// Control files read at most, summed over `refs/`, `logs/` and packs.
pub const MAX_CONTROL_FILES: usize = 100_000;

/// Longest `gitdir:`, `commondir` or `alternates` file read.
const MAX_POINTER_BYTES: u64 = 64 * 1024;

/// Where the checked repository lives, relative to the workspace root.
#[derive(Debug, Clone)]
pub struct GitDirs {
    /// The git directory (`.git`, or the target of a `gitdir:` file).
    pub git_dir: String,
}

/// What a no-follow look at `rel` found.
enum Seen {
    Absent,
    File {
        nlink: u64,
    },
    Dir,
    /// A symbolic link (in any component) or a special file.
    Other,
}

fn look(ws: &Workspace, rel: &str) -> Seen {
    match open::stat_rel(ws, rel) {
        Ok(m) => match m.kind {
            Kind::File => Seen::File { nlink: m.nlink },
            Kind::Directory => Seen::Dir,
            Kind::Symlink | Kind::Special(_) => Seen::Other,
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Seen::Absent,
        Err(_) => Seen::Other,
    }
}

fn unsafe_(rule: UnsafeRule) -> WireError {
    WireError::UnsafeRepository(rule)
}

/// A control file: absent, or a regular file with one link.
fn control_file(ws: &Workspace, rel: &str) -> Result<bool, WireError> {
    match look(ws, rel) {
        Seen::Absent => Ok(false),
        Seen::File { nlink: 1 } => Ok(true),
        Seen::File { .. } => Err(unsafe_(UnsafeRule::ControlFileLinks)),
        Seen::Dir | Seen::Other => Err(unsafe_(UnsafeRule::ControlFileKind)),
    }
}

/// An object-store file: absent, or a regular file (any number of links).
fn store_file(ws: &Workspace, rel: &str) -> Result<bool, WireError> {
    match look(ws, rel) {
        Seen::Absent => Ok(false),
        Seen::File { .. } => Ok(true),
        Seen::Dir | Seen::Other => Err(unsafe_(UnsafeRule::ControlFileKind)),
    }
}

/// A directory git walks: absent, or a real directory.
fn control_dir(ws: &Workspace, rel: &str) -> Result<bool, WireError> {
    match look(ws, rel) {
        Seen::Absent => Ok(false),
        Seen::Dir => Ok(true),
        Seen::File { .. } | Seen::Other => Err(unsafe_(UnsafeRule::ControlFileKind)),
    }
}

/// Read a small pointer file (already checked to be a regular file).
fn read_pointer(ws: &Workspace, rel: &str, rule: UnsafeRule) -> Result<String, WireError> {
    let bytes = open::read_for_scan(ws, rel, MAX_POINTER_BYTES).map_err(|_| unsafe_(rule))?;
    String::from_utf8(bytes).map_err(|_| unsafe_(rule))
}

/// Resolve `target` (absolute, or relative to the directory `base`, both
/// relative to the root) to a clean root-relative path inside the workspace
/// that is a real directory reached without a link; `None` otherwise.
fn inside_dir(ws: &Workspace, base: &str, target: &str) -> Option<String> {
    let target = target.trim_end_matches(['\r', '\n']);
    if target.is_empty() || target.contains('\0') {
        return None;
    }
    let path = std::path::Path::new(target);
    let mut parts: Vec<String> = Vec::new();
    let joined;
    let walk: &std::path::Path = if path.is_absolute() {
        path.strip_prefix(ws.root()).ok()?
    } else {
        joined = std::path::Path::new(base).join(path);
        &joined
    };
    for c in walk.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_str()?.to_owned()),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                parts.pop()?;
            }
            _ => return None,
        }
    }
    let rel = parts.join("/");
    if rel.is_empty() {
        return None;
    }
    match look(ws, &rel) {
        Seen::Dir => Some(rel),
        _ => None,
    }
}

/// Check the repository at the workspace root. `Ok(None)`: there is none.
pub fn check(ws: &Workspace, deadline: &Deadline) -> Result<Option<GitDirs>, WireError> {
    let git_dir = match look(ws, ".git") {
        Seen::Absent => return Ok(None),
        Seen::Dir => ".git".to_owned(),
        Seen::File { nlink } => {
            if nlink != 1 {
                return Err(unsafe_(UnsafeRule::ControlFileLinks));
            }
            let text = read_pointer(ws, ".git", UnsafeRule::GitdirOutside)?;
            let target = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("gitdir:"))
                .map(str::trim)
                .ok_or(unsafe_(UnsafeRule::GitdirOutside))?;
            inside_dir(ws, "", target).ok_or(unsafe_(UnsafeRule::GitdirOutside))?
        }
        Seen::Other => return Err(unsafe_(UnsafeRule::DotGitKind)),
    };
    let g = |name: &str| format!("{git_dir}/{name}");
    for name in [
        "HEAD",
        "config",
        "index",
        "packed-refs",
        "shallow",
        "gitdir",
        "ORIG_HEAD",
        "FETCH_HEAD",
        "MERGE_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
        "objects/info/http-alternates",
    ] {
        control_file(ws, &g(name))?;
    }
    // Object-store files: regular, any number of links.
    for name in ["objects/info/commit-graph", "objects/info/packs"] {
        store_file(ws, &g(name))?;
    }
    // A common directory (linked work tree): inside, and checked the same way.
    let mut dirs = vec![git_dir.clone()];
    if control_file(ws, &g("commondir"))? {
        let text = read_pointer(ws, &g("commondir"), UnsafeRule::CommondirOutside)?;
        let target = text.lines().next().unwrap_or("").trim();
        let common =
            inside_dir(ws, &git_dir, target).ok_or(unsafe_(UnsafeRule::CommondirOutside))?;
        for name in ["config", "packed-refs", "shallow", "commondir"] {
            control_file(ws, &format!("{common}/{name}"))?;
        }
        dirs.push(common);
    }
    let mut budget = MAX_CONTROL_FILES;
    for dir in &dirs {
        for sub in ["refs", "logs"] {
            walk_files(ws, &format!("{dir}/{sub}"), &mut budget, deadline, false)?;
        }
        check_objects(ws, dir, &mut budget, deadline)?;
    }
    Ok(Some(GitDirs { git_dir }))
}

/// Every entry under `dir` is a real directory or a control file (with
/// `linked_ok`, an object-store file, which may have more than one link).
fn walk_files(
    ws: &Workspace,
    dir: &str,
    budget: &mut usize,
    deadline: &Deadline,
    linked_ok: bool,
) -> Result<(), WireError> {
    if !control_dir(ws, dir)? {
        return Ok(());
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        if deadline.expired() {
            return Err(WireError::TimedOut {
                budget_ms: deadline.budget_ms(),
            });
        }
        let path = crate::fs::ContainedPath::root().child_path(&d);
        let entries =
            open::read_dir(ws, &path).map_err(|_| unsafe_(UnsafeRule::ControlFileKind))?;
        for e in entries {
            *budget = budget
                .checked_sub(1)
                .ok_or(unsafe_(UnsafeRule::TooManyControlFiles))?;
            let rel = format!("{d}/{}", e.name);
            match e.meta.map(|m| (m.kind, m.nlink)) {
                Some((Kind::Directory, _)) => stack.push(rel),
                Some((Kind::File, 1)) => {}
                Some((Kind::File, _)) if linked_ok => {}
                Some((Kind::File, _)) => return Err(unsafe_(UnsafeRule::ControlFileLinks)),
                _ => return Err(unsafe_(UnsafeRule::ControlFileKind)),
            }
        }
    }
    Ok(())
}

/// `objects/`, its fan-out directories and `pack/` are real directories;
/// packs and their indexes are control files; alternates stay inside.
fn check_objects(
    ws: &Workspace,
    dir: &str,
    budget: &mut usize,
    deadline: &Deadline,
) -> Result<(), WireError> {
    let objects = format!("{dir}/objects");
    if !control_dir(ws, &objects)? {
        return Ok(());
    }
    let entries = open::read_dir(ws, &crate::fs::ContainedPath::root().child_path(&objects))
        .map_err(|_| unsafe_(UnsafeRule::ControlFileKind))?;
    for e in &entries {
        *budget = budget
            .checked_sub(1)
            .ok_or(unsafe_(UnsafeRule::TooManyControlFiles))?;
        if !matches!(e.meta.map(|m| m.kind), Some(Kind::Directory)) {
            return Err(unsafe_(UnsafeRule::ControlFileKind));
        }
    }
    walk_files(ws, &format!("{objects}/pack"), budget, deadline, true)?;
    let alternates = format!("{objects}/info/alternates");
    control_dir(ws, &format!("{objects}/info"))?;
    if control_file(ws, &alternates)? {
        let text = read_pointer(ws, &alternates, UnsafeRule::AlternatesOutside)?;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let store =
                inside_dir(ws, &objects, line).ok_or(unsafe_(UnsafeRule::AlternatesOutside))?;
            // The alternate's own packs and alternates follow the same rules
            // (one level: a chain of alternates is refused).
            if control_file(ws, &format!("{store}/info/alternates"))? {
                return Err(unsafe_(UnsafeRule::AlternatesOutside));
            }
            walk_files(ws, &format!("{store}/pack"), budget, deadline, true)?;
        }
    }
    Ok(())
}

/// What `moat doctor` says of the workspace's repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No `.git` at the workspace root.
    None,
    /// A repository the git tools read.
    Readable,
    /// A repository the git tools refuse, and the rule it breaks.
    Unsafe(UnsafeRule),
}

/// Check the workspace's repository as the git tools do, for `moat doctor`.
#[must_use]
pub fn verdict(ws: &Workspace) -> Verdict {
    let deadline = Deadline::after(std::time::Duration::from_secs(10));
    match check(ws, &deadline) {
        Ok(None) => Verdict::None,
        Ok(Some(_)) => Verdict::Readable,
        Err(WireError::UnsafeRepository(rule)) => Verdict::Unsafe(rule),
        Err(_) => Verdict::Unsafe(UnsafeRule::TooManyControlFiles),
    }
}

//! The one tree walk shared by `search_code`, `find_symbol` and
//! `project_overview`: ripgrep's `ignore` crate, in parallel.
//!
//! What is never walked:
//! * symbolic links (neither followed nor yielded);
//! * the generated trees of [`crate::fs::skiplist`];
//! * anything the denylist refuses (a denied directory is pruned whole, so its
//!   files are never opened);
//! * with `respect_gitignore`, what `.gitignore`, `.ignore` and
//!   `.git/info/exclude` inside the workspace exclude. Ignore files outside the
//!   workspace (the user's global gitignore, parents of the root) are never read;
//! * special files: only entries the directory says are regular files are
//!   yielded, and the reader re-checks the opened descriptor.
//!
//! The walk always starts at the workspace root so that `.gitignore` rules
//! apply the same whichever subdirectory is searched; directories that are not
//! on the way to the requested subtree are pruned.
//!
//! Nothing else is dropped silently: an entry the walk cannot examine (a
//! directory it cannot read, its path too long for the kernel, an entry
//! gone between listing and opening, a name that is not UTF-8) is counted
//! in [`Summary::skipped`] with its reason, and callers report it in their
//! answers' skipped figures.
//!
//! Order is not deterministic (threads race); callers sort their results.

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ignore::{WalkBuilder, WalkState};
use moat_protocol::response::SkipReasons;

use crate::deadline::Deadline;
use crate::fs::ContainedPath;
use crate::fs::Workspace;
use crate::fs::denylist::Denylist;
use crate::fs::skiplist;

/// Walk options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Honour `.gitignore`/`.ignore`/`.git/info/exclude`.
    pub respect_gitignore: bool,
    /// Stop after this many files are yielded.
    pub max_files: u32,
}

/// A regular file found by the walk.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// Workspace-relative POSIX path.
    pub rel: &'a str,
    /// Base name.
    pub name: &'a str,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct Summary {
    /// Files yielded.
    pub files: u64,
    /// Stopped at the file cap.
    pub capped: bool,
    /// Stopped at the deadline.
    pub timed_out: bool,
    /// Entries the walk could not examine, by reason.
    pub skipped: SkipReasons,
}

/// Why an entry could not be examined, from the error the walk met.
#[must_use]
pub fn skip_reason_of(e: &std::io::Error) -> SkipReason {
    use std::io::ErrorKind;
    match e.kind() {
        // ENAMETOOLONG on Unix.
        ErrorKind::InvalidFilename => SkipReason::PathTooLong,
        ErrorKind::NotFound | ErrorKind::NotADirectory => SkipReason::Vanished,
        _ => SkipReason::Unreadable,
    }
}

/// One reason a file was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Its path is too long for the kernel.
    PathTooLong,
    /// It could not be opened or read.
    Unreadable,
    /// It had gone (or changed kind) when opened.
    Vanished,
    /// Its name is not UTF-8.
    NameNotUtf8,
    /// Binary, or not UTF-8 text.
    Binary,
    /// Over the per-file cap.
    TooLarge,
    /// A second name for a file.
    HardLink,
}

impl SkipReason {
    /// Count one file skipped for this reason.
    pub fn count(self, into: &mut SkipReasons) {
        let slot = match self {
            SkipReason::PathTooLong => &mut into.path_too_long,
            SkipReason::Unreadable => &mut into.unreadable,
            SkipReason::Vanished => &mut into.vanished,
            SkipReason::NameNotUtf8 => &mut into.name_not_utf8,
            SkipReason::Binary => &mut into.binary,
            SkipReason::TooLarge => &mut into.too_large,
            SkipReason::HardLink => &mut into.hard_link,
        };
        *slot += 1;
    }
}

impl From<crate::fs::open::ScanSkip> for SkipReason {
    fn from(s: crate::fs::open::ScanSkip) -> SkipReason {
        use crate::fs::open::ScanSkip;
        match s {
            ScanSkip::TooLarge => SkipReason::TooLarge,
            // Listed as a regular file, something else when opened.
            ScanSkip::NotRegular => SkipReason::Vanished,
            ScanSkip::HardLink => SkipReason::HardLink,
            ScanSkip::Unreadable => SkipReason::Unreadable,
        }
    }
}

fn count(skipped: &Mutex<SkipReasons>, reason: SkipReason) {
    if let Ok(mut s) = skipped.lock() {
        reason.count(&mut s);
    }
}

/// Why the walk could not examine an entry it met as an error. `None` for
/// errors that are not about an entry (a malformed pattern in an ignore
/// file).
fn walk_error_reason(e: &ignore::Error) -> Option<SkipReason> {
    e.io_error().map(skip_reason_of)
}

/// Threads for a walk: the CPUs this process may use, at most 8.
#[must_use]
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8))
}

/// Walk the regular files beneath `start`, calling a visitor built by
/// `make_visitor` (once per thread) for each. A visitor returns `false` to stop
/// the whole walk.
pub fn walk<B, V>(
    ws: &Workspace,
    start: &ContainedPath,
    opts: Options,
    deadline: &Deadline,
    mut make_visitor: B,
) -> Summary
where
    B: FnMut() -> V,
    V: FnMut(Found<'_>) -> bool + Send,
{
    let root = ws.root().to_path_buf();
    let deny = Arc::new(ws.denylist().clone());
    let skipped = Arc::new(Mutex::new(SkipReasons::default()));
    let start_rel: Arc<str> = Arc::from(start.rel());
    let mut builder = WalkBuilder::new(&root);
    builder
        .standard_filters(false)
        .hidden(false)
        .parents(false)
        .ignore(opts.respect_gitignore)
        .git_ignore(opts.respect_gitignore)
        .git_exclude(opts.respect_gitignore)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .threads(threads());
    {
        let root = root.clone();
        let start_rel = Arc::clone(&start_rel);
        let skipped = Arc::clone(&skipped);
        builder.filter_entry(move |entry| keep(entry, &root, &deny, &start_rel, &skipped));
    }
    let files = AtomicU64::new(0);
    let capped = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let max = u64::from(opts.max_files);
    builder.build_parallel().run(|| {
        let mut visit = make_visitor();
        let root = root.as_path();
        let start_rel = &start_rel;
        let (files, capped, timed_out) = (&files, &capped, &timed_out);
        let skipped = &skipped;
        Box::new(move |entry| {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    // Within the requested subtree (or not knowable): counted.
                    let inside = e_path(&e)
                        .and_then(|p| relative(root, p))
                        .is_none_or(|rel| within(&rel, start_rel) || leads_to(&rel, start_rel));
                    if inside && let Some(reason) = walk_error_reason(&e) {
                        count(skipped, reason);
                    }
                    return WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = relative(root, entry.path()) else {
                count(skipped, SkipReason::NameNotUtf8);
                return WalkState::Continue;
            };
            if !within(&rel, start_rel) {
                return WalkState::Continue;
            }
            if deadline.expired() {
                timed_out.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            if files.fetch_add(1, Ordering::Relaxed) >= max {
                files.fetch_sub(1, Ordering::Relaxed);
                capped.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            deadline.file_seen();
            let rel: &str = &rel;
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if visit(Found { rel, name }) {
                WalkState::Continue
            } else {
                WalkState::Quit
            }
        })
    });
    Summary {
        files: files.load(Ordering::Relaxed),
        capped: capped.load(Ordering::Relaxed),
        timed_out: timed_out.load(Ordering::Relaxed),
        skipped: skipped.lock().map(|s| *s).unwrap_or_default(),
    }
}

/// The path an error is about, if it names one.
fn e_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            e_path(err)
        }
        _ => None,
    }
}

/// `path` relative to `root`, in its text form ([`moat_protocol::name`]):
/// borrowed for ordinary names, escaped for the others (a name that is not
/// valid UTF-8 is walked too, and every tool accepts its text form back).
fn relative<'p>(root: &Path, path: &'p Path) -> Option<Cow<'p, str>> {
    let rel = path.strip_prefix(root).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(moat_protocol::name::encode(rel.as_os_str().as_bytes()))
    }
    #[cfg(not(unix))]
    {
        let text = rel.to_str()?;
        Some(match moat_protocol::name::encode(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(o) => Cow::Owned(o),
        })
    }
}

/// Whether `rel` is inside `start` (or is it); `start` empty = the root.
fn within(rel: &str, start: &str) -> bool {
    start.is_empty()
        || rel == start
        || (rel.starts_with(start) && rel.as_bytes().get(start.len()) == Some(&b'/'))
}

/// Whether `rel` is a strict ancestor directory of `start`.
fn leads_to(rel: &str, start: &str) -> bool {
    start.starts_with(rel) && start.as_bytes().get(rel.len()) == Some(&b'/')
}

fn keep(
    entry: &ignore::DirEntry,
    root: &Path,
    deny: &Denylist,
    start: &str,
    skipped: &Mutex<SkipReasons>,
) -> bool {
    if entry.depth() == 0 {
        return true;
    }
    if entry.path_is_symlink() {
        return false;
    }
    let Some(rel) = relative(root, entry.path()) else {
        // Not nameable in an answer: pruned, but counted.
        count(skipped, SkipReason::NameNotUtf8);
        return false;
    };
    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
    if is_dir && entry.file_name().to_str().is_some_and(skiplist::is_skipped) {
        return false;
    }
    if deny.check_last(&rel).is_some() {
        return false;
    }
    within(&rel, start) || (is_dir && leads_to(&rel, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtree_rules() {
        assert!(within("a/b", ""));
        assert!(within("a/b", "a"));
        assert!(within("a", "a"));
        assert!(!within("ab/c", "a"));
        assert!(leads_to("a", "a/b/c"));
        assert!(leads_to("a/b", "a/b/c"));
        assert!(!leads_to("a/b/c", "a/b/c"));
        assert!(!leads_to("a/bx", "a/b/c"));
    }
}

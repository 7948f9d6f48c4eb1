//! The one tree walk shared by the walking tools (`search_code`,
//! `find_files`, `find_symbol`, `find_references`, `project_overview`):
//! ripgrep's `ignore` crate lists the tree in parallel, the files are put in
//! one order, and the visitors run over them in that order.
//!
//! What is not walked, each entry counted by its reason
//! ([`Summary::skipped`]), never dropped unseen:
//! * symbolic links (neither followed nor yielded);
//! * version-control stores (`.git`, `.hg`, `.svn`): not part of the tree
//!   a search is about, never walked and not counted;
//! * the generated trees of [`crate::fs::skiplist`], unless the request
//!   includes them (`generated`);
//! * anything the denylist refuses (a denied directory is pruned whole, so
//!   its files are never opened; `denied`);
//! * with `respect_gitignore`, what ignore files exclude ([`rules`]:
//!   `.gitignore` inside a git repository only, `.ignore` anywhere;
//!   `ignored`). Ignore files outside the workspace (the user's global
//!   gitignore, parents of the root) are never read;
//! * special files: only entries the directory says are regular files are
//!   yielded, and the reader re-checks the opened descriptor.
//!
//! The path a request names is walked whatever it is called and whatever an
//! ignore file says of it (or of a directory on the way to it): the caller
//! asked for it. Inside it the rules apply as anywhere.
//!
//! The walk starts at the workspace root so that ignore rules apply the
//! same whichever subdirectory is searched; directories that are not on the
//! way to the requested subtree are pruned.
//!
//! **One order, one subset.** The files are visited in the byte order of
//! their paths, and a walk cut at `max_files` keeps the first `max_files`
//! of that order: the same call gives the same subset every time, whatever
//! the threads did. (A walk cut by the deadline is a prefix of that order
//! too, but how long a prefix depends on time.)
//!
//! An entry the walk cannot examine (a directory it cannot read, its path
//! too long for the kernel, an entry gone between listing and opening, a
//! name that is not UTF-8) is counted with its reason, and callers report
//! it in their answers' skipped figures.

mod rules;

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// Walk the generated trees of the skip list too.
    pub include_generated: bool,
    /// Visit at most this many files (the first in path order).
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
    /// Files visited.
    pub files: u64,
    /// Files the walk found (visited or not: past the cap or the deadline).
    pub found: u64,
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

/// Most file names one walk collects before it visits any: a walk that
/// finds more is cut there (reported as the file cap), so the names of a
/// huge tree cannot exhaust the worker's memory.
pub const MAX_NAMES: u64 = 2_000_000;

/// Walk the regular files beneath `start`, calling a visitor built by
/// `make_visitor` (once per thread) for each, in path order. A visitor
/// returns `false` to stop the whole walk.
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
    let (mut names, mut summary) = list(ws, start, opts, deadline);
    names.sort_unstable();
    summary.found = names.len() as u64;
    let max = usize::try_from(opts.max_files).unwrap_or(usize::MAX);
    if names.len() > max {
        names.truncate(max);
        summary.capped = true;
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let visited = AtomicU64::new(0);
    let timed_out = AtomicBool::new(summary.timed_out);
    let threads = threads().min(names.len().max(1));
    let visitors: Vec<V> = (0..threads).map(|_| make_visitor()).collect();
    std::thread::scope(|scope| {
        for mut visit in visitors {
            let (names, next, stop, visited, timed_out) =
                (&names, &next, &stop, &visited, &timed_out);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(rel) = names.get(i) else {
                        break;
                    };
                    if deadline.expired() {
                        timed_out.store(true, Ordering::Relaxed);
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                    deadline.file_seen();
                    visited.fetch_add(1, Ordering::Relaxed);
                    let name = rel.rsplit('/').next().unwrap_or(rel);
                    if !visit(Found { rel, name }) {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    summary.files = visited.load(Ordering::Relaxed);
    summary.timed_out = timed_out.load(Ordering::Relaxed);
    summary
}

/// The paths of the regular files beneath `start` (in no order), and what
/// the listing skipped.
fn list(
    ws: &Workspace,
    start: &ContainedPath,
    opts: Options,
    deadline: &Deadline,
) -> (Vec<String>, Summary) {
    let root = ws.root().to_path_buf();
    let filter = Arc::new(Filter {
        root: root.clone(),
        deny: ws.denylist().clone(),
        start: start.rel().to_owned(),
        rules: opts
            .respect_gitignore
            .then(|| rules::Rules::new(&root, ws.inside_repository())),
        include_generated: opts.include_generated,
        skipped: Mutex::new(SkipReasons::default()),
    });
    let mut builder = WalkBuilder::new(&root);
    builder
        .standard_filters(false)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_ignore(false)
        .git_exclude(false)
        .git_global(false)
        .follow_links(false)
        .threads(threads());
    {
        let filter = Arc::clone(&filter);
        builder.filter_entry(move |entry| filter.keep(entry));
    }
    let names: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let found = AtomicU64::new(0);
    let capped = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    builder.build_parallel().run(|| {
        let root = root.as_path();
        let filter = &filter;
        let (found, capped, timed_out) = (&found, &capped, &timed_out);
        let names = &names;
        let mut mine = Batch {
            names,
            mine: Vec::new(),
        };
        let mut seen = 0u32;
        Box::new(move |entry| {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    // Within the requested subtree (or not knowable): counted.
                    let inside = e_path(&e)
                        .and_then(|p| relative(root, p))
                        .is_none_or(|rel| {
                            within(&rel, &filter.start) || leads_to(&rel, &filter.start)
                        });
                    if inside && let Some(reason) = walk_error_reason(&e) {
                        count(&filter.skipped, reason);
                    }
                    return WalkState::Continue;
                }
            };
            seen = seen.wrapping_add(1);
            if seen.is_multiple_of(256) && deadline.expired() {
                timed_out.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = relative(root, entry.path()) else {
                count(&filter.skipped, SkipReason::NameNotUtf8);
                return WalkState::Continue;
            };
            if !within(&rel, &filter.start) {
                return WalkState::Continue;
            }
            if found.fetch_add(1, Ordering::Relaxed) >= MAX_NAMES {
                capped.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            mine.push(rel.into_owned());
            WalkState::Continue
        })
    });
    // Each thread's last names are flushed when its visitor is dropped.
    let names = names.into_inner().unwrap_or_default();
    let skipped = filter.skipped.lock().map(|s| *s).unwrap_or_default();
    let summary = Summary {
        files: 0,
        found: 0,
        capped: capped.load(Ordering::Relaxed),
        timed_out: timed_out.load(Ordering::Relaxed),
        skipped,
    };
    (names, summary)
}

/// One listing thread's names, moved into the shared list in batches and
/// when the thread's visitor is dropped.
struct Batch<'a> {
    names: &'a Mutex<Vec<String>>,
    mine: Vec<String>,
}

impl Batch<'_> {
    fn push(&mut self, rel: String) {
        self.mine.push(rel);
        if self.mine.len() >= 4096 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Ok(mut all) = self.names.lock() {
            all.append(&mut self.mine);
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
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

/// What decides, per entry, whether the walk goes in.
struct Filter {
    root: std::path::PathBuf,
    deny: Denylist,
    /// The requested subtree (`""` for the root).
    start: String,
    /// Ignore rules, when the request respects them.
    rules: Option<rules::Rules>,
    include_generated: bool,
    skipped: Mutex<SkipReasons>,
}

impl Filter {
    fn keep(&self, entry: &ignore::DirEntry) -> bool {
        if entry.depth() == 0 {
            return true;
        }
        if entry.path_is_symlink() {
            return false;
        }
        let Some(rel) = relative(&self.root, entry.path()) else {
            // Not nameable in an answer: pruned, but counted.
            count(&self.skipped, SkipReason::NameNotUtf8);
            return false;
        };
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let on_the_way = is_dir && leads_to(&rel, &self.start);
        let inside = within(&rel, &self.start);
        if !inside && !on_the_way {
            return false;
        }
        if self.deny.check_last(&rel).is_some() {
            self.count(|s| &mut s.denied);
            return false;
        }
        // The named path and the directories on the way to it are walked
        // whatever their names and whatever an ignore file says.
        let named = on_the_way || rel == self.start;
        if named {
            return true;
        }
        let dir_name = is_dir.then(|| entry.file_name().to_str()).flatten();
        if dir_name.is_some_and(skiplist::is_vcs_store) {
            return false;
        }
        if !self.include_generated && dir_name.is_some_and(skiplist::is_skipped) {
            self.count(|s| &mut s.generated);
            return false;
        }
        if let Some(rules) = &self.rules
            && rules.ignored(&rel, is_dir)
        {
            self.count(|s| &mut s.ignored);
            return false;
        }
        true
    }

    fn count(&self, slot: impl FnOnce(&mut SkipReasons) -> &mut u64) {
        if let Ok(mut s) = self.skipped.lock() {
            *slot(&mut s) += 1;
        }
    }
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

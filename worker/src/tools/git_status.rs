//! `git_status`: the branch (or detached HEAD), its upstream's ahead and
//! behind counts from local refs, and the staged, unstaged and untracked
//! paths, each with its status letter.
//!
//! # Containment: the work-tree side is moat's own
//!
//! gitoxide's status (and its directory walk) opens, stats and reads
//! work-tree files and ignore files with its own file access, and needs the
//! attribute and filter machinery this worker is built without. Containment
//! wins over convenience, so the work-tree side is computed here:
//!
//! * a tracked file is read only through `read_file`'s opener
//!   ([`worktree::read`]: containment, denylist, no link followed, one hard
//!   link, no special file, at most `max_file_bytes`), hashed as a blob and
//!   compared with the index's id; what the opener refuses is listed by name
//!   with `X` (not compared), never read through a side door. A file whose
//!   stat still matches the one the index recorded is not read at all, by
//!   git's own rule ([`IndexStats`]: the stat taken through the same opener,
//!   racily clean entries read). A no-follow
//!   stat first tells a type change (`T`: a file that became a symbolic link,
//!   a directory or a special file) and a deletion (`D`);
//! * untracked paths come from moat's own listing ([`open::read_dir`],
//!   `openat2` beneath the root, no link followed): symbolic links are
//!   listed by name, never followed; special files are not listed (git does
//!   not list them either); an untracked directory is one `dir/` entry,
//!   listed only when it holds, at some depth, a file or link that is
//!   neither ignored nor denylisted (git lists it only then); nothing inside
//!   it is named or counted;
//! * `.gitignore` files and `.git/info/exclude` are read through the same
//!   opener and matched with the `ignore` crate's gitignore matcher (no
//!   global or system excludes).
//!
//! The index against HEAD compares object ids only (no content is read).
//! A path the denylist covers is never compared, named or read: it is
//! counted once in `withheld_by_denylist` whether it changed or not.
//! Every list is sorted by path; the entry cap counts the three lists
//! together, and the counts are of everything found.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

use gix::ObjectId;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use moat_protocol::limits::{MAX_AHEAD_BEHIND_WALK, MAX_STATUS_WALK};
use moat_protocol::request::GitStatusArgs;
use moat_protocol::response::{GitStatusOutput, Limit, StatusEntry, ToolOutput, Upstream};
use moat_protocol::wire_error::{GitReason, GitTool, WireError};

use crate::deadline::Deadline;
use crate::fs::ContainedPath;
use crate::fs::Workspace;
use crate::fs::denylist::PathChecker;
use crate::fs::open::{self, Kind};
use crate::git::worktree::{self, IndexStats, Side};
use crate::git::{self, Entries, Repo};

const GITLINK: u32 = 0o160000;
const SYMLINK: u32 = 0o120000;
/// Largest ignore file read.
const MAX_IGNORE_BYTES: u64 = 1024 * 1024;

/// Run `git_status`.
pub fn run(
    ws: &Workspace,
    args: &GitStatusArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let repo = git::open(ws, GitTool::Status, deadline)?;
    let soft = deadline.within(deadline.remaining().mul_f64(0.8));
    let head = repo.head()?;
    let branch = repo.head_branch()?;
    let upstream = match &branch {
        Some((full, _)) => repo.upstream(full).map(|(name, id)| {
            let counts = match (head, id) {
                (Some(a), Some(b)) => ahead_behind(&repo, a, b, &soft).ok().flatten(),
                _ => None,
            };
            Upstream {
                name,
                ahead: counts.map(|c| c.0),
                behind: counts.map(|c| c.1),
            }
        }),
        None => None,
    };
    let head_tree = match head {
        Some(id) => repo.flatten(repo.tree_of(id)?, "", deadline)?,
        None => Entries::new(),
    };
    let (index, stats) = repo.index_with_stats("", deadline)?;
    let mut denied: BTreeSet<String> = BTreeSet::new();
    let staged = staged(ws, &head_tree, &index, &mut denied);
    let staged = crate::tools::git_diff::pair_status_renames(
        ws, &repo, staged, &head_tree, &index, deadline,
    )?;
    let mut truncation = None;
    let unstaged = unstaged(
        ws,
        &repo,
        (&index, &stats),
        &mut denied,
        &soft,
        &mut truncation,
    )?;
    let mut untracked = Vec::new();
    if args.untracked && truncation.is_none() {
        let tracked: BTreeSet<&str> = index.keys().map(String::as_str).collect();
        let mut walk = Walk {
            ws,
            tracked: &tracked,
            denied: &mut denied,
            out: &mut untracked,
            ignores: Vec::new(),
            seen: 0,
        };
        truncation = walk.run(&soft)?;
    }
    let (staged_count, unstaged_count, untracked_count) = (
        staged.len() as u64,
        unstaged.len() as u64,
        untracked.len() as u64,
    );
    let mut room = args.max_entries as usize;
    let mut take = |mut v: Vec<StatusEntry>| {
        if v.len() > room {
            v.truncate(room);
            truncation.get_or_insert(Limit::Entries);
        }
        room -= v.len();
        v
    };
    let (staged, unstaged, untracked) = (take(staged), take(unstaged), take(untracked));
    Ok(ToolOutput::GitStatus(GitStatusOutput {
        branch: branch.map(|(_, short)| short),
        head: head.map(|h| h.to_hex().to_string()),
        upstream,
        staged,
        unstaged,
        untracked,
        staged_count,
        unstaged_count,
        untracked_count,
        // Counted by the denied directory or name each path is under, so
        // that what a denied directory holds does not show.
        withheld_by_denylist: denied
            .iter()
            .filter_map(|p| ws.denylist().denied_root(p))
            .collect::<BTreeSet<&str>>()
            .len() as u64,
        truncation,
        entry_cap: ws.limits().max_git_entries,
    }))
}

fn entry(path: &str, status: char) -> StatusEntry {
    StatusEntry {
        path: path.to_owned(),
        status,
        from: None,
    }
}

/// The index against HEAD: object ids and modes only, both walked in path
/// order together.
fn staged(
    ws: &Workspace,
    head: &Entries,
    index: &Entries,
    denied: &mut BTreeSet<String>,
) -> Vec<StatusEntry> {
    let mut checker = PathChecker::new(ws.denylist());
    let mut out = Vec::new();
    let (mut h, mut i) = (head.iter().peekable(), index.iter().peekable());
    loop {
        let (path, pair) = match (h.peek(), i.peek()) {
            (None, None) => break,
            (Some((hp, he)), Some((ip, ie))) if hp == ip => {
                let next = (*hp, (Some(*he), Some(*ie)));
                h.next();
                i.next();
                next
            }
            (Some((hp, he)), Some((ip, _))) if hp < ip => {
                let next = (*hp, (Some(*he), None));
                h.next();
                next
            }
            (Some((hp, he)), None) => {
                let next = (*hp, (Some(*he), None));
                h.next();
                next
            }
            (_, Some((ip, ie))) => {
                let next = (*ip, (None, Some(*ie)));
                i.next();
                next
            }
        };
        if checker.check(path).is_some() {
            denied.insert(path.clone());
            continue;
        }
        let status = match pair {
            (None, Some(_)) => 'A',
            (Some(_), None) => 'D',
            (Some(h), Some(i)) if h == i => continue,
            (Some(h), Some(i)) if kind(h.mode) != kind(i.mode) => 'T',
            _ => 'M',
        };
        out.push(entry(path, status));
    }
    out
}

/// A mode's kind: regular file, symbolic link or submodule.
fn kind(mode: u32) -> u32 {
    match mode {
        SYMLINK | GITLINK => mode,
        _ => 0o100000,
    }
}

/// The work tree against the index, read through `read_file`'s opener.
fn unstaged(
    ws: &Workspace,
    repo: &Repo,
    (index, stats): (&Entries, &IndexStats),
    denied: &mut BTreeSet<String>,
    deadline: &Deadline,
    truncation: &mut Option<Limit>,
) -> Result<Vec<StatusEntry>, WireError> {
    let mut checker = PathChecker::new(ws.denylist());
    let mut out = Vec::new();
    let exec_bit = repo.exec_bit();
    for (path, e) in index {
        if deadline.expired() {
            *truncation = Some(Limit::Time);
            break;
        }
        if checker.check(path).is_some() {
            denied.insert(path.clone());
            continue;
        }
        if e.mode == GITLINK {
            // A submodule's work tree is not looked into.
            continue;
        }
        if stats.unchanged(ws, path, e.mode) {
            continue;
        }
        let meta = match open::stat_rel(ws, path) {
            Ok(m) => m,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                out.push(entry(path, 'D'));
                continue;
            }
            Err(_) => {
                out.push(entry(path, 'X'));
                continue;
            }
        };
        let same_kind = match meta.kind {
            Kind::File => e.mode != SYMLINK,
            Kind::Symlink => e.mode == SYMLINK,
            Kind::Directory | Kind::Special(_) => false,
        };
        if !same_kind {
            out.push(entry(path, 'T'));
            continue;
        }
        match worktree::read(ws, path, e.mode) {
            Side::Missing => out.push(entry(path, 'D')),
            Side::Refused(_) => out.push(entry(path, 'X')),
            Side::Bytes(bytes) => {
                let id = gix::objs::compute_hash(repo.hash_kind(), gix::objs::Kind::Blob, &bytes)
                    .map_err(|_| repo.fail(GitReason::Unreadable))?;
                if id != e.id || worktree::mode_of(ws, path, e.mode, exec_bit) != e.mode {
                    out.push(entry(path, 'M'));
                }
            }
        }
    }
    Ok(out)
}

/// The untracked-path walk: moat's own listing, ignore files read through
/// moat's opener.
struct Walk<'a> {
    ws: &'a Workspace,
    tracked: &'a BTreeSet<&'a str>,
    denied: &'a mut BTreeSet<String>,
    out: &'a mut Vec<StatusEntry>,
    /// The ignore matchers of the directories above the one being listed,
    /// outermost first.
    ignores: Vec<(String, Gitignore)>,
    seen: u64,
}

impl Walk<'_> {
    fn host(&self, rel: &str) -> PathBuf {
        self.ws.root().join(rel)
    }

    /// A matcher built from `files` (root-relative), anchored at `dir`.
    fn matcher(&self, dir: &str, files: &[String]) -> Option<Gitignore> {
        let mut builder = GitignoreBuilder::new(self.host(dir));
        let mut any = false;
        for f in files {
            let Ok(bytes) = open::read_for_scan(self.ws, f, MAX_IGNORE_BYTES) else {
                continue;
            };
            for line in String::from_utf8_lossy(&bytes).lines() {
                any |= builder.add_line(None, line).is_ok();
            }
        }
        if !any {
            return None;
        }
        builder.build().ok()
    }

    fn ignored(&self, rel: &str, is_dir: bool) -> bool {
        let host = self.host(rel);
        for (_, gi) in self.ignores.iter().rev() {
            let m = gi.matched(&host, is_dir);
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
        }
        false
    }

    /// Whether any tracked path lies beneath the directory `rel`.
    fn holds_tracked(&self, rel: &str) -> bool {
        let prefix = format!("{rel}/");
        self.tracked
            .range(prefix.as_str()..)
            .next()
            .is_some_and(|p| p.starts_with(&prefix))
    }

    fn run(&mut self, deadline: &Deadline) -> Result<Option<Limit>, WireError> {
        let root = self.matcher("", &[".git/info/exclude".to_owned()]);
        if let Some(gi) = root {
            self.ignores.push((String::new(), gi));
        }
        self.dir("", deadline)
    }

    fn dir(&mut self, dir: &str, deadline: &Deadline) -> Result<Option<Limit>, WireError> {
        let join = |name: &str| {
            if dir.is_empty() {
                name.to_owned()
            } else {
                format!("{dir}/{name}")
            }
        };
        let Ok(mut entries) = open::read_dir(self.ws, &ContainedPath::root().child_path(dir))
        else {
            return Ok(None);
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let pushed = match self.matcher(dir, &[join(".gitignore")]) {
            Some(gi) => {
                self.ignores.push((dir.to_owned(), gi));
                true
            }
            None => false,
        };
        let mut result = None;
        for e in entries {
            self.seen += 1;
            if self.seen > MAX_STATUS_WALK {
                result = Some(Limit::Files);
                break;
            }
            if deadline.expired() {
                result = Some(Limit::Time);
                break;
            }
            if e.name == ".git" {
                continue;
            }
            let rel = join(&e.name);
            let Some(meta) = e.meta else { continue };
            let is_dir = meta.kind == Kind::Directory;
            if self.tracked.contains(rel.as_str()) {
                continue;
            }
            let tracked_below = is_dir && self.holds_tracked(&rel);
            if !tracked_below && self.ignored(&rel, is_dir) {
                continue;
            }
            if self.ws.denylist().check_last(&rel).is_some() {
                if !tracked_below {
                    self.denied.insert(rel);
                }
                continue;
            }
            match meta.kind {
                Kind::Directory if tracked_below => {
                    result = self.dir(&rel, deadline)?;
                    if result.is_some() {
                        break;
                    }
                }
                Kind::Directory => match self.holds_untracked(&rel, deadline)? {
                    Ok(true) => self.out.push(entry(&format!("{rel}/"), '?')),
                    Ok(false) => {}
                    Err(limit) => {
                        result = Some(limit);
                        break;
                    }
                },
                Kind::File | Kind::Symlink => self.out.push(entry(&rel, '?')),
                Kind::Special(_) => {}
            }
        }
        if pushed {
            self.ignores.pop();
        }
        Ok(result)
    }
}

impl Walk<'_> {
    /// Whether the untracked directory `dir` holds a file or link that is
    /// neither ignored nor denylisted, at any depth (git shows an untracked
    /// directory only then). Stops at the first one; `Err` past the walk's
    /// cap or the deadline.
    fn holds_untracked(
        &mut self,
        dir: &str,
        deadline: &Deadline,
    ) -> Result<Result<bool, Limit>, WireError> {
        let Ok(mut entries) = open::read_dir(self.ws, &ContainedPath::root().child_path(dir))
        else {
            return Ok(Ok(false));
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let pushed = match self.matcher(dir, &[format!("{dir}/.gitignore")]) {
            Some(gi) => {
                self.ignores.push((dir.to_owned(), gi));
                true
            }
            None => false,
        };
        let mut found = Ok(false);
        for e in entries {
            self.seen += 1;
            if self.seen > MAX_STATUS_WALK {
                found = Err(Limit::Files);
                break;
            }
            if deadline.expired() {
                found = Err(Limit::Time);
                break;
            }
            let Some(meta) = e.meta else { continue };
            let rel = format!("{dir}/{}", e.name);
            let is_dir = meta.kind == Kind::Directory;
            if self.ignored(&rel, is_dir) || self.ws.denylist().check_last(&rel).is_some() {
                continue;
            }
            found = match meta.kind {
                Kind::Directory => self.holds_untracked(&rel, deadline)?,
                Kind::File | Kind::Symlink => Ok(true),
                Kind::Special(_) => Ok(false),
            };
            if found != Ok(false) {
                break;
            }
        }
        if pushed {
            self.ignores.pop();
        }
        Ok(found)
    }
}

/// Commits on `a` not on `b` and on `b` not on `a`: both ancestries
/// walked whole (`None` past the walk's cap or the deadline: not counted
/// rather than guessed).
fn ahead_behind(
    repo: &Repo,
    a: ObjectId,
    b: ObjectId,
    deadline: &Deadline,
) -> Result<Option<(u64, u64)>, WireError> {
    let Some(mine) = ancestry(repo, a, deadline)? else {
        return Ok(None);
    };
    let Some(theirs) = ancestry(repo, b, deadline)? else {
        return Ok(None);
    };
    Ok(Some((
        mine.difference(&theirs).count() as u64,
        theirs.difference(&mine).count() as u64,
    )))
}

/// Every commit reachable from `tip`, or `None` past the cap or deadline.
fn ancestry(
    repo: &Repo,
    tip: ObjectId,
    deadline: &Deadline,
) -> Result<Option<HashSet<ObjectId>>, WireError> {
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut stack = vec![tip];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if seen.len() as u64 > MAX_AHEAD_BEHIND_WALK || deadline.expired() {
            return Ok(None);
        }
        stack.extend(repo.commit(id)?.parents);
    }
    Ok(Some(seen))
}

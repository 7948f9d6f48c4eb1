//! Reading git repositories in-process, without running any program.
//!
//! The worker reads the object store, refs and index itself, with gitoxide
//! built without the features that run programs or write (attributes and
//! filters, credentials, network transports, locks): nothing a repository
//! configures — pagers, hooks, external diff drivers, textconv, filters,
//! fsmonitor, credential helpers, `ssh` — is ever started, and the sandbox
//! could not start it anyway (the worker's seccomp policy has no `execve`).
//!
//! A repository is read only after [`safety::check`] found it safe: `.git` and
//! its control files are what they claim to be, inside the workspace, with one
//! link each. It is opened isolated: no system, global or environment
//! configuration, no `safe.directory` question (ownership is moot when
//! nothing is executed), the work tree is always the workspace root (never
//! `core.worktree`), and work-tree files are read only through moat's opener
//! with `read_file`'s checks ([`worktree`]).
//!
//! Nothing from git internals reaches the client as text: every failure is a
//! fixed [`GitReason`]; commit fields are parsed, never split from a stream.
//! Every object is looked up by header first and refused past a size cap for
//! its kind, so a decompression bomb is never inflated; loops check the
//! request's deadline.

pub mod patch;
pub mod rename;
pub mod safety;
pub mod sides;
pub mod worktree;

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::objs::Kind;
use moat_protocol::limits::MAX_REVISION_CHARS;
use moat_protocol::wire_error::{GitFailure, GitReason, GitTool, TooLarge, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;

/// Largest commit object read.
pub const MAX_COMMIT_BYTES: u64 = 1024 * 1024;
/// Largest tree object read.
pub const MAX_TREE_BYTES: u64 = 32 * 1024 * 1024;
/// Most entries of one flattened tree.
pub const MAX_TREE_ENTRIES: usize = 1_000_000;
/// Deepest tree nesting followed.
pub const MAX_TREE_DEPTH: usize = 256;
/// Bytes of the per-request object cache.
const OBJECT_CACHE_BYTES: usize = 16 * 1024 * 1024;
/// Hex digits of an abbreviated commit id: 12, as large projects set
/// `core.abbrev` so that abbreviations stay unique for decades of history.
pub const SHORT_ID_DIGITS: usize = 12;
/// Most tag objects peeled through.
const MAX_PEEL: usize = 16;

/// Check a revision (the handler's layer; the published schema is the first).
pub fn validate_revision(rev: &str) -> Result<&str, WireError> {
    let r = rev.trim();
    if r.is_empty() {
        return Err(WireError::GitFailed(GitFailure::EmptyRevision));
    }
    if r.starts_with('-') {
        return Err(WireError::GitFailed(GitFailure::LeadingDash));
    }
    let ok = r.chars().count() <= MAX_REVISION_CHARS
        && r.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/@^~{}-".contains(c));
    if !ok {
        return Err(WireError::GitFailed(GitFailure::BadCharacters));
    }
    Ok(r)
}

/// What a git tool targets: a validated revision and a contained path.
#[derive(Debug)]
pub struct Target<'a> {
    /// The revision, validated.
    pub revision: Option<&'a str>,
    /// The path filter, contained and checked against the denylist.
    pub path: Option<crate::fs::ContainedPath>,
}

impl<'a> Target<'a> {
    /// Validate `revision` (handler layer) and resolve `path` (containment
    /// and denylist, as `read_file` resolves a path), in that order.
    pub fn new(
        ws: &Workspace,
        revision: Option<&'a str>,
        path: Option<&str>,
    ) -> Result<Target<'a>, WireError> {
        let revision = revision.map(validate_revision).transpose()?;
        let path = path
            .map(|p| crate::fs::containment::resolve(ws, p))
            .transpose()?;
        Ok(Target { revision, path })
    }

    /// The path as the result reports it (`""` when none).
    #[must_use]
    pub fn shown_path(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_owned())
    }

    /// The filter as a root-relative prefix (`""`: everything).
    #[must_use]
    pub fn prefix(&self) -> &str {
        self.path.as_ref().map_or("", |p| p.tree_rel())
    }
}

/// Whether `path` is `prefix` or beneath it (`""` matches everything).
#[must_use]
pub fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || (path.len() > prefix.len()
            && path.starts_with(prefix)
            && path.as_bytes()[prefix.len()] == b'/')
}

/// One entry of a flattened tree or of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The git mode (`0o100644`, `0o100755`, `0o120000`, `0o160000`).
    pub mode: u32,
    /// The object.
    pub id: ObjectId,
}

/// Path → entry, sorted by path.
pub type Entries = BTreeMap<String, Entry>;

/// A parsed commit.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    /// Its tree.
    pub tree: ObjectId,
    /// Its parents, in order.
    pub parents: Vec<ObjectId>,
    /// The author's name, trimmed.
    pub author: String,
    /// Author date, strict ISO 8601 with the author's offset.
    pub authored_at: String,
    /// Committer time (seconds since the epoch), for ordering.
    pub committed: i64,
    /// The whole message, raw (its subject is taken after it is redacted
    /// whole: [`subject`]).
    pub message: Vec<u8>,
}

/// A repository checked by [`safety::check`] and opened isolated.
pub struct Repo {
    repo: gix::Repository,
    tool: GitTool,
}

/// A fixed git failure.
#[must_use]
pub fn failed(tool: GitTool, reason: GitReason) -> WireError {
    WireError::GitFailed(GitFailure::Read { tool, reason })
}

/// `timed_out` if the deadline passed.
pub fn check_deadline(deadline: &Deadline) -> Result<(), WireError> {
    if deadline.expired() {
        Err(WireError::TimedOut {
            budget_ms: deadline.budget_ms(),
        })
    } else {
        Ok(())
    }
}

/// Check and open the repository at the workspace root.
pub fn open(ws: &Workspace, tool: GitTool, deadline: &Deadline) -> Result<Repo, WireError> {
    let dirs = safety::check(ws, deadline)?.ok_or(WireError::NotARepository {
        repository_above: ws.inside_repository(),
    })?;
    let path = ws.root().join(&dirs.git_dir);
    // Isolated: the repository's own configuration only (no system, global,
    // user or environment configuration, no includes). Trust is given, not
    // derived from ownership: the worker may run as another user than the
    // repository's owner, and what untrusted configuration is dangerous for
    // (running configured programs, a redirected work tree) cannot happen
    // here: nothing is executed and the work tree is read from the
    // workspace root by moat itself.
    let opts = gix::open::Options::isolated()
        .with_enforced_trust(gix::sec::Trust::Full)
        .open_path_as_is(true)
        .lossy_config(true)
        .strict_config(false);
    let mut repo = gix::open_opts(path, opts).map_err(|_| failed(tool, GitReason::Unreadable))?;
    // Trees and commits are looked up repeatedly (a log's parents, a path's
    // trees); a bounded cache keeps that to one inflation each.
    repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
    // One request reads one snapshot of the object store: the packs are
    // listed once when the store is first used. By default a lookup that
    // searches every pack (a miss, or the ambiguity check of an abbreviated
    // hash) lists the pack directory again and stats every pack, once per
    // abbreviated hash of a diff.
    repo.objects.refresh_never();
    Ok(Repo { repo, tool })
}

impl Repo {
    /// A fixed failure of this tool.
    #[must_use]
    pub fn fail(&self, reason: GitReason) -> WireError {
        failed(self.tool, reason)
    }

    /// Whether the work tree's executable bit is meaningful
    /// (`core.fileMode`, true unless the repository says otherwise).
    #[must_use]
    pub fn exec_bit(&self) -> bool {
        self.repo
            .config_snapshot()
            .boolean("core.filemode")
            .unwrap_or(true)
    }

    /// The hash kind of the repository.
    #[must_use]
    pub fn hash_kind(&self) -> gix::hash::Kind {
        self.repo.object_hash()
    }

    /// Load an object, refusing it before inflating it if it is larger than
    /// `cap`. Returns its kind and data.
    pub fn load(&self, id: ObjectId, cap: u64) -> Result<(Kind, Vec<u8>), WireError> {
        if id == ObjectId::empty_tree(self.hash_kind()) {
            return Ok((Kind::Tree, Vec::new()));
        }
        let header = self
            .repo
            .try_find_header(id)
            .map_err(|_| self.fail(GitReason::Unreadable))?
            .ok_or(self.fail(GitReason::MissingObject))?;
        if header.size() > cap {
            return Err(WireError::TooLarge(TooLarge::GitObject {
                size: header.size(),
                limit: cap,
            }));
        }
        let obj = self
            .repo
            .try_find_object(id)
            .map_err(|_| self.fail(GitReason::Unreadable))?
            .ok_or(self.fail(GitReason::MissingObject))?;
        let kind = obj.kind;
        let data = obj.detach().data;
        // Content-addressed: what was read must be the object asked for.
        // Object-store files may be hard links (a local clone's packs), so
        // this is what makes another file's bytes unreadable through them.
        let hash = gix::objs::compute_hash(self.hash_kind(), kind, &data)
            .map_err(|_| self.fail(GitReason::Unreadable))?;
        if hash != id {
            return Err(self.fail(GitReason::Unreadable));
        }
        if data.len() as u64 > cap {
            return Err(WireError::TooLarge(TooLarge::GitObject {
                size: data.len() as u64,
                limit: cap,
            }));
        }
        Ok((kind, data))
    }

    /// An object's size from its header (nothing inflated); `None` when
    /// it cannot be found.
    #[must_use]
    pub fn object_size(&self, id: ObjectId) -> Option<u64> {
        self.repo
            .try_find_header(id)
            .ok()
            .flatten()
            .map(|h| h.size())
    }

    /// A blob's bytes (at most `cap`).
    pub fn blob(&self, id: ObjectId, cap: u64) -> Result<Vec<u8>, WireError> {
        match self.load(id, cap)? {
            (Kind::Blob, data) => Ok(data),
            _ => Err(self.fail(GitReason::Unreadable)),
        }
    }

    /// Resolve a revision to the commits it describes: every object it
    /// names is peeled through annotated tags to a commit.
    ///
    /// git is addressed by commits only. Anything else is answered exactly
    /// as a revision that names nothing (`unknown_revision`), so no answer
    /// tells one apart from the other:
    ///
    /// * a tree, a blob, or a tag of either, named by (abbreviated) id, by
    ///   a ref or by a peel such as `^{tree}`: a tree below the root would
    ///   re-root every path of the answer out of the denylist's reach, and
    ///   "exists but is not a commit" would confirm a guessed hash of a
    ///   denied file's content;
    /// * a search of commit messages (`^{/text}`, `:/text`), which would be
    ///   run over messages before redaction, and `:path` forms (the index,
    ///   a tree's entry);
    /// * a revision redaction would change (a ref named after a
    ///   credential): the answers show such a name redacted, so its raw
    ///   spelling must address nothing either.
    ///
    /// An abbreviated id is disambiguated among commits (and tags of them)
    /// only, so objects of other kinds that share its prefix change
    /// nothing.
    pub fn resolve(
        &self,
        rev: &str,
        redactor: &crate::redact::Redactor,
    ) -> Result<gix::revision::plumbing::Spec, WireError> {
        use gix::revision::plumbing::Spec;
        let unknown = || self.fail(GitReason::UnknownRevision);
        if rev.contains("{/") || rev.contains(':') {
            return Err(unknown());
        }
        if redactor.enabled()
            && redactor
                .redact_str(rev, &mut crate::redact::RedactionReport::default())
                .is_some()
        {
            return Err(unknown());
        }
        // `@{-N}` is the N-th previously checked-out branch and takes no ref
        // name before it (`HEAD@{-1}` means nothing to git).
        let bytes = rev.as_bytes();
        for (i, _) in rev.match_indices("@{-") {
            if i > 0 && bytes[i - 1] != b'.' {
                return Err(unknown());
            }
        }
        let opts = gix::revision::spec::parse::Options {
            object_kind_hint: Some(gix::revision::spec::parse::ObjectKindHint::Committish),
            ..Default::default()
        };
        let spec = gix::revision::Spec::from_bstr(rev, &self.repo, opts)
            .map_err(|_| unknown())?
            .detach();
        let commit = |id: ObjectId| self.peel_to_commit(id).map_err(|_| unknown());
        Ok(match spec {
            Spec::Include(id) => Spec::Include(commit(id)?),
            Spec::Exclude(id) => Spec::Exclude(commit(id)?),
            Spec::Range { from, to } => Spec::Range {
                from: commit(from)?,
                to: commit(to)?,
            },
            Spec::Merge { theirs, ours } => Spec::Merge {
                theirs: commit(theirs)?,
                ours: commit(ours)?,
            },
            Spec::IncludeOnlyParents(id) => Spec::IncludeOnlyParents(commit(id)?),
            Spec::ExcludeParents(id) => Spec::ExcludeParents(commit(id)?),
        })
    }

    /// The commit `HEAD` points to; `None` for an unborn branch.
    pub fn head(&self) -> Result<Option<ObjectId>, WireError> {
        let head = self
            .repo
            .head()
            .map_err(|_| self.fail(GitReason::Unreadable))?;
        Ok(head.id().map(gix::Id::detach))
    }

    /// Peel through annotated tags to a commit.
    pub fn peel_to_commit(&self, id: ObjectId) -> Result<ObjectId, WireError> {
        let mut id = id;
        for _ in 0..MAX_PEEL {
            let header = self
                .repo
                .try_find_header(id)
                .map_err(|_| self.fail(GitReason::Unreadable))?
                .ok_or(self.fail(GitReason::MissingObject))?;
            match header.kind() {
                Kind::Commit => return Ok(id),
                Kind::Tag => {
                    let (_, data) = self.load(id, MAX_COMMIT_BYTES)?;
                    let tag = gix::objs::TagRef::from_bytes(&data, self.hash_kind())
                        .map_err(|_| self.fail(GitReason::Unreadable))?;
                    id = tag.target();
                }
                _ => return Err(self.fail(GitReason::WrongKind)),
            }
        }
        Err(self.fail(GitReason::WrongKind))
    }

    /// The tree of a commit (or tag of one). A tree is never taken for a
    /// commit: every path of an answer is a path from the root.
    pub fn tree_of(&self, id: ObjectId) -> Result<ObjectId, WireError> {
        let commit = self.peel_to_commit(id)?;
        Ok(self.commit(commit)?.tree)
    }

    /// Parse a commit.
    pub fn commit(&self, id: ObjectId) -> Result<CommitInfo, WireError> {
        let (kind, data) = self.load(id, MAX_COMMIT_BYTES)?;
        if kind != Kind::Commit {
            return Err(self.fail(GitReason::WrongKind));
        }
        let c = gix::objs::CommitRef::from_bytes(&data, self.hash_kind())
            .map_err(|_| self.fail(GitReason::Unreadable))?;
        let author = c.author().map_err(|_| self.fail(GitReason::Unreadable))?;
        let committed = c.committer().map_or(0, |s| s.seconds());
        let authored_at = author
            .time()
            .ok()
            .and_then(|t| t.format(gix::date::time::format::ISO8601_STRICT).ok())
            .unwrap_or_default();
        Ok(CommitInfo {
            tree: c.tree(),
            parents: c.parents().collect(),
            author: String::from_utf8_lossy(author.trim().name.as_ref()).into_owned(),
            authored_at,
            committed,
            message: c.message.to_vec(),
        })
    }

    /// The entries of one tree object (not recursive).
    fn tree_entries(&self, id: ObjectId) -> Result<Vec<(String, Entry)>, WireError> {
        let (kind, data) = self.load(id, MAX_TREE_BYTES)?;
        if kind != Kind::Tree {
            return Err(self.fail(GitReason::Unreadable));
        }
        let mut out = Vec::new();
        for e in gix::objs::TreeRefIter::from_bytes(&data, self.hash_kind()) {
            let e = e.map_err(|_| self.fail(GitReason::Unreadable))?;
            out.push((
                String::from_utf8_lossy(e.filename.as_ref()).into_owned(),
                Entry {
                    mode: u32::from(e.mode.value()),
                    id: e.oid.to_owned(),
                },
            ));
        }
        Ok(out)
    }

    /// Every non-tree entry of `tree` whose path is under `prefix` (or is a
    /// parent of it), by path.
    pub fn flatten(
        &self,
        tree: ObjectId,
        prefix: &str,
        deadline: &Deadline,
    ) -> Result<Entries, WireError> {
        let mut out = Entries::new();
        let mut stack: Vec<(String, ObjectId, usize)> = vec![(String::new(), tree, 0)];
        let mut seen = 0usize;
        while let Some((dir, id, depth)) = stack.pop() {
            check_deadline(deadline)?;
            if depth > MAX_TREE_DEPTH {
                return Err(WireError::TooLarge(TooLarge::GitObject {
                    size: depth as u64,
                    limit: MAX_TREE_DEPTH as u64,
                }));
            }
            for (name, entry) in self.tree_entries(id)? {
                seen += 1;
                if seen > MAX_TREE_ENTRIES {
                    return Err(WireError::TooLarge(TooLarge::GitObject {
                        size: seen as u64,
                        limit: MAX_TREE_ENTRIES as u64,
                    }));
                }
                let path = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                let relevant = under(&path, prefix) || under(prefix, &path);
                if !relevant {
                    continue;
                }
                if entry.mode & 0o170000 == 0o040000 {
                    stack.push((path, entry.id, depth + 1));
                } else if under(&path, prefix) {
                    out.insert(path, entry);
                }
            }
        }
        Ok(out)
    }

    /// Whether the entries `a` and `b` at `path` (either absent) differ in
    /// anything the denylist lets an answer show: a difference only in
    /// denied files or directories beneath `path` is no difference. Equal
    /// trees are not opened; a denied entry is never compared.
    pub fn visible_change(
        &self,
        path: &str,
        a: Option<Entry>,
        b: Option<Entry>,
        denylist: &crate::fs::denylist::Denylist,
        deadline: &Deadline,
    ) -> Result<bool, WireError> {
        const TREE: u32 = 0o040000;
        let is_tree = |e: &Option<Entry>| e.is_some_and(|e| e.mode & 0o170000 == TREE);
        if a == b {
            return Ok(false);
        }
        if !is_tree(&a) && !is_tree(&b) {
            return Ok(true);
        }
        if a.is_some() && b.is_some() && is_tree(&a) != is_tree(&b) {
            return Ok(true);
        }
        check_deadline(deadline)?;
        let list = |e: Option<Entry>| -> Result<BTreeMap<String, Entry>, WireError> {
            match e {
                Some(e) if e.mode & 0o170000 == TREE => {
                    Ok(self.tree_entries(e.id)?.into_iter().collect())
                }
                _ => Ok(BTreeMap::new()),
            }
        };
        let (left, right) = (list(a)?, list(b)?);
        let names: std::collections::BTreeSet<&String> = left.keys().chain(right.keys()).collect();
        for name in names {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}/{name}")
            };
            if denylist.check_last(&child).is_some() {
                continue;
            }
            let (x, y) = (left.get(name).copied(), right.get(name).copied());
            if self.visible_change(&child, x, y, denylist, deadline)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The entry at `path` in `tree` (a blob, link, gitlink or subtree).
    pub fn entry_at(&self, tree: ObjectId, path: &str) -> Result<Option<Entry>, WireError> {
        let mut id = tree;
        let mut parts = path.split('/').filter(|c| !c.is_empty()).peekable();
        while let Some(part) = parts.next() {
            let found = self
                .tree_entries(id)?
                .into_iter()
                .find(|(name, _)| name == part);
            let Some((_, entry)) = found else {
                return Ok(None);
            };
            if parts.peek().is_none() {
                return Ok(Some(entry));
            }
            if entry.mode & 0o170000 != 0o040000 {
                return Ok(None);
            }
            id = entry.id;
        }
        Ok(Some(Entry {
            mode: 0o040000,
            id: tree,
        }))
    }

    /// The index as entries (stage 0 only; conflicted paths are left out),
    /// under `prefix`. No index: empty.
    pub fn index(&self, prefix: &str, deadline: &Deadline) -> Result<Entries, WireError> {
        Ok(self.index_with_stats(prefix, deadline)?.0)
    }

    /// [`Repo::index`], with the stat the index recorded for each entry.
    pub fn index_with_stats(
        &self,
        prefix: &str,
        deadline: &Deadline,
    ) -> Result<(Entries, worktree::IndexStats), WireError> {
        let index = match self.repo.try_index() {
            Ok(Some(i)) => i,
            Ok(None) => return Ok((Entries::new(), worktree::IndexStats::none())),
            Err(_) => return Err(self.fail(GitReason::Unreadable)),
        };
        let written = index.timestamp();
        let mut stats =
            worktree::IndexStats::written_at(written.unix_seconds(), written.nanoseconds());
        let mut out = Entries::new();
        for (n, e) in index.entries().iter().enumerate() {
            if n.is_multiple_of(4096) {
                check_deadline(deadline)?;
            }
            if e.stage_raw() != 0 {
                continue;
            }
            let path = String::from_utf8_lossy(e.path(&index).as_ref()).into_owned();
            if !under(&path, prefix) {
                continue;
            }
            let mode = match e.mode {
                gix::index::entry::Mode::FILE_EXECUTABLE => 0o100755,
                gix::index::entry::Mode::SYMLINK => 0o120000,
                gix::index::entry::Mode::COMMIT => 0o160000,
                gix::index::entry::Mode::DIR => continue,
                _ => 0o100644,
            };
            stats.insert(&path, &e.stat);
            out.insert(path, Entry { mode, id: e.id });
        }
        Ok((out, stats))
    }

    /// The checked-out branch's full and short names (`None`: detached).
    pub fn head_branch(&self) -> Result<Option<(gix::refs::FullName, String)>, WireError> {
        let name = self
            .repo
            .head_name()
            .map_err(|_| self.fail(GitReason::Unreadable))?;
        Ok(name.map(|n| {
            let short = String::from_utf8_lossy(n.shorten().as_ref()).into_owned();
            (n, short)
        }))
    }

    /// The configured upstream of `branch` (from the repository's own
    /// configuration and local refs only): its short name and, if the ref
    /// exists, the commit it names.
    #[must_use]
    pub fn upstream(&self, branch: &gix::refs::FullName) -> Option<(String, Option<ObjectId>)> {
        let name = self
            .repo
            .branch_remote_tracking_ref_name(branch.as_ref(), gix::remote::Direction::Fetch)?
            .ok()?;
        let short = String::from_utf8_lossy(name.shorten().as_ref()).into_owned();
        let id = self
            .repo
            .try_find_reference(name.as_ref())
            .ok()
            .flatten()
            .and_then(|mut r| r.peel_to_id().ok().map(gix::Id::detach));
        Some((short, id))
    }

    /// The best common ancestor of two commits, if any.
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>, WireError> {
        match self.repo.merge_base(a, b) {
            Ok(id) => Ok(id.map(gix::Id::detach)),
            Err(_) => Err(self.fail(GitReason::Unreadable)),
        }
    }

    /// `id` abbreviated to [`SHORT_ID_DIGITS`] hex digits, whatever else
    /// the object store holds: the shortest unique abbreviation (git's)
    /// grows when another object shares its prefix and with the number of
    /// objects, and both would tell of objects the denylist hides.
    #[must_use]
    pub fn short(&self, id: ObjectId) -> String {
        id.to_hex_with_len(SHORT_ID_DIGITS).to_string()
    }
}

/// git's `%s`: the message's first paragraph, each line trimmed, joined by
/// one space.
#[must_use]
pub fn subject(message: &[u8]) -> String {
    let text = String::from_utf8_lossy(message);
    let mut out = String::new();
    for line in text
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line.trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_join_the_first_paragraph() {
        assert_eq!(subject(b"One\ntwo\n\nbody\n"), "One two");
        assert_eq!(subject(b"\n\n  Lead  \n"), "Lead");
        assert_eq!(subject(b""), "");
    }

    #[test]
    fn prefixes() {
        assert!(under("src/a.rs", "src"));
        assert!(under("src", "src"));
        assert!(!under("srcx/a", "src"));
        assert!(under("x", ""));
    }

    #[test]
    fn revisions() {
        for ok in [
            "HEAD",
            "HEAD~1",
            "main",
            "HEAD~1..HEAD",
            "@{0}",
            "HEAD@{-1}",
            "main..HEAD",
            " v1.0 ",
        ] {
            assert!(validate_revision(ok).is_ok(), "{ok}");
        }
        let bad = |r: &str| validate_revision(r).unwrap_err();
        assert_eq!(bad(""), WireError::GitFailed(GitFailure::EmptyRevision));
        assert_eq!(bad("  "), WireError::GitFailed(GitFailure::EmptyRevision));
        for dash in [
            "--all",
            "-p",
            "--upload-pack=touch /tmp/x",
            "-c core.pager=sh",
            "--output=/tmp/x",
        ] {
            assert_eq!(
                bad(dash),
                WireError::GitFailed(GitFailure::LeadingDash),
                "{dash}"
            );
        }
        for chars in [
            "HEAD; rm -rf /",
            "HEAD && whoami",
            "$(whoami)",
            "`whoami`",
            "HEAD|tee /tmp/x",
            "a b",
        ] {
            assert_eq!(
                bad(chars),
                WireError::GitFailed(GitFailure::BadCharacters),
                "{chars}"
            );
        }
        assert!(validate_revision(&"a".repeat(201)).is_err());
    }
}

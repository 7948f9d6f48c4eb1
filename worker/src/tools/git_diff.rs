//! `git_diff`: a unified diff (or `--stat` summary) of the work tree against
//! the index, the index against `HEAD` (`staged`), a revision against the
//! work tree (or the index, with `staged`), or between two revisions
//! (`A..B`, `A...B`).
//!
//! Every path is governed by the denylist: a denied path's change is never
//! shown, named or counted in the stat; the answer only says how many were
//! withheld. Work-tree bytes come through moat's opener with `read_file`'s
//! checks ([`git::worktree`]); a file `read_file` would refuse is one notice
//! line with the reason. Counting: files are the changed files shown, lines
//! the added and removed lines of their text diffs.
//!
//! Each side of a text change (the whole blob or work-tree file) is redacted
//! before it is diffed (`prepare_side`), so hunks, the stat's counts and
//! hunk-header function names are cut from redacted text. A file whose sides
//! differ only inside redacted spans is named with a notice line instead of
//! hunks.

use std::borrow::Cow;
use std::collections::BTreeSet;

use moat_protocol::limits;
use moat_protocol::request::GitDiffArgs;
use moat_protocol::response::{GitDiffOutput, Limit, ToolOutput};
use moat_protocol::wire_error::{GitReason, GitTool, TooLarge, WireError};

use gix::ObjectId;
use gix::revision::plumbing::Spec;

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::git::patch::{self, FileChange, StatChange, StatRow};
use crate::git::sides::{prepare_side, prepare_sides};
use crate::git::worktree::{self, IndexStats, Side};
use crate::git::{self, Entries, Entry, Repo, check_deadline, rename};
use crate::redact::RedactionReport;
use crate::sources;

/// Width of the `--stat` block, as git's `--stat=200`.
const STAT_WIDTH: usize = 200;

const GITLINK: u32 = 0o160000;

/// Most bytes of a whole diff rendered for paging; past it the diff is cut
/// and continues by path.
const MAX_WHOLE_DIFF_BYTES: usize = 32 * 1024 * 1024;

/// The line a file's section holds instead of hunks when its sides differ
/// only inside redacted text.
const HIDDEN_CHANGE: &str = "moat: the change lies inside redacted text.\n";

/// The new side of a comparison.
enum New {
    /// Objects (a tree or the index).
    Objects(Entries),
    /// The work tree at the index's paths (the entries are the index, with
    /// the stats it recorded).
    WorkTree(Entries, IndexStats),
}

/// One side of one changed file.
#[derive(Debug, Clone)]
struct Version {
    mode: u32,
    id: ObjectId,
    /// Work-tree bytes already read (objects are loaded when rendered).
    bytes: Option<Vec<u8>>,
}

/// One changed file.
#[derive(Debug, Clone)]
struct Change {
    old_path: String,
    new_path: String,
    old: Option<Version>,
    new: Option<Version>,
    /// A rename's similarity (0..=`rename::MAX_SCORE`).
    score: Option<u64>,
}

/// Run `git_diff`.
pub fn run(
    ws: &Workspace,
    args: &GitDiffArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let target = git::Target::new(ws, args.revision.as_deref(), args.path.as_deref())?;
    let repo = git::open(ws, GitTool::Diff, deadline)?;
    let prefix = target.prefix();
    let context = u32::from(
        args.context_lines
            .map_or(limits::DIFF_CONTEXT_LINES_DEFAULT, |n| {
                n.min(limits::MAX_DIFF_CONTEXT_LINES)
            }),
    );
    let tree = |id: ObjectId| -> Result<Entries, WireError> {
        let t = repo.tree_of(id)?;
        repo.flatten(t, prefix, deadline)
    };
    let head_tree = || -> Result<Entries, WireError> {
        match repo.head()? {
            Some(id) => tree(id),
            None => Ok(Entries::new()),
        }
    };
    let (old, new) = match (target.revision, args.staged) {
        (None, false) => {
            let (index, stats) = repo.index_with_stats(prefix, deadline)?;
            (index.clone(), New::WorkTree(index, stats))
        }
        (None, true) => (head_tree()?, New::Objects(repo.index(prefix, deadline)?)),
        (Some(rev), staged) => match repo.resolve(rev, ws.redactor())? {
            Spec::Include(id) => {
                let (index, stats) = repo.index_with_stats(prefix, deadline)?;
                let new = if staged {
                    New::Objects(index)
                } else {
                    New::WorkTree(index, stats)
                };
                (tree(id)?, new)
            }
            Spec::Range { from, to } => (tree(from)?, New::Objects(tree(to)?)),
            Spec::Merge { theirs, ours } => {
                let (a, b) = (repo.peel_to_commit(theirs)?, repo.peel_to_commit(ours)?);
                let base = repo
                    .merge_base(a, b)?
                    .ok_or(repo.fail(GitReason::WrongKind))?;
                (tree(base)?, New::Objects(tree(b)?))
            }
            _ => return Err(repo.fail(GitReason::WrongKind)),
        },
    };
    let mut out = Output::default();
    let changes = compare(ws, &repo, &old, &new, &mut out, deadline)?;
    // The whole diff is rendered (up to a memory bound), then one page of
    // it is answered from `skip`: a page ends at a line end, or inside a
    // line longer than a page, so every page moves on.
    render(
        ws,
        &repo,
        changes,
        args.stat_only,
        context,
        &mut out,
        deadline,
        MAX_WHOLE_DIFF_BYTES,
    )?;
    if out.truncated && out.text.is_empty() {
        return Err(WireError::TooLarge(TooLarge::Diff {
            limit: ws.limits().git_bytes() as u64,
        }));
    }
    let page = patch::page_of(&out.text, args.skip, ws.limits().git_bytes());
    if page.1 {
        out.truncated = true;
        if out.next_path.is_none() {
            out.not_shown = 0;
        }
    }
    // A page cut inside the whole diff continues by cursor; a whole diff
    // cut at the memory bound continues by path, as before.
    if page.1 {
        out.next_path = None;
    }
    out.text = page.0;
    Ok(ToolOutput::GitDiff(GitDiffOutput {
        diff: out.text,
        files_changed: out.files,
        lines_added: out.added,
        lines_removed: out.removed,
        path: target.shown_path(),
        staged: args.staged,
        stat_only: args.stat_only,
        truncated: out.truncated,
        stopped_by: if out.truncated {
            vec![Limit::Bytes]
        } else {
            Vec::new()
        },
        next_path: out.next_path,
        withheld_by_denylist: out.denied,
        withheld_unreadable: out.unreadable,
        redaction: sources::counts(&out.report),
    }))
}

#[derive(Default)]
struct Output {
    text: String,
    files: u64,
    added: u64,
    removed: u64,
    truncated: bool,
    /// The first file the cap cut short or left out.
    next_path: Option<String>,
    /// Files the cap cut short or left out.
    not_shown: u64,
    denied: u64,
    unreadable: u64,
    /// Notices for work-tree files that were not read, shown first.
    notices: Vec<String>,
    /// What redacting the sides replaced.
    report: RedactionReport,
}

/// The changed files between `old` and `new`, denied paths counted and
/// dropped, unreadable work-tree files turned into notices.
fn compare(
    ws: &Workspace,
    repo: &Repo,
    old: &Entries,
    new: &New,
    out: &mut Output,
    deadline: &Deadline,
) -> Result<Vec<Change>, WireError> {
    let new_entries = match new {
        New::Objects(e) | New::WorkTree(e, _) => e,
    };
    let paths: BTreeSet<&String> = old.keys().chain(new_entries.keys()).collect();
    let exec_bit = repo.exec_bit();
    let mut denied_roots: BTreeSet<&str> = BTreeSet::new();
    let mut changes = Vec::new();
    for (n, path) in paths.into_iter().enumerate() {
        if n.is_multiple_of(256) {
            check_deadline(deadline)?;
        }
        let o = old.get(path).copied();
        let e = new_entries.get(path).copied();
        let stats = match new {
            New::WorkTree(_, stats) => Some(stats),
            New::Objects(_) => None,
        };
        let work = stats.is_some();
        let mode_of = |e: Entry| worktree::mode_of(ws, path, e.mode, exec_bit);
        if let Some(root) = ws.denylist().denied_root(path) {
            // Never read, never named, never compared: counted by the
            // denied directory or name it is under whenever it is in either
            // side, changed or not, so that neither what a denied directory
            // holds nor whether a denied file changed shows.
            denied_roots.insert(root);
            continue;
        }
        if !work && o == e {
            continue;
        }
        let version = |x: Option<Entry>| {
            x.map(|x| Version {
                mode: x.mode,
                id: x.id,
                bytes: None,
            })
        };
        let new_version = match (work, e) {
            (false, _) | (true, None) => version(e),
            (true, Some(e)) if e.mode == GITLINK => {
                // A submodule's work tree is not looked into.
                version(Some(e))
            }
            (true, Some(e)) if stats.is_some_and(|s| s.unchanged(ws, path, e.mode)) => {
                version(Some(e))
            }
            (true, Some(e)) => match worktree::read(ws, path, mode_of(e)) {
                Side::Missing => None,
                Side::Refused(why) => {
                    out.unreadable += 1;
                    out.notices.push(format!(
                        "moat: {} not shown: {why}.\n",
                        patch::quote_path("", path)
                    ));
                    continue;
                }
                Side::Bytes(bytes) => {
                    let id =
                        gix::objs::compute_hash(repo.hash_kind(), gix::objs::Kind::Blob, &bytes)
                            .map_err(|_| repo.fail(GitReason::Unreadable))?;
                    Some(Version {
                        mode: mode_of(e),
                        id,
                        bytes: Some(bytes),
                    })
                }
            },
        };
        let old_version = version(o);
        let same = match (&old_version, &new_version) {
            (Some(a), Some(b)) => a.id == b.id && a.mode == b.mode,
            (None, None) => true,
            _ => false,
        };
        if same {
            continue;
        }
        changes.push(Change {
            old_path: path.clone(),
            new_path: path.clone(),
            old: old_version,
            new: new_version,
            score: None,
        });
    }
    out.denied = denied_roots.len() as u64;
    pair_renames(ws, repo, changes, deadline)
}

/// Pair deleted and added files into renames, as git's default rename
/// detection does ([`rename::find`]), scoring each side as the diff shows
/// it (redacted when redaction replaces anything).
fn pair_renames(
    ws: &Workspace,
    repo: &Repo,
    changes: Vec<Change>,
    deadline: &Deadline,
) -> Result<Vec<Change>, WireError> {
    let mut del: Vec<(usize, &Version)> = Vec::new();
    let mut add: Vec<(usize, &Version)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        match (&c.old, &c.new) {
            (Some(v), None) => del.push((i, v)),
            (None, Some(v)) => add.push((i, v)),
            _ => {}
        }
    }
    if del.is_empty() || add.is_empty() {
        return Ok(changes);
    }
    let cand = |&(i, v): &(usize, &Version)| rename::Candidate {
        path: changes[i].new_path.as_str(),
        mode: v.mode,
        id: v.id,
    };
    let srcs: Vec<rename::Candidate<'_>> = del.iter().map(cand).collect();
    let dsts: Vec<rename::Candidate<'_>> = add.iter().map(cand).collect();
    let pick = |src: bool, k: usize| if src { del[k].1 } else { add[k].1 };
    let mut size = |src: bool, k: usize| -> Option<u64> {
        let v = pick(src, k);
        match &v.bytes {
            Some(b) => Some(b.len() as u64),
            None => repo.object_size(v.id),
        }
    };
    let mut spans = |src: bool, k: usize| -> Option<rename::Spans> {
        let v = pick(src, k);
        let bytes = side_bytes(repo, ws, v).ok()?;
        if patch::is_binary(&bytes) {
            return Some(rename::Spans::of(&bytes));
        }
        let mut report = RedactionReport::default();
        let side = prepare_side(ws.redactor(), &bytes, &mut report, deadline.work());
        Some(rename::Spans::of(&side))
    };
    let found = rename::find(&srcs, &dsts, &mut size, &mut spans, deadline)?;
    if found.is_empty() {
        return Ok(changes);
    }
    let pairs: Vec<(usize, usize, u64)> = found
        .iter()
        .map(|p| (del[p.src].0, add[p.dst].0, p.score))
        .collect();
    drop((srcs, dsts, del, add));
    let mut slots: Vec<Option<Change>> = changes.into_iter().map(Some).collect();
    let mut out: Vec<Change> = Vec::new();
    for (d, a, score) in pairs {
        if let (Some(gone), Some(new)) = (slots[d].take(), slots[a].take()) {
            out.push(Change {
                old_path: gone.old_path,
                new_path: new.new_path,
                old: gone.old,
                new: new.new,
                score: Some(score),
            });
        }
    }
    out.extend(slots.into_iter().flatten());
    out.sort_by(|a, b| a.new_path.cmp(&b.new_path));
    Ok(out)
}

/// The path `path` was renamed from in the change from `old` to `new`, if
/// it was: git's default rename detection over the change as every diff
/// sees it (denied paths left out, each side redacted).
pub(crate) fn renamed_from(
    ws: &Workspace,
    repo: &Repo,
    (old, new): (&Entries, Entries),
    path: &str,
    deadline: &Deadline,
) -> Result<Option<String>, WireError> {
    let (new, mut out) = (New::Objects(new), Output::default());
    let changes = compare(ws, repo, old, &new, &mut out, deadline)?;
    Ok(pair_renames(ws, repo, changes, deadline)?
        .into_iter()
        .find(|c| c.score.is_some() && c.new_path == path)
        .map(|c| c.old_path))
}

/// `git_status`'s staged list with renames paired as `git_diff --staged`
/// pairs them: each deleted and added path that [`pair_renames`] makes one
/// rename becomes one `R` entry at the new path, with its old path.
pub(crate) fn pair_status_renames(
    ws: &Workspace,
    repo: &Repo,
    staged: Vec<moat_protocol::response::StatusEntry>,
    head: &Entries,
    index: &Entries,
    deadline: &Deadline,
) -> Result<Vec<moat_protocol::response::StatusEntry>, WireError> {
    let version = |e: &Entry| Version {
        mode: e.mode,
        id: e.id,
        bytes: None,
    };
    let mut changes = Vec::new();
    for e in &staged {
        let (old, new) = match e.status {
            'D' => (head.get(&e.path).map(version), None),
            'A' => (None, index.get(&e.path).map(version)),
            _ => continue,
        };
        changes.push(Change {
            old_path: e.path.clone(),
            new_path: e.path.clone(),
            old,
            new,
            score: None,
        });
    }
    let paired = pair_renames(ws, repo, changes, deadline)?;
    let renames: Vec<(String, String)> = paired
        .into_iter()
        .filter(|c| c.score.is_some())
        .map(|c| (c.old_path, c.new_path))
        .collect();
    if renames.is_empty() {
        return Ok(staged);
    }
    let gone: BTreeSet<&str> = renames.iter().map(|(o, _)| o.as_str()).collect();
    let mut out = Vec::new();
    for mut e in staged {
        if e.status == 'D' && gone.contains(e.path.as_str()) {
            continue;
        }
        if e.status == 'A'
            && let Some((old, _)) = renames.iter().find(|(_, n)| *n == e.path)
        {
            e.status = 'R';
            e.from = Some(old.clone());
        }
        out.push(e);
    }
    Ok(out)
}

/// The bytes of one side (loaded from the object store unless already read).
fn side_bytes(repo: &Repo, ws: &Workspace, v: &Version) -> Result<Vec<u8>, WireError> {
    if v.mode == GITLINK {
        return Ok(format!("Subproject commit {}\n", v.id.to_hex()).into_bytes());
    }
    match &v.bytes {
        Some(b) => Ok(b.clone()),
        None => repo.blob(v.id, ws.limits().max_file_bytes),
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one rendering pass: its inputs, its limits and where it writes"
)]
fn render(
    ws: &Workspace,
    repo: &Repo,
    changes: Vec<Change>,
    stat_only: bool,
    context: u32,
    out: &mut Output,
    deadline: &Deadline,
    budget: usize,
) -> Result<(), WireError> {
    let mut rows: Vec<StatRow> = Vec::new();
    let notices = std::mem::take(&mut out.notices);
    let mut text = String::new();
    for n in &notices {
        text.push_str(n);
    }
    let mut stat_bytes = 0usize;
    let total = changes.len() as u64;
    for (n, c) in changes.into_iter().enumerate() {
        check_deadline(deadline)?;
        let old = c
            .old
            .as_ref()
            .map(|v| side_bytes(repo, ws, v))
            .transpose()?;
        let new = c
            .new
            .as_ref()
            .map(|v| side_bytes(repo, ws, v))
            .transpose()?;
        let (raw_before, raw_after) =
            (old.as_deref().unwrap_or(&[]), new.as_deref().unwrap_or(&[]));
        // Binary or text is decided on the raw bytes; a binary change shows
        // no content, so only text sides are redacted.
        let binary = patch::is_binary(raw_before) || patch::is_binary(raw_after);
        let (before, after, redacted) = if binary {
            (Cow::Borrowed(raw_before), Cow::Borrowed(raw_after), false)
        } else {
            prepare_sides(
                ws.redactor(),
                raw_before,
                raw_after,
                &mut out.report,
                deadline.work(),
            )
        };
        let (before, after) = (before.as_ref(), after.as_ref());
        if out.next_path.is_some() {
            // Past the output cap: counted, not shown, so the totals are
            // the diff's and not only the shown part's.
            out.files += 1;
            if !binary {
                let (a, d) = patch::count(before, after);
                out.added += a;
                out.removed += d;
            }
            continue;
        }
        if stat_only {
            let name = stat_name(&c.old_path, &c.new_path);
            stat_bytes += name.len() + 32;
            if stat_bytes > budget {
                out.truncated = true;
                out.next_path = Some(c.new_path.clone());
                out.not_shown = total - n as u64;
                out.files += 1;
                if !binary {
                    let (a, d) = patch::count(before, after);
                    out.added += a;
                    out.removed += d;
                }
                continue;
            }
            let change = if binary {
                StatChange::Binary(before.len() as u64, after.len() as u64)
            } else {
                let (a, d) = patch::count(before, after);
                out.added += a;
                out.removed += d;
                StatChange::Lines(a, d)
            };
            out.files += 1;
            rows.push(StatRow { name, change });
            continue;
        }
        // A side redaction changed is not named by its blob id: the id is a
        // hash of the raw content, against which a guessed value (a short
        // PIN, a password from a list) could be checked offline.
        let id = |v: &Version| {
            if redacted {
                String::new()
            } else {
                repo.short(v.id)
            }
        };
        let file = FileChange {
            old_path: Some(c.old_path.as_str()),
            new_path: Some(c.new_path.as_str()),
            old: c.old.as_ref().map(|v| (v.mode, id(v))),
            new: c.new.as_ref().map(|v| (v.mode, id(v))),
            similarity: c.score.map(rename::percent),
        };
        let type_change = match (&c.old, &c.new) {
            (Some(o), Some(n)) => kind(o.mode) != kind(n.mode),
            _ => false,
        };
        let (section, a, d) = if type_change {
            // git shows a file that became a link (or the reverse) as the
            // old one deleted and the new one created; the counts are
            // those of the one pair, as its `--stat` counts them.
            let gone = FileChange {
                new: None,
                similarity: None,
                ..file.clone()
            };
            let born = FileChange {
                old: None,
                similarity: None,
                ..file
            };
            let (mut section, _) = file_section(
                &c,
                &gone,
                binary,
                redacted,
                raw_before,
                &[],
                before,
                &[],
                context,
            );
            let (next, _) = file_section(
                &c,
                &born,
                binary,
                redacted,
                &[],
                raw_after,
                &[],
                after,
                context,
            );
            section.push_str(&next);
            let (a, d) = if binary {
                (0, 0)
            } else {
                patch::count(before, after)
            };
            (section, a, d)
        } else {
            let (section, (a, d)) = file_section(
                &c, &file, binary, redacted, raw_before, raw_after, before, after, context,
            );
            (section, a, d)
        };
        if text.len() + section.len() > budget {
            out.truncated = true;
            out.not_shown = total - n as u64;
            let room = budget.saturating_sub(text.len());
            let mut cut = room.min(section.len());
            while !section.is_char_boundary(cut) {
                cut -= 1;
            }
            if let Some(i) = section[..cut].rfind('\n') {
                text.push_str(&section[..=i]);
            }
            // This file is shown in part (or not at all): the next answer
            // starts at it.
            out.next_path = Some(c.new_path.clone());
            out.files += 1;
            out.added += a;
            out.removed += d;
            continue;
        }
        text.push_str(&section);
        out.files += 1;
        out.added += a;
        out.removed += d;
    }
    if stat_only {
        text.push_str(&patch::stat(&rows, STAT_WIDTH));
    }
    out.text = text;
    Ok(())
}

/// A mode's kind: regular file, symbolic link or submodule.
fn kind(mode: u32) -> u32 {
    match mode {
        0o120000 | GITLINK => mode,
        _ => 0o100000,
    }
}

/// A `--stat` row's name, as git writes it: one path, or a rename with
/// the shared directories written once (`src/{a.rs => b.rs}`); either path
/// C-quoted when it must be.
fn stat_name(old: &str, new: &str) -> String {
    if old == new {
        return patch::quote_path("", new);
    }
    let (qo, qn) = (patch::quote_path("", old), patch::quote_path("", new));
    if qo != old || qn != new {
        return format!("{qo} => {qn}");
    }
    rename::stat_name(old, new)
}

/// One file's section of a patch: its header, then hunks (or the binary
/// line, or the notice that the change lies inside redacted text); returns
/// it with the added and removed lines.
#[expect(
    clippy::too_many_arguments,
    reason = "the change, how it is headed, and both sides raw and as diffed"
)]
fn file_section(
    c: &Change,
    file: &FileChange<'_>,
    binary: bool,
    redacted: bool,
    raw_before: &[u8],
    raw_after: &[u8],
    before: &[u8],
    after: &[u8],
    context: u32,
) -> (String, (u64, u64)) {
    let mut section = patch::header(file);
    if binary {
        let a_name = if file.old.is_some() {
            patch::quote_path("a/", &c.old_path)
        } else {
            "/dev/null".to_owned()
        };
        let b_name = if file.new.is_some() {
            patch::quote_path("b/", &c.new_path)
        } else {
            "/dev/null".to_owned()
        };
        section.push_str(&format!("Binary files {a_name} and {b_name} differ\n"));
        return (section, (0, 0));
    }
    let (a, d) = patch::hunks(&mut section, file, before, after, context);
    if a == 0 && d == 0 && redacted && raw_before != raw_after {
        // The raw sides differ only inside redacted spans: the file is
        // named, and the notice says why no hunk follows.
        section.push_str(HIDDEN_CHANGE);
    }
    (section, (a, d))
}

/// A commit's change against its first parent, as `git_show` shows it.
#[derive(Debug, Default)]
pub(crate) struct CommitDiff {
    /// The `--stat` block of every shown file.
    pub stat: String,
    /// The unified diff (empty when only the stat was asked for).
    pub diff: String,
    /// Files changed, lines added and removed (over every shown file).
    pub files: u64,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// Changed files the denylist covers (counted, never named).
    pub denied: u64,
    /// The output cap cut the stat or the diff.
    pub truncated: bool,
    /// The first file the cap cut short or left out.
    pub next_path: Option<String>,
    /// Files the cap cut short or left out.
    pub not_shown: u64,
    /// What redacting each whole side replaced.
    pub report: RedactionReport,
}

/// The change from tree entries `old` to `new`, both from the object store:
/// the stat of every changed file, then (unless `stat_only`) their diff in
/// what is left of `budget` bytes. The same machinery as `git_diff`: denied
/// paths counted and never read, each whole side redacted before it is
/// diffed, binary files named only.
#[expect(
    clippy::too_many_arguments,
    reason = "the two sides, the options of the answer and its limits"
)]
pub(crate) fn commit_diff(
    ws: &Workspace,
    repo: &Repo,
    old: &Entries,
    new: Entries,
    stat_only: bool,
    context: u32,
    budget: usize,
    deadline: &Deadline,
) -> Result<CommitDiff, WireError> {
    let mut stat = Output::default();
    let changes = compare(ws, repo, old, &New::Objects(new), &mut stat, deadline)?;
    let mut result = CommitDiff {
        denied: stat.denied,
        ..CommitDiff::default()
    };
    let for_patch = if stat_only {
        Vec::new()
    } else {
        changes.clone()
    };
    render(
        ws, repo, changes, true, context, &mut stat, deadline, budget,
    )?;
    result.files = stat.files;
    result.added = stat.added;
    result.removed = stat.removed;
    result.truncated = stat.truncated;
    result.next_path = stat.next_path;
    result.not_shown = stat.not_shown;
    result.report = stat.report;
    result.stat = stat.text;
    if stat_only || result.truncated {
        return Ok(result);
    }
    let mut diff = Output::default();
    let room = budget.saturating_sub(result.stat.len());
    render(
        ws, repo, for_patch, false, context, &mut diff, deadline, room,
    )?;
    result.truncated = diff.truncated;
    result.next_path = diff.next_path;
    result.not_shown = diff.not_shown;
    result.diff = diff.text;
    Ok(result)
}

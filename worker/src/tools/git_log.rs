//! `git_log`: recent commits, newest first (by committer date, as `git log`
//! orders them).
//!
//! Each commit is parsed from its object: the fields are the commit's own
//! (hash, author name, author date, subject), never cut out of a text
//! stream, so no message can forge a second entry. A subject is taken from
//! the message after the whole message is redacted
//! ([`crate::sources::redact_source_bytes`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use gix::ObjectId;
use gix::revision::plumbing::Spec;
use moat_protocol::request::GitLogArgs;
use moat_protocol::response::{Commit, GitLogOutput, Limit, ToolOutput};
use moat_protocol::wire_error::{GitReason, GitTool, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::git::{self, Repo, check_deadline};
use crate::redact::RedactionReport;
use crate::sources;

/// Most commits looked at while hiding the ancestors of a range's start.
const MAX_HIDDEN: usize = 2_000_000;

/// Run `git_log`.
pub fn run(
    ws: &Workspace,
    args: &GitLogArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let target = git::Target::new(ws, args.revision.as_deref(), args.path.as_deref())?;
    let limit = args.limit.clamp(1, ws.limits().max_git_entries) as usize;
    let repo = git::open(ws, GitTool::Log, deadline)?;
    let (tips, hide) = match target.revision {
        None => (repo.head()?.into_iter().collect(), Vec::new()),
        Some(rev) => match repo.resolve(rev, ws.redactor())? {
            Spec::Include(id) => (vec![repo.peel_to_commit(id)?], Vec::new()),
            Spec::Exclude(_) => (Vec::new(), Vec::new()),
            Spec::Range { from, to } => (
                vec![repo.peel_to_commit(to)?],
                vec![repo.peel_to_commit(from)?],
            ),
            Spec::Merge { theirs, ours } => {
                let (a, b) = (repo.peel_to_commit(theirs)?, repo.peel_to_commit(ours)?);
                (vec![a, b], repo.merge_base(a, b)?.into_iter().collect())
            }
            Spec::IncludeOnlyParents(id) => {
                let id = repo.peel_to_commit(id)?;
                (repo.commit(id)?.parents, Vec::new())
            }
            Spec::ExcludeParents(id) => {
                let id = repo.peel_to_commit(id)?;
                (vec![id], repo.commit(id)?.parents)
            }
        },
    };
    let hidden = ancestors(&repo, &hide, deadline)?;
    let prefix = target.prefix().to_owned();
    let mut commits = Vec::new();
    let mut bytes = 0usize;
    let mut report = RedactionReport::default();
    // Commits queued by committer time, ties in the order they were queued
    // (as `git log` breaks them): never by object id, which is a hash of
    // the commit's content and would order equal-time commits by what they
    // hold. Each commit is parsed once, when queued.
    let mut queue: BinaryHeap<(i64, Reverse<u64>, ObjectId)> = BinaryHeap::new();
    let mut queued = 0u64;
    let mut parsed: HashMap<ObjectId, git::CommitInfo> = HashMap::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    for tip in tips {
        if !hidden.contains(&tip) && seen.insert(tip) {
            let info = repo.commit(tip)?;
            queue.push((info.committed, Reverse(queued), tip));
            queued += 1;
            parsed.insert(tip, info);
        }
    }
    let mut stopped_by = Vec::new();
    let skip = args.skip.min(moat_protocol::limits::MAX_PAGED_ITEMS);
    let mut skipped = 0u64;
    while let Some((_, _, id)) = queue.pop() {
        check_deadline(deadline)?;
        deadline.file_seen();
        if commits.len() >= limit {
            // History goes on past the last commit shown (with a path, it
            // may or may not touch it: not looked at).
            stopped_by.push(Limit::Results);
            break;
        }
        let Some(info) = parsed.remove(&id) else {
            continue;
        };
        for p in &info.parents {
            if !hidden.contains(p) && seen.insert(*p) {
                let pinfo = repo.commit(*p)?;
                queue.push((pinfo.committed, Reverse(queued), *p));
                queued += 1;
                parsed.insert(*p, pinfo);
            }
        }
        if !prefix.is_empty() && !touches(ws, &repo, &info, &prefix, deadline)? {
            continue;
        }
        // A later page walks the same history in the same order and skips
        // the commits earlier pages showed.
        if skipped < skip {
            skipped += 1;
            continue;
        }
        // The message is redacted whole before its subject is cut from
        // it: a credential that starts in the first paragraph and ends in a
        // later one is seen whole.
        let message = sources::redact_source_bytes(
            ws.redactor(),
            &info.message,
            &mut report,
            deadline.work(),
        );
        let subject = git::subject(message.as_bytes());
        bytes += subject.len() + info.author.len() + 100;
        if bytes > ws.limits().git_bytes() {
            stopped_by.push(Limit::Bytes);
            break;
        }
        commits.push(Commit {
            commit: id.to_hex().to_string(),
            short: repo.short(id),
            author: info.author,
            authored_at: info.authored_at,
            subject,
        });
    }
    Ok(ToolOutput::GitLog(GitLogOutput {
        commits,
        path: target.shown_path(),
        truncated: !stopped_by.is_empty(),
        stopped_by,
        redaction: sources::counts(&report),
    }))
}

/// Whether `commit` changed `path`: its entry there differs from every
/// parent's in something the denylist lets an answer show (a merge that
/// keeps one parent's version is not shown, as git's default history
/// simplification does not show it; a commit that changed only denied files
/// beneath `path` is not shown either, or the history would tell when they
/// changed).
fn touches(
    ws: &Workspace,
    repo: &Repo,
    commit: &git::CommitInfo,
    path: &str,
    deadline: &Deadline,
) -> Result<bool, WireError> {
    let mine = repo.entry_at(commit.tree, path)?;
    let parents: Vec<Option<git::Entry>> = if commit.parents.is_empty() {
        vec![None]
    } else {
        commit
            .parents
            .iter()
            .map(|p| repo.entry_at(repo.commit(*p)?.tree, path))
            .collect::<Result<_, _>>()?
    };
    for theirs in parents {
        if !repo.visible_change(path, theirs, mine, ws.denylist(), deadline)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Every commit reachable from `tips` (bounded).
fn ancestors(
    repo: &Repo,
    tips: &[ObjectId],
    deadline: &Deadline,
) -> Result<HashSet<ObjectId>, WireError> {
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut stack: Vec<ObjectId> = tips.to_vec();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if seen.len().is_multiple_of(1024) {
            check_deadline(deadline)?;
        }
        if seen.len() > MAX_HIDDEN {
            return Err(repo.fail(GitReason::Unreadable));
        }
        stack.extend(repo.commit(id)?.parents);
    }
    Ok(seen)
}

//! `git_blame`: for a range of lines of a file at a revision, the commit
//! that last changed each line.
//!
//! The walk is moat's own, over objects read through [`Repo`] (every object
//! sized by its header before it is inflated, at most `max_file_bytes` for a
//! blob), with the line diff `git_diff` uses (imara-diff, Myers). gitoxide's
//! own blame needs its blob-diff feature, which brings in the attribute,
//! filter and external-command machinery this worker is built without (it
//! runs no program and reads objects only through its own size checks).
//!
//! The rule is git's without copy or move detection: the lines still to be
//! attributed sit in a suspect commit; commits are taken newest first (by
//! committer date); a line the commit's version shares with a parent's
//! version (unchanged in their diff) passes to that parent, parents taken
//! in order; what no parent has is attributed to the commit. A file is
//! followed by its path only: the lines of a renamed file are attributed
//! to the commit that renamed it. So that such lines are not taken for
//! that commit's own, a group whose commit created the file at this path
//! (no parent has the path) says so, with the path it was renamed from when
//! git's rename detection pairs it with a file of the first parent, and
//! that parent: blaming that path there follows the lines further back.
//!
//! The walk is bounded by [`MAX_BLAME_COMMITS`] commits and by most of the
//! request's time budget; if either stops it, the lines not yet attributed
//! are given to the commit they had reached, marked `boundary` (the lines
//! are that old or older), and the answer says which limit stopped it.
//!
//! The blamed version is redacted as one whole blob before its lines are
//! cut; each commit's message is redacted whole before its subject is cut.
//! The path is resolved as `read_file` resolves it (containment, then the
//! denylist), so a denied file is refused with the same `denied_path`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use gix::ObjectId;
use gix::revision::plumbing::Spec;
use imara_diff::{Algorithm, Diff, InternedInput};
use moat_protocol::limits::{BINARY_SNIFF_BYTES, MAX_BLAME_COMMITS, MAX_BLAME_LINES};
use moat_protocol::request::GitBlameArgs;
use moat_protocol::response::{
    BlameGroup, Commit, Created, GitBlameOutput, Limit, LineCut, ToolOutput,
};
use moat_protocol::wire_error::{GitReason, GitTool, Unsupported, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::git::{self, Repo};
use crate::redact::RedactionReport;
use crate::sources;
use crate::tools::git_diff;

const TREE: u32 = 0o040000;
const GITLINK: u32 = 0o160000;

/// Lines still to attribute: `len` lines starting at `at` in the suspect's
/// version, which are the blamed version's lines from `orig`.
#[derive(Debug, Clone, Copy)]
struct Span {
    at: u32,
    orig: u32,
    len: u32,
}

/// A commit holding lines still to attribute.
struct Suspect {
    blob: ObjectId,
    spans: Vec<Span>,
}

/// Where one blamed line was attributed.
#[derive(Debug, Clone, Copy)]
struct Origin {
    commit: ObjectId,
    /// The line's index in that commit's version.
    at: u32,
    boundary: bool,
}

/// Run `git_blame`.
pub fn run(
    ws: &Workspace,
    args: &GitBlameArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let target = git::Target::new(ws, args.revision.as_deref(), Some(&args.path))?;
    let path = target.path.as_ref().ok_or(WireError::NotAFile)?;
    if path.is_root() {
        return Err(WireError::NotAFile);
    }
    let repo = git::open(ws, GitTool::Blame, deadline)?;
    let start = match target.revision {
        None => repo.head()?.ok_or(repo.fail(GitReason::UnknownRevision))?,
        Some(rev) => match repo.resolve(rev, ws.redactor())? {
            Spec::Include(id) => id,
            _ => return Err(repo.fail(GitReason::WrongKind)),
        },
    };
    let start = repo.peel_to_commit(start)?;
    let info = repo.commit(start)?;
    let blob =
        blob_at(&repo, info.tree, path.tree_rel())?.ok_or(repo.fail(GitReason::NoSuchPath))?;
    let bytes = repo.blob(blob, ws.limits().max_file_bytes)?;
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some() {
        return Err(WireError::BinaryFile);
    }
    let total = line_count(&bytes);
    let first = args.start_line.unwrap_or(1).max(1);
    let wanted_end = args.end_line.unwrap_or(total.max(first));
    let mut report = RedactionReport::default();
    let empty = |truncation| GitBlameOutput {
        path: path.display().to_owned(),
        revision: start.to_hex().to_string(),
        total_lines: total,
        start_line: 0,
        end_line: 0,
        groups: Vec::new(),
        commits_walked: 0,
        truncation,
        line_cut: None,
        redaction: Default::default(),
    };
    if total == 0 && first == 1 && wanted_end >= first {
        return Ok(ToolOutput::GitBlame(empty(None)));
    }
    if first > total {
        return Err(WireError::Unsupported(Unsupported::LineOutOfRange {
            start: first,
            total,
        }));
    }
    if wanted_end < first {
        return Err(WireError::Unsupported(Unsupported::EndBeforeStart {
            start: first,
            end: wanted_end,
        }));
    }
    let end = wanted_end.min(total).min(first + MAX_BLAME_LINES - 1);
    let mut truncation = (end < wanted_end.min(total)).then_some(Limit::Lines);
    // Most of the budget: the answer must be built and sent before the
    // broker's own deadline.
    let soft = deadline.within(deadline.remaining().mul_f64(0.8));
    #[expect(
        clippy::cast_possible_truncation,
        reason = "line numbers of a blob of at most max_file_bytes"
    )]
    let (lo, n) = ((first - 1) as u32, (end - first + 1) as u32);
    let Walked {
        origins,
        walked,
        stopped,
        created,
    } = walk(
        &repo,
        path.rel(),
        ws.limits().max_file_bytes,
        (start, blob),
        Span {
            at: lo,
            orig: lo,
            len: n,
        },
        &soft,
    )?;
    if stopped.is_some() {
        truncation = stopped;
    }
    // The blamed version's text, redacted whole; lines end at `\n`.
    let text = sources::redact_source_bytes(ws.redactor(), &bytes, &mut report, deadline.work());
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut groups: Vec<BlameGroup> = Vec::new();
    let mut commits: HashMap<ObjectId, Commit> = HashMap::new();
    let mut last: Option<ObjectId> = None;
    // The answer budget, counted as `read_file` counts it: each line costs
    // its text and its number column, a group its header line; the answer
    // stops at the last whole line that fits, and always holds at least
    // one (cut to the budget when it alone is longer).
    let budget = ws.limits().answer_bytes();
    let width = end.to_string().len() + 3;
    let mut used = 0usize;
    let mut end = end;
    let mut line_cut = None;
    let mut creations: HashMap<ObjectId, Created> = HashMap::new();
    for (i, origin) in origins.iter().enumerate() {
        let line_no = first + i as u64;
        let mut line = lines
            .get((line_no - 1) as usize)
            .map_or("", |l| l.trim_end_matches('\n').trim_end_matches('\r'))
            .to_owned();
        let starts_group = groups.last().is_none_or(|_| last != Some(origin.commit));
        let cost = line.len() + width + if starts_group { GROUP_COST } else { 0 };
        if i > 0 && used + cost > budget {
            end = line_no - 1;
            truncation = Some(truncation.unwrap_or(Limit::Bytes));
            break;
        }
        used += cost;
        // Only the first line can be over the budget alone: as much of it
        // as fits, and the answer says where the rest is read.
        let room = budget.saturating_sub(width + GROUP_COST).max(1);
        let cut_here = line.len() > room && line.chars().nth(room).is_some();
        if cut_here {
            let columns = line.chars().count() as u64;
            if let Some((at, _)) = line.char_indices().nth(room) {
                line.truncate(at);
            }
            line_cut = Some(LineCut {
                line: line_no,
                shown: room as u64,
                columns,
            });
            end = line_no;
            if matches!(truncation, None | Some(Limit::Lines)) {
                truncation = Some(Limit::Bytes);
            }
        }
        let source = u64::from(origin.at) + 1;
        if let Some(g) = groups.last_mut()
            && last == Some(origin.commit)
            && g.boundary == origin.boundary
            && g.source_line + (g.end_line - g.start_line) + 1 == source
        {
            g.end_line = line_no;
            g.lines.push(line);
            if cut_here {
                break;
            }
            continue;
        }
        last = Some(origin.commit);
        let commit = match commits.get(&origin.commit) {
            Some(c) => c.clone(),
            None => {
                let c = describe(ws, &repo, origin.commit, &mut report, deadline.work())?;
                commits.insert(origin.commit, c.clone());
                c
            }
        };
        let created_file = if origin.boundary || !created.contains(&origin.commit) {
            None
        } else {
            Some(
                creations
                    .entry(origin.commit)
                    .or_insert_with(|| {
                        creation(ws, &repo, origin.commit, path.tree_rel(), deadline)
                    })
                    .clone(),
            )
        };
        groups.push(BlameGroup {
            commit,
            start_line: line_no,
            end_line: line_no,
            source_line: source,
            boundary: origin.boundary,
            lines: vec![line],
            created_file,
        });
        if cut_here {
            break;
        }
    }
    Ok(ToolOutput::GitBlame(GitBlameOutput {
        start_line: first,
        end_line: end,
        groups,
        commits_walked: walked,
        line_cut,
        redaction: sources::counts(&report),
        ..empty(truncation)
    }))
}

/// How `id`, which no parent's tree has `path` in, created the file: the
/// path its first parent had it at when git's rename detection pairs the
/// two. Finding that is a diff of the whole commit, so it gets a part of
/// what is left of the time budget; past it (or on any failure) the
/// answer says only that the commit created the file.
fn creation(ws: &Workspace, repo: &Repo, id: ObjectId, path: &str, deadline: &Deadline) -> Created {
    let mut created = Created {
        renamed_from: None,
        parent: None,
    };
    let Ok(info) = repo.commit(id) else {
        return created;
    };
    let Some(parent) = info.parents.first().copied() else {
        return created;
    };
    created.parent = Some(parent.to_hex().to_string());
    let soft = deadline.within(deadline.remaining().mul_f64(0.3));
    let found = repo.commit(parent).and_then(|p| {
        let old = repo.flatten(p.tree, "", &soft)?;
        let new = repo.flatten(info.tree, "", &soft)?;
        git_diff::renamed_from(ws, repo, (&old, new), path, &soft)
    });
    created.renamed_from = found.ok().flatten();
    created
}

/// What a group's header line costs in the answer's text (commit, date,
/// author, subject).
const GROUP_COST: usize = 160;

/// The commit's fields, its subject cut from its whole message redacted.
fn describe(
    ws: &Workspace,
    repo: &Repo,
    id: ObjectId,
    report: &mut RedactionReport,
    work: &crate::work::Account,
) -> Result<Commit, WireError> {
    let info = repo.commit(id)?;
    let message = sources::redact_source_bytes(ws.redactor(), &info.message, report, work);
    Ok(Commit {
        commit: id.to_hex().to_string(),
        short: repo.short(id),
        author: info.author,
        authored_at: info.authored_at,
        subject: git::subject(message.as_bytes()),
    })
}

/// Lines as git counts them: each ends at `\n`; a last line without one
/// counts too.
fn line_count(bytes: &[u8]) -> u64 {
    let breaks = memchr::memchr_iter(b'\n', bytes).count() as u64;
    breaks + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// The blob at `path` in `tree`: `None` when there is none (or a directory
/// or submodule is there).
fn blob_at(repo: &Repo, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, WireError> {
    Ok(repo
        .entry_at(tree, path)?
        .filter(|e| e.mode & 0o170000 != TREE && e.mode != GITLINK)
        .map(|e| e.id))
}

/// What the walk found: an origin per line, the commits looked at, the
/// limit that stopped it (if one did), and the commits that kept lines
/// because no parent has the path (they created the file).
struct Walked {
    origins: Vec<Origin>,
    walked: u64,
    stopped: Option<Limit>,
    created: HashSet<ObjectId>,
}

/// Attribute `span` of `blob` (the version of `path` in `start`): one
/// origin per line, the commits looked at, the limit that stopped the walk
/// (if one did), and the commits that created the file. Blobs are read at
/// most `cap` bytes each.
fn walk(
    repo: &Repo,
    path: &str,
    cap: u64,
    (start, blob): (ObjectId, ObjectId),
    span: Span,
    deadline: &Deadline,
) -> Result<Walked, WireError> {
    let mut origins: Vec<Option<Origin>> = vec![None; span.len as usize];
    let base = span.orig;
    let assign = |origins: &mut Vec<Option<Origin>>, commit, s: &Span, boundary| {
        for k in 0..s.len {
            if let Some(slot) = origins.get_mut((s.orig - base + k) as usize) {
                *slot = Some(Origin {
                    commit,
                    at: s.at + k,
                    boundary,
                });
            }
        }
    };
    // Newest first, ties in the order queued: never by object id, a hash of
    // the commit's content.
    let mut queue: BinaryHeap<(i64, Reverse<u64>, ObjectId)> = BinaryHeap::new();
    let mut queued = 0u64;
    let mut suspects: HashMap<ObjectId, Suspect> = HashMap::new();
    queue.push((repo.commit(start)?.committed, Reverse(queued), start));
    queued += 1;
    suspects.insert(
        start,
        Suspect {
            blob,
            spans: vec![span],
        },
    );
    let mut walked = 0u64;
    let mut stopped = None;
    // Commits that kept lines because no parent has the path.
    let mut created = HashSet::new();
    while let Some((_, _, id)) = queue.pop() {
        if walked >= MAX_BLAME_COMMITS {
            stopped = Some(Limit::Commits);
            break;
        }
        if deadline.expired() {
            stopped = Some(Limit::Time);
            break;
        }
        deadline.file_seen();
        let Some(suspect) = suspects.remove(&id) else {
            continue;
        };
        walked += 1;
        let info = repo.commit(id)?;
        let mut spans = suspect.spans;
        let mut ours: Option<Vec<u8>> = None;
        let mut in_a_parent = false;
        for parent in &info.parents {
            if spans.is_empty() {
                break;
            }
            let pinfo = repo.commit(*parent)?;
            let Some(pblob) = blob_at(repo, pinfo.tree, path)? else {
                continue;
            };
            in_a_parent = true;
            let passed = if pblob == suspect.blob {
                std::mem::take(&mut spans)
            } else {
                if ours.is_none() {
                    ours = Some(repo.blob(suspect.blob, cap)?);
                }
                let theirs = repo.blob(pblob, cap)?;
                let segments = unchanged(&theirs, ours.as_deref().unwrap_or_default());
                let (pass, keep) = split(&spans, &segments);
                spans = keep;
                pass
            };
            if passed.is_empty() {
                continue;
            }
            let entry = suspects.entry(*parent).or_insert_with(|| {
                queue.push((pinfo.committed, Reverse(queued), *parent));
                queued += 1;
                Suspect {
                    blob: pblob,
                    spans: Vec::new(),
                }
            });
            entry.spans.extend(passed);
        }
        if !spans.is_empty() && !in_a_parent {
            created.insert(id);
        }
        for s in &spans {
            assign(&mut origins, id, s, false);
        }
    }
    // Lines still in a suspect when the walk stopped stay where they had
    // reached: that commit or an older one.
    for (id, suspect) in suspects {
        for s in &suspect.spans {
            assign(&mut origins, id, s, true);
        }
    }
    let origins = origins
        .into_iter()
        .map(|o| {
            o.unwrap_or(Origin {
                commit: start,
                at: 0,
                boundary: true,
            })
        })
        .collect();
    Ok(Walked {
        origins,
        walked,
        stopped,
        created,
    })
}

/// The runs of lines `old` and `new` share, as `(new_start, old_start,
/// len)`, in order.
fn unchanged(old: &[u8], new: &[u8]) -> Vec<(u32, u32, u32)> {
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    let mut out = Vec::new();
    let (mut at_new, mut at_old) = (0u32, 0u32);
    for h in diff.hunks() {
        let len = h.after.start - at_new;
        if len > 0 {
            out.push((at_new, at_old, len));
        }
        at_new = h.after.end;
        at_old = h.before.end;
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "lines of a blob of at most max_file_bytes"
    )]
    let tail = (input.after.len() as u32).saturating_sub(at_new);
    if tail > 0 {
        out.push((at_new, at_old, tail));
    }
    out
}

/// Split `spans` (in the child's numbering) into the parts the parent
/// shares, renumbered to the parent's lines, and the parts it does not.
fn split(spans: &[Span], segments: &[(u32, u32, u32)]) -> (Vec<Span>, Vec<Span>) {
    let (mut pass, mut keep) = (Vec::new(), Vec::new());
    for s in spans {
        let end = s.at + s.len;
        let mut pos = s.at;
        let piece = |from: u32, to: u32, at: u32| Span {
            at,
            orig: s.orig + (from - s.at),
            len: to - from,
        };
        for &(new_start, old_start, len) in segments {
            let seg_end = new_start + len;
            if seg_end <= pos {
                continue;
            }
            if new_start >= end {
                break;
            }
            if new_start > pos {
                keep.push(piece(pos, new_start, pos));
                pos = new_start;
            }
            let stop = seg_end.min(end);
            pass.push(piece(pos, stop, old_start + (pos - new_start)));
            pos = stop;
            if pos >= end {
                break;
            }
        }
        if pos < end {
            keep.push(piece(pos, end, pos));
        }
    }
    (pass, keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_lines_pass_to_the_parent_renumbered() {
        let old = b"a\nb\nc\nd\n";
        let new = b"a\nX\nb\nc\nY\n";
        let segments = unchanged(old, new);
        assert_eq!(segments, vec![(0, 0, 1), (2, 1, 2)]);
        let all = [Span {
            at: 0,
            orig: 10,
            len: 5,
        }];
        let (pass, keep) = split(&all, &segments);
        let pass: Vec<(u32, u32, u32)> = pass.iter().map(|s| (s.at, s.orig, s.len)).collect();
        let keep: Vec<(u32, u32, u32)> = keep.iter().map(|s| (s.at, s.orig, s.len)).collect();
        assert_eq!(pass, vec![(0, 10, 1), (1, 12, 2)]);
        assert_eq!(keep, vec![(1, 11, 1), (4, 14, 1)]);
    }
}

//! `git_show`: one commit (its fields, its whole message, the stat of its
//! change and the diff against its first parent), or one file as a revision
//! holds it.
//!
//! The commit's message is redacted as one text before anything is cut from
//! it (its subject included). Its change is `git_diff`'s machinery over two
//! trees of the object store (`git_diff::commit_diff`): a path the
//! denylist covers is counted, never named, never read; each side of a
//! text change is redacted whole before it is diffed. A merge is shown
//! against its first parent; a root commit against the empty tree.
//!
//! A file at a revision is resolved like `read_file` resolves a path
//! (containment, then the denylist: a denied path is refused with the same
//! `denied_path`), looked up in the commit's tree, sized by its header
//! before it is inflated (at most `max_file_bytes`), refused when binary
//! (a NUL in its first 8 KiB), and redacted as a whole blob before its line
//! and column range is cut (`read_file`'s line rule, line cap, columns and
//! answer budget). Nothing is read from the work tree.

use moat_protocol::limits;
use moat_protocol::limits::BINARY_SNIFF_BYTES;
use moat_protocol::request::GitShowArgs;
use moat_protocol::response::{
    Columns, Commit, GitShowOutput, Limit, Shown, ShownCommit, ShownFile, ToolOutput,
};
use moat_protocol::wire_error::{GitReason, GitTool, WireError};

use gix::revision::plumbing::Spec;

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::git::{self, Entries, Repo};
use crate::redact::RedactionReport;
use crate::sources;
use crate::tools::git_diff;
use crate::tools::read_file::{select, split_lines};

const TREE: u32 = 0o040000;
const GITLINK: u32 = 0o160000;

/// Run `git_show`.
pub fn run(
    ws: &Workspace,
    args: &GitShowArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let target = git::Target::new(ws, args.revision.as_deref(), args.path.as_deref())?;
    let repo = git::open(ws, GitTool::Show, deadline)?;
    let id = match target.revision {
        None => repo.head()?.ok_or(repo.fail(GitReason::UnknownRevision))?,
        Some(rev) => match repo.resolve(rev, ws.redactor())? {
            Spec::Include(id) => id,
            _ => return Err(repo.fail(GitReason::WrongKind)),
        },
    };
    let id = repo.peel_to_commit(id)?;
    let info = repo.commit(id)?;
    let mut report = RedactionReport::default();
    // The whole message, redacted as one text; the subject is cut from it.
    let message =
        sources::redact_source_bytes(ws.redactor(), &info.message, &mut report, deadline.work())
            .into_owned();
    let commit = Commit {
        commit: id.to_hex().to_string(),
        short: repo.short(id),
        author: info.author.clone(),
        authored_at: info.authored_at.clone(),
        subject: git::subject(message.as_bytes()),
    };
    let parents = info
        .parents
        .iter()
        .map(|p| p.to_hex().to_string())
        .collect();
    let (shown, truncation) = match &target.path {
        Some(path) => show_file(ws, &repo, &info, path, args, &mut report, deadline.work())?,
        None => show_commit(ws, &repo, &info, message, args, &mut report, deadline)?,
    };
    Ok(ToolOutput::GitShow(GitShowOutput {
        commit,
        parents,
        shown,
        truncation,
        redaction: sources::counts(&report),
    }))
}

fn show_commit(
    ws: &Workspace,
    repo: &Repo,
    info: &git::CommitInfo,
    message: String,
    args: &GitShowArgs,
    report: &mut RedactionReport,
    deadline: &Deadline,
) -> Result<(Shown, Option<Limit>), WireError> {
    let context = u32::from(
        args.context_lines
            .map_or(limits::DIFF_CONTEXT_LINES_DEFAULT, |n| {
                n.min(limits::MAX_DIFF_CONTEXT_LINES)
            }),
    );
    let old: Entries = match info.parents.first() {
        Some(p) => repo.flatten(repo.commit(*p)?.tree, "", deadline)?,
        None => Entries::new(),
    };
    let new = repo.flatten(info.tree, "", deadline)?;
    // A message longer than half the answer keeps its start: the rest of
    // the answer is the change's.
    let mut message = message;
    let half = ws.limits().answer_bytes() / 2;
    let mut message_chars = None;
    if let Some((at, _)) = message.char_indices().nth(half) {
        message_chars = Some(message.chars().count() as u64);
        message.truncate(at);
    }
    let budget = ws.limits().git_bytes().saturating_sub(message.len());
    let d = git_diff::commit_diff(
        ws,
        repo,
        &old,
        new,
        args.stat_only,
        context,
        budget,
        deadline,
    )?;
    report.merge(&d.report);
    let text = if d.diff.is_empty() {
        d.stat
    } else {
        format!("{}\n{}", d.stat, d.diff)
    };
    let truncation = (d.truncated || message_chars.is_some()).then_some(Limit::Bytes);
    Ok((
        Shown::Commit(ShownCommit {
            message,
            message_chars,
            text,
            stat_only: args.stat_only,
            files_changed: d.files,
            lines_added: d.added,
            lines_removed: d.removed,
            withheld_by_denylist: d.denied,
            next_not_shown: d.next_path,
            files_not_shown: d.not_shown,
        }),
        truncation,
    ))
}

fn show_file(
    ws: &Workspace,
    repo: &Repo,
    info: &git::CommitInfo,
    path: &crate::fs::ContainedPath,
    args: &GitShowArgs,
    report: &mut RedactionReport,
    work: &crate::work::Account,
) -> Result<(Shown, Option<Limit>), WireError> {
    if path.is_root() {
        return Err(WireError::NotAFile);
    }
    let entry = repo
        .entry_at(info.tree, path.tree_rel())?
        .ok_or(repo.fail(GitReason::NoSuchPath))?;
    if entry.mode & 0o170000 == TREE || entry.mode == GITLINK {
        return Err(WireError::NotAFile);
    }
    let bytes = repo.blob(entry.id, ws.limits().max_file_bytes)?;
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some() {
        return Err(WireError::BinaryFile);
    }
    // The whole blob is redacted first; redaction keeps every line break,
    // so the redacted text has the raw text's lines.
    let text = sources::redact_source_bytes(ws.redactor(), &bytes, report, work);
    let lines = split_lines(&text);
    let total = lines.len() as u64;
    let start = args.start_line.unwrap_or(1).max(1);
    let start_column = args.start_column.unwrap_or(1).max(1);
    // An end column alone ends the first line (`read_file`'s rule).
    let end_line = args.end_line.or(args.end_column.map(|_| start));
    let requested_end = end_line.unwrap_or(total.max(start));
    if total == 0 && start == 1 && requested_end >= start && start_column == 1 {
        return Ok((
            Shown::File(ShownFile {
                path: path.display().to_owned(),
                size_bytes: bytes.len() as u64,
                total_lines: 0,
                start_line: 0,
                end_line: 0,
                columns: Columns::default(),
                text: String::new(),
            }),
            None,
        ));
    }
    let range = select::Range::asked(
        total,
        start,
        start_column,
        requested_end,
        args.end_column,
        ws.limits(),
    )?;
    let selection = select::select(&lines, 1, &range)?;
    Ok((
        Shown::File(ShownFile {
            path: path.display().to_owned(),
            size_bytes: bytes.len() as u64,
            total_lines: total,
            start_line: start,
            end_line: selection.end_line,
            columns: selection.columns,
            text: selection.text,
        }),
        selection.cut,
    ))
}

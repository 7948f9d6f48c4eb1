//! `git_log`: recent commits, newest first.

use std::ffi::OsString;

use moat_protocol::request::GitLogArgs;
use moat_protocol::response::{Commit, GitLogOutput, ToolOutput};
use moat_protocol::wire_error::WireError;

use crate::deadline::Deadline;
use crate::git::{self, Sub};
use crate::workspace::Workspace;

const US: char = '\u{1f}';
const RS: char = '\u{1e}';

/// Run `git_log`.
pub fn run(
    ws: &Workspace,
    args: &GitLogArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let target = git::Target::new(ws, args.revision.as_deref(), args.path.as_deref())?;
    let limit = args.limit.clamp(1, ws.limits().max_git_entries);
    let mut argv: Vec<OsString> = vec![
        format!("--max-count={limit}").into(),
        "--format=%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1e".into(),
        "--no-color".into(),
        "--no-decorate".into(),
        "--no-mailmap".into(),
    ];
    target.push_args(&mut argv);
    let out = git::run(ws, Sub::Log, &argv, deadline)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut commits = Vec::new();
    for record in text.split(RS) {
        let record = record.trim_matches(['\n', '\r']);
        let fields: Vec<&str> = record.split(US).collect();
        if let [commit, short, author, authored_at, subject] = fields[..] {
            commits.push(Commit {
                commit: commit.to_owned(),
                short: short.to_owned(),
                author: author.to_owned(),
                authored_at: authored_at.to_owned(),
                subject: subject.to_owned(),
            });
        }
    }
    Ok(ToolOutput::GitLog(GitLogOutput {
        commits,
        path: target.shown_path(),
        truncated: out.truncated,
    }))
}

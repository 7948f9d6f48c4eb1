//! `git_diff`: a unified diff (or `--stat` summary) of the working tree, the
//! staging area, or against a revision.
//!
//! Counting: with a full diff, files are the `diff --git` headers and lines
//! the `+`/`-` lines outside headers; with `stat_only`, the counts come from
//! git's summary line (the seed reported 0 files there, its quirk 13).

use std::ffi::OsString;

use moat_protocol::limits::GIT_OUTPUT_BYTES;
use moat_protocol::request::GitDiffArgs;
use moat_protocol::response::{GitDiffOutput, ToolOutput};
use moat_protocol::wire_error::{TooLarge, WireError};

use crate::deadline::Deadline;
use crate::git::{self, Sub};
use crate::workspace::Workspace;

/// Run `git_diff`.
pub fn run(
    ws: &Workspace,
    args: &GitDiffArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let target = git::Target::new(ws, args.revision.as_deref(), args.path.as_deref())?;
    let mut argv: Vec<OsString> = vec![
        "--no-color".into(),
        "--no-ext-diff".into(),
        "--no-textconv".into(),
        "--find-renames".into(),
    ];
    if args.staged {
        argv.push("--cached".into());
    }
    if args.stat_only {
        argv.push("--stat=200".into());
    }
    if let Some(n) = args.context_lines {
        argv.push(format!("--unified={}", n.min(10)).into());
    }
    target.push_args(&mut argv);
    let out = git::run(ws, Sub::Diff, &argv, deadline)?;
    let mut bytes = out.stdout;
    if out.truncated {
        // Keep whole lines only.
        match memchr::memrchr(b'\n', &bytes) {
            Some(i) => bytes.truncate(i + 1),
            None => {
                return Err(WireError::TooLarge(TooLarge::Diff {
                    limit: GIT_OUTPUT_BYTES as u64,
                }));
            }
        }
    }
    let diff = String::from_utf8_lossy(&bytes).into_owned();
    let (files_changed, lines_added, lines_removed) = if args.stat_only {
        count_stat(&diff)
    } else {
        count_patch(&diff)
    };
    Ok(ToolOutput::GitDiff(GitDiffOutput {
        diff,
        files_changed,
        lines_added,
        lines_removed,
        path: target.shown_path(),
        staged: args.staged,
        stat_only: args.stat_only,
        truncated: out.truncated,
    }))
}

fn count_patch(diff: &str) -> (u64, u64, u64) {
    let (mut files, mut added, mut removed) = (0, 0, 0);
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            files += 1;
        } else if line.starts_with('+') && !line.starts_with("+++") {
            added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            removed += 1;
        }
    }
    (files, added, removed)
}

/// Parse ` N files changed, X insertions(+), Y deletions(-)` (LC_ALL=C).
fn count_stat(diff: &str) -> (u64, u64, u64) {
    let Some(summary) = diff.lines().rev().find(|l| l.contains(" changed")) else {
        return (0, 0, 0);
    };
    let mut counts = (0, 0, 0);
    for part in summary.split(',') {
        let part = part.trim();
        let n = part
            .split_whitespace()
            .next()
            .and_then(|w| w.parse::<u64>().ok())
            .unwrap_or(0);
        if part.contains("changed") {
            counts.0 = n;
        } else if part.contains("insertion") {
            counts.1 = n;
        } else if part.contains("deletion") {
            counts.2 = n;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c\n";
        assert_eq!(count_patch(patch), (1, 2, 1));
        let stat = " README.md | 3 ++-\n src/a.rs  | 1 +\n 2 files changed, 3 insertions(+), 1 deletion(-)\n";
        assert_eq!(count_stat(stat), (2, 3, 1));
        assert_eq!(count_stat(" 1 file changed, 1 deletion(-)\n"), (1, 0, 1));
        assert_eq!(count_stat(""), (0, 0, 0));
    }
}

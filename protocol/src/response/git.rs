//! What the git tools answer: `git_log`, `git_diff`, `git_show`,
//! `git_blame` and `git_status`.

use serde::{Deserialize, Serialize};

use super::{Limit, RedactionCounts};

/// One commit of `git_log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// Full hash.
    pub commit: String,
    /// Abbreviated hash.
    pub short: String,
    /// Author name.
    pub author: String,
    /// Author date, strict ISO 8601.
    pub authored_at: String,
    /// Subject line.
    pub subject: String,
}

/// Output of `git_log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitLogOutput {
    /// Newest first.
    pub commits: Vec<Commit>,
    /// The path filter as resolved (`""` when none, `.` for the root).
    pub path: String,
    /// The walk stopped at the entry cap or the output cap.
    pub truncated: bool,
    /// Every limit that stopped the work before it was complete, in order
    /// (empty: complete).
    #[serde(default)]
    pub stopped_by: Vec<Limit>,
    /// What redacting the shown commits' whole messages replaced.
    pub redaction: RedactionCounts,
}

/// Output of `git_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitDiffOutput {
    /// The unified diff (or the stat summary), possibly cut at the cap.
    pub diff: String,
    /// Files changed.
    pub files_changed: u64,
    /// Lines added.
    pub lines_added: u64,
    /// Lines removed.
    pub lines_removed: u64,
    /// The path filter as resolved (`""` when none).
    pub path: String,
    /// `--cached` was used.
    pub staged: bool,
    /// `--stat` was used.
    pub stat_only: bool,
    /// The diff text hit the output cap.
    pub truncated: bool,
    /// Changed files left out because the denylist covers their path
    /// (counted, never named).
    pub withheld_by_denylist: u64,
    /// Changed work-tree files shown only as a one-line notice because
    /// `read_file` would refuse them (symbolic link, hard link, special file,
    /// too large, unreadable).
    pub withheld_unreadable: u64,
    /// Every limit that stopped the work before it was complete, in order
    /// (empty: complete).
    #[serde(default)]
    pub stopped_by: Vec<Limit>,
    /// With `truncated`: the first file not shown whole (ask for it by
    /// `path` to see it).
    #[serde(default)]
    pub next_path: Option<String>,
    /// What redacting each side's whole text before diffing replaced.
    pub redaction: RedactionCounts,
}

/// The commit `git_show` shows, as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownCommit {
    /// The whole message, redacted as one text (its start, when it alone is
    /// longer than half the answer budget: `message_chars` says).
    pub message: String,
    /// When the message is cut: how many characters the whole one has.
    #[serde(default)]
    pub message_chars: Option<u64>,
    /// `--stat` block, then (unless `stat_only`) the diff against the first
    /// parent, possibly cut at the output cap.
    pub text: String,
    /// Only the stat was asked for.
    pub stat_only: bool,
    /// Files changed, also those past the output cap (denied ones are only
    /// counted in `withheld_by_denylist`).
    pub files_changed: u64,
    /// Lines added.
    pub lines_added: u64,
    /// Lines removed.
    pub lines_removed: u64,
    /// Changed files left out because the denylist covers their path.
    pub withheld_by_denylist: u64,
    /// The first file whose diff the output cap cut short or left out
    /// (where to continue).
    pub next_not_shown: Option<String>,
    /// Files whose diff the output cap cut short or left out.
    pub files_not_shown: u64,
}

/// The file `git_show` shows at a revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownFile {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Blob size in bytes.
    pub size_bytes: u64,
    /// Lines in the blob (`read_file`'s line rule).
    pub total_lines: u64,
    /// First line returned (0 for an empty blob).
    pub start_line: u64,
    /// Last line returned (0 for an empty blob).
    pub end_line: u64,
    /// Where the text starts and stops inside its first and last lines.
    #[serde(default)]
    pub columns: super::Columns,
    /// The selected lines joined by `\n`, cut from the blob redacted whole.
    pub text: String,
}

/// What `git_show` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shown {
    /// The commit: message, stat, diff.
    Commit(ShownCommit),
    /// One file at the commit.
    File(ShownFile),
}

/// Output of `git_show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitShowOutput {
    /// The commit the revision names (its subject cut from the message
    /// redacted whole).
    pub commit: Commit,
    /// Its parents' full hashes, in order (the diff is against the first).
    pub parents: Vec<String>,
    /// The commit or the file.
    pub shown: Shown,
    /// Which limit cut the answer, if one did.
    pub truncation: Option<Limit>,
    /// What redacting the whole message and each whole side replaced.
    pub redaction: RedactionCounts,
}

/// Consecutive lines of a `git_blame` answer that one commit last changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlameGroup {
    /// The commit (its subject cut from its message redacted whole).
    pub commit: Commit,
    /// First line, in the blamed version of the file.
    pub start_line: u64,
    /// Last line, inclusive.
    pub end_line: u64,
    /// The first line's number in the commit's own version of the file.
    pub source_line: u64,
    /// The walk stopped before it found where these lines began: the commit
    /// is the oldest one reached, and the lines are that old or older.
    pub boundary: bool,
    /// The lines' text, cut from the blob redacted whole.
    pub lines: Vec<String>,
    /// The commit created the file at this path (no parent has it): an
    /// add, or a rename or copy from another path, so the lines may be
    /// older than the commit.
    #[serde(default)]
    pub created_file: Option<Created>,
}

/// How a commit created the file a blame group's lines are in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    /// The path it was renamed from, when git's rename detection pairs it
    /// with a file the first parent had.
    pub renamed_from: Option<String>,
    /// The first parent (full hash), where that path is: `None` for a root
    /// commit.
    pub parent: Option<String>,
}

/// A line longer than one answer, shown in part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCut {
    /// The line.
    pub line: u64,
    /// Columns shown, from its first.
    pub shown: u64,
    /// Columns the line has.
    pub columns: u64,
}

/// Output of `git_blame`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitBlameOutput {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// The commit whose version was blamed (full hash).
    pub revision: String,
    /// Lines in that version (lines end at `\n`, as git counts them).
    pub total_lines: u64,
    /// First line blamed (0 for an empty file).
    pub start_line: u64,
    /// Last line blamed (0 for an empty file).
    pub end_line: u64,
    /// The groups, in line order.
    pub groups: Vec<BlameGroup>,
    /// Commits the walk looked at.
    pub commits_walked: u64,
    /// Which limit cut the answer (the line cap, the answer budget, or the
    /// walk's commit cap or time budget, which leave boundary groups), if
    /// one did.
    pub truncation: Option<Limit>,
    /// The first line blamed, alone longer than one answer, shown in part.
    #[serde(default)]
    pub line_cut: Option<LineCut>,
    /// What redacting the whole blob and the commits' whole messages replaced.
    pub redaction: RedactionCounts,
}

/// One changed path of `git_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusEntry {
    /// Workspace-relative POSIX path (an untracked directory ends in `/`).
    pub path: String,
    /// `A` added, `M` modified, `D` deleted, `T` type changed (a file
    /// became a symbolic link or the reverse), `X` not compared (moat does
    /// not read it: a hard link, a special file, too large, unreadable),
    /// `?` untracked, `R` renamed (staged only, as git pairs a deleted
    /// and an added file by similarity).
    pub status: char,
    /// A rename's old path.
    #[serde(default)]
    pub from: Option<String>,
}

/// The branch's configured upstream, from local refs only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upstream {
    /// Its short name (`origin/main`).
    pub name: String,
    /// Commits on the branch not on the upstream (`None`: not counted, the
    /// walk's cap was reached, or the upstream ref does not exist locally).
    pub ahead: Option<u64>,
    /// Commits on the upstream not on the branch.
    pub behind: Option<u64>,
}

/// Output of `git_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitStatusOutput {
    /// The checked-out branch's short name; `None` when HEAD is detached.
    pub branch: Option<String>,
    /// The commit HEAD names (full hash); `None` on an unborn branch.
    pub head: Option<String>,
    /// The branch's upstream, if one is configured.
    pub upstream: Option<Upstream>,
    /// Index against HEAD, by path (at most the entry cap over all lists).
    pub staged: Vec<StatusEntry>,
    /// Work tree against the index, by path.
    pub unstaged: Vec<StatusEntry>,
    /// Untracked paths, by path.
    pub untracked: Vec<StatusEntry>,
    /// Staged changes found (listed or not).
    pub staged_count: u64,
    /// Unstaged changes found.
    pub unstaged_count: u64,
    /// Untracked paths found.
    pub untracked_count: u64,
    /// Paths the denylist covers (tracked, or untracked and not ignored):
    /// counted, never named, never read.
    pub withheld_by_denylist: u64,
    /// Which limit cut the lists, if one did.
    pub truncation: Option<Limit>,
    /// The server's entry cap (`max_git_entries`): the most a caller may ask.
    pub entry_cap: u32,
}

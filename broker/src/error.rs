//! The one place that decides what a client is told when a tool says no.
//!
//! A worker sends a code with typed parameters ([`WireError`]); the broker's
//! supervisor adds its own failures (deadline, crashed worker). This module
//! turns each into `(code, message, remedy)`. Messages quote only the path the
//! client itself sent (control characters escaped) and the workspace's base
//! name, never an absolute path and never operating-system text.

use std::time::Duration;

use moat_protocol::wire_error::{
    BadPattern, Denial, GitFailure, GitReason, GitTool, Missing, Outside, TooLarge, UnsafeRule,
    Unsupported, WireError,
};

use crate::content::Refusal;
use crate::content::fence::escape_for_prose;

/// Why a tool call produced no output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolFailure {
    /// The worker refused, by code.
    Wire(WireError),
    /// The deadline passed; the worker was killed (or abandoned in-process).
    TimedOut {
        /// The budget.
        budget: Duration,
    },
    /// The worker died or broke protocol while handling the call.
    WorkerFailed {
        /// A short, fixed description (no worker-supplied text).
        why: &'static str,
    },
    /// No worker could be started.
    #[cfg_attr(
        not(unix),
        allow(
            dead_code,
            reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
        )
    )]
    Unavailable,
    /// The call waited for a worker and never got one: it did not run.
    #[cfg_attr(
        not(unix),
        allow(
            dead_code,
            reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
        )
    )]
    NotStarted {
        /// How long it waited.
        waited: Duration,
    },
    /// The server had no room for the call (every worker busy and the wait
    /// queue full): refused at once, it did not run.
    Busy {
        /// Calls admitted at the time (running or waiting).
        admitted: usize,
    },
    /// The answer, as it would be sent, is over `server.max_answer_bytes`.
    AnswerTooLarge {
        /// Its size in bytes as it would be sent.
        size: u64,
        /// The cap.
        limit: u64,
    },
}

/// Quote a client-supplied value for prose: single quotes, control
/// characters escaped, cut at 300 characters.
#[must_use]
pub fn quote(s: &str) -> String {
    let esc = escape_for_prose(s);
    let cut: String = esc.chars().take(300).collect();
    let ell = if esc.chars().count() > 300 { "…" } else { "" };
    format!("'{cut}{ell}'")
}

/// `s` quoted as a pattern the client gave: backslashes as typed (a regex
/// is shown as it was written, `\bfoo\(`), controls, separators,
/// bidirectional and invisible characters escaped as in [`quote`].
#[must_use]
pub fn quote_pattern(s: &str) -> String {
    let mut esc = String::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        if c == '\\' {
            esc.push(c);
        } else {
            esc.push_str(&escape_for_prose(c.encode_utf8(&mut buf)));
        }
    }
    let cut: String = esc.chars().take(300).collect();
    let ell = if esc.chars().count() > 300 { "…" } else { "" };
    format!("'{cut}{ell}'")
}

/// Describe a failure. `path` is the path argument the client sent (if the
/// tool has one); `root` the workspace's base name.
#[must_use]
pub fn describe(failure: &ToolFailure, path: Option<&str>, root: &str) -> Refusal {
    let p = quote(path.unwrap_or("."));
    let under = format!("Only files under {root}/ are served; give a path relative to it.");
    let list_hint = "Use list_directory to see what exists.".to_owned();
    let r = |code: &'static str, message: String, remedy: String| Refusal {
        code,
        message,
        remedy,
    };
    match failure {
        ToolFailure::TimedOut { budget } => r(
            "timed_out",
            format!(
                "the tool did not finish within its {} budget and was stopped.",
                secs(*budget)
            ),
            "Narrow the request with path or file_glob, or ask for less.".into(),
        ),
        ToolFailure::WorkerFailed { why } => r(
            "worker_failed",
            format!("the sandboxed worker handling this call {why}; it has been replaced."),
            "Retry the call; if it fails again the request itself may be triggering the failure."
                .into(),
        ),
        ToolFailure::NotStarted { waited } => r(
            "not_started",
            format!(
                "the call did not run: no sandboxed worker became free within {}.",
                secs(*waited)
            ),
            "The server is busy; retry the same call in a moment.".into(),
        ),
        ToolFailure::Busy { admitted } => r(
            "busy",
            format!(
                "the call did not run: the server is at capacity ({admitted} calls running or waiting for a worker)."
            ),
            "Retry the same call in a moment.".into(),
        ),
        ToolFailure::AnswerTooLarge { size, limit } => r(
            "answer_too_large",
            format!(
                "the answer would be {size} bytes as sent, over the {limit}-byte limit for one answer."
            ),
            "Ask for less: a line range with read_file, a narrower path or file_glob, or fewer results.".into(),
        ),
        ToolFailure::Unavailable => r(
            "worker_failed",
            "no sandboxed worker could be started to handle this call.".into(),
            "Retry in a while; if it keeps failing, tell the user that the server cannot start its sandbox.".into(),
        ),
        ToolFailure::Wire(w) => {
            let code = w.code();
            let (message, remedy) = match w {
                WireError::OutsideWorkspace(o) => match o {
                    Outside::NulByte => (
                        "the path contains a NUL byte.".into(),
                        "Give a workspace-relative path such as src/main.py.".into(),
                    ),
                    Outside::Escapes => (format!("the path {p} resolves outside the workspace."), under),
                    Outside::SymlinkLoop => (
                        format!("the path {p} could not be resolved: too many levels of symbolic links."),
                        under,
                    ),
                    Outside::KernelDenied => (format!("the sandbox refused access to {p}."), under),
                },
                WireError::DeniedPath(d) => match d {
                    Denial::Name(n) => (
                        format!("{p} is refused: '{n}' is on the list of files this server never reads."),
                        "This server never reads it under any name; carry on without it.".into(),
                    ),
                    Denial::Directory(n) => (
                        format!("{p} is refused: '{n}' is a directory this server never reads from."),
                        "This server never reads it under any name; carry on without it.".into(),
                    ),
                    Denial::Pattern(n) => (
                        format!("{p} is refused: it matches '{n}', which this server never reads."),
                        "This server never reads it under any name; carry on without it.".into(),
                    ),
                    Denial::Symlink => (
                        format!("{p} goes through a symbolic link, which this server does not follow."),
                        "Read the link's target by its own path.".into(),
                    ),
                },
                WireError::NotFound(m) => match m {
                    Missing::File => (format!("no file exists at {p}."), list_hint),
                    Missing::Directory => {
                        (format!("no directory exists at {p}."), "List a parent directory to see what exists.".into())
                    }
                    Missing::Path => (format!("nothing exists at {p}."), list_hint),
                    Missing::Unreadable => (
                        format!("{p} could not be read (it vanished or changed while being read)."),
                        "Retry; if the file is being rewritten, wait for it to settle.".into(),
                    ),
                    Missing::EmptySymbol => (
                        "the symbol name is empty.".into(),
                        "Give the name of a class, function, method, variable or type.".into(),
                    ),
                },
                WireError::NotAFile => {
                    (format!("{p} is a directory, not a file."), "Use list_directory to list it.".into())
                }
                WireError::NotADirectory => {
                    (format!("{p} is a file, not a directory."), "Use read_file to read it.".into())
                }
                WireError::TooLarge(t) => match t {
                    TooLarge::File { size, limit } => (
                        format!("{p} is {size} bytes, over the {limit}-byte limit."),
                        "Read it in parts with read_file's start_line and end_line.".into(),
                    ),
                    TooLarge::Line { line, size, limit } => (
                        format!("line {line} of {p} is {size} bytes, more than one answer may hold ({limit} bytes)."),
                        "Read the lines before or after it with start_line and end_line.".into(),
                    ),
                    TooLarge::Grew { limit } => (
                        format!("{p} grew past the {limit}-byte limit while being read."),
                        "Retry once the file stops changing.".into(),
                    ),
                    TooLarge::GitObject { size, limit } => (
                        format!("a git object the answer needs is {size} (bytes or entries), over the limit of {limit}."),
                        "Restrict the diff to a path that does not include it.".into(),
                    ),
                    TooLarge::Diff { limit } => (
                        format!("the diff is larger than the {limit}-byte output limit."),
                        "Restrict it to a path, or use stat_only for a summary.".into(),
                    ),
                },
                WireError::BinaryFile => (
                    format!("{p} looks binary (it has a NUL byte in its first 8 KiB)."),
                    "Only text files can be read.".into(),
                ),
                WireError::BadPattern(b) => match b {
                    BadPattern::TooLong { chars, limit } => (
                        format!("the pattern is {chars} characters, over the {limit} limit."),
                        "Shorten the pattern.".into(),
                    ),
                    BadPattern::Invalid(e) => (
                        format!("the pattern is not a valid regular expression: {}.", first_line(e)),
                        "Fix the expression (Rust regex syntax), or set regex to false to search for the text literally.".into(),
                    ),
                    BadPattern::TooComplex => (
                        "the pattern compiles to more than the regex size limit allows.".into(),
                        "Use fewer or smaller counted repetitions, or set regex to false to search literally.".into(),
                    ),
                    BadPattern::BadGlob(g) => (
                        format!("the file_glob {} is not a valid glob.", quote(g)),
                        "Use globs such as *.py or src/**/*.rs.".into(),
                    ),
                },
                WireError::TimedOut { budget_ms } => (
                    format!(
                        "the tool did not finish within its {} budget.",
                        secs(Duration::from_millis(*budget_ms))
                    ),
                    "Narrow the request with path or file_glob.".into(),
                ),
                WireError::NotARepository { repository_above: false } => (
                    "the workspace root is not a git repository.".into(),
                    "History tools need a .git directory at the workspace root.".into(),
                ),
                WireError::NotARepository { repository_above: true } => (
                    "the workspace is a subdirectory of a git repository, and the git tools read a repository only at the workspace root.".into(),
                    "Serve the repository's root as the workspace (moat serve --workspace <the repository's root>) to use the history tools; the other tools work here.".into(),
                ),
                WireError::UnsafeRepository(rule) => (
                    format!("the repository is not read: {}", unsafe_rule(*rule)),
                    unsafe_remedy(*rule).into(),
                ),
                WireError::GitFailed(g) => {
                    let rev_hint = "Give a branch, tag, commit or range such as main..HEAD.".to_owned();
                    match g {
                        GitFailure::EmptyRevision => ("the revision is empty.".into(), rev_hint),
                        GitFailure::LeadingDash => ("the revision may not begin with '-'.".into(), rev_hint),
                        GitFailure::BadCharacters => (
                            "the revision has characters that are not allowed in a revision.".into(),
                            "Use only letters, digits and . _ / @ ^ ~ { } - (not first).".into(),
                        ),
                        GitFailure::Read { tool, reason } => {
                            let sub = match tool {
                                GitTool::Log => "log",
                                GitTool::Diff => "diff",
                                GitTool::Show => "show",
                                GitTool::Blame => "blame",
                                GitTool::Status => "status",
                            };
                            let (why, hint) = match reason {
                                GitReason::UnknownRevision => (
                                    "the revision names nothing in this repository.",
                                    "Check that the revision exists.",
                                ),
                                GitReason::WrongKind => (
                                    "the revision does not name a commit or a range of commits.",
                                    "Give a branch, tag, commit or range such as main..HEAD.",
                                ),
                                GitReason::MissingObject => (
                                    "an object the answer needs is missing from the repository.",
                                    "The repository is incomplete (a shallow or partial clone); objects are never fetched.",
                                ),
                                GitReason::Unreadable => (
                                    "the repository is damaged or in a format this server does not read.",
                                    "Check the repository with git fsck.",
                                ),
                                GitReason::NoSuchPath => (
                                    "the path names no file at that revision.",
                                    "Use git_show without path to see which files the commit changed, or git_log with path to find when the file existed.",
                                ),
                            };
                            (format!("git {sub} failed: {why}"), hint.into())
                        }
                    }
                }
                WireError::Unsupported(u) => match u {
                    Unsupported::LineOutOfRange { start, total } => (
                        format!("the file has {total} line(s); line {start} does not exist."),
                        if *total == 0 { "The file is empty.".into() } else { format!("Ask for lines 1..{total}.") },
                    ),
                    Unsupported::EndBeforeStart { start, end } => (
                        format!("end_line {end} is before start_line {start}."),
                        "Give an end_line at or after start_line.".into(),
                    ),
                    Unsupported::ColumnOutOfRange { line, column, columns } => (
                        format!("line {line} has {columns} column(s); column {column} does not exist."),
                        if *columns == 0 { "The line is empty: read it from column 1.".into() } else { format!("Ask for columns 1..{columns}.") },
                    ),
                    Unsupported::EndColumnBeforeStart { start, end } => (
                        format!("end_column {end} is before start_column {start}."),
                        "Give an end_column at or after start_column.".into(),
                    ),
                    Unsupported::ListingFailed => {
                        (format!("the directory {p} could not be listed."), String::new())
                    }
                    Unsupported::ToolUnavailable => {
                        ("this tool is not available in this build.".into(), String::new())
                    }
                },
                WireError::SpecialFile(k) => (
                    format!("{p} is {}, which this server never opens.", k.describe()),
                    "Only regular files can be read.".into(),
                ),
                WireError::HardLink { links } => (
                    format!(
                        "{p} has {links} hard links; it may be another name for a file outside the workspace, so it is refused."
                    ),
                    "It cannot be read through this server under any of its names; carry on without it.".into(),
                ),
            };
            Refusal {
                code,
                message,
                remedy,
            }
        }
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim_end_matches('.');
    escape_for_prose(line).chars().take(300).collect()
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// The sentence naming the repository safety rule that failed (never what
/// any file holds).
/// Why a repository is refused, as a sentence.
#[must_use]
pub fn unsafe_rule(rule: UnsafeRule) -> &'static str {
    match rule {
        UnsafeRule::DotGitKind => "`.git` is a symbolic link or a special file.",
        UnsafeRule::GitdirOutside => {
            "the `.git` file does not name a git directory inside the workspace."
        }
        UnsafeRule::ControlFileKind => {
            "a file in the git directory is a symbolic link or a special file."
        }
        UnsafeRule::ControlFileLinks => "a file in the git directory has more than one hard link.",
        UnsafeRule::CommondirOutside => "`commondir` names a directory outside the workspace.",
        UnsafeRule::AlternatesOutside => {
            "`objects/info/alternates` names an object store outside the workspace."
        }
        UnsafeRule::TooManyControlFiles => {
            "the git directory holds more refs, logs and packs than this server checks."
        }
    }
}

/// What to do about an unsafe repository (also `moat doctor`'s advice).
#[must_use]
pub fn unsafe_remedy(rule: UnsafeRule) -> &'static str {
    match rule {
        UnsafeRule::DotGitKind | UnsafeRule::ControlFileKind => {
            "Replace the symbolic link (or special file) in the repository with the real file or directory, e.g. clone the repository afresh with `git clone`."
        }
        UnsafeRule::GitdirOutside | UnsafeRule::CommondirOutside => {
            "This is a linked worktree or submodule whose git directory lies outside the workspace: serve the directory that holds the main repository (its `.git` directory) instead, or make a self-contained clone with `git clone --no-local SOURCE DIR`."
        }
        UnsafeRule::ControlFileLinks => {
            "A control file (HEAD, config, index, packed-refs, a ref or reflog) has a second name, which could be another file's: give it its own copy (`cp -p FILE FILE.new && mv FILE.new FILE`), or clone with `git clone --no-hardlinks SOURCE DIR`. Hard-linked object files (packs of a local clone) are accepted."
        }
        UnsafeRule::AlternatesOutside => {
            "The object store borrows objects from outside the workspace (`git clone --shared` or `--reference`): run `git repack -a -d` and delete `.git/objects/info/alternates`, or serve a directory that holds both repositories."
        }
        UnsafeRule::TooManyControlFiles => {
            "Pack the refs and drop old reflogs (`git pack-refs --all` and `git reflog expire --expire=now --all`), then call again."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_never_echo_more_than_the_request() {
        let r = describe(
            &ToolFailure::Wire(WireError::OutsideWorkspace(Outside::Escapes)),
            Some("../../etc/passwd"),
            "proj",
        );
        assert_eq!(r.code, "outside_workspace");
        assert!(r.message.contains("'../../etc/passwd'"));
        assert!(r.remedy.contains("proj/"));
        let r = describe(
            &ToolFailure::Wire(WireError::DeniedPath(Denial::Name(".env".into()))),
            Some(".env"),
            "p",
        );
        assert!(r.message.contains("'.env'"));
        let r = describe(
            &ToolFailure::Wire(WireError::TooLarge(TooLarge::File {
                size: 4096,
                limit: 1024,
            })),
            Some("a"),
            "p",
        );
        assert!(r.message.contains("1024-byte limit"));
        let r = describe(
            &ToolFailure::Wire(WireError::OutsideWorkspace(Outside::Escapes)),
            Some("a\nb"),
            "p",
        );
        assert!(!r.message.contains('\n'));
    }
}

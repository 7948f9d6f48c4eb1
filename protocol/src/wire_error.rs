//! The closed set of refusals a worker may send.
//!
//! A worker sends a *code* with typed parameters, never a sentence, never an
//! absolute path, never operating-system text: the broker turns each variant
//! into the words the client sees (`broker/src/error.rs`), naming only the
//! path the client itself asked for. The few strings carried here are bounded
//! by the worker and redacted by the broker like any other output.

use serde::{Deserialize, Serialize};

/// A tool refusal, by code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireError {
    /// `outside_workspace`.
    OutsideWorkspace(Outside),
    /// `denied_path`.
    DeniedPath(Denial),
    /// `not_found`.
    NotFound(Missing),
    /// `not_a_file`: a directory where a file was needed.
    NotAFile,
    /// `not_a_directory`: a file where a directory was needed.
    NotADirectory,
    /// `too_large`.
    TooLarge(TooLarge),
    /// `binary_file`: a NUL byte in the first 8 KiB.
    BinaryFile,
    /// `bad_pattern`.
    BadPattern(BadPattern),
    /// `timed_out`: the budget was spent with nothing to show.
    TimedOut {
        /// The budget, in milliseconds.
        budget_ms: u64,
    },
    /// `not_a_repository`: no `.git` at the workspace root.
    NotARepository {
        /// The workspace is a subdirectory of a repository whose `.git` is
        /// above its root.
        #[serde(default)]
        repository_above: bool,
    },
    /// `git_failed`.
    GitFailed(GitFailure),
    /// `unsafe_repository`: the repository breaks a safety rule and is not
    /// read at all.
    UnsafeRepository(UnsafeRule),
    /// `unsupported`.
    Unsupported(Unsupported),
    /// `special_file`: a FIFO, socket or device, refused without opening it.
    SpecialFile(SpecialKind),
    /// `hard_link`: a regular file with more than one link.
    HardLink {
        /// Its link count.
        links: u64,
    },
}

impl WireError {
    /// The client-visible error code (`structuredContent.error`).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            WireError::OutsideWorkspace(_) => "outside_workspace",
            WireError::DeniedPath(_) => "denied_path",
            WireError::NotFound(_) => "not_found",
            WireError::NotAFile => "not_a_file",
            WireError::NotADirectory => "not_a_directory",
            WireError::TooLarge(_) => "too_large",
            WireError::BinaryFile => "binary_file",
            WireError::BadPattern(_) => "bad_pattern",
            WireError::TimedOut { .. } => "timed_out",
            WireError::NotARepository { .. } => "not_a_repository",
            WireError::GitFailed(_) => "git_failed",
            WireError::UnsafeRepository(_) => "unsafe_repository",
            WireError::Unsupported(_) => "unsupported",
            WireError::SpecialFile(_) => "special_file",
            WireError::HardLink { .. } => "hard_link",
        }
    }
}

/// Why a path is outside the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outside {
    /// The path contains a NUL byte.
    NulByte,
    /// The path (lexically, or through a symbolic link) leaves the root.
    Escapes,
    /// Symbolic links loop or nest too deeply.
    SymlinkLoop,
    /// The kernel refused the access (Landlock: EACCES/EPERM), i.e. the
    /// userland checks missed it and the sandbox stopped it.
    KernelDenied,
}

/// Why a path is refused although it is inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Denial {
    /// A component is a denied directory (the entry, e.g. `.ssh`).
    Directory(String),
    /// A component is a denied file name (the entry, e.g. `.env`).
    Name(String),
    /// A component matches a denied pattern (the pattern, e.g. `*.pem`).
    Pattern(String),
    /// The path goes through a symbolic link and following is off.
    Symlink,
}

/// What was missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Missing {
    /// No file at the path.
    File,
    /// No directory at the path.
    Directory,
    /// Nothing at the path (a search or symbol target).
    Path,
    /// The file vanished or could not be read.
    Unreadable,
    /// `find_symbol` got an empty name.
    EmptySymbol,
}

/// A size cap was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TooLarge {
    /// The file is larger than the cap (checked before opening).
    File {
        /// Its size.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The file grew past the cap while it was read.
    Grew {
        /// The cap.
        limit: u64,
    },
    /// A diff exceeded the output cap and nothing could be kept.
    Diff {
        /// The cap.
        limit: u64,
    },
    /// A git object (commit, tree or blob) is larger than the cap for its
    /// kind, or a tree holds more entries than are read.
    GitObject {
        /// Its size in bytes (or entries, for a tree past the entry cap).
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// One requested line of a file is longer than one answer may hold.
    Line {
        /// Its line number.
        line: u64,
        /// Its length in bytes.
        size: u64,
        /// The cap on one answer.
        limit: u64,
    },
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BadPattern {
    /// Longer than the pattern cap.
    TooLong {
        /// Its length in characters.
        chars: u64,
        /// The cap.
        limit: u64,
    },
    /// Not a valid regular expression (the parser's message, bounded).
    Invalid(String),
    /// Compiles to more than the size limits allow.
    TooComplex,
    /// A `file_glob` entry is invalid (the glob, bounded).
    BadGlob(String),
}

/// Why a git tool failed. Every reason is a fixed code: nothing the
/// repository holds (file content, object data, messages of the git library)
/// is carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum GitFailure {
    /// The revision is empty.
    EmptyRevision,
    /// The revision begins with `-`.
    LeadingDash,
    /// The revision has a character outside the allowed set.
    BadCharacters,
    /// Reading the repository failed.
    Read {
        /// Which tool read it.
        tool: GitTool,
        /// Why, as a fixed reason.
        reason: GitReason,
    },
}

/// The git tool that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GitTool {
    /// `git_log`.
    Log,
    /// `git_diff`.
    Diff,
    /// `git_show`.
    Show,
    /// `git_blame`.
    Blame,
    /// `git_status`.
    Status,
}

/// A fixed reason a repository could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GitReason {
    /// The revision names nothing in the repository.
    UnknownRevision,
    /// The revision does not name what the tool needs (a commit, one tree).
    WrongKind,
    /// An object the answer needs is missing from the object store.
    MissingObject,
    /// The repository (configuration, refs, index or objects) is damaged or
    /// in a format this server does not read.
    Unreadable,
    /// The path names nothing (or a directory) at that revision.
    NoSuchPath,
}

/// The safety rule a repository broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnsafeRule {
    /// `.git` is a symbolic link, or neither a directory nor a regular file.
    DotGitKind,
    /// The `gitdir:` file is malformed or names a directory outside the
    /// workspace (or one reached through a symbolic link).
    GitdirOutside,
    /// A control file (HEAD, config, index, packed-refs, shallow, a ref, a
    /// reflog, …) is a symbolic link or not a regular file.
    ControlFileKind,
    /// A control file has more than one hard link.
    ControlFileLinks,
    /// `commondir` names a directory outside the workspace.
    CommondirOutside,
    /// `objects/info/alternates` names an object store outside the
    /// workspace.
    AlternatesOutside,
    /// The repository has more control files (refs, reflogs, packs) than are
    /// checked.
    TooManyControlFiles,
}

/// An impossible request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unsupported {
    /// `start_line` is past the end of the file.
    LineOutOfRange {
        /// Requested start.
        start: u64,
        /// Lines in the file.
        total: u64,
    },
    /// `end_line` is before `start_line`.
    EndBeforeStart {
        /// Requested start.
        start: u64,
        /// Requested end.
        end: u64,
    },
    /// `start_column` is past the end of its line.
    ColumnOutOfRange {
        /// The line.
        line: u64,
        /// Requested column.
        column: u64,
        /// Columns (characters) the line has.
        columns: u64,
    },
    /// `end_column` is before `start_column` on one line.
    EndColumnBeforeStart {
        /// Requested start column.
        start: u64,
        /// Requested end column.
        end: u64,
    },
    /// The directory could not be listed.
    ListingFailed,
    /// This build of the worker does not implement the tool.
    ToolUnavailable,
}

/// Kind of special file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpecialKind {
    /// A named pipe.
    Fifo,
    /// A unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
}

impl SpecialKind {
    /// A human word for it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "a named pipe (FIFO)",
            SpecialKind::Socket => "a socket",
            SpecialKind::CharDevice => "a character device",
            SpecialKind::BlockDevice => "a block device",
        }
    }
}

//! What the broker asks of a worker: one start-up message, then one typed
//! request per tool call.
//!
//! Arguments arrive here already validated against the tool's published input
//! schema by the broker; the worker still treats them as untrusted (it re-checks
//! every path through containment and every revision through its own validator).

use serde::{Deserialize, Serialize};

use crate::limits::Limits;

/// The first frame a worker receives, before it confines itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInit {
    /// Absolute, canonical workspace root (UTF-8; the broker refuses others).
    pub workspace: String,
    /// Caps, already validated by the broker.
    pub limits: Limits,
    /// Follow symbolic links whose target stays inside the workspace.
    pub follow_symlinks: bool,
    /// Serve regular files with more than one hard link.
    pub allow_hard_links: bool,
    /// Extra denylist entries (lower-cased); the built-in list cannot shrink.
    pub deny_extra: Vec<String>,
    /// Redact credentials in file content before answering: the worker
    /// decides on each whole raw source, then cuts lines, excerpts and
    /// context from the redacted text (the broker redacts everything again).
    pub redact: bool,
    /// The workspace root lies inside a git repository whose `.git` is
    /// above it (found by the broker, which may look outside the
    /// workspace): `.gitignore` files apply from the root down, as they
    /// would in the repository.
    pub inside_repository: bool,
    /// What confinement the worker must reach before serving.
    pub sandbox: SandboxRequest,
}

/// The confinement a worker must reach; failing to reach it is fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SandboxRequest {
    /// Landlock + seccomp + rlimits; exit with a distinct code if impossible.
    Confined,
    /// Process isolation only (rlimits, no_new_privs): no Landlock, no
    /// seccomp. The broker never sends it (its workers always confine
    /// themselves; the fallback for kernels without Landlock is in-process);
    /// for embedders of the worker library and tests.
    ProcessOnly,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestEnvelope {
    /// Milliseconds left for this request when it was sent.
    pub budget_ms: u64,
    /// Send [`crate::response::Response::Progress`] frames while walking.
    #[serde(default)]
    pub progress: bool,
    /// The request itself.
    pub request: Request,
}

/// One variant per tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// `read_file`.
    ReadFile(ReadFileArgs),
    /// `list_directory`.
    ListDirectory(ListDirectoryArgs),
    /// `search_code`.
    SearchCode(SearchCodeArgs),
    /// `find_symbol`.
    FindSymbol(FindSymbolArgs),
    /// `project_overview`.
    ProjectOverview(ProjectOverviewArgs),
    /// `git_log`.
    GitLog(GitLogArgs),
    /// `git_diff`.
    GitDiff(GitDiffArgs),
    /// `find_files`.
    FindFiles(FindFilesArgs),
    /// `directory_tree`.
    DirectoryTree(DirectoryTreeArgs),
    /// `file_outline`.
    FileOutline(FileOutlineArgs),
    /// `find_references`.
    FindReferences(FindReferencesArgs),
    /// `git_show`.
    GitShow(GitShowArgs),
    /// `git_blame`.
    GitBlame(GitBlameArgs),
    /// `git_status`.
    GitStatus(GitStatusArgs),
}

/// Arguments of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadFileArgs {
    /// Workspace-relative (or absolute inside the workspace) path.
    pub path: String,
    /// First line, 1-based; default 1.
    pub start_line: Option<u64>,
    /// Last line, inclusive; default the end of the file (with only
    /// `end_column`: `start_line`).
    pub end_line: Option<u64>,
    /// Column (1-based, in characters) of `start_line` to start at; default 1.
    #[serde(default)]
    pub start_column: Option<u64>,
    /// Last column (inclusive) of the last line; default its end.
    #[serde(default)]
    pub end_column: Option<u64>,
}

/// Arguments of `list_directory`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListDirectoryArgs {
    /// Directory to list; `.` is the root.
    pub path: String,
    /// Include names starting with `.`.
    pub include_hidden: bool,
    /// Entries of the whole listing already given in earlier pages (from a
    /// cursor).
    #[serde(default)]
    pub skip: u64,
}

/// Arguments of `search_code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchCodeArgs {
    /// Literal text or regular expression.
    pub pattern: String,
    /// Directory or file to search.
    pub path: String,
    /// Treat `pattern` as a regular expression.
    pub regex: bool,
    /// Match case exactly.
    pub case_sensitive: bool,
    /// Globs a file must match (relative path or base name); empty = all.
    pub file_globs: Vec<String>,
    /// Context lines before and after each match (0..=5).
    pub context_lines: u8,
    /// Most matches wanted (already capped by the broker).
    pub max_results: u32,
    /// Honour `.gitignore`/`.ignore` files.
    pub respect_gitignore: bool,
    /// Walk the generated and vendored trees (`target`, `build`,
    /// `vendor`, `node_modules`, …) too.
    pub include_generated: bool,
    /// Matches of the whole answer already given in earlier pages (decoded
    /// by the broker from a cursor it issued; at most
    /// [`crate::limits::MAX_PAGED_ITEMS`]).
    #[serde(default)]
    pub skip: u64,
}

/// Kinds a `find_symbol` caller can filter on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SymbolKind {
    /// A class, struct, interface, trait or enum.
    Class,
    /// A free function.
    Function,
    /// A function defined inside a class (or impl).
    Method,
    /// A module-level variable or constant.
    Variable,
    /// A type alias or type definition.
    Type,
    /// A `const`/`let`/`var`/`val` binding.
    Binding,
}

impl SymbolKind {
    /// The name used on the MCP side.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Class => "class",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Variable => "variable",
            SymbolKind::Type => "type",
            SymbolKind::Binding => "binding",
        }
    }

    /// Parse an MCP-side kind name (`any` is not a kind: it is `None`).
    #[must_use]
    pub fn parse(s: &str) -> Option<SymbolKind> {
        Some(match s {
            "class" => SymbolKind::Class,
            "function" => SymbolKind::Function,
            "method" => SymbolKind::Method,
            "variable" => SymbolKind::Variable,
            "type" => SymbolKind::Type,
            "binding" => SymbolKind::Binding,
            _ => return None,
        })
    }
}

/// Arguments of `find_symbol`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindSymbolArgs {
    /// Name to look for (whitespace already stripped by the worker).
    pub symbol: String,
    /// Directory (or file) to search.
    pub path: String,
    /// Only definitions of this kind; `None` = any.
    pub kind: Option<SymbolKind>,
    /// Exact name match (else case-insensitive substring).
    pub exact: bool,
    /// Honour `.gitignore`/`.ignore` files.
    pub respect_gitignore: bool,
    /// Walk the generated and vendored trees (`target`, `build`,
    /// `vendor`, `node_modules`, …) too.
    pub include_generated: bool,
    /// Definitions of the whole answer already given in earlier pages (from
    /// a cursor; at most [`crate::limits::MAX_PAGED_ITEMS`]).
    #[serde(default)]
    pub skip: u64,
}

/// Arguments of `project_overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectOverviewArgs {
    /// Directory to survey.
    pub path: String,
    /// Honour `.gitignore`/`.ignore` files.
    pub respect_gitignore: bool,
    /// Walk the generated and vendored trees (`target`, `build`,
    /// `vendor`, `node_modules`, …) too.
    pub include_generated: bool,
}

/// Arguments of `git_log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitLogArgs {
    /// Most commits wanted (already capped by the broker).
    pub limit: u32,
    /// Revision or range; `None` = HEAD.
    pub revision: Option<String>,
    /// Restrict to this path.
    pub path: Option<String>,
    /// Commits of the whole answer already given in earlier pages (from a
    /// cursor; at most [`crate::limits::MAX_PAGED_ITEMS`]).
    #[serde(default)]
    pub skip: u64,
}

/// Arguments of `git_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitDiffArgs {
    /// Revision or range; `None` = working tree against the index.
    pub revision: Option<String>,
    /// Diff the staging area (`--cached`).
    pub staged: bool,
    /// Only a per-file summary (`--stat`).
    pub stat_only: bool,
    /// Restrict to this path.
    pub path: Option<String>,
    /// Lines of context (0..=10); `None` = git's default.
    pub context_lines: Option<u8>,
    /// Bytes of the whole diff text already given in earlier pages (from a
    /// cursor).
    #[serde(default)]
    pub skip: u64,
}

/// Arguments of `find_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindFilesArgs {
    /// Directory to search beneath; `.` is the root.
    pub path: String,
    /// Glob the relative path or the base name must match; `None` = any.
    pub glob: Option<String>,
    /// Case-insensitive substring the base name must contain; `None` = any.
    pub name: Option<String>,
    /// Honour `.gitignore`/`.ignore` files.
    pub respect_gitignore: bool,
    /// Walk the generated and vendored trees (`target`, `build`,
    /// `vendor`, `node_modules`, …) too.
    pub include_generated: bool,
    /// Most paths wanted in this page (already capped by the broker).
    pub max_results: u32,
    /// Paths of the whole answer already given in earlier pages (decoded
    /// by the broker from a cursor it issued): this page starts after them.
    pub skip: u64,
}

/// Arguments of `directory_tree`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryTreeArgs {
    /// Directory at the top of the tree; `.` is the root.
    pub path: String,
    /// Levels below `path` to show (1 = its immediate contents).
    pub depth: u8,
    /// Most entries in the tree (already capped by the broker).
    pub max_entries: u32,
    /// Include names starting with `.`.
    pub include_hidden: bool,
    /// Entries of the tree (in breadth-first order) already given in
    /// earlier pages (set by the broker from a cursor it issued; at most
    /// [`crate::limits::MAX_PAGED_ITEMS`]).
    #[serde(default)]
    pub skip: u64,
}

/// Arguments of `file_outline`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOutlineArgs {
    /// The file to outline.
    pub path: String,
}

/// Arguments of `find_references`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindReferencesArgs {
    /// The identifier, matched as a whole word, case-sensitively.
    pub identifier: String,
    /// Directory or file to search.
    pub path: String,
    /// Globs a file must match (relative path or base name); empty = all.
    pub file_globs: Vec<String>,
    /// Honour `.gitignore`/`.ignore` files.
    pub respect_gitignore: bool,
    /// Walk the generated and vendored trees (`target`, `build`,
    /// `vendor`, `node_modules`, …) too.
    pub include_generated: bool,
    /// Most references wanted in this page (already capped by the broker).
    pub max_results: u32,
    /// References of the whole answer already given in earlier pages
    /// (decoded by the broker from a cursor it issued).
    pub skip: u64,
}

/// Arguments of `git_show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitShowArgs {
    /// The commit (or tag of one); `None` = HEAD.
    pub revision: Option<String>,
    /// A file at that revision: its text instead of the commit.
    pub path: Option<String>,
    /// With `path`: first line, 1-based; default 1.
    pub start_line: Option<u64>,
    /// With `path`: last line, inclusive; default the end of the file.
    pub end_line: Option<u64>,
    /// With `path`: column of `start_line` to start at (`read_file`'s).
    #[serde(default)]
    pub start_column: Option<u64>,
    /// With `path`: last column of the last line (`read_file`'s).
    #[serde(default)]
    pub end_column: Option<u64>,
    /// Without `path`: the message and stat only, no diff.
    pub stat_only: bool,
    /// Lines of context of the diff (0..=10); `None` = git's default.
    pub context_lines: Option<u8>,
}

/// Arguments of `git_blame`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitBlameArgs {
    /// The file.
    pub path: String,
    /// The commit whose version is blamed; `None` = HEAD.
    pub revision: Option<String>,
    /// First line, 1-based; default 1.
    pub start_line: Option<u64>,
    /// Last line, inclusive; default the end of the file (at most
    /// [`crate::limits::MAX_BLAME_LINES`] lines in all).
    pub end_line: Option<u64>,
}

/// Arguments of `git_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitStatusArgs {
    /// Most entries listed, staged, unstaged and untracked together
    /// (already capped by the broker).
    pub max_entries: u32,
    /// List untracked paths (those `.gitignore` does not exclude).
    pub untracked: bool,
}

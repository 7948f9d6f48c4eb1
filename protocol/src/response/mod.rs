//! What a worker answers: a hello after confinement, then one [`Response`] per
//! request. Everything here is *data*; the broker renders it for the client,
//! redacts it and fences it.

use serde::{Deserialize, Serialize};

use crate::request::SymbolKind;
use crate::wire_error::WireError;

mod git;
pub use git::*;

/// The first frame a worker sends, once it is confined and ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerHello {
    /// What confinement the worker reached.
    pub sandbox: SandboxReport,
}

/// The confinement a worker reports having reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxReport {
    /// Landlock ABI version the kernel offers (0 = no Landlock).
    pub landlock_abi: u8,
    /// Landlock ruleset status.
    pub landlock: Enforcement,
    /// Filesystem access restricted to the workspace (plus git's files).
    pub fs_restricted: bool,
    /// TCP bind and connect denied by Landlock (ABI >= 4).
    pub tcp_denied: bool,
    /// Abstract unix sockets and signals scoped to the sandbox (ABI >= 6).
    pub ipc_scoped: bool,
    /// The seccomp allow-list is installed.
    pub seccomp: bool,
    /// `no_new_privs` is set.
    pub no_new_privs: bool,
    /// Resource limits applied, as `(name, soft)` pairs.
    pub rlimits: Vec<(String, u64)>,
}

/// How fully a Landlock ruleset was enforced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Enforcement {
    /// Not applied (no Landlock, or not requested).
    #[default]
    None,
    /// Applied, but the kernel lacks some requested rights.
    Partial,
    /// Everything requested is enforced.
    Full,
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[expect(
    clippy::large_enum_variant,
    reason = "one answer per request, moved once: boxing it would add an allocation to every answer for the sake of the rare, small progress frame"
)]
pub enum Response {
    /// The tool ran; its output or its refusal, and the work it did.
    Done(Result<ToolOutput, WireError>, Work),
    /// Sent before `Done`, when the request asked for progress: files
    /// walked so far (strictly increasing, at most every 100 ms).
    Progress {
        /// Files walked so far.
        files: u64,
    },
}

/// The work one request did, counted where it is done: what it read from
/// the workspace, what it judged with redaction and what it searched with
/// a pattern. The audit trail records it per call, and the noninterference
/// tests compare it: a request's work must not depend on what the model may
/// not see (the contents of denied files, the values redaction replaces), or
/// its duration would tell them apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// Files (and git blobs) whose bytes were read.
    pub files_read: u64,
    /// Bytes read from them.
    pub bytes_read: u64,
    /// Whole texts judged by redaction.
    pub sources_redacted: u64,
    /// Bytes of those texts.
    pub bytes_redacted: u64,
    /// Texts searched with the request's pattern or identifier.
    pub searches: u64,
    /// Bytes of those texts.
    pub bytes_searched: u64,
}

/// One variant per tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolOutput {
    /// `read_file`.
    ReadFile(ReadFileOutput),
    /// `list_directory`.
    ListDirectory(ListDirectoryOutput),
    /// `search_code`.
    SearchCode(SearchCodeOutput),
    /// `find_symbol`.
    FindSymbol(FindSymbolOutput),
    /// `project_overview`.
    ProjectOverview(ProjectOverviewOutput),
    /// `git_log`.
    GitLog(GitLogOutput),
    /// `git_diff`.
    GitDiff(GitDiffOutput),
    /// `find_files`.
    FindFiles(FindFilesOutput),
    /// `directory_tree`.
    DirectoryTree(DirectoryTreeOutput),
    /// `file_outline`.
    FileOutline(FileOutlineOutput),
    /// `find_references`.
    FindReferences(FindReferencesOutput),
    /// `git_show`.
    GitShow(GitShowOutput),
    /// `git_blame`.
    GitBlame(GitBlameOutput),
    /// `git_status`.
    GitStatus(GitStatusOutput),
}

/// What the worker's redaction of whole sources replaced for one answer:
/// how many replacements under which rules (names, never values). The broker
/// adds it to the report it attaches to the result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedactionCounts {
    /// Replacements made.
    pub count: u64,
    /// Names of the rules that fired, sorted and unique.
    pub rules: Vec<String>,
}

/// Where a read's text starts and stops inside lines: a line longer than
/// one answer holds is read in parts, by column. Columns are 1-based and
/// count characters of the text as answered (redacted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Columns {
    /// Column of the first line's first character shown (1: its start).
    pub start: u64,
    /// When the last line shown stops before its end: the column of its
    /// last character shown, and how many columns the line has.
    pub end: Option<(u64, u64)>,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            start: 1,
            end: None,
        }
    }
}

/// Output of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadFileOutput {
    /// Workspace-relative POSIX path (`.` never: a file is never the root).
    pub path: String,
    /// File size in bytes.
    pub size_bytes: u64,
    /// Lines in the file (see the worker's line rule).
    pub total_lines: u64,
    /// First line returned (0 for an empty file).
    pub start_line: u64,
    /// Last line returned (0 for an empty file).
    pub end_line: u64,
    /// The limit that ended the answer before the asked range's end
    /// (`Lines`: `max_read_lines`; `Bytes`: the answer budget), if one did.
    pub cut: Option<Limit>,
    /// Where the text starts and stops inside its first and last lines.
    #[serde(default)]
    pub columns: Columns,
    /// The selected lines joined by `\n`, without numbers or a final newline.
    pub text: String,
    /// What redacting the whole file replaced.
    pub redaction: RedactionCounts,
}

/// Kind of a directory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntryKind {
    /// A directory.
    Directory,
    /// A regular file.
    File,
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirEntry {
    /// Base name.
    pub name: String,
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Directory or file.
    pub kind: EntryKind,
    /// Size in bytes (0 for directories).
    pub size_bytes: u64,
    /// For directories: whether searches and walks descend into it.
    pub walked_by_search: Option<bool>,
}

/// Output of `list_directory`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListDirectoryOutput {
    /// Workspace-relative path of the listed directory (`.` for the root).
    pub path: String,
    /// Directories first, then files; each group sorted by lower-cased name.
    pub entries: Vec<DirEntry>,
    /// Directories found (before truncation).
    pub directories: u64,
    /// Files found (before truncation).
    pub files: u64,
    /// Entries refused by the denylist (counted, never named).
    pub hidden_by_denylist: u64,
    /// Symbolic links skipped.
    pub symlinks_skipped: u64,
    /// FIFOs, sockets and device nodes skipped.
    pub special_skipped: u64,
    /// The listing was cut at the entry cap.
    pub truncated: bool,
    /// The answer budget (not the entry cap) ended this page.
    #[serde(default)]
    pub cut_by_bytes: bool,
}

/// Why files a walking tool could not examine were skipped, each a count.
/// Nothing a walk meets is dropped without being counted here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkipReasons {
    /// Its path is longer than the operating system accepts (a directory
    /// at such a depth counts once; nothing beneath it can be opened).
    pub path_too_long: u64,
    /// It could not be opened or read (permissions, I/O errors).
    pub unreadable: u64,
    /// It was listed but had gone (or changed kind) when opened.
    pub vanished: u64,
    /// Its name is not valid UTF-8, so it cannot be named in an answer.
    pub name_not_utf8: u64,
    /// Binary content (a NUL byte), or not valid UTF-8 text.
    pub binary: u64,
    /// Larger than the tool's per-file cap.
    pub too_large: u64,
    /// A second name for a file (hard links are not served).
    pub hard_link: u64,
    /// Entries (a directory counts once) not walked because an ignore file
    /// excludes them (`respect_gitignore: false` walks them).
    pub ignored: u64,
    /// Generated or vendored directories not walked (`include_generated:
    /// true` walks them).
    pub generated: u64,
    /// Entries not walked because the denylist covers them (counted, never
    /// named).
    pub denied: u64,
}

impl SkipReasons {
    /// Entries pruned before they were walked: ignored, generated or
    /// denied (a directory counts once, whatever it holds).
    #[must_use]
    pub fn not_walked(&self) -> u64 {
        self.ignored + self.generated + self.denied
    }

    /// Files met by the walk and skipped, whatever the reason.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.path_too_long
            + self.unreadable
            + self.vanished
            + self.name_not_utf8
            + self.binary
            + self.too_large
            + self.hard_link
    }

    /// Add `other`'s counts to these.
    pub fn add(&mut self, other: &SkipReasons) {
        self.path_too_long += other.path_too_long;
        self.unreadable += other.unreadable;
        self.vanished += other.vanished;
        self.name_not_utf8 += other.name_not_utf8;
        self.binary += other.binary;
        self.too_large += other.too_large;
        self.hard_link += other.hard_link;
        self.ignored += other.ignored;
        self.generated += other.generated;
        self.denied += other.denied;
    }
}

/// A limit that stopped a tool's work before it was complete: the one
/// vocabulary every tool that can be cut reports (`stopped_by`). An answer
/// that names one is a lower bound: the part of the workspace (or history)
/// past the limit was not examined, so "no match" there means "not looked".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Limit {
    /// The file cap of one walk (`max_search_files`, or a status walk's
    /// entry cap): files past it were not examined.
    Files,
    /// A page or result cap: matches, definitions, references, found files,
    /// commits of one answer.
    Results,
    /// A byte cap of one answer (`max_result_bytes`, the answer budget, the
    /// git output cap).
    Bytes,
    /// The entry cap of a listing, a tree or a status.
    Entries,
    /// The line cap of a read or a blame.
    Lines,
    /// A tree's depth: directories at it were not expanded.
    Depth,
    /// A history walk's commit cap.
    Commits,
    /// The request's time budget.
    Time,
}

impl Limit {
    /// The name shown in `stopped_by`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Files => "files",
            Limit::Results => "results",
            Limit::Bytes => "bytes",
            Limit::Entries => "entries",
            Limit::Lines => "lines",
            Limit::Depth => "depth",
            Limit::Commits => "commits",
            Limit::Time => "time",
        }
    }

    /// Every limit, in the order of the vocabulary.
    pub const ALL: [Limit; 8] = [
        Limit::Files,
        Limit::Results,
        Limit::Bytes,
        Limit::Entries,
        Limit::Lines,
        Limit::Depth,
        Limit::Commits,
        Limit::Time,
    ];
}

/// One `search_code` match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchMatch {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The first match's column in the line (1-based, in characters of
    /// the redacted line).
    #[serde(default)]
    pub column: u64,
    /// The matching line; a line over the line cap cut to an excerpt
    /// centred on the match, `…` on each cut side.
    pub text: String,
    /// Context lines before (a line over the cap cut to its start, `…`
    /// after it).
    pub before: Vec<String>,
    /// Context lines after.
    pub after: Vec<String>,
}

/// Output of `search_code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchCodeOutput {
    /// Workspace-relative path searched (`.` for the root).
    pub path: String,
    /// Matches, sorted by path then line.
    pub matches: Vec<SearchMatch>,
    /// Files searched.
    pub files_scanned: u64,
    /// Files skipped as binary, oversized or unreadable.
    pub files_skipped: u64,
    /// Why (sums to `files_skipped`).
    #[serde(default)]
    pub skipped_reasons: SkipReasons,
    /// Stopped before the work was complete (which limit: `stopped_by`).
    pub truncated: bool,
    /// Stopped at the time budget.
    pub timed_out: bool,
    /// Every limit that stopped the work before it was complete, in order
    /// (empty: complete).
    #[serde(default)]
    pub stopped_by: Vec<Limit>,
    /// What redacting the files that hold this page's matches (or the
    /// matches of the pages before it) replaced.
    pub redaction: RedactionCounts,
}

/// How a definition was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SymbolMethod {
    /// By a parser: exact.
    Parsed,
    /// By a parser, from a file that parses only in part (its syntax tree
    /// has error nodes, as C files full of macros do): exact, taken from
    /// outside the error nodes; a definition inside one is not found.
    Partial,
    /// By a regular expression: may be a false positive.
    Pattern,
}

/// One definition found by `find_symbol`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The defined name.
    pub name: String,
    /// Dotted qualified name (same as `name` where none is known).
    pub qualified_name: String,
    /// What was defined.
    pub kind: SymbolKind,
    /// 1-based line.
    pub line: u64,
    /// Signature text (cut to the signature cap).
    pub signature: String,
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Language name (`python`, `rust`, ...).
    pub language: String,
    /// Parsed or pattern.
    pub method: SymbolMethod,
    /// What the language calls the definition (`struct`, `trait`,
    /// `interface`, `const`, `def`, ...): `kind` is the coarse class a
    /// filter matches, this is the word its source uses.
    pub language_kind: String,
}

/// Output of `find_symbol`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindSymbolOutput {
    /// Sorted: parsed first, then by path, then by line.
    pub definitions: Vec<Definition>,
    /// Files whose parser failed (the pattern method was used instead).
    pub unparseable_files: Vec<String>,
    /// Files examined.
    pub files_scanned: u64,
    /// Files that could not be examined (see `skipped_reasons`).
    #[serde(default)]
    pub files_skipped: u64,
    /// Why (sums to `files_skipped`).
    #[serde(default)]
    pub skipped_reasons: SkipReasons,
    /// Stopped at the result cap.
    pub truncated: bool,
    /// Stopped at the time budget.
    pub timed_out: bool,
    /// Every limit that stopped the work before it was complete, in order
    /// (empty: complete).
    #[serde(default)]
    pub stopped_by: Vec<Limit>,
    /// What redacting the files with definitions replaced.
    pub redaction: RedactionCounts,
    /// With a kind filter that found nothing in a complete search: the
    /// definitions of the name under other kinds, by kind (empty otherwise),
    /// so the answer can say the name exists as something else.
    pub other_kinds: Vec<(SymbolKind, u64)>,
}

/// Per-language totals of `project_overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageStat {
    /// Language name.
    pub language: String,
    /// Files.
    pub files: u64,
    /// Lines (files over the overview size cap count 0).
    pub lines: u64,
    /// Bytes.
    pub bytes: u64,
}

/// What a manifest declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Declares {
    /// `pyproject.toml`.
    Pyproject {
        /// `[project] name`.
        name: Option<String>,
        /// `[project] version`.
        version: Option<String>,
        /// `[project] requires-python`.
        requires_python: Option<String>,
        /// Dependency names, sorted.
        dependencies: Vec<String>,
    },
    /// `package.json`.
    PackageJson {
        /// `name`.
        name: Option<String>,
        /// `version`.
        version: Option<String>,
        /// Keys of `dependencies`, sorted.
        dependencies: Vec<String>,
        /// Keys of `scripts`, sorted.
        scripts: Vec<String>,
        /// The workspace members `workspaces` names (a list of patterns, or
        /// `{packages: [...]}`): each pattern resolved to the directories
        /// below with a `package.json` that it matches, sorted; a pattern
        /// that matches none is kept as written.
        #[serde(default)]
        workspaces: Vec<String>,
    },
    /// `Cargo.toml`.
    Cargo {
        /// `[package] name`.
        name: Option<String>,
        /// `[package] version`.
        version: Option<String>,
        /// Keys of `[dependencies]`, sorted.
        dependencies: Vec<String>,
        /// `[workspace] members`, resolved as `package.json`'s
        /// `workspaces` are (to the directories with a `Cargo.toml`).
        #[serde(default)]
        workspace_members: Vec<String>,
    },
    /// `go.mod`.
    GoMod {
        /// Module path.
        name: Option<String>,
        /// `go` directive.
        go_version: Option<String>,
        /// Required module paths, sorted and de-duplicated.
        dependencies: Vec<String>,
    },
    /// The manifest could not be parsed; the parser's message.
    ParseError(String),
}

/// One manifest found by `project_overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// File name.
    pub file: String,
    /// What it declares, for the manifests moat understands.
    pub declares: Option<Declares>,
}

/// A file and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizedPath {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// Output of `project_overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectOverviewOutput {
    /// Workspace-relative path surveyed (`.` for the root).
    pub path: String,
    /// Files walked.
    pub total_files: u64,
    /// Their total size.
    pub total_bytes: u64,
    /// Languages, most files first.
    pub languages: Vec<LanguageStat>,
    /// Manifests in the surveyed directory.
    pub manifests: Vec<Manifest>,
    /// Entry points, sorted.
    pub entry_points: Vec<String>,
    /// Test files.
    pub test_files: u64,
    /// The largest language files, largest first (at most 10).
    pub largest_files: Vec<SizedPath>,
    /// `git` or `none`.
    pub version_control: String,
    /// The repository's `.git` is above the workspace root (the workspace
    /// is a subdirectory of it), where the git tools do not read it.
    #[serde(default)]
    pub repository_above: bool,
    /// The walk stopped at the time budget (counts are a lower bound).
    pub timed_out: bool,
    /// Every limit that stopped the work before it was complete, in order
    /// (empty: complete).
    #[serde(default)]
    pub stopped_by: Vec<Limit>,
    /// What the walk did not look at, by reason.
    pub skipped_reasons: SkipReasons,
    /// What redacting the manifests replaced.
    pub redaction: RedactionCounts,
}

/// One file found by `find_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundFile {
    /// Workspace-relative POSIX path (text form).
    pub path: String,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// Output of `find_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindFilesOutput {
    /// Workspace-relative path searched beneath (`.` for the root).
    pub path: String,
    /// This page, sorted by path (byte order of the text form).
    pub files: Vec<FoundFile>,
    /// Matching files in the whole walk, this page and every other.
    pub total_matches: u64,
    /// Files the walk examined (matching or not).
    pub files_scanned: u64,
    /// Why the answer stops early, if it does.
    pub cut: Option<Limit>,
    /// Entries the walk could not examine, by reason.
    #[serde(default)]
    pub skipped_reasons: SkipReasons,
}

/// One entry of `directory_tree`, in pre-order: its parent is the nearest
/// earlier directory one level up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeEntry {
    /// Base name (text form).
    pub name: String,
    /// Levels below the tree's top (1 = an immediate child).
    pub depth: u8,
    /// Directory or file.
    pub kind: EntryKind,
    /// Size in bytes (0 for directories).
    pub size_bytes: u64,
    /// For directories not expanded (the depth limit, or a generated tree
    /// walks skip): how many visible entries it holds; `None` when expanded
    /// (or a file).
    pub unexpanded: Option<u64>,
    /// On a later page, for an entry whose directory was given on an
    /// earlier one: that directory, relative to the tree's top (`""` for
    /// the top itself). `None` when its directory is on this page (or this
    /// is the first page).
    #[serde(default)]
    pub dir: Option<String>,
}

/// Output of `directory_tree`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryTreeOutput {
    /// Workspace-relative path of the top (`.` for the root).
    pub path: String,
    /// Entries in pre-order: directories first, then files, each group
    /// sorted by lower-cased name.
    pub entries: Vec<TreeEntry>,
    /// The depth asked for.
    pub depth: u8,
    /// Why the tree is incomplete, if it is (the entry cap wins over depth).
    pub cut: Option<Limit>,
    /// Entries refused by the denylist (counted, never named).
    pub hidden_by_denylist: u64,
    /// Symbolic links skipped.
    pub symlinks_skipped: u64,
    /// FIFOs, sockets and device nodes skipped.
    pub special_skipped: u64,
    /// Directories that could not be listed.
    pub unreadable: u64,
}

/// One definition of `file_outline`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutlineItem {
    /// The defined name.
    pub name: String,
    /// What the language calls it (`struct`, `trait`, `interface`, `def`
    /// forms as `function`/`method`, ...).
    pub kind: String,
    /// The `find_symbol` kind it counts as (none for a group).
    pub symbol_kind: SymbolKind,
    /// A group of definitions rather than one (a Rust `impl` block, its
    /// methods listed after it with it as their parent): `find_symbol`
    /// does not return it.
    #[serde(default)]
    pub group: bool,
    /// 1-based first line (the name's line).
    pub line: u64,
    /// 1-based last line of the definition (`line` when unknown).
    pub end_line: u64,
    /// Dotted qualified name of the enclosing definition or scope; empty
    /// at file level.
    pub parent: String,
    /// Signature text (cut to the signature cap).
    pub signature: String,
}

/// Output of `file_outline`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOutlineOutput {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Language name; `None` when the file's language is not known.
    pub language: Option<String>,
    /// Parsed or pattern; `None` when the language is not known.
    pub method: Option<SymbolMethod>,
    /// Definitions in source order.
    pub items: Vec<OutlineItem>,
    /// Stopped at the definition cap.
    pub truncated: bool,
    /// What redacting the file replaced.
    pub redaction: RedactionCounts,
}

/// One occurrence found by `find_references`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in characters.
    pub column: u64,
    /// The line from the redacted text; a line over the line cap cut to an
    /// excerpt centred on the reference, `…` on each cut side.
    pub text: String,
}

/// Output of `find_references`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindReferencesOutput {
    /// Workspace-relative path searched (`.` for the root).
    pub path: String,
    /// This page, sorted by path, line, column.
    pub references: Vec<Reference>,
    /// Occurrences in the whole search, this page and every other.
    pub total_references: u64,
    /// Files searched.
    pub files_scanned: u64,
    /// Files whose strings and comments were told apart: by a parser, or
    /// for C and C++ (whose preprocessor leaves most real files unparsable
    /// without their headers) by a lexer.
    pub parsed_files: u64,
    /// Files of other languages (or that did not parse), matched as text.
    pub text_files: u64,
    /// Why (sums of skipped files).
    #[serde(default)]
    pub skipped_reasons: SkipReasons,
    /// Why the answer stops early, if it does.
    pub cut: Option<Limit>,
    /// What redacting the files with references replaced.
    pub redaction: RedactionCounts,
}

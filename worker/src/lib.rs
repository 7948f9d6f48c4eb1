//! moat's tool implementations: what runs *inside* a confined worker process.
//!
//! # Map
//!
//! | folder or file | owns |
//! |---|---|
//! | `serve.rs` | the worker process (`moat __moat_worker`): adopts the broker's socket, reads the start-up frame, enters the sandbox ([`moat_sandbox::enter`]) before any thread exists, then answers one request at a time; its exit codes |
//! | `tools/` | the tools: one file each, named for the tool (a tool's parts in a folder of that name: `read_file/large.rs`, `search_code/large.rs`), and the dispatcher, `tools/mod.rs` |
//! | `fs/` | the file-system layer: the workspace (`workspace.rs`: root fd, denylist, limits), naming a file (`containment.rs`), opening, stating and listing one without following links (`open.rs`), what a listing shows (`listing.rs`), what is never read (`denylist.rs`) or walked (`skiplist.rs`) |
//! | `walk.rs`, `search_regex.rs` | the parallel tree walk; the only place a search regex is built |
//! | `symbols/`, `overview/`, `git/` | the engines of `find_symbol` (and `file_outline`, `find_references`), `project_overview`, and the git tools (repositories read in-process, no program run) |
//! | `redact/`, `sources.rs`, `literals.rs` | credentials replaced before anything leaves: the redactor, whole-source redaction (and `sources/excerpt.rs`: a long line shown around its match, cut from the redacted line), the literal walk it and the broker's injection gate stand on |
//! | `deadline.rs`, `progress.rs` | the cooperative per-request deadline; the progress a long request reports (files walked, commits read) |
//!
//! docs/design.md has the life of a `tools/call` through these files.
//!
//! # Trust
//!
//! This crate contains no `unsafe` code: everything privileged (process
//! hygiene, rlimits, Landlock, seccomp, starting a worker) is the
//! `moat-sandbox` crate. It trusts its [`moat_protocol::WorkerInit`] (the
//! broker's validated configuration) and nothing else: every request is
//! re-checked, and the workspace content is hostile input.
//!
//! # What other crates use
//!
//! The broker runs the worker process ([`serve()`], [`describe_exit_code`]);
//! its in-process fallback (Windows, macOS, kernels without Landlock) builds
//! a [`Workspace`] and calls [`handle_until`] on a blocking thread, with a
//! [`Deadline`] that carries the request's [`Progress`] and the flag its
//! cancellation sets ([`handle`] is the same with a plain deadline). It redacts with [`redact`] and [`redact_source`], and
//! `doctor` counts the [`Denylist`]. The fuzz targets reach [`containment`]
//! and [`redact`] (through the broker).
//!
//! ```no_run
//! use std::time::Duration;
//! use moat_protocol::request::{ListDirectoryArgs, Request, SandboxRequest, WorkerInit};
//! use moat_worker::Workspace;
//!
//! let init = WorkerInit {
//!     workspace: "/srv/project".into(),
//!     limits: Default::default(),
//!     follow_symlinks: false,
//!     allow_hard_links: false,
//!     deny_extra: vec![],
//!     redact: true,
//!     inside_repository: false,
//!     sandbox: SandboxRequest::ProcessOnly,
//! };
//! let ws = Workspace::open(&init).unwrap();
//! let request = Request::ListDirectory(ListDirectoryArgs { path: ".".into(), include_hidden: false, skip: 0 });
//! let response = moat_worker::handle(&ws, &request, Duration::from_secs(15), None);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod deadline;
mod fs;
mod git;
// A namespace: `Walker` and `plain_match_ends`, the reference both its
// users' tests check it against.
pub mod literals;
mod overview;
mod progress;
// A namespace, not items: the broker re-exports it whole (`moat_broker::redact`),
// and its logs, content controls, tools, benchmark and fuzz targets name its
// items through it.
pub mod redact;
mod search_regex;
mod serve;
mod sources;
mod symbols;
mod tools;
mod walk;
mod work;

// The worker process: `moat __moat_worker` runs `serve`; the broker's pool
// says why a worker died from its exit code.
pub use serve::{describe_exit_code, run as serve};

// Running a request: the in-process fallback's workspace, dispatch,
// deadline (with its cancel flag) and progress report.
pub use deadline::Deadline;
pub use fs::Workspace;
pub use git::safety::{Verdict as RepositoryVerdict, verdict as repository_verdict};
pub use progress::Progress;
pub use tools::{handle, handle_until};

// The content and file controls the broker and the fuzz targets reach:
// whole-source redaction, the denylist `doctor` counts, path containment.
pub use fs::containment;
pub use fs::denylist::Denylist;
pub use sources::{redact_source, redact_source_with};
// The one literal walk under both redaction's anchor search and the broker's
// injection gate, and the plain walk it is checked against.
pub use literals::Walker;

/// Whether this build has the test-only `dangerous-disable-userland-checks`
/// feature, which turns off path containment and the denylist.
pub const USERLAND_CHECKS_DISABLED: bool = cfg!(feature = "dangerous-disable-userland-checks");

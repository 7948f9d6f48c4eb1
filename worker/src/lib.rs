//! moat's tool implementations: what runs *inside* a confined worker process.
//!
//! The layout:
//!
//! * [`serve`]: the worker process itself (`moat __moat_worker`). It adopts
//!   the broker's socket, reads the start-up frame, enters the sandbox
//!   ([`moat_sandbox::enter`]) before any thread exists, then answers one
//!   request at a time; also its exit codes.
//! * [`workspace`]: the served directory as a worker sees it (root fd,
//!   denylist, limits).
//! * [`fs`]: naming and opening files. [`fs::containment`] turns a requested
//!   path into a [`fs::ContainedPath`], [`fs::open`] opens, stats and lists one
//!   without following links (and refuses special files and hard links),
//!   [`fs::denylist`] and [`fs::skiplist`] say what is never read or walked.
//! * [`tools`]: one module per tool and the dispatcher, [`tools::handle`].
//! * What the tools share: [`walk`] (the parallel tree walk),
//!   [`search_regex`] (the only place a search regex is built), [`symbols`]
//!   (`find_symbol`'s engine), [`overview`], [`git`] (repositories read
//!   in-process), [`redact`] and [`sources`] (credentials replaced before
//!   anything leaves), [`literals`], [`deadline`] (the cooperative per-request
//!   deadline) and [`progress`].
//!
//! This crate contains no `unsafe` code: everything privileged (process
//! hygiene, rlimits, Landlock, seccomp, starting a worker) is the
//! `moat-sandbox` crate.
//!
//! It trusts its [`moat_protocol::WorkerInit`] (the broker's validated
//! configuration) and nothing else: every request is re-checked, and the
//! workspace content is hostile input.
//!
//! The same code serves the in-process fallback (Windows, macOS, kernels
//! without Landlock): the broker builds a [`workspace::Workspace`] and calls
//! [`tools::handle`] on a blocking thread.
//!
//! ```no_run
//! use std::time::Duration;
//! use moat_protocol::request::{ListDirectoryArgs, Request, SandboxRequest, WorkerInit};
//! use moat_worker::workspace::Workspace;
//!
//! let init = WorkerInit {
//!     workspace: "/srv/project".into(),
//!     limits: Default::default(),
//!     follow_symlinks: false,
//!     allow_hard_links: false,
//!     deny_extra: vec![],
//!     redact: true,
//!     sandbox: SandboxRequest::ProcessOnly,
//! };
//! let ws = Workspace::open(&init).unwrap();
//! let request = Request::ListDirectory(ListDirectoryArgs { path: ".".into(), include_hidden: false, skip: 0 });
//! let response = moat_worker::tools::handle(&ws, &request, Duration::from_secs(15), None);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod deadline;
pub mod fs;
pub mod git;
pub mod literals;
pub mod overview;
pub mod progress;
pub mod redact;
pub mod search_regex;
pub mod serve;
pub mod sources;
pub mod symbols;
pub mod tools;
pub mod walk;
pub mod workspace;

/// Whether this build has the test-only `dangerous-disable-userland-checks`
/// feature, which turns off path containment and the denylist.
pub const USERLAND_CHECKS_DISABLED: bool = cfg!(feature = "dangerous-disable-userland-checks");

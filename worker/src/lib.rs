//! moat's tool implementations and the worker sandbox.
//!
//! This crate is what runs *inside* a confined worker process: path containment
//! and the denylist ([`fs`]), the tools ([`tools`]), the cooperative deadline
//! ([`deadline`]), and the sandbox that confines the process ([`sandbox`]).
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
//! let response = moat_worker::tools::handle(&ws, &request, Duration::from_secs(15));
//! ```
#![deny(missing_docs)]

pub mod deadline;
pub mod fs;
pub mod git;
pub mod literals;
pub mod overview;
pub mod pattern;
pub mod process;
pub mod progress;
pub mod redact;
pub mod sandbox;
pub mod sources;
pub mod symbols;
pub mod tools;
pub mod walk;
pub mod workspace;

/// Whether this build has the test-only `dangerous-disable-userland-checks`
/// feature, which turns off path containment and the denylist.
pub const USERLAND_CHECKS_DISABLED: bool = cfg!(feature = "dangerous-disable-userland-checks");

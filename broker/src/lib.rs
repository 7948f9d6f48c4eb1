//! The moat broker: the `moat` binary.
//!
//! # Trust zones
//!
//! The broker trusts its configuration and nothing else:
//!
//! * the **client** (stdio or HTTP) sends arbitrary bytes: framing is capped
//!   ([`stdio`], [`http`]), envelopes and `_meta` are validated ([`mcp`]), tool
//!   arguments are checked against the published schemas before anything
//!   runs ([`tools`], [`mcp::schema`]);
//! * the **workspace content** is hostile: it is read only by confined
//!   workers, and everything derived from it is redacted ([`redact`]), fenced
//!   and scored ([`fence`], [`scan`]) by [`content`] before it leaves;
//! * the **worker** may have been compromised by what it parsed: its frames are
//!   size-checked and decoded as hostile input, it returns data and error
//!   codes only ([`moat_protocol`]), and [`supervisor`] kills and replaces it at
//!   the first surprise. [`error`] alone decides what a client is told.
//!
//! Nothing but protocol messages is ever written to stdout in `serve`
//! ([`stdio`] owns it; logs go to stderr through [`logging`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod app;
pub mod audit;
pub mod config;
pub mod content;
pub mod cursor;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod logging;
pub mod mcp;
pub mod metrics;
pub use moat_worker::redact;
pub mod stdio;
pub mod supervisor;
pub mod tool;

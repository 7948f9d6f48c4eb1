//! The moat broker: the `moat` binary.
//!
//! # Map
//!
//! | folder or file | owns |
//! |---|---|
//! | `app/` | the command line, its subcommands (`doctor`, `healthcheck`, `call`, `tools`), exit codes, the one stdout printer for them, process hardening |
//! | `config/` | the configuration layers, one file per section, the bounds of `moat_protocol::limits::BOUNDS`, the production invariants, `ConfigError` |
//! | `transport/` (`stdio.rs`, `http/`) | the transports: framing, connection and body caps, authentication, origins |
//! | `mcp/` | protocol eras, envelopes, `_meta`, dispatch of a request, argument validation |
//! | `tool/` | the tools: one file each (declaration, request mapping, rendering, fence label) and the registry |
//! | `content/` | the content controls: redaction of what leaves, fences, the injection scanner |
//! | `supervisor/` | running requests: the pool of confined workers, admission |
//! | `error.rs` | every sentence a client is told about a failure |
//! | `audit.rs`, `logging.rs`, `metrics.rs` | what the broker records, on stderr and the metrics listener |
//! | `bearer.rs` | the constant-time bearer-token compare of the HTTP transport and the metrics listener |
//! | `slots.rs` | connection slots and which connection is shed when all are taken: one admission for the MCP endpoint and the metrics listener |
//! | `cursor.rs` | the paging cursors every paged tool shares |
//!
//! docs/design.md has the rules of which may import which, and the life of
//! a `tools/call` through these files.
//!
//! # Trust zones
//!
//! The broker trusts its configuration and nothing else:
//!
//! * the **client** (stdio or HTTP) sends arbitrary bytes: framing is capped
//!   (`transport/`), envelopes and `_meta` are validated (`mcp/`), tool
//!   arguments are checked against the published schemas before anything
//!   runs (`tool/validator.rs`);
//! * the **workspace content** is hostile: it is read only by confined
//!   workers, and everything derived from it is redacted ([`redact`]), fenced
//!   and scored ([`scan`]) by the [`Controls`] before it leaves;
//! * the **worker** may have been compromised by what it parsed: its frames are
//!   size-checked and decoded as hostile input, it returns data and error
//!   codes only ([`moat_protocol`]), and `supervisor/` kills and replaces it at
//!   the first surprise. `error.rs` alone decides what a client is told.
//!
//! Nothing but protocol messages is ever written to stdout in `serve`
//! (`transport/stdio.rs` owns it; logs go to stderr through `logging.rs`).
//!
//! # What other crates use
//!
//! The binary calls [`main`]; the content benchmark and the fuzz targets
//! reach the content controls ([`Controls`], [`scan`], [`redact`]), the
//! tools' rendering ([`Tool`], [`render`]), the JSON-RPC envelope
//! ([`jsonrpc`]) and, with the `fuzzing` feature, `fuzzing`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod app;
mod audit;
mod bearer;
mod config;
mod content;
mod cursor;
mod error;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod logging;
mod mcp;
mod metrics;
mod slots;
mod supervisor;
mod tool;
mod transport;

pub use app::main;
pub use content::scan;
pub use content::{Controls, FenceText, Findings, Rendered};
pub use mcp::jsonrpc;
pub use moat_worker::redact;
pub use tool::{Tool, render};

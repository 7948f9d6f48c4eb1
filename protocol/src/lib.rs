//! The wire between the moat broker and its confined workers.
//!
//! ```text
//! broker                                   worker (confined)
//!   | -- frame(WorkerInit) ------------------> |   once, before the sandbox is entered
//!   | <------------------- frame(WorkerHello) |   sandbox status, after it is entered
//!   | -- frame(RequestEnvelope) -------------> |   one request at a time
//!   | <---------------------- frame(Response) |   exactly one answer per request
//! ```
//!
//! Every message is one [frame]: a 4-byte little-endian length followed by
//! that many bytes of [postcard](https://docs.rs/postcard) encoding. The length is
//! checked against a maximum **before** any buffer is allocated, so a hostile or
//! broken peer cannot make the reader allocate more than its maximum
//! ([`limits::MAX_REQUEST_FRAME_LEN`], [`limits::MAX_RESPONSE_FRAME_LEN`]).
//!
//! # Trust
//!
//! The broker trusts nothing a worker sends: a worker may have been compromised by
//! the content it parsed. Every frame from a worker is size-checked and decoded as
//! hostile input ([`frame::decode`]); a decoding failure is a reason to kill the
//! worker, never to panic. Worker output carries *data* (paths, counts, text), and
//! error *codes* with typed parameters ([`wire_error::WireError`]), never prose:
//! the broker alone decides the words a client sees.
//!
//! This crate does no I/O beyond `std::io::Read`/`Write` adapters and contains no
//! unsafe code.
//!
//! # Modules
//!
//! The crate is the vocabulary every other crate shares, so each module is
//! public and named as a namespace (`moat_protocol::limits::MAX_FILE_BYTES_MAX`):
//! [`frame`] (the framing), [`limits`] (every hard cap, and `BOUNDS`, the one
//! table of configurable settings' bounds), [`name`] (how a workspace name
//! is written as text), [`request`] and [`response`] (the messages: one
//! variant each per tool), [`wire_error`] (the closed set of error codes a
//! worker may send). The messages themselves are re-exported here.
//!
//! # Example
//!
//! ```
//! use moat_protocol::frame;
//! use moat_protocol::request::{Request, RequestEnvelope, ReadFileArgs};
//!
//! let envelope = RequestEnvelope {
//!     budget_ms: 15_000,
//!     progress: false,
//!     request: Request::ReadFile(ReadFileArgs { path: "src/main.rs".into(), start_line: None, end_line: None, start_column: None, end_column: None }),
//! };
//! let bytes = frame::encode(&envelope).unwrap();
//! let (decoded, used): (RequestEnvelope, usize) =
//!     frame::decode(&bytes, frame::MAX_REQUEST_FRAME_LEN).unwrap().unwrap();
//! assert_eq!(used, bytes.len());
//! assert_eq!(decoded, envelope);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod frame;
pub mod limits;
pub mod name;
pub mod request;
pub mod response;
pub mod wire_error;

pub use request::{Request, RequestEnvelope, WorkerInit};
pub use response::{Response, ToolOutput, WorkerHello};
pub use wire_error::WireError;

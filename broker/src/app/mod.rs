//! The program around the server: the command line and its subcommands,
//! and the process hardening applied before anything else runs.
//!
//! [`cli`] parses the command line and dispatches to [`doctor`] and
//! [`healthcheck`]; all three share [`exit`] (the exit codes), [`output`]
//! (the one stdout printer) and [`executor`] (where tool requests run),
//! and none of those imports a subcommand.

pub mod cli;
pub mod doctor;
pub mod executor;
pub mod exit;
pub mod hardening;
pub mod healthcheck;
pub mod output;

pub use cli::main;

//! The program around the server: the command line, its subcommands and
//! the process hardening applied before anything else runs.

pub mod cli;
pub mod doctor;
pub mod hardening;
pub mod healthcheck;

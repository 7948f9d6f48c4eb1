//! The exit codes every subcommand shares: 0 success; 1 a tool or protocol
//! error from `call`, or a failed `doctor` or `healthcheck` check; 2 bad
//! configuration or usage (never from `healthcheck`, see
//! [`super::healthcheck`]).

/// Exit code: bad configuration or usage.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: a tool or protocol error, or a failed check.
pub const EXIT_FAILED: u8 = 1;

//! What the subcommands print: their output on stdout (never in `serve`,
//! where stdout carries protocol messages only), and the redactor of the
//! messages they write to stderr before a configuration is loaded.

use std::io::Write as _;

use crate::config::Sources;

/// Print command output (never used by `serve`).
pub fn print_stdout(text: &str) {
    #[allow(
        clippy::disallowed_methods,
        reason = "CLI output of doctor/tools/call/completions, not `serve`"
    )]
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
}

/// The log redactor for messages printed before the configuration is loaded
/// (a refused configuration may echo the value it refused): the usual rules,
/// plus the bearer token from the environment, if one is set there.
#[must_use]
pub fn startup_redactor(sources: &Sources) -> crate::logging::LogRedactor {
    let tokens: Vec<&str> = sources
        .env
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("MOAT_HTTP__BEARER_TOKEN"))
        .map(|(_, v)| v.as_str())
        .collect();
    crate::logging::LogRedactor::new(&tokens)
}

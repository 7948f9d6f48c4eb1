//! Logs: `tracing` to stderr only (stdout is the protocol wire), JSON lines by
//! default, level from configuration. Tool argument values are never logged.

use tracing_subscriber::EnvFilter;

use crate::config::ObservabilityConfig;

/// Install the global subscriber. Safe to call more than once (later calls
/// are ignored).
pub fn init(o: &ObservabilityConfig) {
    let level = match o.log_level.as_str() {
        "debug" => "debug",
        "warning" => "warn",
        "error" => "error",
        _ => "info",
    };
    let filter = EnvFilter::new(format!("{level},hyper=warn,h2=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false);
    let _ = if o.log_json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init()
    } else {
        builder.try_init()
    };
}

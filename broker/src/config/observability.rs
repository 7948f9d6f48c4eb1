//! `[observability]`: logs on stderr, the audit trail and the metrics
//! listener.

use std::path::PathBuf;

use serde::Deserialize;

use moat_protocol::limits;

use super::error::ConfigError;
use super::http::secret_shown;
use super::values::{bounded, choice, length};

/// `[observability]`.
///
/// Its `Debug` output shows whether a metrics token is set, never the token.
#[derive(Clone)]
pub struct ObservabilityConfig {
    /// `debug`, `info`, `warning` or `error`.
    pub log_level: String,
    /// JSON lines (else plain text).
    pub log_json: bool,
    /// Log the *names* of tool arguments (never values).
    pub log_tool_arguments: bool,
    /// Where audit events go: JSON lines appended to this file, or (None)
    /// lines on stderr with the other logs.
    pub audit_path: Option<PathBuf>,
    /// Largest size of the audit file before it is rotated to `<path>.1`.
    pub audit_max_bytes: u64,
    /// Where the Prometheus `/metrics` listener binds (None: no listener).
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Bearer token `/metrics` requires; empty = none.
    pub metrics_token: String,
}

impl std::fmt::Debug for ObservabilityConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObservabilityConfig")
            .field("log_level", &self.log_level)
            .field("log_json", &self.log_json)
            .field("log_tool_arguments", &self.log_tool_arguments)
            .field("audit_path", &self.audit_path)
            .field("audit_max_bytes", &self.audit_max_bytes)
            .field("metrics_addr", &self.metrics_addr)
            .field("metrics_token", &secret_shown(&self.metrics_token))
            .finish()
    }
}

/// `[observability]` as given.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawObservability {
    log_level: Option<String>,
    log_json: Option<bool>,
    log_tool_arguments: Option<bool>,
    audit_path: Option<String>,
    audit_max_bytes: Option<u64>,
    metrics_addr: Option<String>,
    metrics_token: Option<String>,
}

/// `observability.log_level`'s values (`warn` and `warning` are one level).
const LOG_LEVELS: &[&str] = &["debug", "info", "warn", "warning", "error"];

/// `[observability]`, checked.
pub(super) fn validate(o: RawObservability) -> Result<ObservabilityConfig, ConfigError> {
    let log_level = match choice(
        "observability.log_level",
        o.log_level.as_deref(),
        LOG_LEVELS,
    )? {
        None => "info",
        // `warn` is what the log lines say (`"level":"WARN"`).
        Some("warn") => "warning",
        Some(level) => level,
    };
    let audit_path = match o.audit_path.as_deref().map(str::trim) {
        None => None,
        Some("") => {
            return Err(ConfigError::Empty {
                key: "observability.audit_path",
                remedy: "give the file to append audit events to, or leave it out to log them \
                         on stderr",
            });
        }
        Some(p) => Some(PathBuf::from(p)),
    };
    let metrics_addr = match o.metrics_addr.as_deref().map(str::trim) {
        None => None,
        Some(a) => Some(
            a.parse::<std::net::SocketAddr>()
                .map_err(|_| ConfigError::MetricsAddr(a.to_owned()))?,
        ),
    };
    let metrics_token = o.metrics_token.unwrap_or_default();
    length(&limits::METRICS_TOKEN, &metrics_token)?;
    Ok(ObservabilityConfig {
        metrics_addr,
        metrics_token,
        log_level: log_level.to_owned(),
        log_json: o.log_json.unwrap_or(true),
        log_tool_arguments: o.log_tool_arguments.unwrap_or(false),
        audit_path,
        audit_max_bytes: bounded(&limits::AUDIT_MAX_BYTES, o.audit_max_bytes)?,
    })
}

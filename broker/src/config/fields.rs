//! The key registry: every settable field, its kind, and its environment
//! variable.

use serde_json::Value;

/// What a field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A string.
    Str,
    /// A non-negative integer.
    Int,
    /// A number.
    Float,
    /// `true` or `false`.
    Bool,
    /// A list of strings.
    List,
    /// One string or a list of strings.
    Strings,
}

/// Every settable field: `(section, field, kind)`; the environment variable is
/// `MOAT_<SECTION>__<FIELD>` upper-cased, a nested table's dot written `__`
/// (`http.oauth.issuer` is `MOAT_HTTP__OAUTH__ISSUER`).
pub(super) const FIELDS: &[(&str, &str, Kind)] = &[
    ("server", "name", Kind::Str),
    ("server", "title", Kind::Str),
    ("server", "instructions", Kind::Str),
    ("server", "discovery_ttl_ms", Kind::Int),
    ("server", "max_answer_bytes", Kind::Int),
    ("server", "max_stdout_bytes", Kind::Int),
    ("sandbox", "workspace", Kind::Str),
    ("sandbox", "max_file_bytes", Kind::Int),
    ("sandbox", "max_read_lines", Kind::Int),
    ("sandbox", "max_search_results", Kind::Int),
    ("sandbox", "max_search_files", Kind::Int),
    ("sandbox", "max_result_bytes", Kind::Int),
    ("sandbox", "max_directory_entries", Kind::Int),
    ("sandbox", "max_git_entries", Kind::Int),
    ("sandbox", "max_answer_chars", Kind::Int),
    ("sandbox", "tool_timeout_seconds", Kind::Float),
    ("sandbox", "follow_symlinks", Kind::Bool),
    ("sandbox", "deny_extra", Kind::List),
    ("sandbox", "mode", Kind::Str),
    ("sandbox", "workers", Kind::Int),
    ("sandbox", "allow_hard_links", Kind::Bool),
    ("sandbox", "allow_in_process_in_production", Kind::Bool),
    ("sandbox", "max_queued_calls", Kind::Int),
    ("sandbox", "queue_timeout_ms", Kind::Int),
    ("security", "redact_secrets", Kind::Bool),
    ("security", "scan_untrusted_content", Kind::Bool),
    ("http", "host", Kind::Str),
    ("http", "port", Kind::Int),
    ("http", "bearer_token", Kind::Str),
    ("http", "allowed_origins", Kind::List),
    ("http", "allowed_hosts", Kind::List),
    ("http", "max_request_bytes", Kind::Int),
    ("http", "max_connections", Kind::Int),
    ("http", "max_in_flight", Kind::Int),
    ("http", "header_timeout_ms", Kind::Int),
    ("http", "body_timeout_ms", Kind::Int),
    ("http", "write_timeout_ms", Kind::Int),
    ("http", "max_queued_bytes", Kind::Int),
    ("http", "auth_failures_per_second", Kind::Int),
    ("http", "auth_failure_pause_ms", Kind::Int),
    ("http", "auth", Kind::Str),
    ("http.oauth", "issuer", Kind::Strings),
    ("http.oauth", "audience", Kind::Str),
    ("http.oauth", "required_scope", Kind::Str),
    ("http.oauth", "jwks_path", Kind::Str),
    ("http.oauth", "jwks_url", Kind::Str),
    ("http.oauth", "leeway_seconds", Kind::Int),
    ("http.oauth", "jwks_min_refresh_seconds", Kind::Int),
    ("http.oauth", "jwks_refresh_seconds", Kind::Int),
    ("http.oauth", "resource_metadata_url", Kind::Str),
    ("observability", "log_level", Kind::Str),
    ("observability", "log_json", Kind::Bool),
    ("observability", "log_tool_arguments", Kind::Bool),
    ("observability", "audit_path", Kind::Str),
    ("observability", "audit_max_bytes", Kind::Int),
    ("observability", "metrics_addr", Kind::Str),
    ("observability", "metrics_token", Kind::Str),
];

/// The environment variable names moat reads, for documentation and `doctor`.
pub fn env_names() -> impl Iterator<Item = String> {
    std::iter::once("MOAT_ENVIRONMENT".to_owned())
        .chain(FIELDS.iter().map(|(s, f, _)| env_name(s, f)))
}

/// The top-level sections of the file, in the order of [`FIELDS`].
pub(super) fn sections() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (s, _, _) in FIELDS {
        if !out.contains(s) && !s.contains('.') {
            out.push(s);
        }
    }
    out
}

pub(super) fn env_name(section: &str, field: &str) -> String {
    format!(
        "MOAT_{}__{}",
        section.to_uppercase().replace('.', "__"),
        field.to_uppercase()
    )
}

/// Whether `[section]` is a known (nested) table.
pub(super) fn is_section(section: &str) -> bool {
    FIELDS.iter().any(|(s, _, _)| *s == section)
}

/// How [`ConfigError::BadVariable`](super::ConfigError) names a kind.
pub(super) fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Str => "string",
        Kind::Int => "non-negative integer",
        Kind::Float => "number",
        Kind::Bool => "boolean (true/false)",
        Kind::List | Kind::Strings => "comma-separated list",
    }
}

/// A `MOAT_*` value as the kind of its field, if it is one.
pub(super) fn parse_env(kind: Kind, v: &str) -> Option<Value> {
    let t = v.trim();
    Some(match kind {
        Kind::Str => Value::String(v.to_owned()),
        Kind::Int => Value::from(t.parse::<u64>().ok()?),
        Kind::Float => Value::from(t.parse::<f64>().ok().filter(|f| f.is_finite())?),
        Kind::Bool => match t.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Value::Bool(true),
            "0" | "false" | "no" | "off" => Value::Bool(false),
            _ => return None,
        },
        Kind::List | Kind::Strings => Value::Array(
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_owned()))
                .collect(),
        ),
    })
}

//! Configuration: defaults < TOML file (`--config`) < environment
//! (`MOAT_<SECTION>__<FIELD>`) < command-line flags.
//!
//! Raw input is deserialised with every unknown key refused (in the file and in
//! `MOAT_*` environment variables, each named with the known name most likely
//! meant), then validated into [`Config`]: ranges checked, choices read in any
//! case, empty values refused by name, the workspace resolved (a relative one
//! in the file from the file's directory), and the production invariants
//! computed.
//! In production any violation refuses start-up, listing every one; elsewhere
//! they are warnings (shown by `doctor` and logged at start).
//!
//! This file holds [`Config`], its sources and the order of validation. The
//! layers are read in `layers.rs` (file, then environment, type-checked) with
//! the key registry of `fields.rs` and the unknown-key checks of `keys.rs`;
//! each section is validated in its own file (`server.rs`, `sandbox.rs`,
//! `security.rs`, `http.rs` with `oauth.rs`, `observability.rs`) with the helpers of
//! `values.rs` and the bounds of `moat_protocol::limits::BOUNDS`; the
//! production invariants are `production.rs`; every error is `error.rs`.

mod error;
mod fields;
mod http;
mod keys;
mod layers;
pub(crate) mod oauth;
mod observability;
mod production;
mod sandbox;
mod security;
mod server;
#[cfg(test)]
mod tests;
mod values;

use std::path::PathBuf;

pub use error::{ConfigError, OutOfBounds};
pub use http::{HttpAuth, HttpConfig};
/// Default `observability.audit_max_bytes`, for the tests of what is logged.
#[cfg(test)]
pub use moat_protocol::limits::AUDIT_MAX_BYTES_DEFAULT;
pub use observability::ObservabilityConfig;
pub use production::production_violations;
pub use sandbox::{SandboxConfig, SandboxMode};
pub use security::SecurityConfig;
pub use server::ServerConfig;
pub(crate) use values::bounded;

use layers::{Raw, load_raw};
use values::choice;

/// Deployment environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Environment {
    /// A developer machine.
    Local,
    /// A pre-production deployment.
    Staging,
    /// Production: invariants are enforced.
    Production,
}

impl Environment {
    /// Lower-case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Local => "local",
            Environment::Staging => "staging",
            Environment::Production => "production",
        }
    }
}

/// Transport being served (some invariants depend on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// Validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Deployment environment.
    pub environment: Environment,
    /// `[server]`.
    pub server: ServerConfig,
    /// `[sandbox]`.
    pub sandbox: SandboxConfig,
    /// `[security]`.
    pub security: SecurityConfig,
    /// `[http]`.
    pub http: HttpConfig,
    /// `[observability]`.
    pub observability: ObservabilityConfig,
    /// Production-invariant violations (refused in production, warned elsewhere).
    pub violations: Vec<String>,
}

/// Where configuration comes from.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// `--config FILE`.
    pub file: Option<PathBuf>,
    /// The process environment (only `MOAT_*` keys are read).
    pub env: Vec<(String, String)>,
    /// `--workspace DIR`.
    pub workspace_flag: Option<PathBuf>,
    /// The working directory (default workspace).
    pub cwd: Option<PathBuf>,
}

/// Load and validate the configuration for `transport`. `landlock_available`
/// says whether the kernel offers Landlock (decides the automatic mode).
///
/// # Errors
///
/// The first setting refused, or (in production) every invariant broken.
pub fn load(
    sources: &Sources,
    transport: Transport,
    landlock_available: bool,
) -> Result<Config, ConfigError> {
    validate(load_raw(sources)?, sources, transport, landlock_available)
}

/// The address `serve --transport http` binds (`http.host`, `http.port`),
/// read from the same layers as [`load`] (unknown keys and wrong types are
/// still refused) but without validating the rest: `moat healthcheck` must
/// keep answering from what the server was started with even while, say, the
/// workspace is briefly missing (that is what `/readyz` reports).
///
/// # Errors
///
/// A layer that cannot be read, or a port out of its bounds.
pub fn http_address(sources: &Sources) -> Result<(String, u16), ConfigError> {
    let h = load_raw(sources)?.http;
    Ok((http::host(h.host), http::port(h.port)?))
}

/// `environment`'s values.
const ENVIRONMENTS: &[&str] = &["local", "staging", "production"];

/// Every section in the order of the file, so that of several problems the
/// same one is always reported first.
fn validate(
    raw: Raw,
    sources: &Sources,
    transport: Transport,
    landlock_available: bool,
) -> Result<Config, ConfigError> {
    let environment = match choice("environment", raw.environment.as_deref(), ENVIRONMENTS)? {
        None | Some("local") => Environment::Local,
        Some("staging") => Environment::Staging,
        // `choice` returns one of ENVIRONMENTS: "production".
        Some(_) => Environment::Production,
    };
    let server = server::validate(raw.server)?;
    let queued_calls_set = raw.sandbox.max_queued_calls.is_some();
    let sandbox = sandbox::validate(raw.sandbox, sources, landlock_available)?;
    let security = security::validate(&raw.security);
    let http = http::validate(raw.http)?;
    let observability = observability::validate(raw.observability)?;

    let mut config = Config {
        environment,
        server,
        sandbox,
        security,
        http,
        observability,
        violations: Vec::new(),
    };
    // Over HTTP every call `http.max_in_flight` lets in may wait for a
    // worker: a wait queue shorter than that would refuse, at a load the
    // operator allowed, calls the transport had already taken in.
    if transport == Transport::Http && !queued_calls_set {
        config.sandbox.max_queued_calls = config
            .sandbox
            .max_queued_calls
            .max(config.http.max_in_flight);
    }
    config.violations = production_violations(&config, transport);
    config
        .violations
        .extend(production::writable_by_others(sources, &config));
    if environment == Environment::Production && !config.violations.is_empty() {
        return Err(ConfigError::Production(config.violations));
    }
    Ok(config)
}

//! `[http]`: the Streamable HTTP transport, and how its callers are
//! authenticated (`[http.oauth]` is read in `oauth.rs`).

use serde::Deserialize;

use moat_protocol::limits;

use super::error::ConfigError;
use super::oauth as settings;
use super::values::{as_usize, bounded, choice, length};

/// `[http]`.
///
/// Its `Debug` output shows whether a bearer token is set, never the token.
#[derive(Clone)]
pub struct HttpConfig {
    /// Bind address.
    pub host: String,
    /// Bind port (0 = any free port).
    pub port: u16,
    /// Bearer token; empty = no authentication.
    pub bearer_token: String,
    /// How callers are authenticated (`http.auth`).
    pub auth: HttpAuth,
    /// `[http.oauth]`, present exactly when `auth` is [`HttpAuth::Oauth`].
    pub oauth: Option<settings::OauthConfig>,
    /// Allowed `Origin` values (exact).
    pub allowed_origins: Vec<String>,
    /// Extra allowed `Host` names (the bound address and loopback names are
    /// always allowed when bound to loopback).
    pub allowed_hosts: Vec<String>,
    /// Largest request body.
    pub max_request_bytes: u64,
    /// Most simultaneous connections.
    pub max_connections: usize,
    /// Most requests being processed at once (beyond: 503).
    pub max_in_flight: usize,
    /// Time allowed to send request headers, in milliseconds.
    pub header_timeout_ms: u64,
    /// Time allowed to send a request body, in milliseconds.
    pub body_timeout_ms: u64,
    /// Time allowed for a client to take an answer once the broker's writes
    /// to it block, in milliseconds; past it the connection is closed.
    pub write_timeout_ms: u64,
    /// Answer bytes waiting to be taken by clients, over all connections;
    /// past it a new tool call is refused `503` before it runs.
    pub max_queued_bytes: u64,
    /// Authentication refusals answered at once, per second.
    pub auth_failures_per_second: u64,
    /// How long a refusal beyond that budget is held, in milliseconds (0:
    /// never).
    pub auth_failure_pause_ms: u64,
}

/// `http.auth`: how HTTP callers are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpAuth {
    /// Any caller (the default without a bearer token).
    None,
    /// The static `http.bearer_token` (the default with one).
    Bearer,
    /// OAuth 2.1 access tokens (JWT) checked against `[http.oauth]`.
    Oauth,
}

/// `http.auth`'s values.
const AUTH_MODES: &[&str] = &["none", "bearer", "oauth"];

/// How a token appears in `Debug` output: whether one is set, never itself.
pub(super) fn secret_shown(token: &str) -> &'static str {
    if token.is_empty() {
        "(none)"
    } else {
        "[redacted]"
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("bearer_token", &secret_shown(&self.bearer_token))
            .field("auth", &self.auth)
            .field("oauth", &self.oauth)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_connections", &self.max_connections)
            .field("max_in_flight", &self.max_in_flight)
            .field("header_timeout_ms", &self.header_timeout_ms)
            .field("body_timeout_ms", &self.body_timeout_ms)
            .field("write_timeout_ms", &self.write_timeout_ms)
            .field("max_queued_bytes", &self.max_queued_bytes)
            .field("auth_failures_per_second", &self.auth_failures_per_second)
            .field("auth_failure_pause_ms", &self.auth_failure_pause_ms)
            .finish()
    }
}

/// `[http]` as given.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    pub(super) host: Option<String>,
    pub(super) port: Option<u64>,
    bearer_token: Option<String>,
    allowed_origins: Option<Vec<String>>,
    allowed_hosts: Option<Vec<String>>,
    max_request_bytes: Option<u64>,
    max_connections: Option<u64>,
    max_in_flight: Option<u64>,
    header_timeout_ms: Option<u64>,
    body_timeout_ms: Option<u64>,
    write_timeout_ms: Option<u64>,
    max_queued_bytes: Option<u64>,
    auth_failures_per_second: Option<u64>,
    auth_failure_pause_ms: Option<u64>,
    auth: Option<String>,
    #[serde(default)]
    oauth: settings::RawOauth,
}

/// `http.host`, or the loopback address.
pub(super) fn host(host: Option<String>) -> String {
    host.unwrap_or_else(|| "127.0.0.1".into())
}

/// `http.port` within its bounds.
pub(super) fn port(port: Option<u64>) -> Result<u16, ConfigError> {
    let b = limits::HTTP_PORT;
    let default = u16::try_from(b.default.unwrap_or(b.min)).unwrap_or(0);
    Ok(u16::try_from(bounded(&b, port)?).unwrap_or(default))
}

/// `[http]` and, with `auth = "oauth"`, `[http.oauth]`, checked.
pub(super) fn validate(h: RawHttp) -> Result<HttpConfig, ConfigError> {
    let token = h.bearer_token.unwrap_or_default();
    length(&limits::BEARER_TOKEN, &token)?;
    if h.host.as_deref().is_some_and(|host| host.trim().is_empty()) {
        return Err(ConfigError::Empty {
            key: "http.host",
            remedy: "give an address to bind (127.0.0.1, 0.0.0.0, …), or leave it out for \
                     127.0.0.1",
        });
    }
    // Without `http.auth`, a token means bearer, as before the setting.
    let auth = match choice("http.auth", h.auth.as_deref(), AUTH_MODES)? {
        None if token.is_empty() => HttpAuth::None,
        None | Some("bearer") => HttpAuth::Bearer,
        Some("none") => HttpAuth::None,
        // `choice` returns one of AUTH_MODES: "oauth".
        Some(_) => HttpAuth::Oauth,
    };
    if auth == HttpAuth::Bearer && token.is_empty() {
        return Err(ConfigError::BearerWithoutToken);
    }
    let oauth = match auth {
        HttpAuth::Oauth => Some(settings::validate(h.oauth)?),
        HttpAuth::None | HttpAuth::Bearer => {
            settings::check_bounds(&h.oauth)?;
            None
        }
    };
    Ok(HttpConfig {
        host: host(h.host),
        port: port(h.port)?,
        bearer_token: token,
        auth,
        oauth,
        allowed_origins: h.allowed_origins.unwrap_or_default(),
        allowed_hosts: h.allowed_hosts.unwrap_or_default(),
        max_request_bytes: bounded(&limits::MAX_REQUEST_BYTES, h.max_request_bytes)?,
        max_connections: as_usize(bounded(&limits::MAX_CONNECTIONS, h.max_connections)?),
        max_in_flight: as_usize(bounded(&limits::MAX_IN_FLIGHT, h.max_in_flight)?),
        header_timeout_ms: bounded(&limits::HEADER_TIMEOUT_MS, h.header_timeout_ms)?,
        body_timeout_ms: bounded(&limits::BODY_TIMEOUT_MS, h.body_timeout_ms)?,
        write_timeout_ms: bounded(&limits::WRITE_TIMEOUT_MS, h.write_timeout_ms)?,
        max_queued_bytes: bounded(&limits::MAX_QUEUED_BYTES, h.max_queued_bytes)?,
        auth_failures_per_second: bounded(
            &limits::AUTH_FAILURES_PER_SECOND,
            h.auth_failures_per_second,
        )?,
        auth_failure_pause_ms: bounded(&limits::AUTH_FAILURE_PAUSE_MS, h.auth_failure_pause_ms)?,
    })
}

//! The MCP server core, independent of the transport: both eras, every method,
//! tool calls through the executor and the content controls.
//!
//! # Eras
//!
//! * **2026-07-28 (stateless)**: a request whose `params._meta` carries
//!   `io.modelcontextprotocol/protocolVersion` is validated on its own
//!   ([`meta::validate`]) and served statelessly: `server/discover`,
//!   `tools/list`, `tools/call`. Everything else (including `initialize` and
//!   `ping`) is `-32601`.
//! * **2024-11-05 … 2025-11-25**: `initialize` without modern `_meta` selects
//!   legacy behaviour — for the stdio process, or (HTTP) for requests whose
//!   `MCP-Protocol-Version` header names a legacy revision or is absent.
//!   Legacy methods: `initialize`, `ping`, `tools/list`, `tools/call`, and the
//!   notifications, which are never answered.

mod call;
pub mod json_out;
pub mod jsonrpc;
pub mod meta;
mod progress;
pub mod resources;
mod session;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::content::Controls;
use crate::supervisor::Executor;
use crate::supervisor::admission::Admission;
use crate::tool::{Registry, SchemaError};
use jsonrpc::{Id, Message, Reply, RpcError, code};

pub use call::INLINE_WORK_BYTES;
pub use progress::NOTIFY;
pub use session::Session;

/// `tools/list` page size: larger than the whole tool list, so the first page
/// holds every tool. Several widely used clients read only the first page of
/// `tools/list`; on a smaller page they would not see `read_file` at all.
/// Cursors are still issued past this size and honoured when given.
pub const PAGE_SIZE: usize = 100;

/// What the transport knows about a request beyond its body.
#[derive(Debug, Default, Clone, Copy)]
pub struct TransportInfo<'a> {
    /// HTTP `MCP-Protocol-Version` header (None on stdio or when absent).
    pub protocol_header: Option<&'a str>,
    /// Whether this is HTTP (no sessions: the era follows the header).
    pub http: bool,
    /// The subject of the OAuth token that admitted the request, escaped
    /// and bounded (HTTP with `http.auth = "oauth"` only).
    pub subject: Option<&'a str>,
}

/// The revision a request is served in, with what that revision gives it.
#[derive(Debug, Clone, Copy)]
enum Era<'a> {
    /// 2026-07-28, stateless: the request's own validated `_meta`.
    Modern(&'a meta::RequestMeta),
    /// 2024-11-05 … 2025-11-25: the revision `initialize` chose (or the
    /// HTTP header names).
    Legacy(&'a str),
}

impl<'a> Era<'a> {
    /// The revision's date.
    fn version(self) -> &'a str {
        match self {
            Era::Modern(_) => meta::MODERN_VERSION,
            Era::Legacy(version) => version,
        }
    }
}

/// The server core. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct Server {
    config: Arc<Config>,
    registry: Registry,
    executor: Executor,
    controls: Arc<Controls>,
    root_name: String,
    admission: Admission,
    /// Answers being rendered at once (CPU work, and the largest transient
    /// allocation of a call): one per worker.
    rendering: tokio::sync::Semaphore,
}

impl Server {
    /// Build the server around an executor.
    ///
    /// # Errors
    /// A published schema the validator cannot check (a bug the unit tests
    /// catch).
    pub fn new(config: Arc<Config>, executor: Executor) -> Result<Server, SchemaError> {
        let mut registry = Registry::new()?;
        registry.set_answer_chars(config.sandbox.limits.max_answer_chars);
        // The content controls' automata and patterns are built beside the
        // start-up, not before the first answer (`initialize` and
        // `tools/list` need none of them) and not in the first tool call.
        let (redact, scan) = (
            config.security.redact_secrets,
            config.security.scan_untrusted_content,
        );
        // A thread that cannot be started leaves the work to the first call.
        let _ = std::thread::Builder::new()
            .name("moat-warm-up".into())
            .spawn(move || {
                if redact {
                    crate::redact::Redactor::warm_up();
                }
                if scan {
                    crate::content::scan::Scanner::warm_up(redact);
                }
                // What the builds freed goes back to the system rather than
                // staying resident for the life of the process.
                moat_sandbox::release_free_heap();
            });
        let controls = Controls::new(
            config.security.redact_secrets,
            config.security.scan_untrusted_content,
        );
        let root_name = config
            .sandbox
            .workspace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Room for one running call per worker and the bounded wait queue.
        let admission = Admission::new(config.sandbox.workers + config.sandbox.max_queued_calls);
        let rendering = tokio::sync::Semaphore::new(config.sandbox.workers.max(1));
        Ok(Server {
            rendering,
            config,
            registry,
            executor,
            controls: Arc::new(controls),
            root_name,
            admission,
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The executor.
    #[must_use]
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The admission of tool calls (for readiness and the transports).
    #[must_use]
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// The tool registry.
    #[must_use]
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Handle one message; `None` for notifications (never answered).
    pub async fn handle(
        &self,
        msg: Message,
        session: &Session,
        transport: TransportInfo<'_>,
    ) -> Option<Reply> {
        if jsonrpc::runs_nothing(&msg) {
            // The transports refuse these before they get here; should one
            // arrive all the same, it is not run (it could not be answered).
            let _ = self.refuse_notification(&msg, session, transport);
            return None;
        }
        let start = Instant::now();
        let method = msg.method.clone();
        let id = msg.id.clone();
        if let Some(id) = &id {
            crate::logging::record_rpc_id(id);
        }
        let client = self.client_of(&msg, session);
        // Every tools/call and resources/read is audited, whatever becomes
        // of it; nothing else is.
        let audited = matches!(msg.method.as_str(), "tools/call" | "resources/read");
        let mut facts = match msg.method.as_str() {
            "tools/call" => {
                crate::audit::Facts::of_call(&msg.params, self.caller(transport), &client)
            }
            "resources/read" => {
                resources::facts_of_read(&msg.params, self.caller(transport), &client)
            }
            _ => crate::audit::Facts::default(),
        };
        let outcome = self
            .dispatch(msg, session, transport, &client, &mut facts)
            .await;
        let us = micros(start);
        if audited {
            if let Err(e) = &outcome {
                facts.outcome = std::borrow::Cow::Borrowed(rpc_outcome(e.code));
                facts.bytes = e.to_reply().encoded_len();
            }
            crate::audit::record(&facts, us);
            crate::metrics::tool_call(&facts);
        }
        crate::metrics::request(
            &method,
            audited.then_some(facts.tool.as_str()),
            Duration::from_micros(us),
        );
        match (id, outcome) {
            (None, Ok(_)) => None,
            (None, Err(e)) => {
                tracing::warn!(method = %method, client, code = e.code, error_message = %e.message, duration_us = us, "rpc.notification_failed");
                None
            }
            (Some(id), Ok(result)) => {
                tracing::info!(method = %method, client, duration_us = us, "rpc.ok");
                Some(Reply::success(id, result))
            }
            (Some(_), Err(e)) => {
                tracing::warn!(method = %method, client, code = e.code, error_message = %e.message, duration_us = us, "rpc.error");
                Some(e.to_reply())
            }
        }
    }

    /// Refuse a message sent as a notification whose method is a request's
    /// ([`jsonrpc::runs_nothing`]): nothing is run. It is logged once as
    /// `rpc.notification_refused`, counted, and, for a `tools/call` or a
    /// `resources/read`, audited with the outcome `invalid_request`. The
    /// error is for a transport that may answer it (HTTP: 400 with a `null`
    /// id); over stdio a notification is never answered.
    pub fn refuse_notification(
        &self,
        msg: &Message,
        session: &Session,
        transport: TransportInfo<'_>,
    ) -> RpcError {
        let client = self.client_of(msg, session);
        let error = RpcError::new(
            None,
            code::INVALID_REQUEST,
            "invalid request: a request method sent as a notification (no id) is not run: send it with an id",
        );
        tracing::warn!(method = %msg.method, client, code = error.code, "rpc.notification_refused");
        let mut facts = match msg.method.as_str() {
            "tools/call" => {
                crate::audit::Facts::of_call(&msg.params, self.caller(transport), &client)
            }
            "resources/read" => {
                resources::facts_of_read(&msg.params, self.caller(transport), &client)
            }
            _ => {
                crate::metrics::request(&msg.method, None, Duration::ZERO);
                return error;
            }
        };
        facts.outcome = std::borrow::Cow::Borrowed(rpc_outcome(error.code));
        facts.bytes = error.to_reply().encoded_len();
        crate::audit::record(&facts, 0);
        crate::metrics::tool_call(&facts);
        crate::metrics::request(&msg.method, Some(facts.tool.as_str()), Duration::ZERO);
        error
    }

    /// Audit a request the HTTP transport refused before it reached the
    /// core (`busy`, a mirrored header that disagrees with the body), when
    /// it is a `tools/call`: `outcome` is the refusal's code, `bytes` the
    /// size of the answer's body.
    pub fn audit_refused(
        &self,
        msg: &Message,
        subject: Option<&str>,
        outcome: &'static str,
        bytes: u64,
    ) {
        if msg.method != "tools/call" {
            return;
        }
        if let Some(id) = &msg.id {
            crate::logging::record_rpc_id(id);
        }
        let transport = TransportInfo {
            protocol_header: None,
            http: true,
            subject,
        };
        let client = self.client_of(msg, &Session::default());
        let mut facts = crate::audit::Facts::of_call(&msg.params, self.caller(transport), &client);
        facts.outcome = std::borrow::Cow::Borrowed(outcome);
        facts.bytes = bytes;
        crate::audit::record(&facts, 0);
        crate::metrics::tool_call(&facts);
    }

    /// Record a stdio call the client cancelled before its answer: its log
    /// line and, for a `tools/call`, its audit event (outcome `cancelled`);
    /// no answer is sent for it.
    pub fn record_cancelled(&self, msg: &Message, session: &Session) {
        if let Some(id) = &msg.id {
            crate::logging::record_rpc_id(id);
        }
        let client = self.client_of(msg, session);
        tracing::info!(method = %msg.method, client, "rpc.cancelled");
        if msg.method != "tools/call" {
            return;
        }
        let transport = TransportInfo::default();
        let mut facts = crate::audit::Facts::of_call(&msg.params, self.caller(transport), &client);
        facts.outcome = std::borrow::Cow::Borrowed("cancelled");
        crate::audit::record(&facts, 0);
        crate::metrics::tool_call(&facts);
    }

    /// Who sent a request, for the audit trail: `stdio`, or over HTTP
    /// `bearer` (the configured static token admitted it), `anonymous`
    /// (no authentication is configured) or the subject of the OAuth token
    /// that admitted it.
    fn caller(&self, transport: TransportInfo<'_>) -> std::borrow::Cow<'static, str> {
        use crate::config::HttpAuth;
        if !transport.http {
            return "stdio".into();
        }
        match (self.config.http.auth, transport.subject) {
            (HttpAuth::Oauth, Some(sub)) => sub.to_owned().into(),
            (HttpAuth::Oauth, None) => "oauth".into(),
            (HttpAuth::Bearer, _) => "bearer".into(),
            (HttpAuth::None, _) => "anonymous".into(),
        }
    }

    /// The client a request comes from, for the logs: `name/version` from
    /// the request's `_meta` (2026-07-28), from `initialize`'s
    /// `clientInfo`, or from the `initialize` of this stdio session;
    /// `unidentified` when none says (an HTTP request of an earlier
    /// revision: HTTP keeps no session).
    fn client_of(&self, msg: &Message, session: &Session) -> String {
        if meta::is_modern(&msg.params) {
            let info = msg
                .params
                .get("_meta")
                .and_then(|m| m.get(meta::KEY_CLIENT_INFO));
            return meta::client_label(info);
        }
        if msg.method == "initialize" {
            return meta::client_label(msg.params.get("clientInfo"));
        }
        session.client().unwrap_or_else(|| meta::client_label(None))
    }

    async fn dispatch(
        &self,
        msg: Message,
        session: &Session,
        transport: TransportInfo<'_>,
        client: &str,
        facts: &mut crate::audit::Facts,
    ) -> Result<Value, RpcError> {
        let modern = meta::is_modern(&msg.params);
        let id = msg.id.as_ref();
        if msg.method == "initialize" && !modern {
            if !transport.http {
                session.set_client(client.to_owned());
            }
            return Ok(self.initialize(&msg, session, transport));
        }
        if msg.is_notification() && msg.method.starts_with("notifications/") {
            if msg.method == "notifications/cancelled" {
                // Only this session's own calls can be named: over HTTP
                // there is no session, and a request is cancelled by
                // closing it.
                if let Some(request) = msg.params.get("requestId") {
                    let found = session.cancel(request);
                    tracing::info!(request_id = %request, found, "rpc.cancel");
                }
            }
            // notifications/initialized, ...: nothing to do.
            return Ok(Value::Null);
        }
        let legacy = if modern {
            None
        } else if transport.http {
            match transport.protocol_header {
                Some(h) if meta::LEGACY_VERSIONS.contains(&h.trim()) => Some(h.trim().to_owned()),
                Some(_) => None,
                None => Some("2025-03-26".to_owned()),
            }
        } else {
            session
                .legacy()
                .or_else(|| (msg.method == "ping").then(|| meta::LEGACY_VERSIONS[0].to_owned()))
        };
        let rm;
        let era = match &legacy {
            Some(version) => Era::Legacy(version),
            None => {
                rm = meta::validate(id, &msg.params, transport.protocol_header)?;
                Era::Modern(&rm)
            }
        };
        let params = &msg.params;
        match (msg.method.as_str(), era) {
            ("ping", Era::Legacy(_)) => Ok(json!({})),
            ("logging/setLevel", Era::Legacy(_)) => set_log_level(id, params),
            ("server/discover", Era::Modern(rm)) => Ok(self.discover(rm)),
            ("tools/list", _) => self.tools_list(id, params, era),
            ("tools/call", _) => self.tools_call(id, params, era, facts).await,
            ("resources/list", _) => self.resources_list(id, params, era).await,
            ("resources/templates/list", _) => Ok(self.resources_templates(era)),
            ("resources/read", _) => self.resources_read(id, params, era, facts).await,
            ("completion/complete", _) => self.complete(id, params, era).await,
            (other, _) => Err(method_not_found(id, other)),
        }
    }

    fn server_info(&self) -> Value {
        let mut info =
            json!({"name": self.config.server.name, "version": env!("CARGO_PKG_VERSION")});
        if !self.config.server.title.is_empty() {
            info["title"] = Value::String(self.config.server.title.clone());
        }
        info
    }

    fn result_meta(&self, rm: &meta::RequestMeta) -> Value {
        let mut m = rm.trace.clone();
        m.insert(meta::KEY_SERVER_INFO.into(), self.server_info());
        Value::Object(m)
    }

    /// The result `_meta` of `era`: from 2026-07-28 on, the request's trace
    /// keys and the server's info; none before.
    fn era_meta(&self, era: Era<'_>) -> Option<Value> {
        match era {
            Era::Modern(rm) => Some(self.result_meta(rm)),
            Era::Legacy(_) => None,
        }
    }

    fn capabilities(&self) -> Value {
        // Resources are never subscribed to and never announce changes: no
        // file watcher runs inside the sandbox.
        json!({
            "tools": {"listChanged": false},
            "resources": {"listChanged": false, "subscribe": false},
            "completions": {},
        })
    }

    fn legacy_capabilities(&self) -> Value {
        // `logging` is declared so clients may call logging/setLevel; moat's
        // logs go to stderr and it never sends notifications/message.
        let mut caps = self.capabilities();
        caps["logging"] = json!({});
        caps
    }

    fn initialize(&self, msg: &Message, session: &Session, transport: TransportInfo<'_>) -> Value {
        let requested = msg
            .params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let version = if meta::LEGACY_VERSIONS.contains(&requested) {
            requested
        } else {
            meta::LEGACY_VERSIONS[0]
        };
        if !transport.http {
            session.set_legacy(version);
        }
        json!({
            "protocolVersion": version,
            "capabilities": self.legacy_capabilities(),
            "serverInfo": self.server_info(),
            "instructions": self.config.server.instructions,
        })
    }

    fn discover(&self, rm: &meta::RequestMeta) -> Value {
        json!({
            "resultType": "complete",
            "supportedVersions": [meta::MODERN_VERSION],
            "capabilities": self.capabilities(),
            "instructions": self.config.server.instructions,
            "ttlMs": self.config.server.discovery_ttl_ms,
            "cacheScope": "public",
            "_meta": self.result_meta(rm),
        })
    }

    fn tools_list(
        &self,
        id: Option<&Id>,
        params: &Map<String, Value>,
        era: Era<'_>,
    ) -> Result<Value, RpcError> {
        let total = self.registry.len();
        let offset = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => decode_cursor(c).ok_or_else(|| {
                RpcError::new(
                    id.cloned(),
                    code::INVALID_PARAMS,
                    "cursor is not one this server issued",
                )
            })?,
            Some(_) => {
                return Err(RpcError::new(
                    id.cloned(),
                    code::INVALID_PARAMS,
                    "cursor must be a string",
                ));
            }
        };
        if offset > total {
            return Err(RpcError::new(
                id.cloned(),
                code::INVALID_PARAMS,
                "cursor points past the end of the tool list",
            ));
        }
        let page: Vec<Value> = self
            .registry
            .declarations()
            .skip(offset)
            .take(PAGE_SIZE)
            .cloned()
            .collect();
        let mut result = json!({"tools": page});
        if offset + PAGE_SIZE < total {
            result["nextCursor"] = Value::String(encode_cursor(offset + PAGE_SIZE));
        }
        if let Era::Modern(rm) = era {
            result["resultType"] = json!("complete");
            result["ttlMs"] = json!(self.config.server.discovery_ttl_ms);
            result["cacheScope"] = json!("public");
            result["_meta"] = self.result_meta(rm);
        }
        Ok(result)
    }
}

/// The bytes of text in the content blocks of a tool result (`result.content`),
/// the bulk of any large answer: its structured half describes the same
/// items. Other answers hold none worth counting.
#[must_use]
pub fn answer_text_bytes(answer: &Value) -> usize {
    answer
        .get("result")
        .and_then(|r| r.get("content"))
        .and_then(Value::as_array)
        .map_or(0, |blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .map(str::len)
                .sum()
        })
}

/// The audit outcome of a `tools/call` answered with a JSON-RPC error.
#[must_use]
pub fn rpc_outcome(rpc_code: i64) -> &'static str {
    match rpc_code {
        code::INVALID_PARAMS => "invalid_params",
        code::METHOD_NOT_FOUND => "method_not_found",
        code::INVALID_REQUEST => "invalid_request",
        code::PARSE_ERROR => "parse_error",
        code::HEADER_MISMATCH => "header_mismatch",
        code::MISSING_CAPABILITY => "missing_capability",
        code::UNSUPPORTED_VERSION => "unsupported_version",
        _ => "rpc_error",
    }
}

/// Microseconds since `start`, for `duration_us`.
fn micros(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Legacy `logging/setLevel`: a valid syslog level is acknowledged (moat
/// logs to stderr and sends no `notifications/message`); anything else is
/// `-32602`.
fn set_log_level(id: Option<&Id>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    const LEVELS: &[&str] = &[
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    match params.get("level").and_then(Value::as_str) {
        Some(l) if LEVELS.contains(&l) => Ok(json!({})),
        _ => Err(RpcError::new(
            id.cloned(),
            code::INVALID_PARAMS,
            "logging/setLevel needs params.level, one of debug, info, notice, warning, error, critical, alert, emergency",
        )),
    }
}

fn method_not_found(id: Option<&Id>, method: &str) -> RpcError {
    let shown: String = method.chars().take(100).collect();
    RpcError::new(
        id.cloned(),
        code::METHOD_NOT_FOUND,
        format!("unknown method '{shown}'"),
    )
    .with_data(json!({"method": shown}))
}

/// Opaque cursor: URL-safe base64 (no padding) of `offset:<N>`.
#[must_use]
pub fn encode_cursor(offset: usize) -> String {
    base64url(format!("offset:{offset}").as_bytes())
}

/// Decode a cursor this server issued.
#[must_use]
pub fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = unbase64url(cursor)?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let digits = text.strip_prefix("offset:")?;
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn base64url(data: &[u8]) -> String {
    crate::cursor::base64url(data)
}

fn unbase64url(s: &str) -> Option<Vec<u8>> {
    crate::cursor::unbase64url(s, 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors() {
        assert_eq!(encode_cursor(5), "b2Zmc2V0OjU");
        assert_eq!(decode_cursor("b2Zmc2V0OjU"), Some(5));
        for n in [0, 1, 7, 123, 99_999] {
            assert_eq!(decode_cursor(&encode_cursor(n)), Some(n));
        }
        assert_eq!(decode_cursor("AAAA"), None);
        assert_eq!(decode_cursor("not-a-real-cursor"), None);
        assert_eq!(decode_cursor(""), None);
        // Non-ASCII digits are refused, not a crash.
        assert_eq!(decode_cursor(&base64url("offset:٣".as_bytes())), None);
    }
}

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

pub mod json_out;
pub mod jsonrpc;
pub mod meta;
pub mod resources;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::content::{Controls, Findings};
use crate::error::{ToolFailure, describe};
use crate::supervisor::Executor;
use crate::supervisor::admission::Admission;
use crate::tool::Registry;
use crate::tool::{self, render};
use jsonrpc::{Id, Message, RpcError, code};

/// `tools/list` page size: larger than the whole tool list, so the first page
/// holds every tool. Several widely used clients read only the first page of
/// `tools/list`; on a smaller page they would not see `read_file` at all.
/// Cursors are still issued past this size and honoured when given.
pub const PAGE_SIZE: usize = 100;

/// Up to about this many bytes of text, an answer is rendered, redacted,
/// scored and encoded on the thread that received it (some 150 µs of work at
/// most); a larger one is handed to a blocking thread, so the transport's
/// thread keeps answering control messages meanwhile.
pub const INLINE_WORK_BYTES: usize = 64 * 1024;

tokio::task_local! {
    /// Where a transport that can send notifications while a request runs
    /// (stdio: its output lines) takes them; absent, no progress is sent.
    pub static NOTIFY: tokio::sync::mpsc::Sender<Vec<u8>>;
}

/// Longest `progressToken` string accepted; a longer one, or one that is
/// neither a string nor an integer, asks for nothing.
const MAX_PROGRESS_TOKEN_CHARS: usize = 256;

/// The `_meta.progressToken` of a request, when it is a valid one.
fn progress_token(params: &Map<String, Value>) -> Option<Value> {
    let token = params.get("_meta")?.get("progressToken")?;
    match token {
        Value::String(s) if !s.is_empty() && s.chars().count() <= MAX_PROGRESS_TOKEN_CHARS => {
            Some(token.clone())
        }
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(token.clone()),
        _ => None,
    }
}

/// A progress reporter for a request that asked for progress on a
/// transport that can send it: each report becomes one
/// `notifications/progress` line (dropped if the client is not reading).
fn progress_reporter(params: &Map<String, Value>) -> Option<crate::supervisor::OnProgress> {
    let token = progress_token(params)?;
    let tx = NOTIFY.try_with(Clone::clone).ok()?;
    Some(Arc::new(move |files: u64| {
        let note = json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": token,
                "progress": files,
                "message": format!("{files} files (or commits) examined"),
            },
        });
        let _ = tx.try_send(jsonrpc::encode(&note));
    }))
}

/// Per-connection state: the legacy version negotiated by `initialize` on
/// this stdio process, the client it named, and its calls in flight, by id,
/// so that its `notifications/cancelled` can stop them (HTTP keeps none: a
/// request there is cancelled by closing it).
#[derive(Debug, Default)]
pub struct Session {
    legacy: Mutex<Option<String>>,
    client: Mutex<Option<String>>,
    calls: Mutex<std::collections::HashMap<String, Arc<tokio::sync::Notify>>>,
}

/// The key of a request id among a session's calls: its JSON text, so `1`
/// and `"1"` are different requests, as JSON-RPC says.
fn call_key(id: &Value) -> String {
    id.to_string()
}

impl Session {
    /// Note a call in flight under `id`; the returned signal fires when the
    /// client cancels it (a cancel that comes before anyone waits on the
    /// signal is kept).
    pub fn begin_call(&self, id: &jsonrpc::Id) -> Arc<tokio::sync::Notify> {
        let signal = Arc::new(tokio::sync::Notify::new());
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(call_key(&id.to_value()), Arc::clone(&signal));
        }
        signal
    }

    /// The call under `id` is over (answered or cancelled).
    pub fn end_call(&self, id: &jsonrpc::Id) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.remove(&call_key(&id.to_value()));
        }
    }

    /// Cancel the call in flight under `id`, if there is one; a cancel for
    /// an unknown or finished id does nothing. Whether one was found.
    fn cancel(&self, id: &Value) -> bool {
        let signal = self
            .calls
            .lock()
            .ok()
            .and_then(|calls| calls.get(&call_key(id)).cloned());
        signal.is_some_and(|s| {
            s.notify_one();
            true
        })
    }

    fn legacy(&self) -> Option<String> {
        self.legacy.lock().ok().and_then(|g| g.clone())
    }

    fn set_legacy(&self, v: &str) {
        if let Ok(mut g) = self.legacy.lock() {
            *g = Some(v.to_owned());
        }
    }

    fn client(&self) -> Option<String> {
        self.client.lock().ok().and_then(|g| g.clone())
    }

    fn set_client(&self, label: String) {
        if let Ok(mut g) = self.client.lock() {
            *g = Some(label);
        }
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    Modern,
    Legacy,
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
    pub fn new(config: Arc<Config>, executor: Executor) -> Result<Server, String> {
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
                    crate::content::scan::Scanner::warm_up();
                }
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
    ) -> Option<Value> {
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
                facts.bytes = e.to_value().as_object().map_or(0, json_out::encoded_len);
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
                Some(jsonrpc::success(&id, result))
            }
            (Some(_), Err(e)) => {
                tracing::warn!(method = %method, client, code = e.code, error_message = %e.message, duration_us = us, "rpc.error");
                Some(e.to_value())
            }
        }
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
        if let Some(version) = legacy {
            return match msg.method.as_str() {
                "ping" => Ok(json!({})),
                "logging/setLevel" => set_log_level(id, &msg.params),
                "tools/list" => self.tools_list(id, &msg.params, Era::Legacy, None),
                "tools/call" => {
                    self.tools_call(id, &msg.params, Era::Legacy, None, &version, facts)
                        .await
                }
                "resources/list" => {
                    self.resources_list(id, &msg.params, Era::Legacy, None, &version)
                        .await
                }
                "resources/templates/list" => Ok(self.resources_templates(Era::Legacy, None)),
                "resources/read" => {
                    self.resources_read(id, &msg.params, Era::Legacy, None, &version, facts)
                        .await
                }
                "completion/complete" => {
                    self.complete(id, &msg.params, Era::Legacy, None, &version)
                        .await
                }
                other => Err(method_not_found(id, other)),
            };
        }
        let rm = meta::validate(id, &msg.params, transport.protocol_header)?;
        match msg.method.as_str() {
            "server/discover" => Ok(self.discover(&rm)),
            "tools/list" => self.tools_list(id, &msg.params, Era::Modern, Some(&rm)),
            "tools/call" => {
                self.tools_call(
                    id,
                    &msg.params,
                    Era::Modern,
                    Some(&rm),
                    meta::MODERN_VERSION,
                    facts,
                )
                .await
            }
            "resources/list" => {
                self.resources_list(
                    id,
                    &msg.params,
                    Era::Modern,
                    Some(&rm),
                    meta::MODERN_VERSION,
                )
                .await
            }
            "resources/templates/list" => Ok(self.resources_templates(Era::Modern, Some(&rm))),
            "resources/read" => {
                self.resources_read(
                    id,
                    &msg.params,
                    Era::Modern,
                    Some(&rm),
                    meta::MODERN_VERSION,
                    facts,
                )
                .await
            }
            "completion/complete" => {
                self.complete(
                    id,
                    &msg.params,
                    Era::Modern,
                    Some(&rm),
                    meta::MODERN_VERSION,
                )
                .await
            }
            other => Err(method_not_found(id, other)),
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
        era: Era,
        rm: Option<&meta::RequestMeta>,
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
        if let (Era::Modern, Some(rm)) = (era, rm) {
            result["resultType"] = json!("complete");
            result["ttlMs"] = json!(self.config.server.discovery_ttl_ms);
            result["cacheScope"] = json!("public");
            result["_meta"] = self.result_meta(rm);
        }
        Ok(result)
    }

    async fn tools_call(
        &self,
        id: Option<&Id>,
        params: &Map<String, Value>,
        era: Era,
        rm: Option<&meta::RequestMeta>,
        version: &str,
        facts: &mut crate::audit::Facts,
    ) -> Result<Value, RpcError> {
        let client = facts.client.clone();
        let client = client.as_str();
        let invalid = |m: String| RpcError::new(id.cloned(), code::INVALID_PARAMS, m);
        let name = match params.get("name") {
            Some(Value::String(n)) if !n.is_empty() => n.as_str(),
            _ => {
                return Err(invalid(
                    "tools/call needs params.name, a non-empty string".into(),
                ));
            }
        };
        let empty = Value::Object(Map::new());
        let args = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(v @ Value::Object(_)) => v,
            Some(_) => return Err(invalid("params.arguments must be an object".into())),
        };
        let Some((tool, declaration)) = self.registry.get(name) else {
            return Err(invalid(format!(
                "unknown tool '{}'",
                crate::error::quote(name).trim_matches('\'')
            )));
        };
        let limits = &self.config.sandbox.limits;
        let args_map = args.as_object().cloned().unwrap_or_default();
        // A cursor is an argument too: one that is not this server's for
        // this query is refused like any argument that fails the schema.
        let paged = self
            .registry
            .validate_input(declaration, args)
            .and_then(|()| tool.to_paged_request(&args_map, limits));
        if let Some(problem) = paged.as_ref().err().cloned() {
            if !validation_is_tool_error(version) {
                return Err(invalid(problem));
            }
            // 2025-11-25 and later (SEP-1303): arguments that fail the input
            // schema are a tool execution error the model can correct, still
            // refused before anything runs.
            let refusal = crate::error::Refusal {
                code: "invalid_arguments",
                message: format!("{problem}."),
                remedy: "Call the tool again with arguments that match its inputSchema.".into(),
            };
            tracing::info!(
                tool = name,
                client,
                error = "invalid_arguments",
                content_level = "",
                redactions = 0u64,
                duration_us = 0u64,
                "tool.call"
            );
            let meta = match (era, rm) {
                (Era::Modern, Some(rm)) => Some(self.result_meta(rm)),
                _ => None,
            };
            let (result, findings) = self.controls.failure(&refusal);
            let result = complete(result, meta);
            facts.outcome = std::borrow::Cow::Borrowed(refusal.code);
            facts.bytes = json_out::encoded_len(&result);
            facts.findings = findings;
            return Ok(Value::Object(result));
        }
        let Ok(request) = paged else {
            return Err(invalid("the arguments could not be read".into()));
        };
        let budget = Duration::from_millis(limits.tool_timeout_ms);
        let path_arg = args_map.get("path").and_then(Value::as_str);
        let started = Instant::now();
        // Only here, after validation, does a call take room: a call refused
        // for its arguments, and every other method, never waits on one.
        // The place is held until the answer is rendered and measured, so
        // the admission counts every call that still costs memory.
        let ticket = self.admission.try_admit();
        let in_flight = ticket.as_ref().map(|_| crate::metrics::InFlight::enter());
        let outcome = match &ticket {
            Some(_) => {
                let progress = progress_reporter(params);
                self.executor.run(request.clone(), budget, progress).await
            }
            None => Err(ToolFailure::Busy {
                admitted: self.admission.admitted(),
            }),
        };
        let rendering = self.rendering.acquire().await.ok();
        // The revision's result fields, added before the answer is measured:
        // the cap is on the answer as sent.
        let modern_meta = match (era, rm) {
            (Era::Modern, Some(rm)) => Some(self.result_meta(rm)),
            _ => None,
        };
        let finish = |(result, findings): (Map<String, Value>, Findings), meta: Option<Value>| {
            let result = complete(result, meta);
            let size = json_out::encoded_len(&result);
            (result, size, findings)
        };
        let answered = match outcome {
            Ok(Ok(out)) => {
                // Rendering, redaction, scanning and measuring a large answer
                // are CPU work: off the runtime's threads, in one hand-off,
                // so that the transports keep answering control messages
                // meanwhile. A small answer is rendered here: handing it to
                // a thread and back costs more than the work itself.
                let rendered = if tool::work_estimate(&out) <= INLINE_WORK_BYTES {
                    Ok(finish(
                        self.controls
                            .success(tool.fence_label(), render(&request, out, &self.root_name)),
                        modern_meta.clone(),
                    ))
                } else {
                    let controls = Arc::clone(&self.controls);
                    let root = self.root_name.clone();
                    let req = request.clone();
                    let meta = modern_meta.clone();
                    tokio::task::spawn_blocking(move || {
                        finish(
                            controls.success(tool.fence_label(), render(&req, out, &root)),
                            meta,
                        )
                    })
                    .await
                };
                rendered.map_err(|_| ToolFailure::WorkerFailed {
                    why: "could not have its answer rendered",
                })
            }
            Ok(Err(wire)) => Err(ToolFailure::Wire(wire)),
            Err(failure) => Err(failure),
        };
        let ((mut result, size, findings), code) = match answered {
            Ok(answer) => (answer, None),
            Err(failure) => {
                let refusal = describe(&failure, path_arg, &self.root_name);
                (
                    finish(self.controls.failure(&refusal), modern_meta.clone()),
                    Some(refusal.code),
                )
            }
        };
        // What an operator alerts on: the injection level of the content
        // returned ("" for a tool that returns none) and how much was redacted.
        let content_level = findings.content_level;
        let redactions = findings.redactions;
        let duration_us = micros(started);
        facts.outcome = std::borrow::Cow::Borrowed(code.unwrap_or("ok"));
        facts.bytes = size;
        facts.findings = findings;
        if self.config.observability.log_tool_arguments {
            let names: Vec<&str> = args_map.keys().map(String::as_str).collect();
            tracing::info!(tool = name, client, error = code.unwrap_or(""), content_level, redactions, arguments = ?names, duration_us, "tool.call");
        } else {
            tracing::info!(
                tool = name,
                client,
                error = code.unwrap_or(""),
                content_level,
                redactions,
                duration_us,
                "tool.call"
            );
        }
        // The cap is on the answer as sent: escaping can make it several
        // times the size of the content it carries.
        let limit = self.config.server.max_answer_bytes;
        drop(rendering);
        drop(ticket);
        drop(in_flight);
        if size > limit {
            tracing::warn!(tool = name, size, limit, "tool.answer_too_large");
            let refusal = describe(
                &ToolFailure::AnswerTooLarge { size, limit },
                path_arg,
                &self.root_name,
            );
            let (refused, findings) = self.controls.failure(&refusal);
            result = complete(refused, modern_meta);
            facts.outcome = std::borrow::Cow::Borrowed(refusal.code);
            facts.bytes = json_out::encoded_len(&result);
            facts.findings = findings;
        }
        Ok(Value::Object(result))
    }
}

/// A tool result with the fields its revision adds (`resultType` and
/// `_meta`, from 2026-07-28 on) when `meta` is given.
fn complete(mut result: Map<String, Value>, meta: Option<Value>) -> Map<String, Value> {
    if let Some(meta) = meta {
        result.insert("resultType".into(), json!("complete"));
        result.insert("_meta".into(), meta);
    }
    result
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

/// Whether arguments that fail the input schema are answered as a tool error
/// (`isError: true`, revisions 2025-11-25 and later, SEP-1303) rather than a
/// JSON-RPC `-32602` (earlier revisions, whose tools spec lists invalid
/// arguments among protocol errors). Revision strings are ISO dates, so they
/// order as text.
#[must_use]
pub fn validation_is_tool_error(version: &str) -> bool {
    version >= "2025-11-25"
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

//! Streamable HTTP transport on hyper: `POST /mcp` for both eras, and the
//! probes `GET /healthz` and `GET /readyz`.
//!
//! # Order of checks on `POST /mcp`
//!
//! 0. **Headers the gate reads**, on every request and path (the probes
//!    too), before routing, the token and the body: an `Origin`, `Host` or
//!    `Authorization` sent more than once, or whose value is not one
//!    well-formed item (a control or non-ASCII byte; a space inside an
//!    `Origin`; a `Host` that is not `host[:port]`), is 400 (`duplicated
//!    Host header`, `malformed Origin header`, …). So is an absolute-form
//!    target (`POST http://name/mcp`) whose authority is not `host[:port]`
//!    or differs from `Host` (ASCII case aside); that authority then stands
//!    for `Host` in step 1. 400, not 403: such a request is not judged at
//!    all, since an allow-list that reads only the first copy, or takes what
//!    it cannot decode as absent, fails open. No browser sends one, so the
//!    answer is no token oracle either.
//! 1. **Origin** (403) — first, so the endpoint is not a token oracle for a
//!    browser page; then **Host** (403, the DNS-rebinding defence).
//! 2. **Bearer token** (401 + `WWW-Authenticate: Bearer`), constant time;
//!    or, with `http.auth = "oauth"`, an OAuth access token ([`oauth`]:
//!    401 or 403 with RFC 6750/9728 challenges). With OAuth, `GET` of the
//!    protected-resource metadata ([`oauth::METADATA_PATH`], also with
//!    `/mcp` after it) is answered without a token, like the probes.
//!    Beyond `http.auth_failures_per_second` refusals, a refusal (and with
//!    OAuth, the check of a token not admitted before) is held for
//!    `http.auth_failure_pause_ms` first ([`admit`]).
//! 3. **Size**: `Content-Length` over the cap (413) before reading, then the
//!    streamed bytes (413 the moment they exceed it).
//! 4. **Parse**: bad JSON 400/-32700; a batch 400/-32600; envelope 400/-32600.
//! 5. **Headers** of the 2026-07-28 revision: `MCP-Protocol-Version`,
//!    `Mcp-Method` and `Mcp-Name` must agree with the body (400/-32020).
//! 6. Dispatch; a notification gets 202 and no body; errors map to statuses
//!    (-32601 → 404, -32603 → 500, other protocol errors → 400).
//!
//! # Bounded under load
//!
//! At most `http.max_connections` connections; when all are taken, the one
//! that has waited longest for a request head is closed to admit the new
//! one ([`crate::slots`]), so stalled clients cannot keep real ones out. Headers
//! must arrive within `http.header_timeout_ms` and a body within
//! `http.body_timeout_ms`, so a slow or stalled client frees its slot.
//! A body is read in full before anything else is taken, so stalled bodies
//! hold only their own connections. Only a request that runs a tool
//! ([`jsonrpc::runs_a_tool`]: `tools/call`, `resources/read`,
//! `resources/list`, `completion/complete`) takes a tool slot: at most `http.max_in_flight` of them at once, and the
//! broker-wide admission (workers plus `sandbox.max_queued_calls`), beyond
//! which the answer is 503 with `Retry-After`; `initialize`, `ping`,
//! `tools/list`, `server/discover`, notifications and the probes never wait
//! for one. `/readyz` answers 503 with `"saturated": true` while a new tool
//! call would be refused, so a balancer routes elsewhere. Answers waiting for
//! their clients are bounded per connection by `server.max_answer_bytes` and
//! `http.write_timeout_ms`, and in total by `http.max_queued_bytes`
//! ([`output`]). SIGTERM/SIGINT stop accepting, let
//! in-flight requests finish, reap the workers and exit 0.

mod admit;
pub mod body;
mod gate;
use crate::bearer as auth;
pub mod oauth;
pub mod origin;
pub mod output;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tracing::Instrument as _;

use crate::mcp::jsonrpc::{self, RpcError, code};
use crate::mcp::{Server, Session, TransportInfo, meta};

use body::Body;
use gate::{accepts_event_stream, check_mirrored_headers, header_str, read_gate};

struct State {
    server: Arc<Server>,
    token: Option<auth::Token>,
    /// The OAuth checker (`http.auth = "oauth"`).
    oauth: Option<Arc<oauth::Validator>>,
    /// The budget of authentication refusals answered at once.
    pacer: admit::Pacer,
    policy: origin::Policy,
    /// Tool calls in flight over HTTP (`http.max_in_flight`).
    in_flight: Arc<Semaphore>,
    max_body: u64,
    body_timeout: Duration,
    /// Answer bytes held for clients, over all connections.
    answers: Arc<output::Total>,
    /// Request body bytes held while they are read, over all connections.
    bodies: Arc<output::Total>,
    write_timeout: Duration,
}

/// Serve HTTP until SIGTERM/SIGINT. Returns the exit code.
pub async fn serve(server: Arc<Server>) -> i32 {
    let cfg = server.config().http.clone();
    let listener = match TcpListener::bind((cfg.host.as_str(), cfg.port)).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(host = %cfg.host, port = cfg.port, error = %e, "http.bind_failed");
            return 1;
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            tracing::error!(error = %e, "http.bind_failed");
            return 1;
        }
    };
    serve_on(server, listener, addr, shutdown_signal()).await
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            std::future::pending::<()>().await;
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serve on an already-bound listener until `shutdown` completes.
pub async fn serve_on(
    server: Arc<Server>,
    listener: TcpListener,
    addr: SocketAddr,
    shutdown: impl std::future::Future<Output = ()>,
) -> i32 {
    let cfg = server.config().http.clone();
    let policy = origin::Policy::new(&cfg.allowed_origins, &cfg.allowed_hosts, addr);
    if !policy.checks_host() {
        tracing::warn!(
            "http.host_unchecked: bound to every interface with no http.allowed_hosts; the Host header is not checked"
        );
    }
    if cfg.auth == crate::config::HttpAuth::None {
        tracing::warn!(
            "http.no_auth: MOAT_HTTP__BEARER_TOKEN is empty, the endpoint accepts any caller"
        );
    }
    // The keys are loaded before the first request is taken: a JWKS that
    // cannot be read or fetched refuses start-up.
    let oauth = match &cfg.oauth {
        None => None,
        Some(o) => match oauth::Validator::load(o).await {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => {
                tracing::error!(error = %e, "http.oauth_keys_unavailable");
                return 1;
            }
        },
    };
    tracing::info!(addr = %addr, "http.listening");
    let state = Arc::new(State {
        token: (cfg.auth == crate::config::HttpAuth::Bearer)
            .then(|| auth::Token::new(&cfg.bearer_token)),
        oauth,
        pacer: admit::Pacer::new(
            cfg.auth_failures_per_second,
            Duration::from_millis(cfg.auth_failure_pause_ms),
        ),
        policy,
        in_flight: Arc::new(Semaphore::new(cfg.max_in_flight)),
        max_body: cfg.max_request_bytes,
        body_timeout: Duration::from_millis(cfg.body_timeout_ms),
        answers: output::Total::new(cfg.max_queued_bytes),
        bodies: output::Total::new(cfg.max_queued_bytes),
        write_timeout: Duration::from_millis(cfg.write_timeout_ms),
        server: Arc::clone(&server),
    });
    let slots = crate::slots::Slots::new(cfg.max_connections);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(cfg.header_timeout_ms))
        .max_buf_size(64 * 1024)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "http.accept_failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Every slot taken: one connection is shed for this one (see
        // `slots`), or, if all are mid-request, this one waits.
        let (permit, slot) = tokio::select! {
            admitted = slots.admit() => admitted,
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let waiting = Arc::clone(slots.waiting());
        let st = Arc::clone(&state);
        let outbox = Arc::new(output::Outbox::new(
            Arc::clone(&state.answers),
            Arc::clone(&state.bodies),
        ));
        let (svc_slot, svc_waiting) = (Arc::clone(&slot), Arc::clone(&waiting));
        let svc_outbox = Arc::clone(&outbox);
        let service = service_fn(move |req| {
            let st = Arc::clone(&st);
            let (slot, waiting) = (Arc::clone(&svc_slot), Arc::clone(&svc_waiting));
            let outbox = Arc::clone(&svc_outbox);
            async move {
                waiting.busy(&slot);
                let conn = admit::Conn {
                    slot: &slot,
                    waiting: &waiting,
                    outbox: &outbox,
                };
                let mut response = handle(&st, req, &conn)
                    .instrument(crate::logging::request_span())
                    .await;
                if response.body().is_stream() {
                    // A stream counts its events as it makes them, and the
                    // connection waits for its next head once it has ended.
                    response
                        .body_mut()
                        .attach(outbox, Box::new(move || waiting.wait(&slot)));
                } else {
                    // Counted (if it was not when it was made) until hyper
                    // drops its buffer.
                    response.body_mut().count_on(&outbox);
                    waiting.wait(&slot);
                }
                Ok::<_, Infallible>(response)
            }
        });
        let io = output::Guarded::new(stream, outbox, state.write_timeout);
        let conn = builder.serve_connection(TokioIo::new(io), service);
        let conn = graceful.watch(conn);
        tokio::spawn(crate::slots::Slots::serve(waiting, slot, permit, conn));
    }
    drop(listener);
    tracing::info!("http.draining");
    if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("http.drain_timeout");
    }
    server.executor().shutdown().await;
    tracing::info!("http.stopped");
    0
}

fn body_len(r: &Response<Body>) -> u64 {
    hyper::body::Body::size_hint(r.body()).exact().unwrap_or(0)
}

fn busy(message: &str) -> Response<Body> {
    let mut r = plain_error(StatusCode::SERVICE_UNAVAILABLE, message);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    bytes_response(status, jsonrpc::encode(body))
}

fn bytes_response(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut r = Response::new(Body::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn plain_error(status: StatusCode, message: &str) -> Response<Body> {
    json_response(status, &json!({ "error": message }))
}

fn rpc_status(code: i64) -> StatusCode {
    match code {
        code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        code::PARSE_ERROR
        | code::INVALID_REQUEST
        | code::INVALID_PARAMS
        | code::HEADER_MISMATCH
        | code::MISSING_CAPABILITY
        | code::UNSUPPORTED_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn rpc_error_response(e: &RpcError) -> Response<Body> {
    reply_response(rpc_status(e.code), &e.to_reply())
}

/// A JSON-RPC answer, its id written as it was sent.
fn reply_response(status: StatusCode, reply: &jsonrpc::Reply) -> Response<Body> {
    bytes_response(status, reply.encode())
}

/// A request refused before it reached the server core, with a JSON-RPC
/// error (bad JSON, a batch, a bad envelope, 2026-07-28 headers that do not
/// match the body): logged once as `rpc.error`, as the core logs its own.
fn rpc_refused(e: &RpcError, method: &str) -> Response<Body> {
    if let Some(id) = &e.id {
        crate::logging::record_rpc_id(id);
    }
    let status = rpc_status(e.code);
    tracing::warn!(
        method,
        status = status.as_u16(),
        code = e.code,
        error_message = %e.message,
        "rpc.error"
    );
    rpc_error_response(e)
}

/// A request refused with an HTTP status and no JSON-RPC error: logged
/// once as `http.refused` with the status and a fixed `reason`.
fn refused(status: StatusCode, reason: &'static str, message: &str) -> Response<Body> {
    if matches!(
        status,
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
    ) {
        tracing::info!(status = status.as_u16(), reason, "http.refused");
    } else {
        tracing::warn!(status = status.as_u16(), reason, "http.refused");
    }
    plain_error(status, message)
}

/// 503 with `Retry-After`, logged as [`refused`].
fn refused_busy(reason: &'static str, message: &str) -> Response<Body> {
    tracing::warn!(status = 503u16, reason, "http.refused");
    busy(message)
}

/// Why a request body was not read.
enum BodyError {
    /// Over `http.max_request_bytes`.
    TooLarge,
    /// The connection failed.
    Unreadable,
    /// The bodies being read would pass `http.max_queued_bytes`.
    Busy,
}

/// Read a request body of at most `max` bytes, counting what has arrived
/// on `outbox` as it arrives; the body, and its count (given back when
/// dropped).
async fn read_body(
    mut body: Incoming,
    max: u64,
    outbox: &Arc<output::Outbox>,
) -> Result<(Vec<u8>, Option<output::Held>), BodyError> {
    let mut buf = Vec::new();
    let mut held: Option<output::Held> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Unreadable)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let n = data.len() as u64;
        if buf.len() as u64 + n > max {
            return Err(BodyError::TooLarge);
        }
        match &mut held {
            None => held = Some(outbox.try_hold_body(n).ok_or(BodyError::Busy)?),
            Some(h) => {
                if !h.try_grow(n) {
                    return Err(BodyError::Busy);
                }
            }
        }
        buf.extend_from_slice(&data);
    }
    Ok((buf, held))
}

async fn handle(st: &State, req: Request<Incoming>, conn: &admit::Conn<'_>) -> Response<Body> {
    let gate = match read_gate(req.headers(), req.uri()) {
        Ok(g) => g,
        Err(e) => {
            if e.header() == "authorization" {
                crate::metrics::auth_failure("authorization_malformed");
            }
            tracing::warn!(
                status = 400u16,
                header = e.header(),
                reason = e.reason(),
                "http.header_refused"
            );
            return plain_error(StatusCode::BAD_REQUEST, e.message());
        }
    };
    let path = req.uri().path();
    match (req.method(), path) {
        (&Method::GET, "/healthz") => {
            return json_response(StatusCode::OK, &json!({"status": "ok"}));
        }
        (&Method::GET, "/readyz") => return readyz(st),
        (&Method::GET, p) if st.oauth.as_ref().is_some_and(|o| o.is_metadata_path(p)) => {
            if let Some(o) = &st.oauth {
                return json_response(StatusCode::OK, o.metadata());
            }
        }
        (_, "/mcp") => {}
        _ => return refused(StatusCode::NOT_FOUND, "not_found", "not found"),
    }
    if req.method() != Method::POST {
        let mut r = refused(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "method not allowed: use POST",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    let headers = req.headers();
    if !st.policy.origin_allowed(gate.origin) {
        tracing::warn!(
            status = 403u16,
            origin = gate.origin.unwrap_or(""),
            "http.origin_rejected"
        );
        crate::metrics::auth_failure("origin_rejected");
        return plain_error(StatusCode::FORBIDDEN, "origin not allowed");
    }
    if !st.policy.host_allowed(gate.host) {
        tracing::warn!(
            status = 403u16,
            host = gate.host.unwrap_or(""),
            "http.host_rejected"
        );
        crate::metrics::auth_failure("host_rejected");
        return plain_error(StatusCode::FORBIDDEN, "host not allowed");
    }
    let subject = match admit::admit(st, gate.authorization, conn).await {
        Ok(subject) => subject,
        Err(refusal) => return refusal,
    };
    let subject = subject.as_deref();
    let too_large = || {
        refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            &format!("request larger than the {}-byte limit", st.max_body),
        )
    };
    if let Some(len) = header_str(headers, "content-length") {
        match len.trim().parse::<u64>() {
            Ok(n) if n > st.max_body => return too_large(),
            Ok(_) => {}
            Err(_) => {
                return refused(
                    StatusCode::BAD_REQUEST,
                    "bad_content_length",
                    "invalid Content-Length",
                );
            }
        }
    }
    // The body is read before anything is taken: a client that stalls its
    // body holds only its own connection, under its own size limit and
    // timeout, never a tool slot. While it arrives, the connection may be
    // shed for a new one (the oldest body first, see `slots`), and the
    // bytes it has sent are counted against `http.max_queued_bytes`.
    let mirrored = gate::Mirrored::read(headers);
    let protocol_header = mirrored.protocol.value().map(str::to_owned);
    let accepts_stream = accepts_event_stream(headers);
    conn.waiting.reading_body(conn.slot);
    let read = tokio::time::timeout(
        st.body_timeout,
        read_body(req.into_body(), st.max_body, conn.outbox),
    )
    .await;
    conn.waiting.busy(conn.slot);
    let (body, body_held) = match read {
        Ok(Ok(read)) => read,
        Ok(Err(BodyError::TooLarge)) => return too_large(),
        Ok(Err(BodyError::Unreadable)) => {
            return refused(
                StatusCode::BAD_REQUEST,
                "body_unreadable",
                "the request body could not be read",
            );
        }
        Ok(Err(BodyError::Busy)) => {
            // What costs is the bodies already held: the one that has been
            // arriving longest makes room for the next.
            conn.waiting
                .shed_oldest_of(crate::slots::Class::ReadingBody);
            return refused_busy(
                "bodies_held",
                "server busy: too many request bytes are being read",
            );
        }
        Err(_) => {
            return refused(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                "the request body did not arrive in time",
            );
        }
    };
    let parsed = jsonrpc::parse(&body);
    let msg = match parsed {
        Ok(m) => m,
        Err(e) => return rpc_refused(&e, &jsonrpc::method_hint(&body)),
    };
    drop((body, body_held));
    if let Some(e) = check_mirrored_headers(&msg, &mirrored) {
        let response = rpc_refused(&e, &msg.method);
        st.server.audit_refused(
            &msg,
            subject,
            crate::mcp::rpc_outcome(e.code),
            body_len(&response),
        );
        return response;
    }
    if jsonrpc::runs_nothing(&msg) {
        // A request sent as a notification: it cannot be answered, so it is
        // not run; the HTTP answer to a notification not accepted is 400.
        let transport = TransportInfo {
            protocol_header: mirrored.protocol.value(),
            http: true,
            subject,
        };
        let e = st
            .server
            .refuse_notification(&msg, &Session::default(), transport);
        return rpc_error_response(&e);
    }
    let is_notification = msg.is_notification();
    // Only what runs a tool takes a slot; every other method is answered at
    // once however many tool calls are in flight.
    let takes_slot = jsonrpc::runs_a_tool(&msg);
    let permit = if takes_slot {
        if st.answers.over() {
            let response = refused_busy(
                "answers_queued",
                "server busy: too many answers are waiting for their clients",
            );
            st.server
                .audit_refused(&msg, subject, "busy", body_len(&response));
            return response;
        }
        match Arc::clone(&st.in_flight).try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                let response =
                    refused_busy("in_flight", "server busy: too many tool calls in flight");
                st.server
                    .audit_refused(&msg, subject, "busy", body_len(&response));
                return response;
            }
        }
    } else {
        None
    };
    let reply = if takes_slot && accepts_stream {
        match call_streamed(st, msg, protocol_header, subject, permit).await {
            Ok(reply) => reply,
            Err(stream) => return stream,
        }
    } else {
        let session = Session::default();
        let transport = TransportInfo {
            protocol_header: protocol_header.as_deref(),
            http: true,
            subject,
        };
        let reply = st.server.handle(msg, &session, transport).await;
        drop(permit);
        reply
    };
    match reply {
        None if is_notification => {
            let mut r = Response::new(Body::full(Bytes::new()));
            *r.status_mut() = StatusCode::ACCEPTED;
            r
        }
        None => refused(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no_response",
            "no response",
        ),
        Some(reply) => {
            let status = reply.error_code().map_or(StatusCode::OK, rpc_status);
            if !takes_slot {
                return reply_response(status, &reply);
            }
            // Refused by the admission (every worker busy, the wait queue
            // full): the call did not run; a balancer should retry elsewhere.
            if reply
                .body()
                .pointer("/result/structuredContent/error")
                .and_then(Value::as_str)
                == Some("busy")
            {
                return refused_busy(
                    "workers_busy",
                    "server busy: every worker is busy and the wait queue is full",
                );
            }
            counted_answer(status, reply, conn.outbox).await
        }
    }
}

/// A tool call's answer, counted before it is encoded: one that would take
/// the answers held for clients over `http.max_queued_bytes` is dropped for
/// a 503 without being encoded. Encoding a large answer is CPU work, done
/// off the runtime's threads.
async fn counted_answer(
    status: StatusCode,
    reply: jsonrpc::Reply,
    outbox: &Arc<output::Outbox>,
) -> Response<Body> {
    let small = crate::mcp::answer_text_bytes(reply.body()) <= crate::mcp::INLINE_WORK_BYTES / 2;
    let outbox = Arc::clone(outbox);
    let encode = move || -> Result<Bytes, u64> {
        let len = reply.encoded_len();
        let held = outbox.try_hold(len).ok_or(len)?;
        // Written into a buffer of exactly its size: never copied as it grows.
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        reply.encode_into(&mut bytes);
        Ok(output::counted(bytes, held))
    };
    let encoded = if small {
        encode()
    } else {
        match tokio::task::spawn_blocking(encode).await {
            Ok(r) => r,
            Err(_) => return plain_error(StatusCode::INTERNAL_SERVER_ERROR, "no response"),
        }
    };
    match encoded {
        Ok(bytes) => {
            let mut r = bytes_response(status, Vec::new());
            *r.body_mut() = Body::counted(bytes);
            r
        }
        Err(len) => {
            tracing::warn!(
                status = 503u16,
                reason = "answer_dropped",
                bytes = len,
                "http.refused"
            );
            busy("server busy: too many answers are waiting for their clients")
        }
    }
}

/// Run a tool call for a client that accepts an event stream (see
/// [`body`]): `Ok` with the answer when it is ready before any
/// notification, to be sent as one JSON document; `Err` with the
/// `text/event-stream` response once a notification comes first.
async fn call_streamed(
    st: &State,
    msg: jsonrpc::Message,
    protocol_header: Option<String>,
    subject: Option<&str>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<Option<jsonrpc::Reply>, Response<Body>> {
    enum First {
        Answer(Option<jsonrpc::Reply>),
        Note(Vec<u8>),
    }
    let (tx, mut notes) = tokio::sync::mpsc::channel(body::NOTIFICATION_QUEUE);
    let id = msg.id.clone();
    let server = Arc::clone(&st.server);
    let subject = subject.map(str::to_owned);
    let mut call = body::Call::spawn(
        crate::mcp::NOTIFY.scope(
            tx,
            async move {
                let _permit = permit;
                let session = Session::default();
                let transport = TransportInfo {
                    protocol_header: protocol_header.as_deref(),
                    http: true,
                    subject: subject.as_deref(),
                };
                server.handle(msg, &session, transport).await
            }
            // The call's logs and audit event belong to this request's span.
            .instrument(tracing::Span::current()),
        ),
    );
    let first = tokio::select! {
        biased;
        reply = &mut call => First::Answer(reply),
        Some(note) = notes.recv() => First::Note(note),
    };
    match first {
        First::Answer(reply) => Ok(reply),
        First::Note(note) => {
            let events = body::EventStream::new(&note, notes, call, id);
            let mut r = Response::new(Body::Stream(Box::new(events)));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            Err(r)
        }
    }
}

fn readyz(st: &State) -> Response<Body> {
    let config = st.server.config();
    let workspace_present = config.sandbox.workspace.is_dir();
    let executor = st.server.executor();
    let report = executor.sandbox_report();
    let (workers_ok, mode) = if executor.is_confined() {
        // Not "a worker once started": a replica whose workers can no longer
        // start (git or a library replaced under it) must stop taking traffic.
        (!executor.failing_to_start(), "confined")
    } else {
        (true, "in-process")
    };
    // Saturated: a new tool call would be refused (every tool slot taken, or
    // too many answers waiting for their clients). A balancer should route
    // elsewhere until it clears; liveness (/healthz) is unaffected.
    let admission = st.server.admission();
    let saturated =
        admission.saturated() || st.in_flight.available_permits() == 0 || st.answers.over();
    let ready = workspace_present && workers_ok && !saturated;
    let body = json!({
        "status": if ready { "ready" } else { "unready" },
        "saturated": saturated,
        "tool_calls": {
            "admitted": admission.admitted(),
            "capacity": admission.capacity(),
        },
        "queued_answer_bytes": st.answers.held(),
        "request_body_bytes": st.bodies.held(),
        "workspace_present": workspace_present,
        "tools": st.server.registry().len(),
        "protocol_versions": std::iter::once(meta::MODERN_VERSION).chain(meta::LEGACY_VERSIONS.iter().copied()).collect::<Vec<_>>(),
        "sandbox": {
            "mode": mode,
            "landlock_abi": moat_sandbox::landlock_abi(),
            "seccomp": report.as_ref().is_some_and(|r| r.seccomp),
            "workers_ready": workers_ok,
        }
    });
    json_response(
        if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        &body,
    )
}

//! Prometheus metrics, served on a listener of their own
//! (`observability.metrics_addr`), apart from the MCP transports.
//!
//! Every label value is one of a fixed set known to this build: a tool
//! name from the registry (any other name is `unknown`), an error code of
//! the broker's own, a JSON-RPC method this server implements (any other is
//! `other`), a redaction rule name of [`crate::redact::Redactor::rule_names`], a content
//! level, a fixed reason. No path, argument value, client label or
//! subject ever becomes a label, so what a client sends cannot grow the
//! number of series.
//!
//! `GET /metrics` answers the Prometheus text format 0.0.4; any other path
//! is 404 and any other method 405. With `observability.metrics_token` set
//! it needs `Authorization: Bearer <token>` (compared in constant time, as
//! the HTTP transport's token), else 401.
//!
//! The listener admits connections as the MCP endpoint does
//! ([`crate::slots`]): at most [`MAX_CONNECTIONS`] at once, and when
//! they are all taken, one is shed for the new one, idle connections that
//! never carried an admitted scrape first. A handful of idle connections
//! cannot lock the scraper out.

use std::borrow::Cow;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use tokio::net::TcpListener;

use crate::audit::Facts;
use crate::bearer;
use crate::tool::Tool;

type Labels = Vec<(&'static str, &'static str)>;
type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

/// Bucket bounds of the operation duration, in seconds: those the
/// OpenTelemetry MCP semantic conventions advise for
/// `mcp.server.operation.duration`.
const DURATION_BUCKETS: &[f64] = &[
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The JSON-RPC methods counted by name; any other is `other`.
pub const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
];

/// Why the HTTP transport refused a request at its gate (the
/// `moat_http_auth_failures_total` reasons).
pub const AUTH_FAILURE_REASONS: &[&str] = &[
    "token_missing",
    "token_rejected",
    "authorization_malformed",
    "origin_rejected",
    "host_rejected",
    // `http.auth = "oauth"` (see `http::oauth`).
    "too_large",
    "malformed",
    "alg",
    "unknown_kid",
    "bad_signature",
    "expired",
    "not_yet_valid",
    "bad_issuer",
    "bad_audience",
    "insufficient_scope",
];

/// Worker process events (the `moat_worker_events_total` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(unix),
    allow(
        dead_code,
        reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
    )
)]
pub enum WorkerEvent {
    /// A worker started and reported ready.
    Started,
    /// A worker could not be started.
    SpawnFailed,
    /// A call outlived its budget; its worker is killed and replaced.
    TimedOut,
    /// A worker was killed and a new one asked for (it failed, died, timed
    /// out or sent what it should not).
    Replaced,
    /// A worker ended at shutdown.
    Stopped,
}

#[cfg_attr(
    not(unix),
    allow(
        dead_code,
        reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
    )
)]
impl WorkerEvent {
    fn label(self) -> &'static str {
        match self {
            WorkerEvent::Started => "started",
            WorkerEvent::SpawnFailed => "spawn_failed",
            WorkerEvent::TimedOut => "timed_out",
            WorkerEvent::Replaced => "replaced",
            WorkerEvent::Stopped => "stopped",
        }
    }
}

struct Metrics {
    registry: Registry,
    tool_calls: Family<Labels, Counter>,
    duration: HistogramFamily,
    requests: Family<Labels, Counter>,
    #[cfg_attr(
        not(unix),
        allow(
            dead_code,
            reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
        )
    )]
    workers: Family<Labels, Counter>,
    in_flight: Gauge,
    busy: Counter,
    redactions: Counter,
    redacted_answers: Family<Labels, Counter>,
    content: Family<Labels, Counter>,
    auth_failures: Family<Labels, Counter>,
    auth_paused: Counter,
}

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS.iter().copied())
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let mut registry = Registry::default();
    let tool_calls = Family::<Labels, Counter>::default();
    registry.register(
        "moat_tool_calls",
        "Tool calls answered, by tool and outcome (ok or the error code)",
        tool_calls.clone(),
    );
    let duration: HistogramFamily = Family::new_with_constructor(duration_histogram);
    registry.register_with_unit(
        "mcp_server_operation_duration",
        "Time to answer an MCP request, by method (and tool for tools/call)",
        Unit::Seconds,
        duration.clone(),
    );
    let requests = Family::<Labels, Counter>::default();
    registry.register(
        "moat_jsonrpc_requests",
        "JSON-RPC requests and notifications handled, by method (other for any other)",
        requests.clone(),
    );
    let workers = Family::<Labels, Counter>::default();
    registry.register(
        "moat_worker_events",
        "Worker process events: started, spawn_failed, timed_out, replaced, stopped",
        workers.clone(),
    );
    let in_flight = Gauge::default();
    registry.register(
        "moat_tool_calls_in_flight",
        "Tool calls admitted and not yet answered",
        in_flight.clone(),
    );
    let busy = Counter::default();
    registry.register(
        "moat_tool_calls_busy",
        "Tool calls refused busy (HTTP 503 or the busy tool error) without running",
        busy.clone(),
    );
    let redactions = Counter::default();
    registry.register(
        "moat_redactions",
        "Secrets redacted from tool answers",
        redactions.clone(),
    );
    let redacted_answers = Family::<Labels, Counter>::default();
    registry.register(
        "moat_redacted_answers",
        "Tool answers in which a redaction rule fired, by rule",
        redacted_answers.clone(),
    );
    let content = Family::<Labels, Counter>::default();
    registry.register(
        "moat_content_assessments",
        "Tool answers carrying untrusted content, by assessment level",
        content.clone(),
    );
    let auth_failures = Family::<Labels, Counter>::default();
    registry.register(
        "moat_http_auth_failures",
        "HTTP requests refused at the gate, by reason",
        auth_failures.clone(),
    );
    let auth_paused = Counter::default();
    registry.register(
        "moat_http_auth_paused",
        "Requests held for http.auth_failure_pause_ms because authentication refusals were over http.auth_failures_per_second",
        auth_paused.clone(),
    );
    Metrics {
        registry,
        tool_calls,
        duration,
        requests,
        workers,
        in_flight,
        busy,
        redactions,
        redacted_answers,
        content,
        auth_failures,
        auth_paused,
    }
});

/// The registry's name for `name`, or `unknown`.
fn tool_label(name: &str) -> &'static str {
    Tool::from_name(name).map_or("unknown", Tool::name)
}

/// A fixed label for an outcome: the broker's codes are static text; any
/// other is `other`.
fn outcome_label(outcome: Cow<'static, str>) -> &'static str {
    match outcome {
        Cow::Borrowed("") => "other",
        Cow::Borrowed(code) => code,
        Cow::Owned(_) => "other",
    }
}

/// Count one answered (or refused) `tools/call`, from its audit facts.
pub fn tool_call(facts: &Facts) {
    let m = &*METRICS;
    let outcome = outcome_label(facts.outcome.clone());
    m.tool_calls
        .get_or_create(&vec![
            ("tool", tool_label(&facts.tool)),
            ("outcome", outcome),
        ])
        .inc();
    if outcome == "busy" {
        m.busy.inc();
    }
    let findings = &facts.findings;
    m.redactions.inc_by(findings.redactions);
    for rule in &findings.rules {
        m.redacted_answers
            .get_or_create(&vec![("rule", *rule)])
            .inc();
    }
    if !findings.content_level.is_empty() {
        m.content
            .get_or_create(&vec![("level", findings.content_level)])
            .inc();
    }
}

/// Count one JSON-RPC message handled and how long it took; `tool` is the
/// tool a `tools/call` named.
pub fn request(method: &str, tool: Option<&str>, elapsed: Duration) {
    let m = &*METRICS;
    let method = KNOWN_METHODS
        .iter()
        .find(|k| **k == method)
        .copied()
        .unwrap_or("other");
    m.requests.get_or_create(&vec![("method", method)]).inc();
    let mut labels: Labels = vec![("mcp_method_name", method)];
    if method == "tools/call" {
        labels.push(("gen_ai_tool_name", tool_label(tool.unwrap_or(""))));
    }
    m.duration
        .get_or_create(&labels)
        .observe(elapsed.as_secs_f64());
}

/// Count a worker event.
#[cfg_attr(
    not(unix),
    allow(
        dead_code,
        reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
    )
)]
pub fn worker(event: WorkerEvent) {
    METRICS
        .workers
        .get_or_create(&vec![("event", event.label())])
        .inc();
}

/// Count a request the HTTP gate refused; `reason` is one of
/// [`AUTH_FAILURE_REASONS`].
pub fn auth_failure(reason: &'static str) {
    debug_assert!(AUTH_FAILURE_REASONS.contains(&reason));
    METRICS
        .auth_failures
        .get_or_create(&vec![("reason", reason)])
        .inc();
}

/// Count a request held before its authentication was judged or its
/// refusal answered (see `transport::http::admit`).
pub fn auth_paused() {
    METRICS.auth_paused.inc();
}

/// Holds one place in `moat_tool_calls_in_flight` until dropped.
#[derive(Debug)]
pub struct InFlight(());

impl InFlight {
    /// Count a tool call in flight.
    #[must_use]
    pub fn enter() -> InFlight {
        METRICS.in_flight.inc();
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        METRICS.in_flight.dec();
    }
}

/// The exposition, in the Prometheus text format 0.0.4.
#[must_use]
pub fn render() -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_text::encode(&mut out, &METRICS.registry);
    out
}

type Body = Full<Bytes>;

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The answer to `req`, and whether it was an admitted scrape.
fn answer(token: Option<&bearer::Token>, req: &Request<Incoming>) -> (Response<Body>, bool) {
    if req.uri().path() != "/metrics" {
        return (plain(StatusCode::NOT_FOUND, "not found\n"), false);
    }
    if req.method() != Method::GET {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: use GET\n",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return (r, false);
    }
    if let Some(token) = token {
        let mut values = req.headers().get_all(header::AUTHORIZATION).iter();
        let presented = values.next().map(HeaderValue::as_bytes);
        let admitted = values.next().is_none()
            && presented.is_some_and(bearer::well_formed)
            && token.accepts(presented);
        if !admitted {
            tracing::warn!(status = 401u16, "metrics.refused");
            let mut r = plain(StatusCode::UNAUTHORIZED, "unauthorised\n");
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return (r, false);
        }
    }
    let mut r = Response::new(Full::new(Bytes::from(render())));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(prometheus_text::CONTENT_TYPE),
    );
    (r, true)
}

/// The metrics listener's address cannot be bound.
#[derive(Debug, thiserror::Error)]
#[error("cannot bind observability.metrics_addr {addr}: {source}")]
pub struct BindError {
    /// The configured address.
    addr: SocketAddr,
    /// What the system said.
    source: std::io::Error,
}

/// Most connections served at once; a scraper needs one.
pub const MAX_CONNECTIONS: usize = 16;

/// Bind `addr` and serve `/metrics` on it in the background, logging the
/// bound address as `metrics.listening`.
///
/// # Errors
///
/// When the address cannot be bound (the message names it).
pub async fn start(addr: SocketAddr, token: &str) -> Result<(), BindError> {
    use crate::slots::Slots;
    let bind_error = |source| BindError { addr, source };
    let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    tracing::info!(addr = %bound, "metrics.listening");
    let token = (!token.is_empty()).then(|| Arc::new(bearer::Token::new(token)));
    tokio::spawn(async move {
        let slots = Slots::new(MAX_CONNECTIONS);
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(Duration::from_secs(10))
            .max_buf_size(16 * 1024)
            .keep_alive(true);
        loop {
            // Accepted first, then admitted: a connection beyond the bound
            // sheds an idle one rather than waiting behind it.
            let stream = match listener.accept().await {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "metrics.accept_failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let (permit, slot) = slots.admit().await;
            let waiting = Arc::clone(slots.waiting());
            let token = token.clone();
            let (svc_slot, svc_waiting) = (Arc::clone(&slot), Arc::clone(&waiting));
            let service = service_fn(move |req: Request<Incoming>| {
                svc_waiting.busy(&svc_slot);
                let (r, admitted) = answer(token.as_deref(), &req);
                if admitted {
                    svc_slot.authenticated();
                }
                svc_waiting.wait(&svc_slot);
                async move { Ok::<_, Infallible>(r) }
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::spawn(Slots::serve(waiting, slot, permit, conn));
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_fixed_sets() {
        assert_eq!(tool_label("read_file"), "read_file");
        assert_eq!(tool_label("../etc/passwd"), "unknown");
        assert_eq!(outcome_label(Cow::Owned("x".into())), "other");
        assert_eq!(outcome_label(Cow::Borrowed("not_found")), "not_found");
    }

    #[test]
    fn exposition_is_the_prometheus_text_format() {
        request("ping", None, Duration::from_millis(1));
        let text = render();
        assert!(
            text.contains("# TYPE mcp_server_operation_duration_seconds histogram"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE moat_tool_calls_busy_total counter"),
            "{text}"
        );
        assert!(!text.contains("# EOF"), "{text}");
    }
}

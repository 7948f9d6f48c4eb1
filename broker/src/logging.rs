//! Logs: `tracing` to stderr only (stdout is the protocol wire), one JSON
//! object per line by default, level from configuration.
//!
//! # What never reaches a log line
//!
//! Log lines carry values the broker did not choose: the `Origin` and `Host`
//! headers of a rejected HTTP request, the method name of a failed JSON-RPC
//! request, the client label from `_meta`, messages from dependencies. A log
//! is read by operators, shipped to log stores and pasted into tickets, so a
//! credential in it has leaked as surely as one in a tool result. Every event
//! therefore goes through [`LogRedactor`] **field by field, before it is
//! serialised**:
//!
//! 1. a field whose name is a credential name ([`is_credential_field`]:
//!    `bearer_token`, `authorization`, `token`, `secret`, `password`,
//!    `api_key`, `*_token`, …) has its value replaced by `[redacted]` when the
//!    value is truthy (an empty, false, zero or null value holds no secret,
//!    and showing it tells the operator the credential is unset);
//! 2. every other string value, the message included, is passed through the
//!    same [`Redactor`] as tool results (all sixteen rules, whatever
//!    `security.redact_secrets` says: that setting is about results), so a
//!    `ghp_…` token in a `Host` header is logged as `[redacted:github-token]`;
//! 3. the secrets the broker itself was configured with (the HTTP bearer
//!    token), whatever their shape, are replaced by `[redacted]` wherever they
//!    appear inside a string value.
//!
//! 4. every string value is then cut to [`MAX_VALUE_CHARS`] characters,
//!    ending with [`CUT_MARKER`] when it was (a value longer than
//!    [`REDACT_WINDOW_BYTES`] is redacted on that much of its start only:
//!    what lies beyond is cut anyway). A client's id, method name, label
//!    or header is its own text, of any length: cut, one client cannot
//!    fill the logs, nor the audit trail's rotation.
//!
//! Redacting values rather than rendered lines means a replacement can never
//! span JSON syntax (a rule such as `basic-auth-header` ends at whitespace,
//! and would otherwise swallow a closing quote): the line is built from the
//! redacted values by `serde_json`, so it is always one valid JSON object.
//!
//! Tool argument values are never logged: `tool.call` names the tool, the
//! client label and the outcome, and with `observability.log_tool_arguments`
//! only the argument *names*. The one exception is the audit event of each
//! call (`audit.rs`), which names its path-like arguments, escaped,
//! cut and redacted like every other value.
//!
//! # Format
//!
//! JSON: `{"timestamp":…,"level":"INFO","message":"<event>",<fields>…}`, the
//! fields in the order the event gives them, flattened into the top-level
//! object so log tools can filter on them directly. A line logged while a
//! request is served starts its fields with the request's own
//! ([`request_span`]: `request_id`, then `rpc_id`), redacted like the rest. Records from the `log` crate carry their `target`.
//! Plain text (`observability.log_json = false`): `timestamp LEVEL event
//! key=value …` (logfmt), each value in its escaped text form (no control,
//! separator or invisible character left raw) and, when it holds a space,
//! an `=` or a `"` (or is empty), in double quotes with `"` escaped: a value
//! can never end early, so a client's text cannot make a field of its own
//! (`caller=`, `outcome=`) that a logfmt reader would take as real. The
//! event is written the same way.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::sync::Arc;

use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber, span};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::config::ObservabilityConfig;
use crate::content::fence::escape_for_prose;
use crate::redact::{RedactionReport, Redactor, is_credential_field};

/// What a credential-named field's value becomes.
pub const REDACTED: &str = "[redacted]";
/// Longest string value in a log line, in characters (after redaction);
/// a longer one is cut and ends with [`CUT_MARKER`].
pub const MAX_VALUE_CHARS: usize = 1024;
/// Appended to a value that was cut.
pub const CUT_MARKER: &str = "…[cut]";
/// How much of a longer value is redacted before it is cut, in bytes.
pub const REDACT_WINDOW_BYTES: usize = 16 * 1024;

/// Install the global subscriber, writing to stderr. `redactor` holds the
/// credentials the broker was configured with (the HTTP bearer token); they
/// are scrubbed from every log line whatever their shape. Safe to call more
/// than once (later calls are ignored).
pub fn init(o: &ObservabilityConfig, redactor: LogRedactor) {
    let _ = subscriber(o, redactor, std::io::stderr).try_init();
}

/// The current time as log lines give it (RFC 3339, UTC).
#[must_use]
pub fn timestamp() -> String {
    let mut timestamp = String::new();
    let _ = SystemTime.format_time(&mut Writer::new(&mut timestamp));
    timestamp
}

/// The fields of the request being served (`request_id`, `rpc_id`), as the
/// log lines of that request carry them; none outside a request or when the
/// global subscriber is not the one [`init`] installs.
#[must_use]
pub fn request_fields() -> Vec<(&'static str, Value)> {
    let mut out: Vec<(&'static str, Value)> = Vec::new();
    tracing::Span::current().with_subscriber(|(id, dispatch)| {
        let Some(registry) = dispatch.downcast_ref::<tracing_subscriber::Registry>() else {
            return;
        };
        let Some(span) = registry.span(id) else {
            return;
        };
        for span in span.scope().from_root() {
            if let Some(SpanValues(known)) = span.extensions().get::<SpanValues>() {
                for (name, value) in known {
                    if !out.iter().any(|(n, _)| n == name) {
                        out.push((name, value.clone()));
                    }
                }
            }
        }
    });
    out
}

/// The subscriber [`init`] installs, writing to `writer` (tests capture it).
pub fn subscriber<W>(
    o: &ObservabilityConfig,
    redactor: LogRedactor,
    writer: W,
) -> impl Subscriber + Send + Sync + 'static
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let level = match o.log_level.as_str() {
        "debug" => "debug",
        "warning" | "warn" => "warn",
        "error" => "error",
        _ => "info",
    };
    let filter = EnvFilter::new(format!("{level},hyper=warn,h2=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .event_format(Format {
            json: o.log_json,
            redactor: Arc::new(redactor),
        })
        .finish()
        .with(SpanFields)
}

/// Opens the span of one request: every line logged while it is being
/// served carries its `request_id` (unique in the process, counting from
/// 1), and, once the transport has read it, the JSON-RPC id as `rpc_id`
/// ([`record_rpc_id`]). The span is at `ERROR` level only so that no
/// `log_level` filters it out; it is never itself logged.
#[must_use]
pub fn request_span() -> tracing::Span {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tracing::error_span!("request", request_id = id, rpc_id = tracing::field::Empty)
}

/// A JSON-RPC id as a request's span records it: an integer stays a
/// number in the line, anything else is text. The envelope's id type
/// converts into it, so this module needs none of the protocol's types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcId<'a> {
    /// A signed integer id.
    Integer(i64),
    /// An unsigned integer id beyond `i64`.
    Unsigned(u64),
    /// A string id, or a number that is not an integer, as its text.
    Text(Cow<'a, str>),
}

/// Adds the JSON-RPC `id` (as the client sent it: a number or a string) to
/// the current request's span, so the lines that follow carry it. A text
/// id is kept to [`REDACT_WINDOW_BYTES`]: every line cuts it further.
pub fn record_rpc_id<'a>(id: impl Into<RpcId<'a>>) {
    let span = tracing::Span::current();
    match id.into() {
        RpcId::Integer(i) => {
            span.record("rpc_id", i);
        }
        RpcId::Unsigned(u) => {
            span.record("rpc_id", u);
        }
        RpcId::Text(text) => {
            span.record("rpc_id", window(&text));
        }
    }
}

/// The start of `text`, at most [`REDACT_WINDOW_BYTES`] long.
fn window(text: &str) -> &str {
    if text.len() <= REDACT_WINDOW_BYTES {
        return text;
    }
    let mut end = REDACT_WINDOW_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut at `max` characters, with [`CUT_MARKER`] when it was.
#[must_use]
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((at, _)) => Cow::Owned(format!("{}{CUT_MARKER}", &text[..at])),
        None => Cow::Borrowed(text),
    }
}

/// The fields of a span, kept as values for the lines logged inside it.
struct SpanValues(Vec<(&'static str, Value)>);

/// Records each span's fields (and later `record`s) so [`Format`] can
/// write them with every event inside the span.
struct SpanFields;

impl<S> Layer<S> for SpanFields
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanValues(fields.values));
        }
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        values.record(&mut fields);
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(SpanValues(known)) = extensions.get_mut::<SpanValues>() else {
            return;
        };
        for (name, value) in fields.values {
            match known.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => known.push((name, value)),
            }
        }
    }
}

/// Redacts log values: credential-named fields, credential-shaped values and
/// the broker's own configured secrets.
///
/// Has no `Debug` output of the secrets it holds.
#[derive(Clone, Default)]
pub struct LogRedactor {
    redactor: Redactor,
    /// Configured secrets, longest first (so one that contains another is
    /// replaced whole). Never empty strings.
    literals: Vec<String>,
}

impl fmt::Debug for LogRedactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogRedactor")
            .field("literals", &self.literals.len())
            .finish_non_exhaustive()
    }
}

impl LogRedactor {
    /// A redactor for log values that also scrubs each of `secrets` (empty
    /// ones are ignored).
    #[must_use]
    pub fn new(secrets: &[&str]) -> LogRedactor {
        let mut literals: Vec<String> = secrets
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| (*s).to_owned())
            .collect();
        literals.sort_by_key(|s| std::cmp::Reverse(s.len()));
        literals.dedup();
        LogRedactor {
            redactor: Redactor::new(true),
            literals,
        }
    }

    /// Redacts free text (a message, a field value, a start-up error).
    #[must_use]
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for literal in &self.literals {
            if out.contains(literal.as_str()) {
                out = Cow::Owned(out.replace(literal.as_str(), REDACTED));
            }
        }
        let mut report = RedactionReport::default();
        match self.redactor.redact_str(&out, &mut report) {
            Some(redacted) => Cow::Owned(redacted),
            None => out,
        }
    }

    /// Redacts the value of the field called `name`, and cuts its strings
    /// at [`MAX_VALUE_CHARS`].
    #[must_use]
    pub fn field(&self, name: &str, value: Value) -> Value {
        if is_credential_field(name) {
            return if truthy(&value) {
                Value::String(REDACTED.to_owned())
            } else {
                value
            };
        }
        match value {
            Value::String(s) => {
                let redacted = self.text(window(&s));
                match cut(&redacted, MAX_VALUE_CHARS) {
                    Cow::Borrowed(_) if redacted.len() == s.len() => Value::String(s),
                    kept => Value::String(kept.into_owned()),
                }
            }
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|v| self.field(name, v)).collect())
            }
            other => other,
        }
    }
}

/// Whether a credential-named value is worth hiding: empty strings, `false`,
/// zero and null hold no secret and are shown as they are.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The event formatter: collects the fields, redacts them, serialises.
struct Format {
    json: bool,
    redactor: Arc<LogRedactor>,
}

impl<S, N> FormatEvent<S, N> for Format
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let timestamp = timestamp();
        let level = event.metadata().level().as_str();
        let message = self
            .redactor
            .field("message", Value::String(fields.message.unwrap_or_default()));
        let target = fields
            .target
            .map(|t| self.redactor.field("target", Value::String(t)));
        // The request's fields first (outermost span first), unless the
        // event gives a field of the same name itself.
        let mut spans: Vec<(&'static str, Value)> = Vec::new();
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                if let Some(SpanValues(known)) = span.extensions().get::<SpanValues>() {
                    for (name, value) in known {
                        let taken = spans.iter().chain(&fields.values).any(|(n, _)| n == name);
                        if !taken {
                            spans.push((name, value.clone()));
                        }
                    }
                }
            }
        }
        let values: Vec<(&'static str, Value)> = spans
            .into_iter()
            .chain(fields.values)
            .map(|(name, value)| (name, self.redactor.field(name, value)))
            .collect();
        let line = if self.json {
            json_line(&timestamp, level, &message, target.as_ref(), &values)
        } else {
            text_line(&timestamp, level, &message, target.as_ref(), &values)
        };
        writeln!(writer, "{line}")
    }
}

/// One JSON object: timestamp, level, message, target (log records), fields.
pub(crate) fn json_line(
    timestamp: &str,
    level: &str,
    message: &Value,
    target: Option<&Value>,
    values: &[(&str, Value)],
) -> String {
    let mut line = String::with_capacity(128);
    line.push('{');
    let mut member = |key: &str, value: &Value| {
        if line.len() > 1 {
            line.push(',');
        }
        line.push_str(&Value::from(key).to_string());
        line.push(':');
        line.push_str(&value.to_string());
    };
    member("timestamp", &Value::from(timestamp));
    member("level", &Value::from(level));
    member("message", message);
    if let Some(target) = target {
        member("target", target);
    }
    for (name, value) in values {
        member(name, value);
    }
    line.push('}');
    line
}

/// One line of text: `timestamp LEVEL message key=value …` (see the module
/// docs: every value, and the message, in [`logfmt_value`]'s form).
pub(crate) fn text_line(
    timestamp: &str,
    level: &str,
    message: &Value,
    target: Option<&Value>,
    values: &[(&str, Value)],
) -> String {
    let plain = |value: &Value| match value {
        Value::String(s) => logfmt_value(s),
        other => logfmt_value(&other.to_string()),
    };
    let mut line = format!("{timestamp} {level:>5} {}", plain(message));
    if let Some(target) = target {
        let _ = write!(line, " target={}", plain(target));
    }
    for (name, value) in values {
        let _ = write!(line, " {name}={}", plain(value));
    }
    line
}

/// A value as a logfmt value: its escaped text form, and in double quotes
/// (with `"` escaped) when it is empty or holds whitespace, `=` or `"`, so
/// that it is always read back as one value, never as more fields.
#[must_use]
pub fn logfmt_value(text: &str) -> String {
    let escaped = escape_for_prose(text);
    let plain = !escaped.is_empty()
        && !escaped
            .chars()
            .any(|c| c.is_whitespace() || c == '=' || c == '"');
    if plain {
        return escaped.into_owned();
    }
    let mut out = String::with_capacity(escaped.len() + 2);
    out.push('"');
    for c in escaped.chars() {
        if c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// An event's fields, in order, with the message and the `log` crate's
/// target taken apart.
#[derive(Default)]
struct Fields {
    /// The event's own message (its name): the first `message` recorded.
    message: Option<String>,
    target: Option<String>,
    values: Vec<(&'static str, Value)>,
}

impl Fields {
    fn push(&mut self, field: &Field, value: Value) {
        match field.name() {
            // The macros record the event's message first; a field that is
            // also called `message` comes after it and must not replace the
            // event name.
            "message" if self.message.is_none() => {
                self.message = Some(match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                });
            }
            "message" => self.values.push(("detail", value)),
            "log.target" => {
                if let Value::String(s) = value {
                    self.target = Some(s);
                }
            }
            // The rest of a `log` record's bookkeeping (module, file, line).
            name if name.starts_with("log.") => {}
            name => self.values.push((name, value)),
        }
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, Value::String(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, Value::from(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.push(field, Value::String(value.to_string()));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::Bool(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, Value::from(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // Non-finite floats have no JSON form: null, as serde_json writes them.
        self.push(field, Value::from(value));
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::Mutex;

    use super::*;

    /// A `MakeWriter` into a shared buffer.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if let Ok(mut b) = self.0.lock() {
                b.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Capture {
        type Writer = Capture;
        fn make_writer(&'w self) -> Capture {
            self.clone()
        }
    }

    impl Capture {
        fn text(&self) -> String {
            let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
            String::from_utf8(bytes).unwrap_or_default()
        }
    }

    fn config(json: bool) -> ObservabilityConfig {
        ObservabilityConfig {
            log_level: "debug".into(),
            log_json: json,
            log_tool_arguments: false,
            audit_path: None,
            audit_max_bytes: crate::config::AUDIT_MAX_BYTES_DEFAULT,
            metrics_addr: None,
            metrics_token: String::new(),
        }
    }

    /// Run `f` with the log subscriber writing into a buffer; the lines.
    fn logged(json: bool, secrets: &[&str], f: impl FnOnce()) -> Vec<String> {
        let capture = Capture::default();
        let subscriber = subscriber(&config(json), LogRedactor::new(secrets), capture.clone());
        tracing::subscriber::with_default(subscriber, f);
        capture.text().lines().map(str::to_owned).collect()
    }

    fn parse(line: &str) -> Value {
        match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => panic!("not a JSON line ({e}): {line:?}"),
        }
    }

    fn github_token() -> String {
        ["ghp_", &"a".repeat(36)].concat()
    }

    #[test]
    fn events_are_one_json_object_per_line_with_the_event_name_as_message() {
        let lines = logged(true, &[], || {
            tracing::info!(method = "tools/list", duration_us = 1500u64, "rpc.ok");
            tracing::warn!(origin = "https://evil.example", "http.origin_rejected");
        });
        assert_eq!(lines.len(), 2, "{lines:?}");
        let first = parse(&lines[0]);
        assert_eq!(first["message"], "rpc.ok");
        assert_eq!(first["level"], "INFO");
        assert_eq!(first["method"], "tools/list");
        assert_eq!(first["duration_us"], 1500);
        assert!(
            first["timestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        let second = parse(&lines[1]);
        assert_eq!(second["message"], "http.origin_rejected");
        assert_eq!(second["level"], "WARN");
        assert_eq!(second["origin"], "https://evil.example");
    }

    #[test]
    fn credential_named_fields_are_redacted() {
        let lines = logged(true, &[], || {
            tracing::info!(
                bearer_token = "abc",
                token = "t0k3n",
                Authorization = "Basic Zm9vOmJhcg==",
                api_key = 12345,
                github_token = %"anything",
                password = "",
                secret = false,
                tool = "read_file",
                "event"
            );
        });
        let v = parse(&lines[0]);
        for name in [
            "bearer_token",
            "token",
            "Authorization",
            "api_key",
            "github_token",
        ] {
            assert_eq!(v[name], REDACTED, "{name}: {v}");
        }
        // Falsy values are shown as they are: they hold no secret.
        assert_eq!(v["password"], "");
        assert_eq!(v["secret"], false);
        assert_eq!(v["tool"], "read_file");
    }

    #[test]
    fn credential_shaped_values_are_redacted_in_any_field_and_in_the_message() {
        let token = github_token();
        let aws = ["AKIA", "IOSFODNN7EXAMPLE"].concat();
        let lines = logged(true, &[], || {
            tracing::warn!(host = %format!("{token}.evil.example"), "http.host_rejected");
            tracing::warn!(method = %token, message_text = %format!("unknown method '{aws}'"), "rpc.error");
            tracing::warn!("config.warning: key {} is set", aws);
        });
        let all = lines.join("\n");
        assert!(!all.contains(&token), "{all}");
        assert!(!all.contains(&aws), "{all}");
        let host = parse(&lines[0]);
        assert_eq!(host["host"], "[redacted:github-token].evil.example");
        assert_eq!(host["message"], "http.host_rejected");
        assert_eq!(
            parse(&lines[2])["message"],
            "config.warning: key [redacted:aws-access-key-id] is set"
        );
    }

    #[test]
    fn configured_secrets_are_scrubbed_whatever_their_shape() {
        let bearer = "correct-horse-battery-staple";
        let lines = logged(true, &[bearer, ""], || {
            tracing::warn!(host = %format!("{bearer}.example"), "http.host_rejected");
            tracing::debug!("saw {bearer} twice: {bearer}");
        });
        let all = lines.join("\n");
        assert!(!all.contains(bearer), "{all}");
        assert_eq!(parse(&lines[0])["host"], "[redacted].example");
        assert_eq!(
            parse(&lines[1])["message"],
            "saw [redacted] twice: [redacted]"
        );
    }

    #[test]
    fn a_redaction_cannot_break_the_json_line() {
        // Rules that end at whitespace (basic-auth-header) or span anything
        // (private-key-block, url-credentials) would swallow quotes and commas
        // if they ran over the rendered line. They run over values.
        let pem = "-----BEGIN PRIVATE KEY-----";
        let lines = logged(true, &[], || {
            tracing::warn!(
                a = "Authorization: Bearer abcdefghijklmnop\"}",
                b = %format!("{pem}\nMIIB"),
                c = "-----END PRIVATE KEY----- x://user:pa\"ss",
                d = "@host\u{2028}\u{0}",
                "Authorization: Bearer zyxwvutsrqpo"
            );
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        let v = parse(&lines[0]);
        assert_eq!(v["a"], "Authorization: Bearer [redacted:basic-auth-header]");
        assert_eq!(
            v["message"],
            "Authorization: Bearer [redacted:basic-auth-header]"
        );
        assert!(!lines[0].contains("abcdefghijklmnop"));
        assert!(!lines[0].contains("zyxwvutsrqpo"));
    }

    #[test]
    fn text_mode_redacts_too_and_stays_on_one_line() {
        let token = github_token();
        let lines = logged(false, &[], || {
            tracing::warn!(origin = %format!("https://{token}\nforged line"), password = "pw", "http.origin_rejected");
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(!lines[0].contains(&token), "{}", lines[0]);
        assert!(lines[0].contains("http.origin_rejected"), "{}", lines[0]);
        assert!(lines[0].contains("password=[redacted]"), "{}", lines[0]);
        assert!(lines[0].contains("\\nforged line"), "{}", lines[0]);
    }

    #[test]
    fn text_mode_values_cannot_make_fields_of_their_own() {
        let forged = "x caller=admin outcome=ok\" tool=\"y";
        let lines = logged(false, &[], || {
            tracing::warn!(method = %forged, client = "", "rpc.error");
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        let fields = logfmt_fields(&lines[0]);
        assert_eq!(
            fields.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["method", "client"],
            "{}",
            lines[0]
        );
        assert_eq!(fields[0].1, forged);
        assert_eq!(fields[1].1, "");
    }

    /// The `key=value` fields of a logfmt line after its timestamp, level
    /// and event, as a logfmt reader splits them.
    fn logfmt_fields(line: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut rest = line.splitn(4, ' ').last().unwrap_or("").trim_start();
        // The event (plain here).
        rest = rest.split_once(' ').map_or("", |(_, r)| r);
        while !rest.is_empty() {
            let (key, after) = rest.split_once('=').unwrap();
            let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
                let mut v = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, n)) = chars.next() {
                                if n != '"' {
                                    v.push('\\');
                                }
                                v.push(n);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => v.push(c),
                    }
                }
                (v, &quoted[end..])
            } else {
                let (v, t) = after.split_once(' ').unwrap_or((after, ""));
                (v.to_owned(), t)
            };
            out.push((key.trim().to_owned(), value));
            rest = tail.trim_start();
        }
        out
    }

    #[test]
    fn every_value_is_cut_after_it_is_redacted() {
        let token = github_token();
        let long = format!("{} {token} {}", "a".repeat(10), "b".repeat(5000));
        let huge = "c".repeat(REDACT_WINDOW_BYTES * 4);
        let lines = logged(true, &[], || {
            tracing::warn!(method = %long, other = %huge, "rpc.error");
        });
        let v = parse(&lines[0]);
        let method = v["method"].as_str().unwrap();
        assert!(!method.contains(&token), "{method}");
        assert!(method.contains("[redacted:github-token]"), "{method}");
        assert!(method.ends_with(CUT_MARKER), "{method}");
        assert_eq!(
            method.chars().count(),
            MAX_VALUE_CHARS + CUT_MARKER.chars().count()
        );
        assert!(
            lines[0].len() < 3 * MAX_VALUE_CHARS + 200,
            "{}",
            lines[0].len()
        );
    }

    #[test]
    fn a_field_called_message_does_not_replace_the_event_name() {
        let lines = logged(true, &[], || {
            tracing::warn!(method = "x", message = %"unknown method 'x'", code = -32601, "rpc.error");
        });
        let v = parse(&lines[0]);
        assert_eq!(v["message"], "rpc.error", "{v}");
        assert_eq!(v["detail"], "unknown method 'x'", "{v}");
    }

    #[test]
    fn lines_inside_a_request_carry_its_request_id_and_rpc_id() {
        let lines = logged(true, &[], || {
            tracing::info!("before");
            let first = request_span();
            let second = request_span();
            {
                let _in = first.enter();
                tracing::info!("parsed");
                record_rpc_id(RpcId::Text("abc".into()));
                tracing::info!(method = "tools/call", "rpc.ok");
            }
            let _in = second.enter();
            record_rpc_id(RpcId::Integer(7));
            tracing::warn!(request_id = 0u64, "own field wins");
        });
        let v: Vec<Value> = lines.iter().map(|l| parse(l)).collect();
        assert!(v[0].get("request_id").is_none(), "{}", lines[0]);
        let first = v[1]["request_id"].as_u64().unwrap();
        assert!(v[1].get("rpc_id").is_none(), "{}", lines[1]);
        assert_eq!(v[2]["request_id"], first, "{}", lines[2]);
        assert_eq!(v[2]["rpc_id"], "abc", "{}", lines[2]);
        // The request's fields come right after the message.
        assert!(
            lines[2].find("\"request_id\"") < lines[2].find("\"method\""),
            "{}",
            lines[2]
        );
        assert_eq!(v[3]["request_id"], 0, "{}", lines[3]);
        assert_eq!(v[3]["rpc_id"], 7, "{}", lines[3]);
        assert_eq!(lines[3].matches("request_id").count(), 1, "{}", lines[3]);
    }

    #[test]
    fn the_request_span_is_kept_at_every_log_level() {
        let capture = Capture::default();
        let mut o = config(true);
        o.log_level = "error".into();
        let subscriber = subscriber(&o, LogRedactor::default(), capture.clone());
        tracing::subscriber::with_default(subscriber, || {
            let span = request_span();
            let _in = span.enter();
            tracing::error!("serve.failed");
        });
        let line = capture.text();
        assert!(parse(line.trim())["request_id"].is_u64(), "{line}");
    }

    #[test]
    fn the_debug_form_names_no_secret() {
        let r = LogRedactor::new(&["hunter2hunter2"]);
        assert!(!format!("{r:?}").contains("hunter2"));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Secrets of a few shapes the redactor knows, built from parts.
        fn secret() -> impl Strategy<Value = String> {
            prop_oneof![
                "[A-Z0-9]{16}".prop_map(|s| ["AKIA", &s].concat()),
                "[A-Za-z0-9]{36}".prop_map(|s| ["ghp_", &s].concat()),
                "[A-Za-z0-9]{40}".prop_map(|s| ["sk_live_", &s].concat()),
                "[A-Za-z0-9_-]{10,20}[A-Za-z0-9]"
                    .prop_map(|s| ["glpat-", &s, "XYZ0123456789"].concat()),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

            #[test]
            fn every_line_is_json_and_no_secret_survives(
                before in "\\PC{0,30}", after in "[ \"',;}\\]\n\t\\\\]\\PC{0,30}", s in secret(),
            ) {
                let value = format!("{before} {s}{after}");
                let lines = logged(true, &[], || {
                    tracing::warn!(host = %value, "http.host_rejected");
                    tracing::warn!("{value}");
                });
                prop_assert_eq!(lines.len(), 2, "{:?}", lines);
                for line in &lines {
                    let v: Result<Value, _> = serde_json::from_str(line);
                    prop_assert!(v.is_ok(), "not JSON: {line:?}");
                    prop_assert!(!line.contains(&s), "{s} in {line}");
                }
            }
        }
    }
}

//! JSON-RPC 2.0 envelopes, written by hand on `serde_json` so the broker sees
//! and controls every byte.
//!
//! Parsing is in two steps: bytes → an object whose `id` is kept as the exact
//! text the client wrote (a JSON error is `-32700`), then the envelope rules
//! (`-32600`). When an envelope is invalid the request id is still recovered
//! whenever it is a string or a number, so the client can match the error to
//! its request (`null` only when no id can be read).
//!
//! # Ids
//!
//! An id is answered with the very bytes it was sent as. A number is kept as
//! its text, never as a parsed number: parsed and printed again, `1e3`,
//! `-0`, `1.0` or an integer beyond 64 bits would come back as another text
//! (`1000.0`, `-0.0`, a rounded float), so two distinct ids could collide and
//! a client would miss its answer. Requests are matched to their answers by
//! the client alone, on these bytes.
//!
//! A notification is a message with **no** `id` member. `"id": null` is not
//! one: it is a request whose id is not a string or a number, which this
//! protocol does not allow, and it is answered `-32600` (with a `null` id,
//! the only one it can carry). A notification is never answered; one whose
//! method is a request's (`tools/call` with no id, say) is refused without
//! being run ([`runs_nothing`]).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// JSON-RPC and MCP error codes moat emits. Nothing in the reserved range
/// -32099..=-32020 other than the three MCP codes is ever sent, nor the
/// withdrawn -32002 and -32042.
pub mod code {
    /// Not JSON, bad UTF-8, or a line over the size cap.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid parameters (including `_meta` and tool arguments).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Unexpected failure; no detail is ever sent.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// HTTP header disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// A capability the request needs was not declared (2026-07-28).
    pub const MISSING_CAPABILITY: i64 = -32021;
    /// Unsupported protocol version (2026-07-28).
    pub const UNSUPPORTED_VERSION: i64 = -32022;
}

/// A request id: a string or a number (never a boolean, object or array).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Id {
    /// A numeric id: its JSON text exactly as the client wrote it.
    Number(Box<str>),
    /// A string id.
    String(String),
}

/// The id as the request's log lines carry it (`rpc_id`).
impl<'a> From<&'a Id> for crate::logging::RpcId<'a> {
    fn from(id: &'a Id) -> Self {
        use crate::logging::RpcId;
        match id {
            Id::Number(text) => {
                // An integer written plainly stays a number in the line;
                // any other text (a fraction, an exponent, `-0`, digits
                // beyond 64 bits) is logged as the text it was.
                if let Ok(i) = text.parse::<i64>()
                    && i.to_string() == **text
                {
                    RpcId::Integer(i)
                } else if let Ok(u) = text.parse::<u64>()
                    && u.to_string() == **text
                {
                    RpcId::Unsigned(u)
                } else {
                    RpcId::Text(Cow::Borrowed(text))
                }
            }
            Id::String(text) => RpcId::Text(text.as_str().into()),
        }
    }
}

impl Id {
    /// From a parsed JSON value, if it is a valid id (a number is kept as
    /// serde_json prints it: the exact text is only known to [`parse`]).
    #[must_use]
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::Number(n) => Some(Id::Number(n.to_string().into())),
            Value::String(s) => Some(Id::String(s.clone())),
            _ => None,
        }
    }

    /// As a JSON value. A number that has no exact `serde_json` form (an
    /// integer beyond 64 bits, `-0`, `1e3`) becomes the nearest one: this
    /// is for comparisons and for the places that are not the answer's own
    /// `id`, which [`Reply::encode`] writes from the text.
    #[must_use]
    pub fn to_value(&self) -> Value {
        match self {
            Id::Number(text) => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_number)
                .unwrap_or_else(|| Value::String(text.to_string())),
            Id::String(s) => Value::String(s.clone()),
        }
    }

    /// The id as an answer writes it: a number as the text it was sent as,
    /// a string as a JSON string.
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Id::Number(text) => out.extend_from_slice(text.as_bytes()),
            Id::String(s) => super::json_out::write_str(s, out),
        }
    }
}

/// What the `id` member of an object was.
enum RawId {
    /// Absent: a notification.
    Absent,
    /// `null`, or a value that is not a string or a number.
    Invalid,
    /// A valid id.
    Valid(Id),
}

impl RawId {
    fn of_text(raw: Option<&RawValue>) -> RawId {
        let Some(raw) = raw else {
            return RawId::Absent;
        };
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => serde_json::from_str::<String>(text)
                .map_or(RawId::Invalid, |s| RawId::Valid(Id::String(s))),
            Some(b'-' | b'0'..=b'9') => RawId::Valid(Id::Number(text.into())),
            _ => RawId::Invalid,
        }
    }

    fn of_value(v: Option<Value>) -> RawId {
        match v {
            None => RawId::Absent,
            Some(v) => Id::from_value(&v).map_or(RawId::Invalid, RawId::Valid),
        }
    }
}

/// A message's top level as read in one pass: an object (its `id` kept as
/// text, every other member as a value), a batch, or anything else.
enum Top {
    Object(Option<Box<RawValue>>, Map<String, Value>),
    Array,
    Other,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Top, D::Error> {
        d.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut id = None;
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                // As in a parsed object, the last of repeated members wins.
                id = Some(map.next_value::<Box<RawValue>>()?);
            } else {
                let value = map.next_value::<Value>()?;
                members.insert(key, value);
            }
        }
        Ok(Top::Object(id, members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Top::Array)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Top, E> {
        Ok(Top::Other)
    }
}

/// A valid request or notification.
#[derive(Debug, Clone)]
pub struct Message {
    /// `None` for a notification.
    pub id: Option<Id>,
    /// Method name (non-empty).
    pub method: String,
    /// Parameters (`{}` when absent or null).
    pub params: Map<String, Value>,
}

impl Message {
    /// Whether this is a notification (never answered).
    #[must_use]
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }
}

/// Whether `msg` is sent as a notification (no id) but names a method that
/// is a request's (`tools/call`, `resources/read`, `ping`, …). Such a
/// message can be given no answer, so it is not run at all, and so never
/// escapes the bounds a request of its method is held to. Only the
/// `notifications/…` methods are notifications.
#[must_use]
pub fn runs_nothing(msg: &Message) -> bool {
    msg.is_notification() && !msg.method.starts_with("notifications/")
}

/// The methods whose answer is built by running a tool in a worker:
/// `tools/call`, and the MCP methods moat serves with one (`resources/read`
/// reads a file, `resources/list` lists files, `completion/complete` lists
/// a directory).
pub const TOOL_METHODS: [&str; 4] = [
    "tools/call",
    "resources/read",
    "resources/list",
    "completion/complete",
];

/// Whether `msg` runs a tool, whatever method it names it by: such a
/// request is admitted as a tool call by every transport (a tool slot, the
/// answer budget), never answered beside them as a control message.
#[must_use]
pub fn runs_a_tool(msg: &Message) -> bool {
    !msg.is_notification() && TOOL_METHODS.contains(&msg.method.as_str())
}

/// An error response to send.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The id to answer with (`None` → `null`).
    pub id: Option<Id>,
    /// Error code.
    pub code: i64,
    /// Message.
    pub message: String,
    /// Optional data.
    pub data: Option<Value>,
}

impl RpcError {
    /// A new error without data.
    #[must_use]
    pub fn new(id: Option<Id>, code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            id,
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attach data.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// The answer to send.
    #[must_use]
    pub fn to_reply(&self) -> Reply {
        Reply {
            id: self.id.clone(),
            body: self.to_value(),
        }
    }

    /// The JSON-RPC response object (its `id` as a value: see [`Reply`]).
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut err = Map::new();
        err.insert("code".into(), Value::from(self.code));
        err.insert("message".into(), Value::String(self.message.clone()));
        if let Some(d) = &self.data {
            err.insert("data".into(), d.clone());
        }
        let mut m = Map::new();
        m.insert("jsonrpc".into(), Value::from("2.0"));
        m.insert(
            "id".into(),
            self.id.as_ref().map_or(Value::Null, Id::to_value),
        );
        m.insert("error".into(), Value::Object(err));
        Value::Object(m)
    }
}

/// A success response object (its `id` as a value: see [`Reply`]).
#[must_use]
pub fn success(id: &Id, result: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), Value::from("2.0"));
    m.insert("id".into(), id.to_value());
    m.insert("result".into(), result);
    Value::Object(m)
}

/// An answer: the response object, and the request's id, which the answer
/// carries as the exact text it came as.
#[derive(Debug, Clone)]
pub struct Reply {
    id: Option<Id>,
    body: Value,
}

impl Reply {
    /// The success answer to the request `id`.
    #[must_use]
    pub fn success(id: Id, result: Value) -> Reply {
        Reply {
            body: success(&id, result),
            id: Some(id),
        }
    }

    /// The response object (a numeric id in it may not be the exact text).
    #[must_use]
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// The response object, apart from the id's text.
    #[must_use]
    pub fn into_body(self) -> Value {
        self.body
    }

    /// The answer's error code, when it is an error.
    #[must_use]
    pub fn error_code(&self) -> Option<i64> {
        self.body
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
    }

    /// One line of compact JSON (as [`encode`] writes it), the id written
    /// as it was sent.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        self.encode_into(&mut out);
        out
    }

    /// Append [`Reply::encode`]'s bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match (&self.id, &self.body) {
            (Some(id @ Id::Number(_)), Value::Object(members)) => {
                super::json_out::write_object_with(members, "id", out, |out| id.write(out));
            }
            _ => super::json_out::write_value(&self.body, out),
        }
    }

    /// The length of [`Reply::encode`]'s bytes, without writing them.
    #[must_use]
    pub fn encoded_len(&self) -> u64 {
        let Value::Object(members) = &self.body else {
            return super::json_out::value_len(&self.body);
        };
        let whole = super::json_out::encoded_len(members);
        match (&self.id, members.get("id")) {
            (Some(id @ Id::Number(_)), Some(shown)) => {
                let mut text = Vec::new();
                id.write(&mut text);
                whole - super::json_out::value_len(shown) + text.len() as u64
            }
            _ => whole,
        }
    }
}

const BATCH_REFUSED: &str = "invalid request: JSON-RPC batches are not accepted";
const NOT_AN_OBJECT: &str = "invalid request: a request must be a JSON object";

/// Parse raw bytes into a message (see the module docs for the two steps).
pub fn parse(bytes: &[u8]) -> Result<Message, RpcError> {
    let top: Top = serde_json::from_slice(bytes).map_err(|_| {
        RpcError::new(
            None,
            code::PARSE_ERROR,
            "parse error: the message is not valid JSON",
        )
    })?;
    match top {
        Top::Object(id, members) => envelope(RawId::of_text(id.as_deref()), members),
        Top::Array => Err(RpcError::new(None, code::INVALID_REQUEST, BATCH_REFUSED)),
        Top::Other => Err(RpcError::new(None, code::INVALID_REQUEST, NOT_AN_OBJECT)),
    }
}

/// The `method` of bytes that are JSON but not a valid request, for the
/// log line of their refusal (at most 100 characters); empty when there is
/// none.
#[must_use]
pub fn method_hint(bytes: &[u8]) -> String {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| {
            v.get("method")
                .and_then(Value::as_str)
                .map(|m| m.chars().take(100).collect())
        })
        .unwrap_or_default()
}

/// Apply the envelope rules to a parsed value (a number id is kept as
/// serde_json prints it; [`parse`] keeps the exact text).
pub fn validate(value: Value) -> Result<Message, RpcError> {
    let Value::Object(mut obj) = value else {
        let msg = if value.is_array() {
            BATCH_REFUSED
        } else {
            NOT_AN_OBJECT
        };
        return Err(RpcError::new(None, code::INVALID_REQUEST, msg));
    };
    let id = RawId::of_value(obj.remove("id"));
    envelope(id, obj)
}

/// The envelope rules on an object's members (its `id` taken apart).
fn envelope(raw_id: RawId, mut obj: Map<String, Value>) -> Result<Message, RpcError> {
    // The id first, so every later error can carry it.
    let id = match raw_id {
        RawId::Absent => None,
        RawId::Valid(id) => Some(id),
        RawId::Invalid => {
            return Err(RpcError::new(
                None,
                code::INVALID_REQUEST,
                "invalid request: id must be a string or a number (a notification has no id member)",
            ));
        }
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(RpcError::new(
            id,
            code::INVALID_REQUEST,
            "invalid request: jsonrpc must be \"2.0\"",
        ));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) if !m.is_empty() => m,
        _ => {
            return Err(RpcError::new(
                id,
                code::INVALID_REQUEST,
                "invalid request: method must be a non-empty string",
            ));
        }
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(RpcError::new(
                id,
                code::INVALID_REQUEST,
                "invalid request: params must be an object (positional params are not accepted)",
            ));
        }
    };
    if obj.contains_key("result") || obj.contains_key("error") {
        return Err(RpcError::new(
            id,
            code::INVALID_REQUEST,
            "invalid request: not a request",
        ));
    }
    Ok(Message { id, method, params })
}

/// Serialise a response as one line of compact JSON (no trailing newline).
///
/// U+2028 and U+2029 are escaped: JSON allows them raw, but some line-oriented
/// readers treat them as line breaks, which would split a message.
#[must_use]
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    super::json_out::write_value(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_become_log_fields_of_their_kind() {
        use crate::logging::RpcId;
        let n = |t: &str| Id::Number(t.into());
        assert_eq!(RpcId::from(&n("7")), RpcId::Integer(7));
        assert_eq!(RpcId::from(&n("-3")), RpcId::Integer(-3));
        assert_eq!(
            RpcId::from(&n(&u64::MAX.to_string())),
            RpcId::Unsigned(u64::MAX)
        );
        assert_eq!(RpcId::from(&n("1.5")), RpcId::Text("1.5".into()));
        assert_eq!(RpcId::from(&n("-0")), RpcId::Text("-0".into()));
        assert_eq!(RpcId::from(&n("1e3")), RpcId::Text("1e3".into()));
        assert_eq!(
            RpcId::from(&Id::String("abc".into())),
            RpcId::Text("abc".into())
        );
    }

    fn err(v: Value) -> RpcError {
        validate(v).unwrap_err()
    }

    #[test]
    fn envelope_rules() {
        assert_eq!(err(json!([1])).code, code::INVALID_REQUEST);
        assert_eq!(err(json!("x")).code, code::INVALID_REQUEST);
        let e = err(json!({"jsonrpc": "1.0", "id": 42, "method": "m"}));
        assert_eq!(
            (e.code, e.id),
            (code::INVALID_REQUEST, Some(Id::Number("42".into())))
        );
        let e = err(json!({"jsonrpc": "2.0", "id": "a", "method": ""}));
        assert_eq!(e.id, Some(Id::String("a".into())));
        assert_eq!(
            err(json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]})).code,
            code::INVALID_REQUEST
        );
        let e = err(json!({"jsonrpc": "2.0", "id": true, "method": "m"}));
        assert_eq!((e.code, e.id), (code::INVALID_REQUEST, None));
        assert_eq!(
            err(json!({"jsonrpc": "2.0", "id": {}, "method": "m"})).code,
            code::INVALID_REQUEST
        );
        let ok = validate(json!({"jsonrpc": "2.0", "method": "m", "params": null})).unwrap();
        assert!(ok.is_notification() && ok.params.is_empty());
        // A null id is not a notification: it is an invalid request.
        let e = err(json!({"jsonrpc": "2.0", "id": null, "method": "m"}));
        assert_eq!((e.code, e.id), (code::INVALID_REQUEST, None));
        let e = parse(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).unwrap_err();
        assert_eq!((e.code, e.id), (code::INVALID_REQUEST, None));
        assert_eq!(parse(b"{oops").unwrap_err().code, code::PARSE_ERROR);
        assert_eq!(parse(b"\xff\xfe").unwrap_err().code, code::PARSE_ERROR);
    }

    #[test]
    fn an_answer_carries_its_id_as_the_text_it_was_sent_as() {
        for text in [
            "-0",
            "1.0",
            "1e3",
            "12345678901234567890123",
            "1e400",
            "-1.5E-7",
            "7",
        ] {
            let line = format!(r#"{{"id": {text} ,"jsonrpc":"2.0","method":"ping"}}"#);
            let msg = parse(line.as_bytes()).unwrap();
            assert_eq!(msg.id, Some(Id::Number(text.into())));
            let id = msg.id.clone().unwrap();
            let ok = Reply::success(id.clone(), json!({"a": [1, 2]}));
            let want = format!(r#"{{"id":{text},"jsonrpc":"2.0","result":{{"a":[1,2]}}}}"#);
            assert_eq!(String::from_utf8(ok.encode()).unwrap(), want);
            assert_eq!(ok.encoded_len(), want.len() as u64);
            let e = RpcError::new(Some(id), code::METHOD_NOT_FOUND, "x").to_reply();
            let text_out = String::from_utf8(e.encode()).unwrap();
            assert!(text_out.contains(&format!(r#""id":{text},"#)), "{text_out}");
            assert_eq!(e.encoded_len(), text_out.len() as u64);
        }
        let s = parse(br#"{"id":"a\u0041","jsonrpc":"2.0","method":"ping"}"#).unwrap();
        assert_eq!(s.id, Some(Id::String("aA".into())));
    }

    #[test]
    fn a_request_method_sent_as_a_notification_runs_nothing() {
        let m = |v: Value| validate(v).unwrap();
        assert!(runs_nothing(&m(
            json!({"jsonrpc": "2.0", "method": "tools/call"})
        )));
        assert!(runs_nothing(&m(
            json!({"jsonrpc": "2.0", "method": "ping"})
        )));
        assert!(!runs_nothing(&m(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})
        )));
        assert!(!runs_nothing(&m(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
        )));
    }

    #[test]
    fn encoding_is_one_line_and_escapes_separators() {
        let line = encode(&json!({"t": "a\u{2028}b\u{2029}c\nd"}));
        let s = String::from_utf8(line).unwrap();
        assert_eq!(s, r#"{"t":"a\u2028b\u2029c\nd"}"#);
        assert!(!s.contains('\n'));
    }
}

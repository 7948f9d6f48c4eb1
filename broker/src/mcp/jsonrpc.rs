//! JSON-RPC 2.0 envelopes, written by hand on `serde_json` so the broker sees
//! and controls every byte.
//!
//! Parsing is in two steps: bytes → `serde_json::Value` (a JSON error is
//! `-32700`), then the envelope rules (`-32600`). When an envelope is invalid
//! the request id is still recovered whenever it is a string or a number, so
//! the client can match the error to its request (`null` only when no id
//! can be read).

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
#[derive(Debug, Clone, PartialEq)]
pub enum Id {
    /// A numeric id, kept exactly as sent.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

/// The id as the request's log lines carry it (`rpc_id`).
impl<'a> From<&'a Id> for crate::logging::RpcId<'a> {
    fn from(id: &'a Id) -> Self {
        use crate::logging::RpcId;
        match id {
            Id::Number(n) => {
                if let Some(i) = n.as_i64() {
                    RpcId::Integer(i)
                } else if let Some(u) = n.as_u64() {
                    RpcId::Unsigned(u)
                } else {
                    RpcId::Text(n.to_string().into())
                }
            }
            Id::String(text) => RpcId::Text(text.as_str().into()),
        }
    }
}

impl Id {
    /// From a JSON value, if it is a valid id.
    #[must_use]
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::Number(n) => Some(Id::Number(n.clone())),
            Value::String(s) => Some(Id::String(s.clone())),
            _ => None,
        }
    }

    /// As a JSON value.
    #[must_use]
    pub fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => Value::Number(n.clone()),
            Id::String(s) => Value::String(s.clone()),
        }
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

    /// The JSON-RPC response object.
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

/// A success response object.
#[must_use]
pub fn success(id: &Id, result: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), Value::from("2.0"));
    m.insert("id".into(), id.to_value());
    m.insert("result".into(), result);
    Value::Object(m)
}

/// Parse raw bytes into a message (see the module docs for the two steps).
pub fn parse(bytes: &[u8]) -> Result<Message, RpcError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|_| {
        RpcError::new(
            None,
            code::PARSE_ERROR,
            "parse error: the message is not valid JSON",
        )
    })?;
    validate(value)
}

/// Apply the envelope rules to a parsed value.
pub fn validate(value: Value) -> Result<Message, RpcError> {
    let Value::Object(mut obj) = value else {
        let msg = if value.is_array() {
            "invalid request: JSON-RPC batches are not accepted"
        } else {
            "invalid request: a request must be a JSON object"
        };
        return Err(RpcError::new(None, code::INVALID_REQUEST, msg));
    };
    // Recover the id first so every later error can carry it.
    let raw_id = obj.remove("id");
    let id = match &raw_id {
        None | Some(Value::Null) => None,
        Some(v) => match Id::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err(RpcError::new(
                    None,
                    code::INVALID_REQUEST,
                    "invalid request: id must be a string or a number",
                ));
            }
        },
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
        assert_eq!(RpcId::from(&Id::Number(7.into())), RpcId::Integer(7));
        assert_eq!(RpcId::from(&Id::Number((-3).into())), RpcId::Integer(-3));
        assert_eq!(
            RpcId::from(&Id::Number(u64::MAX.into())),
            RpcId::Unsigned(u64::MAX)
        );
        let fraction = serde_json::Number::from_f64(1.5).unwrap();
        assert_eq!(
            RpcId::from(&Id::Number(fraction)),
            RpcId::Text("1.5".into())
        );
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
            (code::INVALID_REQUEST, Some(Id::Number(42.into())))
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
        assert!(
            validate(json!({"jsonrpc": "2.0", "id": null, "method": "m"}))
                .unwrap()
                .is_notification()
        );
        assert_eq!(parse(b"{oops").unwrap_err().code, code::PARSE_ERROR);
        assert_eq!(parse(b"\xff\xfe").unwrap_err().code, code::PARSE_ERROR);
    }

    #[test]
    fn encoding_is_one_line_and_escapes_separators() {
        let line = encode(&json!({"t": "a\u{2028}b\u{2029}c\nd"}));
        let s = String::from_utf8(line).unwrap();
        assert_eq!(s, r#"{"t":"a\u2028b\u2029c\nd"}"#);
        assert!(!s.contains('\n'));
    }
}

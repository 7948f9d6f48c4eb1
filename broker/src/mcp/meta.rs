//! Per-request `_meta` of the 2026-07-28 revision, validated in this order
//! (it decides which error a client sees, so it is fixed):
//!
//! 1. every key's syntax and reservation → `-32602`;
//! 2. `io.modelcontextprotocol/protocolVersion` present → `-32602`;
//! 3. on HTTP, the `MCP-Protocol-Version` header agrees → `-32020`;
//! 4. the version is supported → `-32022`;
//! 5. `io.modelcontextprotocol/clientCapabilities` is an object → `-32602`.

use serde_json::{Map, Value, json};

use super::jsonrpc::{Id, RpcError, code};

/// The stateless revision moat serves per request.
pub const MODERN_VERSION: &str = "2026-07-28";
/// Revisions served after an `initialize` handshake, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `_meta` key of the protocol version.
pub const KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const KEY_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client info.
pub const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server info (in results).
pub const KEY_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// W3C trace-context keys: bare, exempt from the key rules, echoed in results.
pub const TRACE_KEYS: &[&str] = &["traceparent", "tracestate", "baggage"];

/// What a valid modern `_meta` told us.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// Client label (`name/version`, `name`, or `unidentified`). The logs
    /// name the session's client instead, so only the unit tests read it.
    #[allow(dead_code, reason = "read only by the unit tests")]
    pub client: String,
    /// Trace keys to echo into the result `_meta`.
    pub trace: Map<String, Value>,
}

/// Whether a request carries modern `_meta` (a protocol version key).
#[must_use]
pub fn is_modern(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(KEY_VERSION))
}

/// Validate a modern request's `_meta`. `header_version` is the HTTP
/// `MCP-Protocol-Version` header, when the transport has one.
pub fn validate(
    id: Option<&Id>,
    params: &Map<String, Value>,
    header_version: Option<&str>,
) -> Result<RequestMeta, RpcError> {
    let empty = Map::new();
    let meta = params
        .get("_meta")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let invalid = |msg: String| RpcError::new(id.cloned(), code::INVALID_PARAMS, msg);

    for key in meta.keys() {
        if TRACE_KEYS.contains(&key.as_str()) {
            continue;
        }
        if !valid_key(key) {
            return Err(invalid(format!(
                "_meta key '{key}' is not a valid meta key"
            )));
        }
        if is_reserved(key) && !key.starts_with("io.modelcontextprotocol/") {
            return Err(invalid(format!("_meta key '{key}' uses a reserved prefix")));
        }
    }
    let version = match meta.get(KEY_VERSION) {
        Some(Value::String(v)) if !v.is_empty() => v.as_str(),
        _ => {
            return Err(invalid(format!(
                "_meta must carry {KEY_VERSION} as a non-empty string"
            )));
        }
    };
    if let Some(h) = header_version
        && h.trim() != version
    {
        return Err(RpcError::new(
            id.cloned(),
            code::HEADER_MISMATCH,
            "the MCP-Protocol-Version header does not match _meta",
        )
        .with_data(json!({"header": h, "meta": version})));
    }
    if version != MODERN_VERSION {
        return Err(unsupported_version(id, version));
    }
    if !meta.get(KEY_CAPABILITIES).is_some_and(Value::is_object) {
        return Err(invalid(format!(
            "_meta must carry {KEY_CAPABILITIES} as an object"
        )));
    }
    let mut trace = Map::new();
    for k in TRACE_KEYS {
        if let Some(Value::String(v)) = meta.get(*k) {
            trace.insert((*k).to_owned(), Value::String(v.clone()));
        }
    }
    Ok(RequestMeta {
        client: client_label(meta.get(KEY_CLIENT_INFO)),
        trace,
    })
}

/// `-32022` naming what is supported.
#[must_use]
pub fn unsupported_version(id: Option<&Id>, requested: &str) -> RpcError {
    RpcError::new(
        id.cloned(),
        code::UNSUPPORTED_VERSION,
        format!("unsupported protocol version '{requested}'"),
    )
    .with_data(json!({"supported": [MODERN_VERSION], "requested": requested}))
}

/// `[prefix/]name`: prefix a dot-separated label sequence, each label and the
/// name starting with an ASCII alphanumeric, then `[A-Za-z0-9._-]*`.
fn valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let label_ok = |s: &str| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if !label_ok(name) {
        return false;
    }
    match prefix {
        None => true,
        Some(p) => p.split('.').all(|l| {
            let mut chars = l.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
        }),
    }
}

/// A prefix whose second label is `modelcontextprotocol` or `mcp`.
fn is_reserved(key: &str) -> bool {
    let Some((prefix, _)) = key.rsplit_once('/') else {
        return false;
    };
    matches!(
        prefix.split('.').nth(1),
        Some("modelcontextprotocol" | "mcp")
    )
}

/// A client label for logs from a `clientInfo` object (`name/version`,
/// `name`, or `unidentified`).
#[must_use]
pub fn client_label(info: Option<&Value>) -> String {
    let Some(info) = info.and_then(Value::as_object) else {
        return "unidentified".into();
    };
    // Bounded: the label is the client's own text, and it is on every line.
    let short = |s: &str| -> String { s.chars().take(100).collect() };
    let name = info.get("name").and_then(Value::as_str).map(short);
    let version = info.get("version").and_then(Value::as_str).map(short);
    match (name, version) {
        (Some(n), Some(v)) => format!("{n}/{v}"),
        (Some(n), None) => n,
        _ => "unidentified".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("_meta".into(), meta);
        m
    }

    fn ok_meta() -> Value {
        json!({KEY_VERSION: MODERN_VERSION, KEY_CAPABILITIES: {}})
    }

    #[test]
    fn order_of_checks() {
        let bad_key = params(json!({"-x": 1, KEY_VERSION: "1999-01-01"}));
        assert_eq!(
            validate(None, &bad_key, None).unwrap_err().code,
            code::INVALID_PARAMS
        );
        let no_version = params(json!({KEY_CAPABILITIES: {}}));
        assert!(
            validate(None, &no_version, None)
                .unwrap_err()
                .message
                .contains("protocolVersion")
        );
        let old = params(json!({KEY_VERSION: "1999-01-01"}));
        let e = validate(None, &old, None).unwrap_err();
        assert_eq!(
            e.code,
            code::UNSUPPORTED_VERSION,
            "version checked before capabilities"
        );
        assert_eq!(e.data.unwrap()["requested"], "1999-01-01");
        let mismatch = params(ok_meta());
        assert_eq!(
            validate(None, &mismatch, Some("2025-11-25"))
                .unwrap_err()
                .code,
            code::HEADER_MISMATCH
        );
        assert!(validate(None, &mismatch, Some(MODERN_VERSION)).is_ok());
        let no_caps = params(json!({KEY_VERSION: MODERN_VERSION}));
        assert!(
            validate(None, &no_caps, None)
                .unwrap_err()
                .message
                .contains("clientCapabilities")
        );
        assert!(validate(None, &Map::new(), None).is_err());
    }

    #[test]
    fn key_rules() {
        let mut m = ok_meta();
        m["x.mcp/invented"] = json!(1);
        assert!(
            validate(None, &params(m), None)
                .unwrap_err()
                .message
                .contains("reserved")
        );
        let mut m = ok_meta();
        m["org.modelcontextprotocol/x"] = json!(1);
        assert!(validate(None, &params(m), None).is_err());
        let mut m = ok_meta();
        m["com.example/thing"] = json!(1);
        m["traceparent"] = json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        m["io.modelcontextprotocol/inventedByTheClient"] = json!(true);
        let meta = validate(None, &params(m), None).unwrap();
        assert_eq!(meta.trace.len(), 1);
        assert_eq!(meta.client, "unidentified");
        let mut m = ok_meta();
        m["bad key"] = json!(1);
        assert!(
            validate(None, &params(m), None)
                .unwrap_err()
                .message
                .contains("not a valid meta key")
        );
    }
}

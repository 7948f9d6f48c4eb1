//! Step 0 of the order of checks: the one value of each header the gate
//! judges (`Origin`, `Host`, `Authorization`, and an absolute-form target's
//! authority), refusing what it cannot judge rather than reading it as
//! absent.

use hyper::Uri;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};

use serde_json::{Value, json};

use super::{auth, origin};
use crate::mcp::jsonrpc::{self, RpcError, code};
use crate::mcp::meta;

pub(super) fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A header the gate judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gated {
    Origin,
    Host,
    Authorization,
}

/// Why the gate cannot judge a request (400, step 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unjudgeable {
    Duplicated(Gated),
    Malformed(Gated),
    /// An absolute-form target whose authority is not `host[:port]`.
    TargetMalformed,
    /// An absolute-form target whose authority is not the `Host` header.
    TargetDisagrees,
}

impl Unjudgeable {
    /// The `header` field of `http.header_refused`.
    pub(super) fn header(self) -> &'static str {
        match self {
            Unjudgeable::Duplicated(g) | Unjudgeable::Malformed(g) => match g {
                Gated::Origin => "origin",
                Gated::Host => "host",
                Gated::Authorization => "authorization",
            },
            Unjudgeable::TargetMalformed | Unjudgeable::TargetDisagrees => "target",
        }
    }

    /// The `reason` field of `http.header_refused`.
    pub(super) fn reason(self) -> &'static str {
        match self {
            Unjudgeable::Duplicated(_) => "duplicated",
            Unjudgeable::Malformed(_) | Unjudgeable::TargetMalformed => "malformed",
            Unjudgeable::TargetDisagrees => "disagrees",
        }
    }

    /// The answer's `error` text; it never carries the value.
    pub(super) fn message(self) -> &'static str {
        match self {
            Unjudgeable::Duplicated(Gated::Origin) => "duplicated Origin header",
            Unjudgeable::Duplicated(Gated::Host) => "duplicated Host header",
            Unjudgeable::Duplicated(Gated::Authorization) => "duplicated Authorization header",
            Unjudgeable::Malformed(Gated::Origin) => "malformed Origin header",
            Unjudgeable::Malformed(Gated::Host) => "malformed Host header",
            Unjudgeable::Malformed(Gated::Authorization) => "malformed Authorization header",
            Unjudgeable::TargetMalformed => "malformed request target authority",
            Unjudgeable::TargetDisagrees => "the request target's authority does not match Host",
        }
    }
}

/// The one value of each header the gate judges, each well-formed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Gate<'a> {
    pub(super) origin: Option<&'a str>,
    /// The absolute-form target's authority if there is one, else `Host`.
    pub(super) host: Option<&'a str>,
    pub(super) authorization: Option<&'a [u8]>,
}

/// At most one `name` header.
fn single<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
    which: Gated,
) -> Result<Option<&'a HeaderValue>, Unjudgeable> {
    let mut all = headers.get_all(name).iter();
    let first = all.next();
    if all.next().is_some() {
        return Err(Unjudgeable::Duplicated(which));
    }
    Ok(first)
}

/// A value as visible-ASCII text without surrounding spaces and tabs.
fn ascii_value(v: &HeaderValue, which: Gated) -> Result<&str, Unjudgeable> {
    v.to_str()
        .map(|s| s.trim_matches([' ', '\t']))
        .map_err(|_| Unjudgeable::Malformed(which))
}

/// Step 0: read the headers the gate judges, refusing what it cannot judge.
pub(super) fn read_gate<'a>(
    headers: &'a HeaderMap,
    target: &'a Uri,
) -> Result<Gate<'a>, Unjudgeable> {
    let origin = match single(headers, &header::ORIGIN, Gated::Origin)? {
        None => None,
        Some(v) => {
            let o = ascii_value(v, Gated::Origin)?;
            if !origin::origin_syntax_ok(o) {
                return Err(Unjudgeable::Malformed(Gated::Origin));
            }
            Some(o)
        }
    };
    let host = match single(headers, &header::HOST, Gated::Host)? {
        None => None,
        Some(v) => {
            let h = ascii_value(v, Gated::Host)?;
            if origin::parse_host(h).is_none() {
                return Err(Unjudgeable::Malformed(Gated::Host));
            }
            Some(h)
        }
    };
    let authorization = match single(headers, &header::AUTHORIZATION, Gated::Authorization)? {
        None => None,
        Some(v) if auth::well_formed(v.as_bytes()) => Some(v.as_bytes()),
        Some(_) => return Err(Unjudgeable::Malformed(Gated::Authorization)),
    };
    let host = match target.authority().map(hyper::http::uri::Authority::as_str) {
        None => host,
        Some(a) => {
            if origin::parse_host(a).is_none() {
                return Err(Unjudgeable::TargetMalformed);
            }
            if host.is_some_and(|h| !h.eq_ignore_ascii_case(a)) {
                return Err(Unjudgeable::TargetDisagrees);
            }
            Some(a)
        }
    };
    Ok(Gate {
        origin,
        host,
        authorization,
    })
}

/// Whether the client's `Accept` names `text/event-stream` (or takes any
/// type), so that a call's progress can be streamed to it.
pub(super) fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|item| item.split(';').next())
        .map(str::trim)
        .any(|t| t.eq_ignore_ascii_case("text/event-stream") || t == "*/*" || t == "text/*")
}

/// One of the headers the 2026-07-28 revision mirrors from the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Header {
    /// Not sent.
    Absent,
    /// Sent once (its text; a value that is not visible ASCII reads as
    /// empty, which matches nothing).
    One(String),
    /// Sent more than once: a gateway may route by one copy while the
    /// server reads another, so it is refused whatever the copies say.
    Repeated,
}

impl Header {
    fn read(headers: &HeaderMap, name: &str) -> Header {
        let mut all = headers.get_all(name).iter();
        match (all.next(), all.next()) {
            (None, _) => Header::Absent,
            (Some(v), None) => Header::One(v.to_str().unwrap_or("").to_owned()),
            (Some(_), Some(_)) => Header::Repeated,
        }
    }

    /// The value, when it was sent once.
    pub(super) fn value(&self) -> Option<&str> {
        match self {
            Header::One(v) => Some(v),
            Header::Absent | Header::Repeated => None,
        }
    }
}

/// The mirrored headers of a request: `MCP-Protocol-Version`, `Mcp-Method`
/// and `Mcp-Name`.
#[derive(Debug, Clone)]
pub(super) struct Mirrored {
    pub(super) protocol: Header,
    pub(super) method: Header,
    pub(super) name: Header,
}

impl Mirrored {
    /// Read them from `headers`.
    pub(super) fn read(headers: &HeaderMap) -> Mirrored {
        Mirrored {
            protocol: Header::read(headers, "mcp-protocol-version"),
            method: Header::read(headers, "mcp-method"),
            name: Header::read(headers, "mcp-name"),
        }
    }
}

/// The 2026-07-28 header rules: a mirrored header sent more than once is
/// refused on any request; on a modern request the protocol version,
/// method and name headers must be present where required and agree with
/// the body.
pub(super) fn check_mirrored_headers(msg: &jsonrpc::Message, h: &Mirrored) -> Option<RpcError> {
    let error = |message: String, data: Value| {
        Some(RpcError::new(msg.id.clone(), code::HEADER_MISMATCH, message).with_data(data))
    };
    for (what, header) in [
        ("MCP-Protocol-Version", &h.protocol),
        ("Mcp-Method", &h.method),
        ("Mcp-Name", &h.name),
    ] {
        if *header == Header::Repeated {
            return error(
                format!("the {what} header is sent more than once"),
                json!({"header": what}),
            );
        }
    }
    let (protocol, method, name) = (h.protocol.value(), h.method.value(), h.name.value());
    let modern =
        meta::is_modern(&msg.params) || protocol.is_some_and(|p| p.trim() == meta::MODERN_VERSION);
    if !modern {
        return None;
    }
    let mismatch = |what: &str, header: Option<&str>, body: &str| {
        error(
            format!("the {what} header does not match the request body"),
            json!({"header": header, "body": body}),
        )
    };
    if protocol.is_none() {
        return mismatch("MCP-Protocol-Version", None, "");
    }
    match method {
        Some(m) if m.trim() == msg.method => {}
        other => return mismatch("Mcp-Method", other, &msg.method),
    }
    let body_name = match msg.method.as_str() {
        "tools/call" | "prompts/get" => msg.params.get("name").and_then(Value::as_str),
        "resources/read" => msg.params.get("uri").and_then(Value::as_str),
        _ => return None,
    };
    if let Some(body_name) = body_name
        && name.map(str::trim) != Some(body_name)
    {
        return mismatch("Mcp-Name", name, body_name);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_bytes(v).unwrap(),
            );
        }
        h
    }

    fn origin_form() -> Uri {
        Uri::from_static("/mcp")
    }

    #[test]
    fn a_mirrored_header_sent_twice_is_refused_on_any_request() {
        let msg = |params: Value| jsonrpc::Message {
            id: Some(jsonrpc::Id::Number("1".into())),
            method: "tools/list".into(),
            params: params.as_object().cloned().unwrap_or_default(),
        };
        for name in ["mcp-protocol-version", "mcp-method", "mcp-name"] {
            // Each header once, then `name` a second time.
            let h = headers(&[
                ("mcp-protocol-version", b"2026-07-28"),
                ("mcp-method", b"tools/list"),
                ("mcp-name", b"tools/list"),
                (name, b"tools/list"),
            ]);
            let e = check_mirrored_headers(&msg(json!({})), &Mirrored::read(&h));
            assert_eq!(e.map(|e| e.code), Some(code::HEADER_MISMATCH), "{name}");
        }
        let once = headers(&[("mcp-protocol-version", b"2025-06-18")]);
        assert!(check_mirrored_headers(&msg(json!({})), &Mirrored::read(&once)).is_none());
    }

    #[test]
    fn one_well_formed_value_of_each_is_read() {
        let h = headers(&[
            ("origin", b"https://app.example"),
            ("host", b"localhost:8080"),
            ("authorization", b"Bearer t"),
        ]);
        let uri = origin_form();
        assert_eq!(
            read_gate(&h, &uri),
            Ok(Gate {
                origin: Some("https://app.example"),
                host: Some("localhost:8080"),
                authorization: Some(b"Bearer t"),
            })
        );
        assert_eq!(read_gate(&HeaderMap::new(), &uri), Ok(Gate::default()));
    }

    #[test]
    fn a_second_copy_of_any_gated_header_is_refused() {
        let uri = origin_form();
        for (name, which) in [
            ("origin", Gated::Origin),
            ("host", Gated::Host),
            ("authorization", Gated::Authorization),
        ] {
            let value: &[u8] = if which == Gated::Origin {
                b"https://a.example"
            } else {
                b"localhost"
            };
            let h = headers(&[(name, value), (name, value)]);
            assert_eq!(read_gate(&h, &uri), Err(Unjudgeable::Duplicated(which)));
        }
    }

    #[test]
    fn a_value_that_cannot_be_read_is_refused_not_taken_as_absent() {
        let uri = origin_form();
        for (name, value, which) in [
            ("origin", &b"https://caf\xc3\xa9.example"[..], Gated::Origin),
            ("origin", b"https://a\t.example", Gated::Origin),
            ("origin", b"", Gated::Origin),
            ("host", b"lo\xc3\xa9calhost", Gated::Host),
            ("host", b"user@localhost", Gated::Host),
            ("host", b"", Gated::Host),
            ("authorization", b"Bearer t\xc3\xa9", Gated::Authorization),
            ("authorization", b"", Gated::Authorization),
        ] {
            let h = headers(&[(name, value)]);
            assert_eq!(
                read_gate(&h, &uri),
                Err(Unjudgeable::Malformed(which)),
                "{name}: {value:?}"
            );
        }
    }

    #[test]
    fn an_absolute_form_authority_stands_for_host_and_must_agree_with_it() {
        let uri = Uri::from_static("http://evil.example/mcp");
        let none = HeaderMap::new();
        assert_eq!(
            read_gate(&none, &uri).map(|g| g.host),
            Ok(Some("evil.example"))
        );
        let agreeing = headers(&[("host", b"EVIL.example")]);
        assert_eq!(
            read_gate(&agreeing, &uri).map(|g| g.host),
            Ok(Some("evil.example"))
        );
        let other = headers(&[("host", b"localhost:8080")]);
        assert_eq!(read_gate(&other, &uri), Err(Unjudgeable::TargetDisagrees));
        let userinfo = Uri::from_static("http://user@localhost:8080/mcp");
        assert_eq!(
            read_gate(&HeaderMap::new(), &userinfo),
            Err(Unjudgeable::TargetMalformed)
        );
    }
}

//! HTTP authorisation, Origin and Host: the order is Origin → Host → bearer
//! token, so the endpoint is no token oracle for a hostile page; a rebinding
//! page's `Host` is refused; probes need neither token nor origin. Before all
//! of it, on every path, the checks fail closed: a duplicated or unreadable
//! `Origin`, `Host` or `Authorization`, or an absolute-form target that
//! disagrees with `Host`, is 400.

use moat_tests::http::{HttpMoat, Req, Resp, exchange, modern, modern_call};
use moat_tests::{Fixture, Mode, Options};
use serde_json::json;

const TOKEN: &str = "s3cret-token-for-tests-9f2c";

fn server(extra: &[(&str, &str)]) -> (Fixture, HttpMoat) {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "1");
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    let s = HttpMoat::start(&fx.root, &o);
    (fx, s)
}

fn with_token(extra: &[(&str, &str)]) -> (Fixture, HttpMoat) {
    let mut all = vec![("MOAT_HTTP__BEARER_TOKEN", TOKEN)];
    all.extend_from_slice(extra);
    server(&all)
}

fn call() -> Req {
    Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"})))
}

#[track_caller]
fn assert_ok(r: &Resp) {
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(r.json()["result"]["isError"], false, "{r}");
}

/// No refused request reached a tool: an authorised one now is the first
/// `tool.call` logged.
#[track_caller]
fn assert_nothing_ran(s: &HttpMoat) {
    assert_ok(&s.send(&call().bearer(TOKEN)));
    assert_eq!(
        s.wait_events("tool.call", 1).len(),
        1,
        "a refused request reached a tool: {}",
        s.stderr()
    );
}

#[track_caller]
fn assert_refused(r: &Resp, status: u16, message: &str) {
    assert_eq!(r.status, status, "{r}");
    assert_eq!(r.json(), json!({"error": message}), "{r}");
    assert!(
        !r.text().contains(TOKEN),
        "a refusal must not echo the token: {r}"
    );
}

#[test]
fn a_missing_token_is_401_with_www_authenticate_bearer() {
    let (_fx, s) = with_token(&[]);
    let r = s.send(&call());
    assert_refused(&r, 401, "unauthorised");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{r}");
    assert_nothing_ran(&s);
}

#[test]
fn a_wrong_token_is_401() {
    let (_fx, s) = with_token(&[]);
    let wrong = [
        format!("Bearer {TOKEN}x"),
        format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]),
        format!("Basic {TOKEN}"),
        TOKEN.to_owned(),
        "Bearer".to_owned(),
        "Bearer ".to_owned(),
        format!("Bearer {}", "a".repeat(4000)),
    ];
    for auth in &wrong {
        let r = s.send(&call().set_header("Authorization", auth));
        assert_refused(&r, 401, "unauthorised");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    }
    assert_nothing_ran(&s);
}

#[test]
fn the_right_token_is_200() {
    let (_fx, s) = with_token(&[]);
    assert_ok(&s.send(&call().bearer(TOKEN)));
    // The scheme is case-insensitive and surrounding spaces are ignored.
    assert_ok(&s.send(&call().set_header("Authorization", &format!("bearer   {TOKEN} "))));
    // The token never reaches the logs.
    assert!(!s.stderr().contains(TOKEN), "token in the logs");
}

#[test]
fn probes_need_no_token_and_no_origin_check() {
    let (_fx, s) = with_token(&[]);
    for path in ["/healthz", "/readyz"] {
        assert_eq!(s.get(path).status, 200, "{path}");
        let r = s.send(&Req::new("GET", path).header("Origin", "https://evil.example"));
        assert_eq!(r.status, 200, "{path} with a foreign origin: {r}");
    }
}

#[test]
fn an_unknown_origin_is_403() {
    let (_fx, s) = with_token(&[("MOAT_HTTP__ALLOWED_ORIGINS", "https://app.example")]);
    for origin in [
        "https://evil.example",
        "https://app.example.evil",
        "http://app.example",
        "null",
    ] {
        let r = s.send(&call().bearer(TOKEN).header("Origin", origin));
        assert_refused(&r, 403, "origin not allowed");
    }
    let logged = s.wait_events("http.origin_rejected", 4);
    assert_eq!(logged.len(), 4, "{}", s.stderr());
    assert_eq!(logged[0]["origin"], "https://evil.example");
    assert_nothing_ran(&s);
}

#[test]
fn a_known_origin_with_the_token_is_200() {
    // A comma-separated list from the environment, spaces trimmed.
    let (_fx, s) = with_token(&[(
        "MOAT_HTTP__ALLOWED_ORIGINS",
        " https://app.example , ,https://other.example",
    )]);
    for origin in ["https://app.example", "https://other.example"] {
        assert_ok(&s.send(&call().bearer(TOKEN).header("Origin", origin)));
    }
    // An allowed origin does not stand in for the token.
    assert_refused(
        &s.send(&call().header("Origin", "https://app.example")),
        401,
        "unauthorised",
    );
}

#[test]
fn the_origin_is_checked_before_the_token() {
    let (_fx, s) = with_token(&[]);
    for auth in [
        Some("Bearer wrong"),
        None,
        Some(&*format!("Bearer {TOKEN}")),
    ] {
        let mut req = call().header("Origin", "https://evil.example");
        if let Some(a) = auth {
            req = req.set_header("Authorization", a);
        }
        let r = s.send(&req);
        assert_refused(&r, 403, "origin not allowed");
        assert!(
            r.header("www-authenticate").is_none(),
            "a 403 must not invite a token: {r}"
        );
    }
}

#[test]
fn the_servers_own_loopback_origin_is_accepted_other_local_ports_are_not() {
    let (_fx, s) = with_token(&[]);
    let own = s.own_origin();
    assert_ok(&s.send(&call().bearer(TOKEN).header("Origin", &own)));
    let own_localhost = format!("http://localhost:{}", s.port());
    assert_ok(&s.send(&call().bearer(TOKEN).header("Origin", &own_localhost)));
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:3000",
        &*format!("https://127.0.0.1:{}", s.port()),
        "http://localhost",
    ] {
        assert_refused(
            &s.send(&call().bearer(TOKEN).header("Origin", origin)),
            403,
            "origin not allowed",
        );
    }
}

#[test]
fn a_rebinding_host_is_refused_and_loopback_hosts_are_accepted() {
    let (_fx, s) = with_token(&[]);
    let port = s.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
    ] {
        assert_ok(&s.send(&call().bearer(TOKEN).set_header("Host", &host)));
    }
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("localhost:{}", port.wrapping_add(1).max(1)),
        format!("127.0.0.1.evil.example:{port}"),
    ] {
        let r = s.send(&call().bearer(TOKEN).set_header("Host", &host));
        assert_refused(&r, 403, "host not allowed");
    }
    assert_eq!(
        s.wait_events("http.host_rejected", 4).len(),
        4,
        "{}",
        s.stderr()
    );
    // The Host check also comes before the token.
    let r = s.send(&call().set_header("Host", "evil.example"));
    assert_refused(&r, 403, "host not allowed");
    assert_eq!(s.wait_events("tool.call", 6).len(), 6, "{}", s.stderr());
}

#[test]
fn allowed_hosts_are_honoured() {
    let (_fx, s) = with_token(&[("MOAT_HTTP__ALLOWED_HOSTS", "moat.internal, mcp.example.com")]);
    for host in ["moat.internal", "MOAT.internal", "mcp.example.com"] {
        assert_ok(&s.send(&call().bearer(TOKEN).set_header("Host", host)));
    }
    let with_port = format!("moat.internal:{}", s.port());
    assert_ok(&s.send(&call().bearer(TOKEN).set_header("Host", &with_port)));
    assert_refused(
        &s.send(&call().bearer(TOKEN).set_header("Host", "evil.example")),
        403,
        "host not allowed",
    );
    // Loopback names stay allowed next to the configured ones.
    assert_ok(&s.send(&call().bearer(TOKEN)));
}

#[test]
fn without_a_token_the_endpoint_is_open_and_says_so() {
    let (_fx, s) = server(&[]);
    assert_ok(&s.send(&call()));
    let r = s.send(&Req::mcp(&modern(2, "tools/list", json!({}))).bearer("anything"));
    assert_eq!(r.status, 200, "{r}");
    assert!(
        !s.events("http.no_auth").is_empty(),
        "no warning about the open endpoint: {}",
        s.stderr()
    );
}

// Fail closed on headers the gate cannot judge: an `Origin`, `Host` or
// `Authorization` that is sent twice, or whose bytes are not one well-formed
// value, is 400 before the allow-lists, the token and the body; an
// absolute-form target's authority is judged like `Host` and must agree with
// it. A client library would normalise these requests, so they are written by
// hand.

/// The bytes of `req` with its `Host` line removed (the harness adds one
/// unless the request sets it).
fn without_host_line(req: &Req, addr: std::net::SocketAddr) -> Vec<u8> {
    let bytes = req.to_bytes(addr);
    let head_end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a request head");
    let head = String::from_utf8(bytes[..head_end].to_vec()).expect("a UTF-8 head");
    let kept: Vec<&str> = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("host:"))
        .collect();
    let mut out = kept.join("\r\n").into_bytes();
    out.extend_from_slice(&bytes[head_end..]);
    out
}

/// Refused by moat's gate: 400 with its JSON body, no token invited.
#[track_caller]
fn assert_unjudgeable(r: &Resp, message: &str) {
    assert_refused(r, 400, message);
    assert!(
        r.header("www-authenticate").is_none(),
        "a malformed header is not a token problem: {r}"
    );
}

#[test]
fn an_origin_that_is_not_visible_ascii_is_400_before_the_token() {
    let (_fx, s) = with_token(&[("MOAT_HTTP__ALLOWED_ORIGINS", "https://app.example")]);
    // `\u{e9}` goes on the wire as its UTF-8 bytes 0xC3 0xA9 (obs-text, which
    // the HTTP parser lets through); no origin holds a tab or a space.
    for origin in [
        "https://caf\u{e9}.example",
        "https://app.example\u{e9}",
        "https://app\t.example",
        "https://app.example https://evil.example",
    ] {
        for token in [Some(TOKEN), None] {
            let mut req = call().header("Origin", origin);
            if let Some(t) = token {
                req = req.bearer(t);
            }
            assert_unjudgeable(&s.send(&req), "malformed Origin header");
        }
    }
    // A control byte is refused by the HTTP parser itself (400, no body).
    for control in ["https://app.\u{1}example", "https://app.example\u{7f}"] {
        let r = s.send(&call().bearer(TOKEN).header("Origin", control));
        assert_eq!(r.status, 400, "{control:?}: {r}");
    }
    let logged = s.wait_events("http.header_refused", 8);
    assert_eq!(logged.len(), 8, "{}", s.stderr());
    assert_eq!(logged[0]["header"], "origin", "{}", logged[0]);
    assert_eq!(logged[0]["reason"], "malformed", "{}", logged[0]);
    assert!(
        !s.stderr().contains("caf\u{e9}"),
        "a refused value is not logged"
    );
    assert_nothing_ran(&s);
}

#[test]
fn two_origin_headers_are_400_whichever_comes_first() {
    let (_fx, s) = with_token(&[("MOAT_HTTP__ALLOWED_ORIGINS", "https://app.example")]);
    for (first, second) in [
        ("https://app.example", "https://evil.example"),
        ("https://evil.example", "https://app.example"),
        ("https://app.example", "https://app.example"),
    ] {
        let r = s.send(
            &call()
                .bearer(TOKEN)
                .header("Origin", first)
                .header("Origin", second),
        );
        assert_unjudgeable(&r, "duplicated Origin header");
    }
    let logged = s.wait_events("http.header_refused", 3);
    assert_eq!(logged.len(), 3, "{}", s.stderr());
    assert_eq!(logged[0]["reason"], "duplicated", "{}", logged[0]);
    assert_nothing_ran(&s);
}

#[test]
fn two_host_headers_are_400_whichever_comes_first() {
    let (_fx, s) = with_token(&[]);
    let own = s.addr.to_string();
    for (first, second) in [
        (own.as_str(), "evil.example"),
        ("evil.example", own.as_str()),
        (own.as_str(), own.as_str()),
    ] {
        let r = s.send(
            &call()
                .bearer(TOKEN)
                .header("Host", first)
                .header("Host", second),
        );
        assert_unjudgeable(&r, "duplicated Host header");
    }
    assert_nothing_ran(&s);
}

#[test]
fn a_host_that_cannot_be_parsed_is_400_even_where_host_is_not_checked() {
    // Bound to every interface with no allowed_hosts the Host allow-list is
    // off, yet a Host that is not one host[:port] is still refused.
    for bind in ["127.0.0.1", "0.0.0.0"] {
        let (_fx, s) = with_token(&[("MOAT_HTTP__HOST", bind)]);
        let port = s.port();
        for host in [
            format!("lo\u{e9}calhost:{port}"),
            format!("localhost:{port}x"),
            "localhost:99999".to_owned(),
            "localhost:".to_owned(),
            format!("user@127.0.0.1:{port}"),
            format!("127.0.0.1:{port}/mcp"),
            format!("localhost,evil.example:{port}"),
            format!("local host:{port}"),
            format!("[::1:{port}"),
            format!("[evil.example]:{port}"),
            String::new(),
        ] {
            let r = s.send(&call().bearer(TOKEN).set_header("Host", &host));
            assert_unjudgeable(&r, "malformed Host header");
        }
        assert_nothing_ran(&s);
    }
}

#[test]
fn two_authorization_headers_are_400_even_when_one_carries_the_token() {
    let (_fx, s) = with_token(&[]);
    let good = format!("Bearer {TOKEN}");
    for (first, second) in [
        (good.as_str(), "Bearer wrong"),
        ("Bearer wrong", good.as_str()),
        (good.as_str(), good.as_str()),
    ] {
        let r = s.send(
            &call()
                .header("Authorization", first)
                .header("Authorization", second),
        );
        assert_unjudgeable(&r, "duplicated Authorization header");
    }
    let r = s.send(&call().set_header("Authorization", &format!("Bearer {TOKEN}\u{e9}")));
    assert_unjudgeable(&r, "malformed Authorization header");
    let logged = s.wait_events("http.header_refused", 4);
    assert_eq!(logged.len(), 4, "{}", s.stderr());
    assert_eq!(logged[0]["header"], "authorization", "{}", logged[0]);
    assert!(!s.stderr().contains(TOKEN), "token in the logs");
    assert_nothing_ran(&s);
}

#[test]
fn an_absolute_form_target_is_judged_like_host_and_must_agree_with_it() {
    let (_fx, s) = with_token(&[]);
    let own = s.addr.to_string();
    let absolute = |authority: &str| {
        let mut r = call().bearer(TOKEN);
        r.path = format!("http://{authority}/mcp");
        r
    };
    // A foreign authority, with a Host that agrees or with none: 403 like a
    // foreign Host.
    let r = s.send(&absolute("evil.example").set_header("Host", "evil.example"));
    assert_refused(&r, 403, "host not allowed");
    let r = exchange(
        s.addr,
        &without_host_line(&absolute("evil.example"), s.addr),
    )
    .unwrap();
    assert_refused(&r, 403, "host not allowed");
    // Authority and Host that disagree, either one foreign: 400.
    for (authority, host) in [
        ("evil.example", own.as_str()),
        (own.as_str(), "evil.example"),
    ] {
        let r = s.send(&absolute(authority).set_header("Host", host));
        assert_unjudgeable(&r, "the request target's authority does not match Host");
    }
    // An authority that is not a host[:port] (user information) is 400.
    let r = s.send(&absolute(&format!("user@{own}")).set_header("Host", &own));
    assert_unjudgeable(&r, "malformed request target authority");
    // The authority is checked before the token.
    let mut r = call();
    r.path = "http://evil.example/mcp".into();
    assert_refused(
        &s.send(&r.set_header("Host", "evil.example")),
        403,
        "host not allowed",
    );
    assert_nothing_ran(&s);
}

#[test]
fn an_absolute_form_target_with_an_allowed_authority_is_served() {
    let (_fx, s) = with_token(&[]);
    let port = s.port();
    for (authority, host) in [
        (
            format!("127.0.0.1:{port}"),
            Some(format!("127.0.0.1:{port}")),
        ),
        (
            format!("LOCALHOST:{port}"),
            Some(format!("localhost:{port}")),
        ),
        (format!("localhost:{port}"), None),
    ] {
        let mut req = call().bearer(TOKEN);
        req.path = format!("http://{authority}/mcp");
        let r = match host {
            Some(h) => s.send(&req.set_header("Host", &h)),
            None => exchange(s.addr, &without_host_line(&req, s.addr)).unwrap(),
        };
        assert_ok(&r);
    }
}

#[test]
fn unjudgeable_headers_are_refused_before_the_body_is_read() {
    let (_fx, s) = with_token(&[]);
    // A declared body far over the cap would be 413; an unreadable Origin
    // is refused first, and without the token it is 400, not 401.
    let r = s.send(
        &call()
            .bearer(TOKEN)
            .header("Origin", "https://caf\u{e9}.example")
            .header("Content-Length", "999999999"),
    );
    assert_unjudgeable(&r, "malformed Origin header");
    let r = s.send(
        &call()
            .header("Host", "localhost")
            .header("Host", "evil.example")
            .header("Content-Length", "999999999"),
    );
    assert_unjudgeable(&r, "duplicated Host header");
}

#[test]
fn probes_refuse_unjudgeable_headers_but_still_check_no_host() {
    let (_fx, s) = with_token(&[]);
    for path in ["/healthz", "/readyz"] {
        // A single foreign Host is fine: probes do not check Host.
        let r = s.send(&Req::new("GET", path).set_header("Host", "10.0.0.7:8080"));
        assert_eq!(r.status, 200, "{path}: {r}");
        let r = s.send(
            &Req::new("GET", path)
                .header("Host", "localhost")
                .header("Host", "evil.example"),
        );
        assert_unjudgeable(&r, "duplicated Host header");
        let r = s.send(&Req::new("GET", path).header("Origin", "https://caf\u{e9}.example"));
        assert_unjudgeable(&r, "malformed Origin header");
        let r = s.send(
            &Req::new("GET", path)
                .header("Authorization", "Bearer a")
                .header("Authorization", "Bearer b"),
        );
        assert_unjudgeable(&r, "duplicated Authorization header");
    }
}

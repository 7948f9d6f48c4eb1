//! HTTP authorisation, Origin and Host: the order is Origin → Host → bearer
//! token, so the endpoint is no token oracle for a hostile page; a rebinding
//! page's `Host` is refused; probes need neither token nor origin.

use moat_tests::http::{HttpMoat, Req, Resp, modern, modern_call};
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

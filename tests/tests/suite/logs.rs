//! Logs on stderr, judged on what the process writes: one JSON object per
//! line, stable event names, and no credential ever, whether it arrives in
//! a request (an `Origin` or `Host` header, a method name, a client label,
//! a bad configuration value) or is the server's own bearer token; tool
//! argument values are never logged.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use moat_tests::{Era, Fixture, Moat, Mode, Options, moat_bin};
use serde_json::{Value, json};

use super::util::{
    call_line, content_fixture, eventually, example_aws_key, example_github_token, json_lines,
};

/// The events named `name` logged so far.
fn events(m: &Moat, name: &str) -> Vec<Value> {
    json_lines(&m.stderr())
        .into_iter()
        .filter(|v| v["message"] == name)
        .collect()
}

/// Wait until `name` has been logged; the matching events.
#[track_caller]
fn wait_for(m: &Moat, name: &str) -> Vec<Value> {
    wait_for_n(m, name, 1)
}

/// The `name` events once at least `n` have been logged: a line is written
/// after its answer, so an answer can arrive before the log line does.
fn wait_for_n(m: &Moat, name: &str, n: usize) -> Vec<Value> {
    assert!(
        eventually(Duration::from_secs(10), || events(m, name).len() >= n),
        "{name} logged fewer than {n} times; stderr:\n{}",
        m.stderr()
    );
    events(m, name)
}

/// A server on HTTP with an ephemeral port; the server and its address.
fn http_server(fx: &Fixture, env: &[(&str, &str)]) -> (Moat, String) {
    let mut opts = Options::new(Mode::Confined).env("MOAT_HTTP__PORT", "0");
    for (k, v) in env {
        opts = opts.env(k, *v);
    }
    opts.args = vec!["--transport".into(), "http".into()];
    let m = Moat::start(&fx.root, &opts);
    let listening = wait_for(&m, "http.listening");
    let addr = listening[0]["addr"].as_str().unwrap().to_owned();
    (m, addr)
}

/// One HTTP/1.1 POST /mcp with `headers`; the status code.
fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = String::from("POST /mcp HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {out:?}"))
}

fn discover_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": Moat::modern_meta()}})
    .to_string()
}

#[track_caller]
fn assert_never_logged(stderr: &str, secret: &str) {
    assert!(
        !stderr.contains(secret),
        "{secret:?} reached stderr:\n{stderr}"
    );
}

#[test]
fn a_token_in_a_rejected_origin_or_host_header_is_logged_redacted() {
    let fx = Fixture::new();
    let token = ["ghp_", &"0r1g1n".repeat(6)].concat();
    let (m, addr) = http_server(&fx, &[]);
    let origin = format!("https://{token}.evil.example");
    assert_eq!(post(&addr, &[("Origin", &origin)], &discover_body()), 403);
    let rejected = wait_for(&m, "http.origin_rejected");
    assert_eq!(
        rejected[0]["origin"],
        "https://[redacted:github-token].evil.example",
        "{}",
        m.stderr()
    );
    assert_eq!(rejected[0]["level"], "WARN");

    let aws = example_aws_key();
    let host = format!("{aws}.evil.example");
    assert_eq!(post(&addr, &[("Host", &host)], &discover_body()), 403);
    let rejected = wait_for(&m, "http.host_rejected");
    assert_eq!(
        rejected[0]["host"],
        "[redacted:aws-access-key-id].evil.example"
    );

    let stderr = m.stderr();
    json_lines(&stderr);
    assert_never_logged(&stderr, &token);
    assert_never_logged(&stderr, &aws);
}

#[test]
fn the_configured_bearer_token_never_reaches_stderr_even_at_debug_level() {
    let fx = Fixture::new();
    // Not credential-shaped: only the broker's knowledge of its own
    // configuration can keep it out of the logs.
    let bearer = "moat-bearer-horse-battery-7f3a9c2e51";
    let (m, addr) = http_server(
        &fx,
        &[
            ("MOAT_HTTP__BEARER_TOKEN", bearer),
            ("MOAT_OBSERVABILITY__LOG_LEVEL", "debug"),
        ],
    );
    let right = format!("Bearer {bearer}");
    let wrong = format!("Bearer {bearer}-not");
    assert_eq!(
        post(&addr, &[("Authorization", &wrong)], &discover_body()),
        401
    );
    assert_eq!(
        post(&addr, &[("Authorization", &right)], &discover_body()),
        200
    );
    // A header that carries the token where it does not belong is logged
    // (the Host check comes before authentication), with the token scrubbed.
    let host = format!("{bearer}.example");
    assert_eq!(
        post(
            &addr,
            &[("Host", &host), ("Authorization", &right)],
            &discover_body()
        ),
        403
    );
    let rejected = wait_for(&m, "http.host_rejected");
    assert_eq!(rejected[0]["host"], "[redacted].example", "{}", m.stderr());
    wait_for(&m, "rpc.ok");
    // Debug is on: a worker's start is logged at debug. Waited for, because
    // under load the workers may come up after the requests above.
    let ready = wait_for(&m, "worker.ready");
    assert_eq!(ready[0]["level"], "DEBUG", "{}", m.stderr());
    let stderr = m.stderr();
    json_lines(&stderr);
    assert_never_logged(&stderr, bearer);
}

#[test]
fn a_token_sent_as_a_method_name_or_client_label_is_logged_redacted() {
    let fx = content_fixture();
    let token = example_github_token();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    // An unknown method: rpc.error logs the method and the message.
    let r = m.request(&token, json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // A client label in _meta: tool.call logs it.
    let mut meta = Moat::modern_meta();
    meta["io.modelcontextprotocol/clientInfo"]["name"] = json!(token);
    let r = m.request_raw(
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "README.md"}, "_meta": meta}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    let errors = wait_for(&m, "rpc.error");
    assert_eq!(
        errors[0]["method"],
        "[redacted:github-token]",
        "{}",
        m.stderr()
    );
    assert_eq!(
        errors[0]["error_message"],
        "unknown method '[redacted:github-token]'",
        "{}",
        m.stderr()
    );
    let calls = wait_for(&m, "tool.call");
    assert!(
        calls.iter().any(|c| c["client"]
            .as_str()
            .is_some_and(|l| l.contains("[redacted:github-token]"))),
        "{}",
        m.stderr()
    );
    assert_never_logged(&m.stderr(), &token);
}

#[test]
fn tool_argument_values_are_never_logged_only_their_names_when_asked() {
    let fx = content_fixture();
    let marker = "argument-value-marker-5e1d";
    // A path argument is named in its call's audit event, and only there.
    let path_marker = "audited-path-marker-77a0";
    for names in [false, true] {
        let opts = Options::new(Mode::Confined).env(
            "MOAT_OBSERVABILITY__LOG_TOOL_ARGUMENTS",
            if names { "true" } else { "false" },
        );
        let mut m = Moat::connect(&fx.root, &opts, Era::Modern);
        let (_, r) = call_line(
            &mut m,
            "search_code",
            json!({"pattern": marker, "path": "src"}),
        );
        assert_eq!(r["isError"], false);
        let (_, r) = call_line(
            &mut m,
            "read_file",
            json!({"path": format!("{path_marker}.txt")}),
        );
        assert_eq!(r["isError"], true);
        let calls = wait_for_n(&m, "tool.call", 2);
        assert_eq!(calls.len(), 2, "{}", m.stderr());
        let audited = wait_for_n(&m, "audit", 2);
        assert_eq!(audited[1]["path"], format!("{path_marker}.txt"));
        assert_never_logged(&m.stderr(), marker);
        let stderr = m.stderr();
        let others: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.contains("\"message\":\"audit\""))
            .collect();
        assert_never_logged(&others.join("\n"), path_marker);
        if names {
            let logged = calls[0]["arguments"].as_str().unwrap_or_default();
            assert!(
                logged.contains("\"path\"") && logged.contains("\"pattern\""),
                "{}",
                m.stderr()
            );
        } else {
            assert!(calls[0].get("arguments").is_none(), "{}", m.stderr());
        }
        assert_eq!(calls[1]["error"], "not_found");
    }
}

#[test]
fn a_bad_configuration_value_is_reported_redacted() {
    let fx = Fixture::new();
    let token = example_github_token();
    let bearer = "moat-bearer-in-a-broken-config-41c7";
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("moat.toml");
    std::fs::write(&config, format!("[sandbox]\nworkers = \"{token}\"\n")).unwrap();
    for (env, args) in [
        (vec![("MOAT_SANDBOX__WORKERS", token.as_str())], vec![]),
        (
            vec![
                ("MOAT_HTTP__BEARER_TOKEN", bearer),
                ("MOAT_HTTP__PORT", bearer),
            ],
            vec![],
        ),
        (
            vec![],
            vec!["--config".to_owned(), config.display().to_string()],
        ),
    ] {
        for sub in ["serve", "doctor"] {
            let mut cmd = Command::new(moat_bin());
            cmd.arg(sub)
                .arg("--workspace")
                .arg(&fx.root)
                .args(&args)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", "/nonexistent-home");
            for (k, v) in &env {
                cmd.env(k, v);
            }
            let out = cmd.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{sub} {env:?}: {stderr}");
            assert!(!stderr.trim().is_empty(), "{sub} {env:?}: says why");
            assert_never_logged(&stderr, &token);
            assert_never_logged(&stderr, bearer);
            assert!(
                stderr.contains("[redacted"),
                "{sub} {env:?}: the value is named redacted: {stderr}"
            );
            assert!(out.stdout.is_empty() || sub == "doctor", "{sub}");
        }
    }
}

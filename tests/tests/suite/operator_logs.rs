//! The log an operator reads, judged on a mixed run of the real binary: over
//! stdio and over HTTP, tool calls in flight together, one refused request
//! of each kind, then shutdown. Every request's lines carry one
//! `request_id` (unique in the process) and, once read, its JSON-RPC id as
//! `rpc_id`, so a `tool.call` is matched to its `rpc.ok`; the client is
//! named from `clientInfo` or `_meta`; durations are integer microseconds;
//! every refusal is one line with its reason; shutdown warns of nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use moat_tests::http::{HttpMoat, Req, legacy, modern, modern_call, signal};
use moat_tests::{Moat, Mode, Options};
use serde_json::{Value, json};

use super::util::{content_fixture, eventually, json_lines};

const TOKEN: &str = "operator-logs-token-0f4e9a2b7c1d58e3";

/// Lines about one request: what a transport or the core logs for it.
fn is_request_event(v: &Value) -> bool {
    let m = v["message"].as_str().unwrap_or_default();
    m.starts_with("rpc.")
        || m == "tool.call"
        || m == "http.refused"
        || m == "http.origin_rejected"
        || m == "http.host_rejected"
        || m == "http.header_refused"
}

/// The request lines grouped by `request_id`, in log order within each.
#[track_caller]
fn by_request(lines: &[Value], stderr: &str) -> BTreeMap<u64, Vec<Value>> {
    let mut groups: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    for v in lines.iter().filter(|v| is_request_event(v)) {
        let id = v["request_id"]
            .as_u64()
            .unwrap_or_else(|| panic!("a request line without request_id: {v}\n{stderr}"));
        groups.entry(id).or_default().push(v.clone());
    }
    groups
}

fn messages(group: &[Value]) -> Vec<&str> {
    group
        .iter()
        .map(|v| v["message"].as_str().unwrap_or_default())
        .collect()
}

/// Durations are whole microseconds, never the old float milliseconds.
#[track_caller]
fn assert_durations(lines: &[Value], stderr: &str) {
    assert!(!stderr.contains("duration_ms"), "{stderr}");
    for v in lines
        .iter()
        .filter(|v| v["message"] == "rpc.ok" || v["message"] == "tool.call")
    {
        assert!(v["duration_us"].is_u64(), "duration_us: {v}");
    }
}

/// Each `tool.call` has exactly one `rpc.ok` in its request, with the same
/// `rpc_id`; the `rpc_id`s of the calls are the ids sent.
#[track_caller]
fn assert_calls_pair(groups: &BTreeMap<u64, Vec<Value>>, sent: &[Value], stderr: &str) {
    let mut seen = Vec::new();
    for group in groups.values() {
        if !messages(group).contains(&"tool.call") {
            continue;
        }
        let call = &group[0];
        assert_eq!(call["message"], "tool.call", "{group:?}");
        let answers: Vec<&Value> = group.iter().filter(|v| v["message"] == "rpc.ok").collect();
        assert_eq!(answers.len(), 1, "one rpc.ok per tool.call: {group:?}");
        assert_eq!(answers[0]["rpc_id"], call["rpc_id"], "{group:?}");
        assert_eq!(answers[0]["method"], "tools/call", "{group:?}");
        seen.push(call["rpc_id"].clone());
    }
    let mut seen_sorted: Vec<String> = seen.iter().map(Value::to_string).collect();
    let mut sent_sorted: Vec<String> = sent.iter().map(Value::to_string).collect();
    seen_sorted.sort();
    sent_sorted.sort();
    assert_eq!(seen_sorted, sent_sorted, "{stderr}");
}

/// The single-line groups whose message is `message`, as `(key field)`s.
fn refusals<'a>(groups: &'a BTreeMap<u64, Vec<Value>>, message: &str) -> Vec<&'a Value> {
    groups
        .values()
        .filter(|g| g.len() == 1 && g[0]["message"] == message)
        .map(|g| &g[0])
        .collect()
}

/// Nothing at WARN or above once shutdown began (after `from`).
#[track_caller]
fn assert_quiet_shutdown(lines: &[Value], from: &str, stderr: &str) {
    assert!(
        !lines.iter().any(|v| v["message"] == "worker.replaced"),
        "nothing was replaced: {stderr}"
    );
    let start = lines
        .iter()
        .position(|v| v["message"] == from)
        .unwrap_or_else(|| panic!("no {from}: {stderr}"));
    for v in &lines[start..] {
        assert!(
            !matches!(v["level"].as_str(), Some("WARN" | "ERROR")),
            "a warning at shutdown: {v}\n{stderr}"
        );
    }
}

#[test]
fn over_stdio_every_request_is_matched_named_timed_and_every_refusal_logged() {
    let fx = content_fixture();
    let opts = Options::new(Mode::Confined)
        .env("MOAT_SANDBOX__WORKERS", "2")
        .env("MOAT_HTTP__MAX_REQUEST_BYTES", "1024");
    let mut m = Moat::start(&fx.root, &opts);
    let init = m.request_raw(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "ed", "version": "1.2"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    m.notify("notifications/initialized", json!({}));

    // Eight tool calls in one write: all in flight at once on two workers,
    // answered as they finish. Ids of both kinds.
    let ids: Vec<Value> = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                json!(100 + i)
            } else {
                json!(format!("call-{i}"))
            }
        })
        .collect();
    let tools = [
        ("read_file", json!({"path": "README.md"})),
        ("search_code", json!({"pattern": "Engine"})),
        ("list_directory", json!({"path": "."})),
        ("find_symbol", json!({"symbol": "build_engine"})),
    ];
    let mut batch = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let (tool, args) = &tools[i % tools.len()];
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": args}});
        batch.extend(serde_json::to_vec(&line).unwrap());
        batch.push(b'\n');
    }
    m.send_raw(&batch);
    // One 2026-07-28 call naming its client in _meta.
    m.send(
        &json!({"jsonrpc": "2.0", "id": "modern-1", "method": "tools/call",
                   "params": {"name": "read_file", "arguments": {"path": "README.md"},
                              "_meta": Moat::modern_meta()}}),
    );
    // Refusals: not JSON, a batch, a line over the cap, not a request, an
    // unknown method.
    m.send_raw(b"{not json\n");
    m.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]\n");
    let mut long = vec![b'a'; 2000];
    long.push(b'\n');
    m.send_raw(&long);
    m.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"env-1\",\"method\":3}\n");
    m.send(&json!({"jsonrpc": "2.0", "id": "unknown-1", "method": "no/such_method"}));
    let mut answers = Vec::new();
    for _ in 0..14 {
        answers.push(m.recv());
    }
    let (status, rest, stderr) = m.finish_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(rest.is_empty(), "{rest:?}");

    let lines = json_lines(&stderr);
    let groups = by_request(&lines, &stderr);
    let mut sent = ids.clone();
    sent.push(json!("modern-1"));
    assert_calls_pair(&groups, &sent, &stderr);
    assert_durations(&lines, &stderr);

    // The client, from initialize's clientInfo or the request's _meta.
    for v in lines.iter().filter(|v| v["message"] == "tool.call") {
        let expected = if v["rpc_id"] == "modern-1" {
            "moat-tests/0"
        } else {
            "ed/1.2"
        };
        assert_eq!(v["client"], expected, "{v}");
    }
    let init_ok: Vec<&Value> = lines
        .iter()
        .filter(|v| v["message"] == "rpc.ok" && v["method"] == "initialize")
        .collect();
    assert_eq!(init_ok.len(), 1, "{stderr}");
    assert_eq!(init_ok[0]["client"], "ed/1.2", "{stderr}");

    // Each refusal is one line in its own request, with its code and reason.
    let errors = refusals(&groups, "rpc.error");
    let codes: Vec<i64> = errors.iter().filter_map(|v| v["code"].as_i64()).collect();
    let mut sorted = codes.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        vec![-32700, -32700, -32601, -32600, -32600],
        "{stderr}"
    );
    for v in &errors {
        assert!(
            v["error_message"].as_str().is_some_and(|m| !m.is_empty()),
            "{v}"
        );
    }
    assert!(
        errors.iter().any(|v| v["error_message"]
            .as_str()
            .is_some_and(|m| m.contains("line limit"))),
        "{stderr}"
    );
    assert!(
        errors
            .iter()
            .any(|v| v["rpc_id"] == "unknown-1" && v["method"] == "no/such_method"),
        "{stderr}"
    );
    // One id per request: the eight calls, the modern call, initialize, the
    // notification (which logs nothing), five refusals.
    assert_eq!(groups.len(), 8 + 1 + 1 + 5, "{stderr}");
    assert_quiet_shutdown(&lines, "stdio.closed", &stderr);
}

#[test]
fn over_http_every_request_is_matched_named_timed_and_every_refusal_logged() {
    let fx = content_fixture();
    let opts = Options::new(Mode::Confined)
        .env("MOAT_HTTP__BEARER_TOKEN", TOKEN)
        .env("MOAT_SANDBOX__WORKERS", "2")
        .env("MOAT_HTTP__MAX_IN_FLIGHT", "2")
        .env("MOAT_HTTP__MAX_REQUEST_BYTES", "1024");
    let mut s = HttpMoat::start(&fx.root, &opts);
    let workers = s.moat.wait_for_ready_workers(2);
    let addr = s.addr;
    let send = move |r: Req| r.send(addr).expect("request");

    // A 2025 client over HTTP names itself in initialize only (HTTP keeps no
    // session), so its later calls are unidentified.
    let init = send(
        Req::mcp(&legacy(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "ide", "version": "3.1"}}),
        ))
        .bearer(TOKEN),
    );
    assert_eq!(init.status, 200, "{init}");
    let r = send(
        Req::mcp(&legacy(
            2,
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "README.md"}}),
        ))
        .bearer(TOKEN),
    );
    assert_eq!(r.status, 200, "{r}");

    // Two tool calls in flight at once, held by stopped workers; a third
    // is refused 503 meanwhile.
    for w in &workers {
        signal(*w, libc::SIGSTOP);
    }
    let held: Vec<_> = [(10, "README.md"), (11, "pyproject.toml")]
        .into_iter()
        .map(|(id, path)| {
            std::thread::spawn(move || {
                Req::mcp(&modern_call(id, "read_file", json!({"path": path})))
                    .bearer(TOKEN)
                    .send(addr)
            })
        })
        .collect();
    assert!(
        eventually(Duration::from_secs(10), || send(Req::new("GET", "/readyz"))
            .status
            == 503),
        "the two calls never filled the in-flight slots: {}",
        s.stderr()
    );
    let busy =
        send(Req::mcp(&modern_call(12, "read_file", json!({"path": "README.md"}))).bearer(TOKEN));
    assert_eq!(busy.status, 503, "{busy}");
    for w in &workers {
        signal(*w, libc::SIGCONT);
    }
    for h in held {
        let r = h.join().unwrap().expect("answered");
        assert_eq!(r.status, 200, "{r}");
    }

    // One refused request of each kind.
    let call = || Req::mcp(&modern_call(20, "read_file", json!({"path": "README.md"})));
    let refused = [
        (call().bearer(TOKEN).without("MCP-Protocol-Version"), 400),
        (
            call().bearer(TOKEN).set_header("Mcp-Method", "tools/list"),
            400,
        ),
        (
            call()
                .bearer(TOKEN)
                .header("Origin", "https://evil.example"),
            403,
        ),
        (call().bearer(TOKEN).set_header("Host", "evil.example"), 403),
        (
            call()
                .bearer(TOKEN)
                .header("Host", &addr.to_string())
                .header("Host", "localhost"),
            400,
        ),
        (call(), 401),
        (call().bearer("not-the-token"), 401),
        (call().bearer(TOKEN).body(vec![b' '; 2000]), 413),
        (call().bearer(TOKEN).body("{not json"), 400),
        (call().bearer(TOKEN).body("[]"), 400),
        (Req::new("GET", "/mcp").bearer(TOKEN), 405),
        (Req::new("GET", "/nowhere"), 404),
        (
            Req::mcp(&modern(21, "no/such_method", json!({}))).bearer(TOKEN),
            404,
        ),
    ];
    for (req, status) in &refused {
        let r = send(req.clone());
        assert_eq!(r.status, *status, "{} {}: {r}", req.method, req.path);
    }
    // Every answer above was preceded by its log line; once the last is
    // seen, all are.
    assert!(
        eventually(Duration::from_secs(5), || s
            .events("rpc.error")
            .iter()
            .any(|v| v["code"] == -32601)),
        "{}",
        s.stderr()
    );
    let stderr = terminate(&mut s);

    let lines = json_lines(&stderr);
    let groups = by_request(&lines, &stderr);
    assert_calls_pair(&groups, &[json!(2), json!(10), json!(11)], &stderr);
    assert_durations(&lines, &stderr);
    let client_of = |rpc_id: i64, message: &str| {
        lines
            .iter()
            .find(|v| v["rpc_id"] == rpc_id && v["message"] == message)
            .map(|v| v["client"].clone())
    };
    assert_eq!(client_of(1, "rpc.ok"), Some(json!("ide/3.1")), "{stderr}");
    assert_eq!(
        client_of(2, "tool.call"),
        Some(json!("unidentified")),
        "{stderr}"
    );
    assert_eq!(
        client_of(10, "tool.call"),
        Some(json!("moat-tests/0")),
        "{stderr}"
    );

    // Each refusal: one line in its own request, with status and reason.
    let http: Vec<(u64, String)> = refusals(&groups, "http.refused")
        .iter()
        .map(|v| {
            (
                v["status"].as_u64().unwrap_or(0),
                v["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for expected in [
        (503, "in_flight"),
        (401, "token_missing"),
        (401, "token_rejected"),
        (413, "too_large"),
        (405, "method_not_allowed"),
        (404, "not_found"),
    ] {
        let n = http
            .iter()
            .filter(|(st, r)| *st == expected.0 && r == expected.1)
            .count();
        assert_eq!(n, 1, "{expected:?} in {http:?}\n{stderr}");
    }
    assert_eq!(http.len(), 6, "{http:?}");
    let rpc: Vec<(u64, i64)> = refusals(&groups, "rpc.error")
        .iter()
        .map(|v| {
            (
                v["status"].as_u64().unwrap_or(0),
                v["code"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    let mut rpc_sorted = rpc.clone();
    rpc_sorted.sort_unstable();
    // The core's own -32601 has no status; the transport's refusals do.
    assert_eq!(
        rpc_sorted,
        vec![
            (0, -32601),
            (400, -32700),
            (400, -32600),
            (400, -32020),
            (400, -32020)
        ],
        "{stderr}"
    );
    for name in [
        "http.origin_rejected",
        "http.host_rejected",
        "http.header_refused",
    ] {
        assert_eq!(refusals(&groups, name).len(), 1, "{name}: {stderr}");
    }
    // Requests: initialize, the legacy call, two held calls, the refused
    // one, thirteen refusals (the /readyz probes log nothing).
    assert_eq!(groups.len(), 2 + 2 + 1 + 13, "{stderr}");
    assert_quiet_shutdown(&lines, "http.draining", &stderr);
}

/// An idle server stopped with SIGTERM: the workers killed at shutdown are
/// not reported as replaced (several rounds with many workers, since the
/// spawner's exit and the reaper race).
#[test]
fn shutdown_reports_no_worker_as_replaced() {
    let fx = content_fixture();
    let opts = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "8");
    for _ in 0..8 {
        let mut s = HttpMoat::start(&fx.root, &opts);
        s.moat.wait_for_ready_workers(8);
        let stderr = terminate(&mut s);
        let lines = json_lines(&stderr);
        assert_quiet_shutdown(&lines, "http.draining", &stderr);
    }
}

/// SIGTERM, a clean exit, and the whole log: `http.stopped` is the last
/// line, so every line before it has been read too.
fn terminate(s: &mut HttpMoat) -> String {
    s.signal(libc::SIGTERM);
    let st = s.wait_exit(Duration::from_secs(20)).expect("exits");
    assert_eq!(st.code(), Some(0), "{}", s.stderr());
    assert_eq!(s.wait_events("http.stopped", 1).len(), 1, "{}", s.stderr());
    s.stderr()
}

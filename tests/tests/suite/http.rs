//! Streamable HTTP through the real binary on 127.0.0.1: the probes, a round
//! trip in each era, the status mapping, the 2026-07-28 header mirroring, the
//! size cap for declared and streamed bodies, methods other than POST, and
//! the bounds under load: stalled connections, saturation, and the graceful
//! drain on SIGTERM.

use std::io::Write;
use std::time::{Duration, Instant};

use moat_tests::http::{
    HttpMoat, Req, Resp, closed_within, exchange, legacy, modern, modern_call, read_response,
};
use moat_tests::{Fixture, MODERN, Mode, Options, process_state};
use serde_json::{Value, json};

use super::util::eventually;

const LEGACY: &str = "2025-11-25";

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    fx.file("src/lib.rs", "pub fn beta() {}\n");
    fx
}

fn opts(mode: Mode, extra: &[(&str, &str)]) -> Options {
    let mut o = Options::new(mode).env("MOAT_SANDBOX__WORKERS", "2");
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    o
}

fn server(extra: &[(&str, &str)]) -> (Fixture, HttpMoat) {
    let fx = fixture();
    let s = HttpMoat::start(&fx.root, &opts(Mode::Confined, extra));
    (fx, s)
}

#[track_caller]
fn assert_no_session(r: &Resp) {
    assert!(
        r.header("mcp-session-id").is_none(),
        "a session id was minted: {r}"
    );
}

#[track_caller]
fn assert_rpc_error(r: &Resp, status: u16, code: i64) -> Value {
    assert_eq!(r.status, status, "{r}");
    assert_eq!(r.rpc_code(), code, "{r}");
    assert_eq!(r.header("content-type"), Some("application/json"), "{r}");
    r.json()
}

#[track_caller]
fn assert_read_ok(r: &Resp) -> Value {
    assert_eq!(r.status, 200, "{r}");
    let v = r.json();
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert!(
        v["result"]["content"][1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("alpha")),
        "{v}"
    );
    v
}

#[test]
fn probes_answer_and_readyz_reports_the_sandbox() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let s = HttpMoat::start(&fx.root, &opts(mode, &[]));
        let h = s.get("/healthz");
        assert_eq!(h.status, 200, "{h}");
        assert_eq!(h.json(), json!({"status": "ok"}));
        let r = s.get("/readyz");
        assert_eq!(r.status, 200, "{r}");
        let v = r.json();
        assert_eq!(v["status"], "ready", "{v}");
        assert_eq!(v["workspace_present"], true, "{v}");
        assert!(v["tools"].as_u64().is_some_and(|n| n >= 5), "{v}");
        let versions = v["protocol_versions"].as_array().unwrap();
        assert_eq!(versions[0], MODERN, "{v}");
        assert!(versions.contains(&json!(LEGACY)), "{v}");
        let want = if mode == Mode::Confined {
            "confined"
        } else {
            "in-process"
        };
        assert_eq!(v["sandbox"]["mode"], want, "{v}");
        assert!(v["sandbox"]["landlock_abi"].is_u64(), "{v}");
        assert_no_session(&r);
    }
}

#[test]
fn readyz_is_503_once_the_workspace_is_gone() {
    let (fx, s) = server(&[]);
    assert_eq!(s.get("/readyz").status, 200);
    let moved = fx.root.with_file_name("proj-moved");
    std::fs::rename(&fx.root, &moved).unwrap();
    let r = s.get("/readyz");
    assert_eq!(r.status, 503, "{r}");
    assert_eq!(r.json()["status"], "unready", "{r}");
    assert_eq!(r.json()["workspace_present"], false, "{r}");
    // Liveness is not readiness: the process itself is fine.
    assert_eq!(s.get("/healthz").status, 200);
    std::fs::rename(&moved, &fx.root).unwrap();
    // Workers that were starting while the workspace was gone failed, and
    // are retried with a backoff (at most 3.2 s): until one starts, the
    // replica is rightly unready.
    assert!(
        eventually(Duration::from_secs(15), || s.get("/readyz").status == 200),
        "not ready again once it is back"
    );
}

#[test]
fn legacy_round_trip_initialize_then_tools_call() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let s = HttpMoat::start(&fx.root, &opts(mode, &[]));
        let init = s.post(&legacy(
            1,
            "initialize",
            json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        ));
        assert_eq!(init.status, 200, "{init}");
        let v = init.json();
        assert_eq!(v["result"]["protocolVersion"], LEGACY, "{v}");
        assert_eq!(v["result"]["serverInfo"]["name"], "moat", "{v}");
        assert_no_session(&init);

        let note = s.send(
            &Req::mcp(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .header("MCP-Protocol-Version", LEGACY),
        );
        assert_eq!(note.status, 202, "{note}");
        assert!(note.body.is_empty(), "{note}");

        let list = s.send(
            &Req::mcp(&legacy(2, "tools/list", json!({}))).header("MCP-Protocol-Version", LEGACY),
        );
        assert_eq!(list.status, 200, "{list}");
        // One page holds every tool (clients that read only the first page
        // must still find read_file and search_code).
        let listed = list.json();
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"read_file") && names.contains(&"search_code"),
            "{listed}"
        );
        assert!(listed["result"].get("nextCursor").is_none(), "{listed}");

        let call = s.send(
            &Req::mcp(&legacy(
                3,
                "tools/call",
                json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
            ))
            .header("MCP-Protocol-Version", LEGACY),
        );
        let v = assert_read_ok(&call);
        assert_eq!(v["id"], 3, "{v}");
        assert!(v["result"].get("resultType").is_none(), "legacy era: {v}");
        assert_no_session(&call);
    }
}

#[test]
fn modern_round_trip_with_the_three_headers() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let s = HttpMoat::start(&fx.root, &opts(mode, &[]));
        let d = s.post(&modern(1, "server/discover", json!({})));
        assert_eq!(d.status, 200, "{d}");
        assert_eq!(d.json()["result"]["supportedVersions"], json!([MODERN]));
        let req = Req::mcp(&modern_call(2, "read_file", json!({"path": "a.txt"})));
        let wire = String::from_utf8(req.to_bytes(s.addr)).unwrap();
        for h in [
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: read_file",
        ] {
            assert!(wire.contains(h), "the harness sends {h}: {wire}");
        }
        let r = s.send(&req);
        let v = assert_read_ok(&r);
        assert_eq!(v["id"], 2);
        assert_eq!(v["result"]["resultType"], "complete", "{v}");
        assert_eq!(
            v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "moat",
            "{v}"
        );
        assert_no_session(&r);
    }
}

#[test]
fn a_notification_gets_202_and_no_body() {
    let (_fx, s) = server(&[]);
    let legacy_note = s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut modern_note = modern(0, "notifications/cancelled", json!({"requestId": 7}));
    modern_note.as_object_mut().unwrap().remove("id");
    let modern_note = s.post(&modern_note);
    for r in [legacy_note, modern_note] {
        assert_eq!(r.status, 202, "{r}");
        assert!(r.body.is_empty(), "{r}");
        assert_no_session(&r);
    }
}

#[test]
fn an_unknown_method_is_404() {
    let (_fx, s) = server(&[]);
    let v = assert_rpc_error(&s.post(&modern(5, "foo/bar", json!({}))), 404, -32601);
    assert_eq!(v["id"], 5, "{v}");
    let r = s.send(
        &Req::mcp(&legacy(6, "prompts/list", json!({}))).header("MCP-Protocol-Version", LEGACY),
    );
    assert_eq!(assert_rpc_error(&r, 404, -32601)["id"], 6);
}

#[test]
fn a_bad_envelope_is_400_and_keeps_the_id() {
    let (_fx, s) = server(&[]);
    let v = assert_rpc_error(
        &s.post(&json!({"jsonrpc": "1.0", "id": 42, "method": "ping"})),
        400,
        -32600,
    );
    assert_eq!(v["id"], 42, "{v}");
    assert_rpc_error(&s.post(&json!({"jsonrpc": "2.0", "id": 43})), 400, -32600);
    assert_rpc_error(&s.post(&json!("just a string")), 400, -32600);
}

#[test]
fn bad_json_is_400_parse_error_with_a_null_id() {
    let (_fx, s) = server(&[]);
    for body in [
        &b"{oops"[..],
        b"",
        b"\xff\xfe{}",
        b"{\"jsonrpc\": \"2.0\", \"id\": 1,",
    ] {
        let r = s.send(&Req::new("POST", "/mcp").body(body));
        let v = assert_rpc_error(&r, 400, -32700);
        assert_eq!(v["id"], Value::Null, "{v}");
    }
}

#[test]
fn a_batch_is_400_and_says_batch() {
    let (_fx, s) = server(&[]);
    let r = s.post(&json!([
        legacy(1, "ping", json!({})),
        legacy(2, "ping", json!({}))
    ]));
    let v = assert_rpc_error(&r, 400, -32600);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("batch"),
        "{v}"
    );
    assert_eq!(v["id"], Value::Null);
}

#[test]
fn the_version_header_must_match_meta() {
    let (_fx, s) = server(&[]);
    let body = modern(1, "tools/list", json!({}));
    assert_eq!(s.post(&body).status, 200);
    let r = s.send(&Req::mcp(&body).set_header("MCP-Protocol-Version", LEGACY));
    let v = assert_rpc_error(&r, 400, -32020);
    assert_eq!(v["id"], 1, "{v}");
    // An unsupported version that both agree on is -32022, also 400.
    let mut old = body.clone();
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    assert_rpc_error(&s.post(&old), 400, -32022);
}

#[test]
fn mcp_method_and_name_headers_must_match_the_body() {
    let (_fx, s) = server(&[]);
    let body = modern_call(9, "read_file", json!({"path": "a.txt"}));
    let base = Req::mcp(&body);
    let refused = [
        (
            "Mcp-Method mismatch",
            base.clone().set_header("Mcp-Method", "tools/list"),
        ),
        ("Mcp-Method missing", base.clone().without("Mcp-Method")),
        (
            "Mcp-Name mismatch",
            base.clone().set_header("Mcp-Name", "list_directory"),
        ),
        ("Mcp-Name missing", base.clone().without("Mcp-Name")),
        (
            "version missing",
            base.clone().without("MCP-Protocol-Version"),
        ),
        (
            "case of the value",
            base.clone().set_header("Mcp-Name", "READ_FILE"),
        ),
    ];
    for (what, req) in &refused {
        let r = s.send(req);
        assert_eq!(r.status, 400, "{what}: {r}");
        assert_eq!(r.rpc_code(), -32020, "{what}: {r}");
        assert_eq!(r.json()["id"], 9, "{what}: {r}");
    }
    // Names are case-insensitive and the values' surrounding whitespace is
    // ignored (RFC 9110 OWS).
    let spaced = Req::mcp(&body)
        .without("MCP-Protocol-Version")
        .without("Mcp-Method")
        .without("Mcp-Name")
        .header("mcp-protocol-version", &format!(" \t{MODERN} "))
        .header("MCP-METHOD", "  tools/call\t")
        .header("mcp-name", "\t read_file  ");
    assert_read_ok(&s.send(&spaced));
    assert_eq!(
        s.wait_events("tool.call", 1).len(),
        1,
        "a refused request reached a tool: {}",
        s.stderr()
    );
}

#[test]
fn a_declared_body_over_the_cap_is_413() {
    let (_fx, s) = server(&[("MOAT_HTTP__MAX_REQUEST_BYTES", "2048")]);
    // Only the head is sent: the answer must come before any body is read.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n",
        s.addr
    );
    let r = exchange(s.addr, head.as_bytes()).unwrap();
    assert_eq!(r.status, 413, "{r}");
    assert_eq!(
        r.json(),
        json!({"error": "request larger than the 2048-byte limit"})
    );
    // A body of up to the cap is served.
    let mut body = modern_call(1, "read_file", json!({"path": "a.txt"}));
    let pad = 2048 - serde_json::to_vec(&body).unwrap().len() - 20;
    body["params"]["_meta"]["pad"] = json!("x".repeat(pad));
    let len = serde_json::to_vec(&body).unwrap().len();
    assert!((2000..=2048).contains(&len), "{len}");
    assert_read_ok(&s.post(&body));
}

#[test]
fn an_undeclared_chunked_body_over_the_cap_is_413() {
    let (_fx, s) = server(&[("MOAT_HTTP__MAX_REQUEST_BYTES", "2048")]);
    let mut c = s.connect();
    write!(
        c,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        s.addr
    )
    .unwrap();
    let chunk = format!("5dc\r\n{}\r\n", "x".repeat(1500));
    c.write_all(chunk.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    // The second chunk crosses 2048; no terminating chunk is ever sent.
    c.write_all(chunk.as_bytes()).unwrap();
    let r = read_response(&mut c).unwrap();
    assert_eq!(r.status, 413, "{r}");
    assert!(r.text().contains("2048-byte limit"), "{r}");

    // The same coding under the cap is read and served.
    let body = serde_json::to_vec(&modern_call(2, "read_file", json!({"path": "a.txt"}))).unwrap();
    let mut chunked = Vec::new();
    for part in body.chunks(40) {
        chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let req = Req::mcp(&modern_call(2, "read_file", json!({"path": "a.txt"})))
        .header("Transfer-Encoding", "chunked")
        .body(chunked);
    assert_read_ok(&s.send(&req));
}

#[test]
fn get_and_delete_on_mcp_are_405_with_allow() {
    let (_fx, s) = server(&[]);
    for method in ["GET", "DELETE", "PUT"] {
        let r = s.send(&Req::new(method, "/mcp").header("Accept", "text/event-stream"));
        assert_eq!(r.status, 405, "{method}: {r}");
        assert_eq!(r.header("allow"), Some("POST"), "{method}: {r}");
        assert_no_session(&r);
    }
    assert_eq!(s.get("/nowhere").status, 404);
    assert_eq!(s.send(&Req::new("POST", "/").body("{}")).status, 404);
}

#[test]
fn a_session_id_sent_by_a_client_is_ignored_and_none_is_minted() {
    let (_fx, s) = server(&[]);
    for version in ["2025-03-26", "2025-06-18", LEGACY] {
        let r = s.post(&legacy(
            1,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        ));
        assert_eq!(r.status, 200, "{r}");
        assert_no_session(&r);
    }
    let r = s.send(
        &Req::mcp(&modern_call(2, "read_file", json!({"path": "a.txt"})))
            .header("Mcp-Session-Id", "client-made-up-1234"),
    );
    assert_read_ok(&r);
    assert_no_session(&r);
}

#[test]
fn port_zero_binds_an_ephemeral_port_and_logs_it() {
    let (_fx, mut s) = server(&[]);
    let listening = s.events("http.listening");
    assert_eq!(listening.len(), 1, "{}", s.stderr());
    let addr = listening[0]["addr"].as_str().unwrap();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert_ne!(s.port(), 0);
    assert_ne!(s.port(), 8080, "port 0 must not mean the default port");
    assert_eq!(s.get("/healthz").status, 200);
    // HTTP mode writes nothing at all on stdout.
    assert_eq!(s.moat.recv_line_within(Duration::from_millis(50)), None);
    s.signal(libc::SIGTERM);
    assert!(s.wait_exit(Duration::from_secs(10)).unwrap().success());
}

/// Open `n` connections that hold a slot without doing work: the first
/// third send one request on a keep-alive connection (answered) and then
/// nothing more, the rest alternately nothing at all and half a header.
/// The answered ones come first so that opening the others never waits.
fn stall(s: &HttpMoat, n: usize) -> Vec<std::net::TcpStream> {
    (0..n)
        .map(|i| {
            let mut c = s.connect();
            if i < n / 3 {
                let req = Req::mcp(&modern(1, "tools/list", json!({})))
                    .set_header("Connection", "keep-alive");
                c.write_all(&req.to_bytes(s.addr)).unwrap();
                let r = read_response(&mut c).unwrap();
                assert!(matches!(r.status, 200 | 401), "{r}");
            } else if i % 2 == 1 {
                c.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
                    .unwrap();
            }
            c
        })
        .collect()
}

#[test]
fn stalled_connections_do_not_delay_an_authorised_request() {
    // More stalled connections than slots, and a header timeout far beyond
    // the client's own wait: a server that left a real client in the
    // backlog until a stalled connection timed out, or that read request
    // heads one connection at a time, could not answer in time. No
    // wall-clock bound: the proof is the order of events, which holds on a
    // loaded machine too.
    const SLOTS: usize = 256;
    const STALLED: usize = 300;
    let token = "stall-test-token-5b1e";
    let (_fx, s) = server(&[
        ("MOAT_HTTP__BEARER_TOKEN", token),
        ("MOAT_HTTP__MAX_CONNECTIONS", "256"),
        ("MOAT_HTTP__HEADER_TIMEOUT_MS", "120000"),
    ]);
    let mut stalled = stall(&s, STALLED);
    // Let the server accept what it will before the real client arrives.
    std::thread::sleep(Duration::from_millis(200));
    let req = Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"}))).bearer(token);
    assert_read_ok(&s.send(&req));
    // And again, with the stalled ones still open.
    assert_read_ok(&s.send(&req));
    // Only as many stalled connections were shed as the slots required:
    // the first real client takes one more slot than there are, and the
    // second one more if it arrives before the server has seen the first
    // close. The rest are still open, waiting for their heads.
    let mut shed = 0;
    for c in &mut stalled {
        shed += usize::from(closed_within(c, Duration::from_millis(1)));
    }
    let required = STALLED + 1 - SLOTS;
    assert!(
        (required..=required + 1).contains(&shed),
        "{shed} stalled connections shed; the slots required {required}"
    );
}

#[test]
fn stalled_connections_are_dropped_after_the_header_timeout() {
    let (_fx, s) = server(&[
        ("MOAT_HTTP__MAX_CONNECTIONS", "4"),
        ("MOAT_HTTP__HEADER_TIMEOUT_MS", "400"),
    ]);
    let opened = Instant::now();
    let mut stalled = stall(&s, 3);
    // A keep-alive connection that has been served and then goes quiet is
    // held to the same timeout for its next request head.
    let mut idle = s.connect();
    let req = Req::mcp(&modern(1, "tools/list", json!({}))).set_header("Connection", "keep-alive");
    idle.write_all(&req.to_bytes(s.addr)).unwrap();
    assert_eq!(read_response(&mut idle).unwrap().status, 200);
    stalled.push(idle);
    for (i, c) in stalled.iter_mut().enumerate() {
        assert!(
            closed_within(c, Duration::from_secs(5)),
            "stalled connection {i} still open after {:?}",
            opened.elapsed()
        );
    }
    let waited = opened.elapsed();
    assert!(
        waited >= Duration::from_millis(350),
        "closed after {waited:?}, before the 400 ms header timeout"
    );
    let r = s.post(&modern_call(2, "read_file", json!({"path": "a.txt"})));
    assert_read_ok(&r);
}

#[test]
fn a_header_trickled_byte_by_byte_is_cut_off_at_the_header_timeout() {
    let (_fx, s) = server(&[("MOAT_HTTP__HEADER_TIMEOUT_MS", "500")]);
    let mut c = s.connect();
    c.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ")
        .unwrap();
    // One byte every 50 ms: each read makes progress, but the deadline is
    // for the whole head, not for each read.
    let started = Instant::now();
    let cut = loop {
        std::thread::sleep(Duration::from_millis(50));
        if c.write_all(b"a").is_err() || started.elapsed() > Duration::from_secs(5) {
            break started.elapsed();
        }
    };
    assert!(
        cut < Duration::from_secs(2),
        "a trickling client kept its connection for {cut:?}"
    );
    assert_eq!(s.get("/healthz").status, 200);
}

#[test]
fn a_body_that_stops_arriving_is_408_at_the_body_timeout() {
    let (_fx, s) = server(&[("MOAT_HTTP__BODY_TIMEOUT_MS", "400")]);
    let mut c = s.connect();
    write!(
        c,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        s.addr
    )
    .unwrap();
    let started = Instant::now();
    let r = read_response(&mut c).unwrap();
    let took = started.elapsed();
    assert_eq!(r.status, 408, "{r}");
    assert!(r.json()["error"].is_string(), "{r}");
    assert!(
        took >= Duration::from_millis(350) && took < Duration::from_secs(3),
        "answered after {took:?}"
    );
    // The slot it held is free again.
    assert_read_ok(&s.post(&modern_call(1, "read_file", json!({"path": "a.txt"}))));
}

#[test]
fn a_saturated_server_answers_503_with_retry_after_not_a_hang() {
    let (_fx, s) = server(&[
        ("MOAT_HTTP__MAX_IN_FLIGHT", "1"),
        ("MOAT_SANDBOX__WORKERS", "1"),
        ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "20"),
    ]);
    let worker = s.moat.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let addr = s.addr;
    let slow = std::thread::spawn(move || {
        Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"}))).send(addr)
    });
    // Wait until the slow request holds the only slot.
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let r = s.post(&modern_call(2, "read_file", json!({"path": "a.txt"})));
    let took = started.elapsed();
    assert_eq!(r.status, 503, "{r}");
    // The slot is held for up to 20 s; a 503 long before that was not
    // queued behind it (loose, for loaded machines).
    assert!(took < Duration::from_secs(10), "503 took {took:?}");
    let retry = r.header("retry-after").expect("Retry-After");
    assert!(retry.parse::<u32>().is_ok_and(|n| n >= 1), "{retry}");
    assert!(r.json()["error"].is_string(), "{r}");
    // Probes are not requests in flight: an orchestrator still sees it live.
    assert_eq!(s.get("/healthz").status, 200);

    moat_tests::http::signal(worker, libc::SIGCONT);
    let first = slow.join().unwrap().unwrap();
    assert_read_ok(&first);
    assert_read_ok(&s.post(&modern_call(3, "read_file", json!({"path": "a.txt"}))));
}

#[test]
fn sigterm_drains_in_flight_requests_and_exits_zero() {
    let (_fx, mut s) = server(&[("MOAT_SANDBOX__WORKERS", "1")]);
    let worker = s.moat.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let addr = s.addr;
    let in_flight = std::thread::spawn(move || {
        Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"}))).send(addr)
    });
    std::thread::sleep(Duration::from_millis(300));
    s.signal(libc::SIGTERM);
    // No new connections once draining.
    assert!(
        eventually(Duration::from_secs(2), || std::net::TcpStream::connect(
            addr
        )
        .is_err()),
        "still accepting after SIGTERM"
    );
    assert_eq!(
        s.wait_exit(Duration::from_millis(200)),
        None,
        "exited before the in-flight request was answered"
    );
    moat_tests::http::signal(worker, libc::SIGCONT);
    let r = in_flight
        .join()
        .unwrap()
        .expect("the in-flight request is answered");
    assert_read_ok(&r);
    let st = s
        .wait_exit(Duration::from_secs(10))
        .expect("exits after draining");
    assert_eq!(st.code(), Some(0), "{}", s.stderr());
    assert!(
        eventually(Duration::from_secs(2), || process_state(worker).is_none()),
        "worker {worker} outlived the broker"
    );
    assert_eq!(s.wait_events("http.draining", 1).len(), 1, "{}", s.stderr());
    assert_eq!(s.wait_events("http.stopped", 1).len(), 1, "{}", s.stderr());

    // SIGINT (Ctrl-C in a terminal) stops an idle server the same way.
    let (_fx2, mut idle) = server(&[]);
    let workers = idle.moat.wait_for_ready_workers(2);
    idle.signal(libc::SIGINT);
    let st = idle
        .wait_exit(Duration::from_secs(10))
        .expect("exits on SIGINT");
    assert_eq!(st.code(), Some(0));
    for w in workers {
        assert!(
            eventually(Duration::from_secs(2), || process_state(w).is_none()),
            "worker {w} outlived the broker"
        );
    }
}

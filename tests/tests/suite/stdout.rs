//! Stdout discipline and stdio framing: one JSON-RPC response per line and
//! nothing else, ever (also when a worker crashes); logs on stderr; blank
//! lines, CRLF and a last line without newline; pipelining; notifications
//! never answered.

use std::collections::BTreeSet;
use std::time::Duration;

use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::{Value, json};

use super::util::{assert_response_line, params_for};

fn line_of(v: &Value) -> Vec<u8> {
    let mut l = serde_json::to_vec(v).unwrap();
    l.push(b'\n');
    l
}

fn req(era: Era, id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params_for(era, params)})
}

#[test]
fn blank_lines_are_ignored() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), era);
        m.send_raw(b"\n\n   \n\t\r\n\r\n");
        m.send(&req(era, 100, "tools/list", json!({})));
        let r = m.recv();
        assert_eq!(r["id"], 100, "{r}");
        let (status, rest) = m.finish();
        assert!(status.success());
        assert!(rest.is_empty(), "blank lines were answered: {rest:?}");
    }
}

#[test]
fn crlf_lines_are_accepted() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    let mut l = serde_json::to_vec(&req(Era::Modern, 5, "tools/list", json!({}))).unwrap();
    l.extend_from_slice(b"\r\n");
    m.send_raw(&l);
    let r = m.recv();
    assert_eq!(r["id"], 5);
    assert!(r["result"]["tools"].is_array(), "{r}");
}

#[test]
fn a_last_line_without_newline_is_answered_at_eof() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), era);
        let l = serde_json::to_vec(&req(era, 77, "tools/list", json!({}))).unwrap();
        m.send_raw(&l);
        let (status, rest) = m.finish();
        assert!(status.success());
        assert_eq!(rest.len(), 1, "{rest:?}");
        let r = assert_response_line(&rest[0]);
        assert_eq!(r["id"], 77, "{r}");
        assert!(r["result"]["tools"].is_array(), "{r}");
    }
}

#[test]
fn notifications_are_never_answered() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), era);
        let p = |v: Value| params_for(era, v);
        let notes = [
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
            json!({"jsonrpc": "2.0", "method": "no/such/method", "params": p(json!({}))}),
            json!({"jsonrpc": "2.0", "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "tools/list", "params": p(json!({"cursor": "AAAA"}))}),
            json!({"jsonrpc": "2.0", "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": p(json!({"name": "nope"}))}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": p(json!({"name": "read_file", "arguments": {"path": 5}}))}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": p(json!({"name": "read_file", "arguments": {"path": "a.txt"}}))}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": p(json!({"name": "read_file", "arguments": {"path": "../x"}}))}),
        ];
        for n in &notes {
            m.send(n);
        }
        let (status, rest) = m.finish();
        assert!(status.success());
        assert!(rest.is_empty(), "{era:?}: notifications answered: {rest:?}");
    }
}

#[test]
fn pipelined_requests_are_each_answered_exactly_once() {
    let fx = Fixture::new();
    fx.file("hello.txt", "hello\n");
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let mut bytes = Vec::new();
            let mut expected = BTreeSet::new();
            // Calls cancelled right after they are sent: answered at most
            // once (not at all when the cancel comes first).
            let mut cancelled = BTreeSet::new();
            for i in 0..500i64 {
                let id = 10_000 + i;
                let v = match i % 5 {
                    0..=2 => req(
                        era,
                        id,
                        "tools/call",
                        json!({"name": "read_file", "arguments": {"path": "hello.txt"}}),
                    ),
                    3 => req(era, id, "tools/list", json!({})),
                    _ => req(
                        era,
                        id,
                        "tools/call",
                        json!({"name": "list_directory", "arguments": {}}),
                    ),
                };
                bytes.extend(line_of(&v));
                expected.insert(id);
                if i % 50 == 0 {
                    // Interleaved notifications must not produce lines.
                    bytes.extend(line_of(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})));
                    cancelled.insert(id);
                }
            }
            m.send_raw(&bytes);
            // Legacy: end the input at once, so most requests are still in
            // flight at EOF; they must all be answered before the exit.
            let lines: Vec<String> =
                if era == Era::Legacy {
                    let (status, rest) = m.finish();
                    assert!(status.success());
                    rest
                } else {
                    let mut lines = Vec::new();
                    for _ in 0..(500 - cancelled.len()) {
                        lines.push(m.recv_line_within(Duration::from_secs(20)).unwrap_or_else(
                            || panic!("{mode:?}/{era:?}: missing answers after {}", lines.len()),
                        ));
                    }
                    let (status, rest) = m.finish();
                    assert!(status.success());
                    lines.extend(rest);
                    lines
                };
            let mut seen = BTreeSet::new();
            for line in &lines {
                let r = assert_response_line(line);
                let id = r["id"].as_i64().unwrap_or_else(|| panic!("{line}"));
                assert!(seen.insert(id), "{mode:?}/{era:?}: id {id} answered twice");
                assert!(r.get("result").is_some(), "{line}");
                if (id - 10_000) % 5 <= 2 {
                    assert_eq!(r["result"]["isError"], false, "{line}");
                    assert!(line.contains("1  hello"), "{line}");
                }
            }
            let missing: Vec<&i64> = expected.difference(&seen).collect();
            assert!(
                missing.iter().all(|id| cancelled.contains(id)),
                "{mode:?}/{era:?}: unanswered and not cancelled: {missing:?}"
            );
            assert!(seen.is_subset(&expected), "{mode:?}/{era:?}");
        }
    }
}

#[test]
fn line_separators_in_content_are_escaped_on_the_wire() {
    let fx = Fixture::new();
    fx.file("seps.txt", "a\u{2028}b\u{2029}c\u{85}d\n");
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    m.send(&req(
        Era::Modern,
        1,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "seps.txt"}}),
    ));
    let line = m.recv_line_within(Duration::from_secs(20)).unwrap();
    assert!(
        !line.contains('\u{2028}') && !line.contains('\u{2029}'),
        "{line:?}"
    );
    assert!(
        line.contains("\\u2028") && line.contains("\\u2029"),
        "{line:?}"
    );
    let r = assert_response_line(&line);
    assert!(
        r["result"]["content"][1]["text"]
            .as_str()
            .unwrap()
            .contains("a\u{2028}b\u{2029}c\u{85}d"),
        "{r}"
    );
}

#[test]
fn logs_go_to_stderr_and_stdout_is_only_protocol() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Legacy);
        let r = m.call("read_file", json!({"path": "a.txt"}));
        assert_eq!(r["isError"], false, "{r}");
        let _ = m.call("read_file", json!({"path": "../../etc/passwd"}));
        let (status, rest) = m.finish();
        assert!(status.success());
        assert!(rest.is_empty(), "{rest:?}");
    }
    // The log lines themselves: on stderr, JSON, and including start-up.
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let _ = m.call("read_file", json!({"path": "a.txt"}));
    assert!(
        super::util::eventually(Duration::from_secs(5), || m.stderr().contains("tool.call")),
        "no tool.call log on stderr: {}",
        m.stderr()
    );
    let err = m.stderr();
    assert!(err.contains("stdio.started"), "{err}");
    let first = err.lines().next().unwrap();
    assert!(
        serde_json::from_str::<Value>(first).is_ok(),
        "logs are JSON by default: {first}"
    );
}

#[test]
fn stdout_stays_protocol_only_when_workers_crash() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    let opts = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "1");
    let mut m = Moat::connect(&fx.root, &opts, Era::Modern);
    let mut sent = 0;
    for sig in [libc::SIGABRT, libc::SIGKILL, libc::SIGTERM, libc::SIGSEGV] {
        let pids = m.wait_for_ready_workers(1);
        // Stop the worker, hand it a request, then crash it mid-request.
        signal(pids[0], libc::SIGSTOP);
        sent += 1;
        m.send(&req(
            Era::Modern,
            sent,
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
        ));
        std::thread::sleep(Duration::from_millis(50));
        signal(pids[0], sig);
        signal(pids[0], libc::SIGCONT);
        let line = m
            .recv_line_within(Duration::from_secs(10))
            .expect("answered");
        let r = assert_response_line(&line);
        assert_eq!(r["id"], sent, "{line}");
        // A worker may survive a signal it handles (Rust's SIGSEGV handler)
        // or inherited as ignored; either way the pool settles on one
        // running worker.
        let mut now = Vec::new();
        assert!(
            super::util::eventually(Duration::from_secs(5), || {
                now = m.worker_pids();
                now.len() == 1 && matches!(moat_tests::process_state(now[0]), Some('S' | 'R'))
            }),
            "no running worker after signal {sig} to {}: {now:?}",
            pids[0]
        );
        if now[0] == pids[0] {
            assert_eq!(
                r["result"]["isError"], false,
                "it survived, so it served: {line}"
            );
        }
    }
    let (status, rest) = m.finish();
    assert!(status.success());
    for line in &rest {
        assert_response_line(line);
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid we read from /proc as our broker's child.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

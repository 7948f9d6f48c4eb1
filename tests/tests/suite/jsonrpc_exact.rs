//! Exact JSON-RPC over both transports, through the real binary: every id is
//! answered with the very bytes it was sent as (numbers included, whatever
//! their form), `"id": null` is a request refused `-32600` (a notification
//! has no id member), a request method sent as a notification is never run
//! (no tool call, no answer; over HTTP a 400), and a mirrored 2026-07-28
//! header sent twice is refused whatever its copies say.

use std::time::Duration;

use moat_tests::http::{HttpMoat, Req, legacy, modern_call};
use moat_tests::{Era, Fixture, Moat, Mode, Options};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

const LEGACY: &str = "2025-06-18";

/// JSON number texts of every form: integers of any length and sign (`-0`
/// among them), fractions, exponents. Generated, plus the forms a parse
/// and print would change.
fn number_ids(n: usize) -> Vec<String> {
    let strategy = "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?";
    let mut runner = TestRunner::deterministic();
    let regex = proptest::string::string_regex(strategy).unwrap();
    let mut ids: Vec<String> = [
        "-0",
        "0",
        "1.0",
        "1e3",
        "1E+3",
        "12345678901234567890123",
        "-9223372036854775809",
        "18446744073709551616",
        "9007199254740993",
        "0.1",
        "1e400",
        "-1.5e-7",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    while ids.len() < n {
        let id = regex.new_tree(&mut runner).unwrap().current();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The id member of a raw answer line, as its text (up to the next member).
fn raw_id(line: &str) -> &str {
    let at = line.find("\"id\":").map(|i| i + 5).unwrap_or(0);
    let rest = &line[at..];
    let end = rest.find(",\"").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn stdio_every_numeric_id_is_answered_with_the_bytes_it_was_sent_as() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut m = Moat::connect_legacy(&fx.root, &Options::new(Mode::InProcess), LEGACY);
    let ids = number_ids(150);
    // Pings are answered by the reader in order; tool calls run beside
    // each other and are answered as they finish: both are checked.
    let mut bytes = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let body = if i % 3 == 0 {
            r#""method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}"#
        } else {
            r#""method":"ping""#
        };
        bytes.extend_from_slice(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{body}}}\n").as_bytes());
    }
    m.send_raw(&bytes);
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..ids.len() {
        let line = m
            .recv_line_within(Duration::from_secs(30))
            .expect("an answer for every request");
        // Not parsed into numbers here: `1e400` has no f64.
        assert!(line.contains(",\"result\":"), "{line}");
        seen.push(raw_id(&line).to_owned());
    }
    let mut sent = ids.clone();
    sent.sort();
    seen.sort();
    assert_eq!(seen, sent, "ids changed on the way back");
}

#[test]
fn http_numeric_ids_are_answered_with_the_bytes_they_were_sent_as() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let s = HttpMoat::start(&fx.root, &Options::new(Mode::InProcess));
    for id in number_ids(40) {
        for body in [
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"a.txt"}}}}}}"#
            ),
            // An error answer keeps it too.
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such/method"}}"#),
        ] {
            let r = s.send(
                &Req::new("POST", "/mcp")
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .body(body.clone()),
            );
            let text = r.text();
            assert_eq!(raw_id(&text), id, "{body} -> {r}");
        }
    }
}

#[test]
fn a_null_id_is_an_invalid_request_answered_with_a_null_id_and_nothing_runs() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), era);
        for method in ["tools/call", "ping", "notifications/initialized"] {
            let mut v = json!({"jsonrpc": "2.0", "id": null, "method": method,
                "params": {"name": "read_file", "arguments": {"path": "a.txt"}}});
            if era == Era::Modern {
                v["params"]["_meta"] = Moat::modern_meta();
            }
            m.send(&v);
            let r = m
                .recv_within(Duration::from_secs(10))
                .unwrap_or_else(|| panic!("{era:?} {method}: no answer to a null id"));
            assert_eq!(r["id"], Value::Null, "{r}");
            assert_eq!(r["error"]["code"], -32600, "{era:?} {method}: {r}");
        }
        let (status, rest, stderr) = m.finish_with_stderr();
        assert!(status.success());
        assert!(rest.is_empty(), "{rest:?}");
        assert!(!stderr.contains("\"tool.call\""), "a tool ran:\n{stderr}");
    }
    let s = HttpMoat::start(&fx.root, &Options::new(Mode::InProcess));
    let r = s.post(
        &json!({"jsonrpc": "2.0", "id": null, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}),
    );
    assert_eq!(r.status, 400, "{r}");
    assert_eq!(r.json()["id"], Value::Null, "{r}");
    assert_eq!(r.rpc_code(), -32600, "{r}");
    assert!(s.events("tool.call").is_empty(), "{}", s.stderr());
}

/// The tool calls sent as notifications in `era`: every tool, every way.
fn call_notifications(era: Era) -> Vec<Value> {
    let mut out = Vec::new();
    for (method, params) in [
        (
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
        ),
        (
            "tools/call",
            json!({"name": "search_code", "arguments": {"pattern": "alpha"}}),
        ),
        ("resources/read", json!({"uri": "file:///a.txt"})),
        ("resources/list", json!({})),
        ("completion/complete", json!({})),
    ] {
        let mut p = params;
        if era == Era::Modern {
            p["_meta"] = Moat::modern_meta();
        }
        out.push(json!({"jsonrpc": "2.0", "method": method, "params": p}));
    }
    out
}

#[test]
fn stdio_a_tool_call_sent_as_a_notification_is_never_run_nor_answered_and_is_audited() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), era);
        for _ in 0..20 {
            for n in call_notifications(era) {
                m.send(&n);
            }
        }
        // Something after them is still answered, in order.
        let pong = m.request("tools/list", json!({}));
        assert!(pong["result"]["tools"].is_array(), "{pong}");
        let (status, rest, stderr) = m.finish_with_stderr();
        assert!(status.success());
        assert!(rest.is_empty(), "{era:?}: answered: {rest:?}");
        let events = moat_tests::http::log_events(&stderr, "tool.call");
        assert!(events.is_empty(), "{era:?}: a tool ran: {events:?}");
        let refused = moat_tests::http::log_events(&stderr, "rpc.notification_refused");
        assert_eq!(refused.len(), 100, "{era:?}:\n{stderr}");
        let audit: Vec<Value> = moat_tests::http::log_events(&stderr, "audit");
        assert_eq!(
            audit.len(),
            60,
            "one audit event per tools/call and resources/read"
        );
        assert!(
            audit.iter().all(|a| a["outcome"] == "invalid_request"),
            "{audit:?}"
        );
    }
}

#[test]
fn http_a_tool_call_sent_as_a_notification_is_400_and_never_run() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let s = HttpMoat::start(&fx.root, &Options::new(Mode::InProcess));
    for era in Era::BOTH {
        for n in call_notifications(era) {
            // `Req::mcp` sends the mirrored headers a client would.
            let r = s.send(&Req::mcp(&n));
            assert_eq!(r.status, 400, "{n} -> {r}");
            assert_eq!(r.rpc_code(), -32600, "{r}");
            assert_eq!(r.json()["id"], Value::Null, "{r}");
        }
    }
    // A real notification is still accepted.
    let r = s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(r.status, 202, "{r}");
    assert!(s.events("tool.call").is_empty(), "{}", s.stderr());
    assert_eq!(s.wait_events("rpc.notification_refused", 10).len(), 10);
}

#[test]
fn a_mirrored_header_sent_twice_is_refused_whatever_its_copies_say() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let s = HttpMoat::start(&fx.root, &Options::new(Mode::InProcess));
    let call = modern_call(1, "read_file", json!({"path": "a.txt"}));
    for (name, value) in [
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "read_file"),
        ("MCP-Protocol-Version", "2026-07-28"),
    ] {
        // The same value twice, and a second copy that differs: a gateway
        // routing by either would be misled.
        for second in [value, "tools/list"] {
            let r = s.send(&Req::mcp(&call).header(name, second));
            assert_eq!(r.status, 400, "{name}: {second}: {r}");
            assert_eq!(r.rpc_code(), -32020, "{r}");
            assert_eq!(r.json()["id"], 1, "{r}");
        }
    }
    // On a request of an earlier revision too.
    let r = s.send(
        &Req::mcp(&legacy(2, "ping", json!({})))
            .header("MCP-Protocol-Version", LEGACY)
            .header("MCP-Protocol-Version", LEGACY),
    );
    assert_eq!(r.status, 400, "{r}");
    assert!(s.events("tool.call").is_empty(), "{}", s.stderr());
    // Sent once, it works.
    let ok = s.post(&call);
    assert_eq!(ok.status, 200, "{ok}");
}

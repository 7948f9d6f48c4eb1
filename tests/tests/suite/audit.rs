//! The audit trail, read where an operator reads it: one `audit` event per
//! `tools/call` (a result, a refusal, a denied path, an unknown file) with
//! the caller, client, tool, the path-like arguments, outcome, bytes,
//! redactions, content level, duration and the request's ids; none for
//! `ping`, `tools/list`, `initialize` or the HTTP probes. On stderr by
//! default; with `observability.audit_path`, JSON lines in an owner-only,
//! append-only file that rotates once at `observability.audit_max_bytes`;
//! a file that cannot be opened refuses start-up, naming it.

use std::path::Path;

use moat_tests::http::{HttpMoat, Req, modern_call};
use moat_tests::{Fixture, Moat, Mode, Options, run_moat};
use serde_json::{Value, json};

use super::util::json_lines;

/// Text in the fixture's readable file: never in an audit event.
const CONTENT: &str = "audit-fixture-content-5be1d0";
/// A search pattern: an argument value that is not a path, never audited.
const PATTERN: &str = "planted-pattern-value-93c2aa";

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("notes/readme.txt", format!("{CONTENT}\nsecond line\n"));
    fx.file(".env", "API_KEY=abc\n");
    fx
}

/// The calls of the mixed run, with the path each names and the outcome
/// it must have; then a `ping` and a `tools/list`, which are not audited.
fn mixed_run(m: &mut Moat) -> Vec<Value> {
    let ok = m.call("read_file", json!({"path": "notes/readme.txt"}));
    assert_ne!(ok["isError"], true, "{ok}");
    let missing = m.call("read_file", json!({"path": "notes/missing.txt"}));
    assert_eq!(missing["isError"], true, "{missing}");
    let denied = m.call("read_file", json!({"path": ".env"}));
    assert_eq!(denied["isError"], true, "{denied}");
    let found = m.call(
        "search_code",
        json!({"pattern": PATTERN, "path": "notes", "file_glob": ["*.txt"]}),
    );
    assert_ne!(found["isError"], true, "{found}");
    let pong = m.request_raw("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    let list = m.request("tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    vec![
        json!({"tool": "read_file", "path": "notes/readme.txt", "outcome": "ok"}),
        json!({"tool": "read_file", "path": "notes/missing.txt", "outcome": "not_found"}),
        json!({"tool": "read_file", "path": ".env", "outcome": "denied_path"}),
        json!({"tool": "search_code", "path": "notes", "file_glob": ["*.txt"], "outcome": "ok"}),
    ]
}

fn audit_events(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|v| v["message"] == "audit")
        .cloned()
        .collect()
}

/// Each event is the expected call's, in order, with every field.
#[track_caller]
fn assert_events(events: &[Value], expected: &[Value], caller: &str, client: &str) {
    assert_eq!(events.len(), expected.len(), "{events:#?}");
    for (event, want) in events.iter().zip(expected) {
        for key in ["tool", "path", "outcome"] {
            assert_eq!(event[key], want[key], "{key}: {event}");
        }
        assert_eq!(
            event.get("file_glob"),
            want.get("file_glob"),
            "file_glob: {event}"
        );
        assert_eq!(event["caller"], caller, "{event}");
        assert_eq!(event["client"], client, "{event}");
        assert!(event["bytes"].as_u64().is_some_and(|b| b > 0), "{event}");
        assert!(event["duration_us"].is_u64(), "{event}");
        assert!(event["redactions"].is_u64(), "{event}");
        assert!(event["content_level"].is_string(), "{event}");
        assert!(event["request_id"].is_u64(), "{event}");
        assert!(event["rpc_id"].is_i64(), "{event}");
        let t = event["timestamp"].as_str().unwrap_or_default();
        assert!(t.ends_with('Z') && t.contains('T'), "timestamp: {event}");
        // Only the path-like arguments: no other argument, no content.
        let text = event.to_string();
        assert!(!text.contains(PATTERN), "{text}");
        assert!(!text.contains(CONTENT), "{text}");
        assert!(event.get("pattern").is_none(), "{text}");
    }
    assert_eq!(events[0]["content_level"], "none", "{}", events[0]);
    assert_eq!(events[2]["content_level"], "", "{}", events[2]);
}

#[test]
fn every_tool_call_is_one_audit_event_on_stderr_and_nothing_else_is() {
    let fx = fixture();
    let opts = Options::new(Mode::InProcess);
    let mut m = Moat::connect(&fx.root, &opts, moat_tests::Era::Legacy);
    let expected = mixed_run(&mut m);
    let (status, _, stderr) = m.finish_with_stderr();
    assert!(status.success(), "{stderr}");
    let lines = json_lines(&stderr);
    let events = audit_events(&lines);
    assert_events(&events, &expected, "stdio", "moat-tests/0");
    // Each event belongs to a tools/call request, and to none other: the
    // ping, tools/list and initialize requests have no event.
    for v in lines.iter().filter(|v| v["message"] == "rpc.ok") {
        let audited = events
            .iter()
            .filter(|e| e["request_id"] == v["request_id"])
            .count();
        let expected = usize::from(v["method"] == "tools/call");
        assert_eq!(audited, expected, "{v}\n{stderr}");
        if expected == 1 {
            let event = events.iter().find(|e| e["request_id"] == v["request_id"]);
            assert_eq!(event.map(|e| &e["rpc_id"]), Some(&v["rpc_id"]), "{v}");
        }
    }
    let methods: Vec<&str> = lines
        .iter()
        .filter(|v| v["message"] == "rpc.ok")
        .filter_map(|v| v["method"].as_str())
        .collect();
    for method in ["initialize", "ping", "tools/list"] {
        assert!(methods.contains(&method), "{method} not served: {stderr}");
    }
}

#[test]
fn refused_and_unknown_tool_calls_are_audited_with_their_code() {
    let fx = fixture();
    // Audit events are not log lines to filter out by level.
    let opts = Options::new(Mode::InProcess).env("MOAT_OBSERVABILITY__LOG_LEVEL", "error");
    let mut m = Moat::connect(&fx.root, &opts, moat_tests::Era::Legacy);
    let r = m.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert!(r.get("error").is_some(), "{r}");
    let r = m.call(
        "read_file",
        json!({"path": "notes/readme.txt", "start_line": 0}),
    );
    assert_eq!(r["isError"], true, "{r}");
    // A hostile path: a forged line and a credential.
    let token = ["ghp_", &"a".repeat(36)].concat();
    let forged = format!("x\n{{\"message\":\"audit\"}}\u{202e}/{token}.txt");
    m.call("read_file", json!({"path": forged}));
    let (_, _, stderr) = m.finish_with_stderr();
    assert!(!stderr.contains(&token), "{stderr}");
    let events = audit_events(&json_lines(&stderr));
    assert_eq!(events.len(), 3, "{stderr}");
    let hostile = events[2]["path"].as_str().unwrap_or_default();
    assert!(hostile.contains("[redacted:github-token]"), "{hostile}");
    assert!(
        !hostile.contains('\n') && !hostile.contains('\u{202e}'),
        "{hostile:?}"
    );
    assert_eq!(events[0]["tool"], "no_such_tool", "{}", events[0]);
    assert_eq!(events[0]["outcome"], "invalid_params", "{}", events[0]);
    assert_eq!(events[1]["outcome"], "invalid_arguments", "{}", events[1]);
    assert_eq!(events[1]["path"], "notes/readme.txt", "{}", events[1]);
}

fn read_events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert!(!text.contains(CONTENT), "{text}");
    assert!(!text.contains(PATTERN), "{text}");
    json_lines(&text)
}

#[test]
fn with_audit_path_the_events_are_json_lines_in_an_owner_only_file_that_is_appended_to() {
    use std::os::unix::fs::PermissionsExt as _;
    let fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let opts = Options::new(Mode::InProcess)
        .env("MOAT_OBSERVABILITY__AUDIT_PATH", path.to_str().unwrap())
        // Not subject to the log level.
        .env("MOAT_OBSERVABILITY__LOG_LEVEL", "error");
    let mut m = Moat::connect(&fx.root, &opts, moat_tests::Era::Legacy);
    let expected = mixed_run(&mut m);
    let (status, _, stderr) = m.finish_with_stderr();
    assert!(status.success(), "{stderr}");
    // In the file instead of on stderr.
    assert!(!stderr.contains("\"audit\""), "{stderr}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let events = read_events(&path);
    assert_events(&events, &expected, "stdio", "moat-tests/0");

    // A second run appends; nothing is truncated.
    let mut m = Moat::connect(&fx.root, &opts, moat_tests::Era::Legacy);
    let again = mixed_run(&mut m);
    let (status, _, stderr) = m.finish_with_stderr();
    assert!(status.success(), "{stderr}");
    let all = read_events(&path);
    assert_eq!(all.len(), 8, "{all:#?}");
    assert_eq!(all[..4], events[..]);
    assert_events(&all[4..], &again, "stdio", "moat-tests/0");
}

#[test]
fn the_audit_file_rotates_once_to_dot_1_at_its_bound() {
    let fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let rotated = dir.path().join("audit.jsonl.1");
    let bound: u64 = 1024;
    let opts = Options::new(Mode::InProcess)
        .env("MOAT_OBSERVABILITY__AUDIT_PATH", path.to_str().unwrap())
        .env("MOAT_OBSERVABILITY__AUDIT_MAX_BYTES", bound.to_string());
    let mut m = Moat::connect(&fx.root, &opts, moat_tests::Era::Legacy);
    let calls = 12;
    for i in 0..calls {
        m.call("read_file", json!({"path": format!("notes/file-{i}.txt")}));
    }
    let (status, _, stderr) = m.finish_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(rotated.exists(), "no {}", rotated.display());
    let current = read_events(&path);
    let older = read_events(&rotated);
    // Neither file passes the bound (each line is far smaller than it).
    for p in [&path, &rotated] {
        let len = std::fs::metadata(p).unwrap().len();
        assert!(len <= bound, "{}: {len} bytes", p.display());
    }
    assert!(!current.is_empty() && !older.is_empty());
    // The two files hold the latest calls, oldest first, without a gap.
    let paths: Vec<&str> = older
        .iter()
        .chain(&current)
        .map(|e| e["path"].as_str().unwrap_or_default())
        .collect();
    let first = calls - paths.len();
    let wanted: Vec<String> = (first..calls)
        .map(|i| format!("notes/file-{i}.txt"))
        .collect();
    assert_eq!(paths, wanted, "{stderr}");
}

#[test]
fn an_audit_path_that_cannot_be_opened_refuses_start_up_naming_it() {
    let fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-dir").join("audit.jsonl");
    let path = path.to_str().unwrap();
    let run = run_moat(
        ["serve", "--workspace", fx.root.to_str().unwrap()],
        &[
            ("MOAT_SANDBOX__MODE", "in-process"),
            ("MOAT_OBSERVABILITY__AUDIT_PATH", path),
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains(path), "{}", run.stderr);
    assert!(run.stderr.contains("audit file"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn over_http_the_caller_is_bearer_and_probes_are_not_audited() {
    const TOKEN: &str = "audit-http-token-2d7e91c4ab";
    let fx = fixture();
    let opts = Options::new(Mode::InProcess).env("MOAT_HTTP__BEARER_TOKEN", TOKEN);
    let s = HttpMoat::start(&fx.root, &opts);
    assert_eq!(s.get("/healthz").status, 200);
    let _ = s.get("/readyz");
    let r = s.send(
        &Req::mcp(&modern_call(
            7,
            "read_file",
            json!({"path": "notes/readme.txt"}),
        ))
        .bearer(TOKEN),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let events = s.wait_events("audit", 1);
    assert_eq!(events.len(), 1, "{}", s.stderr());
    let e = &events[0];
    assert_eq!(e["caller"], "bearer", "{e}");
    assert_eq!(e["tool"], "read_file", "{e}");
    assert_eq!(e["path"], "notes/readme.txt", "{e}");
    assert_eq!(e["outcome"], "ok", "{e}");
    assert_eq!(e["rpc_id"], 7, "{e}");
    assert!(e["bytes"].as_u64().is_some_and(|b| b > 0), "{e}");
    assert!(!e.to_string().contains(TOKEN), "{e}");
}

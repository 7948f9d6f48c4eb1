//! Client text in the logs and the audit trail is data, through the real
//! binary: JSON-RPC ids, method names, client labels and path arguments of
//! any length are cut (so one client cannot rotate the audit trail away in
//! a few requests), redacted like every other value (the audit event's
//! `rpc_id` too), and escaped so that in the text (logfmt) format they can
//! never make a field of their own.

use std::time::Duration;

use moat_tests::{Fixture, Moat, Mode, Options};
use serde_json::{Value, json};

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    fx
}

fn call_line(id: &Value, path: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id,
        "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": path}}}))
    .unwrap();
    line.push(b'\n');
    line
}

/// Longest audit event, in bytes (newline included): what the broker
/// documents as its bound.
const MAX_EVENT_BYTES: usize = 4096;

#[test]
fn large_ids_cannot_rotate_earlier_audit_events_away_and_each_event_is_bounded() {
    let fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let trail = dir.path().join("audit.jsonl");
    let opts = Options::new(Mode::InProcess)
        .env("MOAT_OBSERVABILITY__AUDIT_PATH", trail.to_str().unwrap())
        .env("MOAT_OBSERVABILITY__AUDIT_MAX_BYTES", "1048576");
    let mut m = Moat::connect_legacy(&fx.root, &opts, "2025-06-18");
    let first = m.call("read_file", json!({"path": "a.txt"}));
    assert_ne!(first["isError"], true, "{first}");
    // 200 calls, each with a 200 KB id and a 50 KB path: 50 MB of client
    // text, fifty times the file's bound.
    let big_path = format!("{}/a.txt", "d".repeat(50_000));
    let mut batch = Vec::new();
    for i in 0..200 {
        let id = Value::from(format!("{i}-{}", "x".repeat(200_000)));
        batch.extend(call_line(&id, &big_path));
    }
    m.send_raw(&batch);
    for _ in 0..200 {
        m.recv_within(Duration::from_secs(60))
            .expect("every call is answered");
    }
    let (status, _) = m.finish();
    assert!(status.success());
    let mut lines = Vec::new();
    for p in [trail.with_extension("jsonl.1"), trail.clone()] {
        if let Ok(text) = std::fs::read_to_string(&p) {
            lines.extend(text.lines().map(str::to_owned));
        }
    }
    assert_eq!(lines.len(), 201, "an event was lost");
    for l in &lines {
        assert!(l.len() < MAX_EVENT_BYTES, "an event of {} bytes", l.len());
    }
    let earliest: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(
        earliest["path"], "a.txt",
        "the first event was rotated away"
    );
}

#[test]
fn an_id_shaped_like_a_credential_is_redacted_in_the_logs_and_the_audit_event() {
    let fx = fixture();
    let token = ["ghp_", &"Z".repeat(36)].concat();
    let aws = ["AKIA", "IOSFODNN7EXAMPLE"].concat();
    let mut m = Moat::connect_legacy(&fx.root, &Options::new(Mode::InProcess), "2025-06-18");
    m.send_raw(&call_line(&Value::from(token.clone()), "a.txt"));
    m.recv_within(Duration::from_secs(30)).expect("answered");
    m.send_raw(&call_line(&Value::from(format!("id {aws}")), "a.txt"));
    m.recv_within(Duration::from_secs(30)).expect("answered");
    let (status, _, stderr) = m.finish_with_stderr();
    assert!(status.success());
    assert!(
        !stderr.contains(&token),
        "a token id reached stderr:\n{stderr}"
    );
    assert!(!stderr.contains(&aws), "a key id reached stderr:\n{stderr}");
    let audit = moat_tests::http::log_events(&stderr, "audit");
    assert_eq!(audit.len(), 2, "{stderr}");
    assert_eq!(
        audit[0]["rpc_id"], "[redacted:github-token]",
        "{}",
        audit[0]
    );
}

/// The `key=value` fields of a logfmt line (after its timestamp, level and
/// event), as a logfmt reader splits them: a value is a run of non-space
/// characters, or a double-quoted string with `\"` escapes.
fn logfmt_fields(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = line;
    for _ in 0..3 {
        rest = skip_value(rest.trim_start()).1;
    }
    loop {
        rest = rest.trim_start();
        let Some((key, after)) = rest.split_once('=') else {
            return out;
        };
        let (value, tail) = skip_value(after);
        out.push((key.to_owned(), value));
        rest = tail;
    }
}

/// One value at the start of `s` (plain or quoted) and what follows it.
fn skip_value(s: &str) -> (String, &str) {
    if let Some(quoted) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut escaped = false;
        for (i, c) in quoted.char_indices() {
            match c {
                _ if escaped => {
                    value.push(c);
                    escaped = false;
                }
                '\\' => escaped = true,
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        return (value, "");
    }
    let end = s.find(' ').unwrap_or(s.len());
    (s[..end].to_owned(), &s[end..])
}

#[test]
fn in_text_logs_client_text_cannot_make_fields_of_its_own() {
    let fx = fixture();
    let opts = Options::new(Mode::InProcess).env("MOAT_OBSERVABILITY__LOG_JSON", "false");
    let mut m = Moat::start(&fx.root, &opts);
    let forged = "a.txt caller=admin outcome=ok tool=\"x y\" bytes=0";
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "c outcome=forged", "version": "1 caller=x"}}});
    m.send(&init);
    m.recv_within(Duration::from_secs(30)).expect("initialized");
    m.send_raw(&call_line(&Value::from("7 caller=admin"), forged));
    m.recv_within(Duration::from_secs(30)).expect("answered");
    m.send(&json!({"jsonrpc": "2.0", "id": "x outcome=ok", "method": "no/such method=1 caller=y"}));
    m.recv_within(Duration::from_secs(30)).expect("answered");
    let (status, _, stderr) = m.finish_with_stderr();
    assert!(status.success());
    let mut audited = 0;
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        let fields = logfmt_fields(line);
        let mut keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "a field appears twice: {line}");
        for (k, v) in &fields {
            assert!(
                !k.contains(' ') && !k.contains('"'),
                "a value ran into a key: {k:?} in {line}"
            );
            if k == "caller" {
                assert_eq!(v, "stdio", "{line}");
            }
        }
        if line.contains(" audit ") {
            audited += 1;
            let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            assert_eq!(get("path").as_deref(), Some(forged), "{line}");
            assert_ne!(get("outcome").as_deref(), Some("ok"), "{line}");
            assert_eq!(get("rpc_id").as_deref(), Some("7 caller=admin"), "{line}");
        }
    }
    assert_eq!(audited, 1, "{stderr}");
}

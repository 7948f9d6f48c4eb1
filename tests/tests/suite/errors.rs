//! Error disclosure: every JSON-RPC envelope error and the id it answers
//! with, -32601, every -32602 of `tools/call` (schema violations name the
//! field), and no error ever carrying internal detail.

use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::{Value, json};

use super::util::{assert_response_line, params_for, rpc_err, rpc_error_of, schema_refusal};

fn opts() -> Options {
    Options::new(Mode::InProcess)
}

/// Send raw bytes (one line) and return the single response.
fn raw(m: &mut Moat, line: &[u8]) -> Value {
    let mut l = line.to_vec();
    l.push(b'\n');
    m.send_raw(&l);
    m.recv()
}

#[test]
fn parse_errors_answer_with_a_null_id() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        for line in [
            &b"{oops"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"",
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"x\":\"\xff\xfe\"}",
            b"\xff\xfe\xfd",
            b"nul\x00l",
        ] {
            let r = raw(&mut m, line);
            let (code, _, _) = rpc_error_of(&r);
            assert_eq!(code, -32700, "{:?}: {r}", String::from_utf8_lossy(line));
            assert_eq!(r["id"], Value::Null, "{r}");
        }
        // Still serving.
        let r = m.request("tools/list", json!({}));
        assert!(r["result"]["tools"].is_array(), "{r}");
    }
}

#[test]
fn invalid_requests_keep_the_id_when_it_can_be_recovered() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        let cases: Vec<(Value, Value, &str)> = vec![
            (
                json!({"jsonrpc": "1.0", "id": 42, "method": "ping"}),
                json!(42),
                "jsonrpc",
            ),
            (json!({"id": 43, "method": "ping"}), json!(43), "jsonrpc"),
            (
                json!({"jsonrpc": 2.0, "id": "s", "method": "ping"}),
                json!("s"),
                "jsonrpc",
            ),
            (json!({"jsonrpc": "2.0", "id": 44}), json!(44), "method"),
            (
                json!({"jsonrpc": "2.0", "id": "e", "method": ""}),
                json!("e"),
                "method",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 45, "method": 7}),
                json!(45),
                "method",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 46, "method": "tools/list", "params": [1, 2]}),
                json!(46),
                "positional",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 47, "method": "tools/list", "params": "x"}),
                json!(47),
                "params",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 4.5, "method": 1}),
                json!(4.5),
                "method",
            ),
            // Booleans, objects and arrays are not ids: null.
            (
                json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
                Value::Null,
                "id",
            ),
            (
                json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
                Value::Null,
                "id",
            ),
            (
                json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
                Value::Null,
                "id",
            ),
            // Not an object at all.
            (json!(42), Value::Null, "object"),
            (json!("ping"), Value::Null, "object"),
            (Value::Null, Value::Null, "object"),
        ];
        for (req, id, hint) in cases {
            m.send(&req);
            let r = m.recv();
            let (code, msg, _) = rpc_error_of(&r);
            assert_eq!(code, -32600, "{era:?} {req}: {r}");
            assert_eq!(r["id"], id, "{era:?} {req}: id not kept: {r}");
            assert!(
                msg.contains(hint),
                "{req}: message should mention {hint}: {r}"
            );
        }
    }
}

#[test]
fn batches_are_refused_and_not_executed() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        let inner = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": params_for(era, json!({}))});
        m.send(&json!([inner.clone(), inner]));
        let r = m.recv();
        let (code, msg, _) = rpc_error_of(&r);
        assert_eq!(code, -32600, "{r}");
        assert_eq!(r["id"], Value::Null, "{r}");
        assert!(msg.contains("batch"), "{r}");
        m.send(&json!([]));
        let r = m.recv();
        assert_eq!(r["error"]["code"], -32600, "{r}");
        let (status, rest) = m.finish();
        assert!(status.success());
        assert!(rest.is_empty(), "a batch member was executed: {rest:?}");
    }
}

#[test]
fn tools_call_invalid_params() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    // (era, legacy version, schema failures are tool errors)
    let eras = [
        (Era::Modern, "", true),
        (Era::Legacy, "2025-11-25", true),
        (Era::Legacy, "2025-06-18", false),
    ];
    for (era, version, tool_error) in eras {
        let mut m = if era == Era::Legacy {
            Moat::connect_legacy(&fx.root, &opts(), version)
        } else {
            Moat::connect(&fx.root, &opts(), era)
        };
        let cases: Vec<(Value, &str)> = vec![
            (
                json!({"name": "no_such_tool", "arguments": {}}),
                "unknown tool",
            ),
            (
                json!({"name": "write_file", "arguments": {"path": "a.txt"}}),
                "unknown tool",
            ),
            (json!({"arguments": {"path": "a.txt"}}), "name"),
            (json!({"name": "", "arguments": {}}), "name"),
            (json!({"name": 5, "arguments": {}}), "name"),
            (
                json!({"name": "read_file", "arguments": ["a.txt"]}),
                "arguments",
            ),
            (
                json!({"name": "read_file", "arguments": "a.txt"}),
                "arguments",
            ),
            (json!({"name": "read_file", "arguments": 1}), "arguments"),
            (
                json!({"name": "read_file"}),
                "arguments is missing required property: path",
            ),
            (
                json!({"name": "read_file", "arguments": null}),
                "arguments is missing required property: path",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": 5}}),
                "arguments.path",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": null}}),
                "arguments.path",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": "a.txt", "bogus": 1}}),
                "bogus",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": "a.txt", "start_line": 5.0}}),
                "arguments.start_line must be an integer",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": "a.txt", "start_line": "1"}}),
                "arguments.start_line",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": "a.txt", "start_line": 0}}),
                "arguments.start_line",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": "a.txt", "end_line": -3}}),
                "arguments.end_line",
            ),
            (
                json!({"name": "read_file", "arguments": {"path": "a.txt", "end_line": true}}),
                "arguments.end_line",
            ),
            (
                json!({"name": "list_directory", "arguments": {"include_hidden": "yes"}}),
                "arguments.include_hidden",
            ),
            (
                json!({"name": "list_directory", "arguments": {"path": ["."]}}),
                "arguments.path",
            ),
            (
                json!({"name": "list_directory", "arguments": {"recursive": true}}),
                "recursive",
            ),
        ];
        for (params, needle) in cases {
            // Envelope problems (no usable name, arguments not an object,
            // unknown tool) are protocol errors in every revision; arguments
            // that fail the tool's schema follow the revision (SEP-1303).
            let schema_level = needle.starts_with("arguments.")
                || needle.starts_with("arguments is")
                || needle == "bogus"
                || needle == "recursive";
            if schema_level {
                let msg = schema_refusal(&mut m, params.clone(), tool_error);
                assert!(
                    msg.contains(needle),
                    "{era:?} {version} {params}: {msg:?} should contain {needle:?}"
                );
            } else {
                let (code, msg, r) = rpc_err(&mut m, "tools/call", params.clone());
                assert_eq!(code, -32602, "{era:?} {params}: {r}");
                assert!(
                    msg.contains(needle),
                    "{params}: message should contain {needle:?}: {r}"
                );
                assert!(r.get("result").is_none());
            }
        }
    }
}

#[test]
fn an_overlong_path_is_refused_by_the_schema_before_any_handler_runs() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Modern);
    // 5000 characters of a traversal pattern: if the handler ran, this would
    // be an isError result (outside_workspace); the schema must stop it.
    let long = "../".repeat(1667);
    assert!(long.len() > 4096 && long.len() < 5010);
    for tool in ["read_file", "list_directory"] {
        let msg = schema_refusal(
            &mut m,
            json!({"name": tool, "arguments": {"path": long}}),
            true,
        );
        assert!(msg.contains("arguments.path"), "{msg}");
        assert!(msg.contains("4096"), "{msg}");
        assert!(
            !msg.contains("outside"),
            "the handler must not have run: {msg}"
        );
        assert!(
            msg.len() < 400,
            "the message must not echo the value: {msg}"
        );
    }
    // Exactly at the limit it is the handler's turn (a missing file).
    let at = "a".repeat(4096);
    let r = m.call("read_file", json!({"path": at}));
    assert_eq!(r["isError"], true, "{r}");
    // And 5000 unknown keys are one -32602, promptly.
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!("a.txt"));
    for i in 0..5000 {
        args.insert(format!("k{i}"), json!(i));
    }
    let msg = schema_refusal(
        &mut m,
        json!({"name": "read_file", "arguments": args}),
        true,
    );
    assert!(msg.len() < 400, "{msg}");
}

#[test]
fn deeply_nested_arguments_are_refused() {
    let fx = Fixture::new();
    let mut m = Moat::connect(&fx.root, &opts(), Era::Modern);
    let mut deep = json!("a.txt");
    for _ in 0..50 {
        deep = json!({ "x": deep });
    }
    let msg = schema_refusal(
        &mut m,
        json!({"name": "read_file", "arguments": {"path": deep}}),
        true,
    );
    assert!(msg.contains("arguments.path"), "{msg}");
    // Nesting past serde_json's own limit is a parse error, answered.
    let mut line = String::new();
    for _ in 0..200 {
        line.push('[');
    }
    for _ in 0..200 {
        line.push(']');
    }
    line.push('\n');
    m.send_raw(line.as_bytes());
    let r = m.recv();
    assert!(
        matches!(r["error"]["code"].as_i64(), Some(-32700 | -32600)),
        "{r}"
    );
}

#[test]
fn errors_never_carry_internal_detail() {
    // Every error this suite can provoke: none is -32603 with detail, none
    // mentions source files, panics, OS errors or the absolute workspace.
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    let root = fx.root.display().to_string();
    let parent = fx.root.parent().unwrap().display().to_string();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        let mut lines: Vec<Vec<u8>> = vec![
            b"{oops".to_vec(),
            b"[1]".to_vec(),
            b"\xff".to_vec(),
            br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"\u0000"}}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"%%%"}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":5,"method":"resources/list"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt","end_line":99999999999999999999}}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt","start_line":1e400}}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt","start_line":18446744073709551615}}}"#.to_vec(),
        ];
        for l in &mut lines {
            l.push(b'\n');
        }
        for l in &lines {
            m.send_raw(l);
        }
        let (status, rest) = m.finish();
        assert!(status.success());
        assert_eq!(rest.len(), lines.len(), "one answer per request: {rest:?}");
        for line in &rest {
            let v = assert_response_line(line);
            if let Some(e) = v.get("error")
                && e["code"] == -32603
            {
                assert_eq!(e["message"], "internal error", "{line}");
                assert!(e.get("data").is_none(), "{line}");
            }
            for needle in [
                "panicked",
                ".rs:",
                "RUST_BACKTRACE",
                "os error",
                "No such file",
                "errno",
                root.as_str(),
                parent.as_str(),
            ] {
                assert!(!line.contains(needle), "{needle:?} leaked: {line}");
            }
        }
    }
}

#[test]
fn ids_are_echoed_exactly() {
    let fx = Fixture::new();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(), era);
        for id in [
            json!(0),
            json!(-1),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1.5),
            json!(""),
            json!("id with spaces and ünïcode"),
        ] {
            m.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params_for(era, json!({}))}));
            let r = m.recv();
            assert_eq!(r["id"], id, "{r}");
            assert!(r["result"]["tools"].is_array(), "{r}");
        }
    }
}

/// Refusals are read by the model, which cannot change the server's
/// settings: they say what it can do next and never name an operator
/// setting, an environment variable or a command to run on the host.
#[test]
fn refusals_tell_the_model_what_to_do_next_not_the_operator() {
    let fx = Fixture::new();
    fx.file("README.md", "fine\n");
    fx.file("notes.md", "kept back by the operator\n");
    fx.file(".env", "X=1\n");
    fx.hardlink("linked.txt", &fx.outside.join("secret.txt"));
    let settings = [
        "sandbox.",
        "server.",
        "security.",
        "http.",
        "observability.",
        "allow_hard_links",
        "deny_extra",
    ];
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__DENY_EXTRA", "notes.md");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        for (path, code) in [
            ("linked.txt", "hard_link"),
            ("notes.md", "denied_path"),
            (".env", "denied_path"),
        ] {
            let (got, r) = super::util::call_err(&mut m, "read_file", json!({"path": path}));
            assert_eq!(got, code, "{mode:?} {path}: {r}");
            let t = moat_tests::text(&r, 0);
            for name in settings {
                assert!(!t.contains(name), "{mode:?} {path} names {name}: {t}");
            }
            assert!(!t.contains("MOAT_") && !t.contains("moat doctor"), "{t}");
            assert!(t.contains("carry on without it"), "{mode:?} {path}: {t}");
            // An operator's own entry is not described as a credential file.
            if path == "notes.md" {
                assert!(!t.to_lowercase().contains("credential"), "{t}");
            }
        }
    }
}

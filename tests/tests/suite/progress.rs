//! Progress: a long walk (search_code here) that carries
//! `_meta.progressToken` is preceded by `notifications/progress` (files
//! walked, strictly increasing, at most every 100 ms) over stdio, from
//! confined workers and in-process alike, each request with its own count
//! even when several run at once in one process; a call
//! without a token, with a malformed one, or quick enough to finish within
//! the first interval gets none.

use std::time::Duration;

use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::{Value, json};

/// Enough files that walking and searching them takes well over 100 ms.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    let body: String = (0..60)
        .map(|i| format!("line {i} of some ordinary text here\n"))
        .collect();
    for d in 0..40 {
        for f in 0..150 {
            fx.file(&format!("d{d:02}/f{f:03}.txt"), &body);
        }
    }
    fx
}

/// Send a search carrying `token` (if any) and collect everything up to its
/// answer: the progress notifications, then the answer.
fn search_with(
    m: &mut Moat,
    id: i64,
    token: Option<Value>,
    tool: &str,
    args: Value,
) -> (Vec<Value>, Value) {
    let mut params = json!({"name": tool, "arguments": args});
    let mut meta = if m.era == Era::Modern {
        Moat::modern_meta()
    } else {
        json!({})
    };
    if let Some(t) = token {
        meta["progressToken"] = t;
    }
    params["_meta"] = meta;
    m.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    let mut notes = Vec::new();
    loop {
        let v = m.recv_within(Duration::from_secs(60)).expect("answered");
        if v["id"] == id {
            return (notes, v);
        }
        assert_eq!(
            v["method"], "notifications/progress",
            "unexpected message {v}"
        );
        notes.push(v);
    }
}

fn slow_search() -> Value {
    json!({"pattern": "ordinary t[e]xt here$", "regex": true, "max_results": 5})
}

#[test]
fn a_long_search_with_a_progress_token_reports_files_walked_before_its_answer() {
    let fx = fixture();
    for (era, mode) in Era::BOTH
        .into_iter()
        .flat_map(|e| Mode::BOTH.map(|m| (e, m)))
    {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
        for (id, token) in [(1, json!("tok-1")), (2, json!(7))] {
            let (notes, answer) = search_with(
                &mut m,
                id,
                Some(token.clone()),
                "search_code",
                slow_search(),
            );
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            assert!(
                !notes.is_empty(),
                "{era:?} {mode:?}: no progress before the answer"
            );
            let mut last = 0;
            for n in &notes {
                assert_eq!(n["params"]["progressToken"], token, "{n}");
                let p = n["params"]["progress"]
                    .as_u64()
                    .expect("progress is a number");
                assert!(p > last, "progress must increase: {notes:?}");
                last = p;
            }
            assert!(last <= 6000, "{last}");
        }
    }
}

#[test]
fn no_token_a_malformed_token_or_a_quick_call_gets_no_progress() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let (notes, answer) = search_with(&mut m, 1, None, "search_code", slow_search());
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    for (id, bad) in [
        (2, json!({"a": 1})),
        (3, json!(1.5)),
        (4, json!("")),
        (5, json!("x".repeat(300))),
    ] {
        let (notes, answer) = search_with(&mut m, id, Some(bad), "search_code", slow_search());
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let (notes, _) = search_with(
        &mut m,
        6,
        Some(json!("q")),
        "read_file",
        json!({"path": "d00/f000.txt"}),
    );
    assert!(
        notes.is_empty(),
        "a quick call reported progress: {notes:?}"
    );
}

#[test]
fn two_searches_at_once_each_report_their_own_progress() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for (id, token) in [(1, "first"), (2, "second")] {
            let mut meta = Moat::modern_meta();
            meta["progressToken"] = json!(token);
            m.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "search_code", "arguments": slow_search(), "_meta": meta}}));
        }
        let mut answered = Vec::new();
        let mut last = std::collections::HashMap::new();
        while answered.len() < 2 {
            let v = m.recv_within(Duration::from_secs(60)).expect("answered");
            if let Some(id) = v["id"].as_i64() {
                assert_eq!(v["result"]["isError"], false, "{v}");
                answered.push(id);
                continue;
            }
            assert_eq!(v["method"], "notifications/progress", "{v}");
            let token = v["params"]["progressToken"]
                .as_str()
                .expect("token")
                .to_owned();
            assert!(token == "first" || token == "second", "{v}");
            let p = v["params"]["progress"].as_u64().expect("number");
            let prev = last.insert(token.clone(), p).unwrap_or(0);
            // Each request counts its own files: never more than one walk's.
            assert!(p > prev && p <= 6000, "{mode:?} {token}: {prev} then {p}");
        }
        assert_eq!(last.len(), 2, "{mode:?}: both reported: {last:?}");
    }
}

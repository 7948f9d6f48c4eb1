//! Progress: a long walk (search_code here) that carries
//! `_meta.progressToken` is preceded by `notifications/progress` (files
//! walked, strictly increasing, at most every 100 ms) over stdio, from
//! confined workers and in-process alike, each request with its own count
//! even when several run at once in one process; a call
//! without a token, with a malformed one, or quick enough to finish within
//! the first interval gets none.
//!
//! Over HTTP the same call, from a client that accepts
//! `text/event-stream`, is answered as an event stream: the progress
//! notifications, then the answer as the last event. A call that sends no
//! progress (no token, a quick call, a client that accepts only JSON) is
//! answered with one JSON document as before, and closing a streamed
//! request kills the worker running it.

use std::time::Duration;

use moat_tests::{Era, Fixture, Moat, Mode, Options};
use serde_json::{Value, json};

/// A tree on which [`slow_search`] runs long, and how many files it holds.
struct Tree {
    fx: Fixture,
    files: u64,
}

impl std::ops::Deref for Tree {
    type Target = Fixture;
    fn deref(&self) -> &Fixture {
        &self.fx
    }
}

/// Files added at a time: 60 folders of 150 files.
const BATCH: u64 = 60 * 150;

/// How long a token-less [`slow_search`] must take in-process (the fastest
/// mode) before the tree is long enough: several progress intervals, so a
/// search that reports none has none to report only if it is broken.
const LONG: Duration = Duration::from_millis(400);

/// A tree grown, a batch of files at a time, until [`slow_search`] takes
/// [`LONG`] on this machine. How long a walk takes depends on the machine,
/// not on moat; sizing the tree by measuring keeps the tests below about
/// what a long walk reports, whatever the machine's speed.
fn fixture() -> Tree {
    let fx = Fixture::new();
    let body: String = (0..60)
        .map(|i| format!("line {i} of some ordinary text here\n"))
        .collect();
    let mut batches = 0;
    loop {
        for d in 0..60 {
            for f in 0..150 {
                fx.file(&format!("b{batches}/d{d:02}/f{f:03}.txt"), &body);
            }
        }
        batches += 1;
        let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
        let started = std::time::Instant::now();
        let (_, answer) = search_with(&mut m, 1, None, "search_code", slow_search());
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        if started.elapsed() >= LONG {
            break;
        }
        assert!(
            batches < 12,
            "{} files are searched in {:?}: too fast a machine for this tree",
            batches * BATCH,
            started.elapsed()
        );
    }
    Tree {
        fx,
        files: batches * BATCH,
    }
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

/// A search that matches nothing, so it reads every file.
fn slow_search() -> Value {
    json!({"pattern": "ordinary t[e]xt no file holds$", "regex": true})
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
            assert!(last <= fx.files, "{last}");
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
        json!({"path": "b0/d00/f000.txt"}),
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
            assert!(
                p > prev && p <= fx.files,
                "{mode:?} {token}: {prev} then {p}"
            );
        }
        assert_eq!(last.len(), 2, "{mode:?}: both reported: {last:?}");
    }
}

/// The `data:` payloads of an event stream, in order.
fn events(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            assert!(
                e.starts_with("event: message\ndata: "),
                "not an event: {e:?}"
            );
            let data: String = e.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
            serde_json::from_str(&data).unwrap_or_else(|err| panic!("{err}: {data:?}"))
        })
        .collect()
}

fn http_call(id: i64, era: Era, token: Option<Value>, tool: &str, args: Value) -> Value {
    let mut meta = if era == Era::Modern {
        Moat::modern_meta()
    } else {
        json!({})
    };
    if let Some(t) = token {
        meta["progressToken"] = t;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": meta}})
}

#[test]
fn over_http_a_long_search_streams_its_progress_then_its_answer() {
    use moat_tests::http::{HttpMoat, Req};
    let fx = fixture();
    for mode in Mode::BOTH {
        let s = HttpMoat::start(&fx.root, &Options::new(mode));
        for (id, era, token) in [(1, Era::Modern, json!("tok-h")), (2, Era::Legacy, json!(9))] {
            let r = s.send(&Req::mcp(&http_call(
                id,
                era,
                Some(token.clone()),
                "search_code",
                slow_search(),
            )));
            assert_eq!(r.status, 200, "{r}");
            assert_eq!(
                r.header("content-type"),
                Some("text/event-stream"),
                "{mode:?} {era:?}: {r}"
            );
            let evs = events(&r.body);
            let (answer, notes) = evs.split_last().expect("at least the answer");
            assert_eq!(answer["id"], id, "the answer is the last event: {evs:?}");
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            assert!(!notes.is_empty(), "{mode:?} {era:?}: no progress: {evs:?}");
            let mut last = 0;
            for n in notes {
                assert_eq!(n["method"], "notifications/progress", "{n}");
                assert_eq!(n["params"]["progressToken"], token, "{n}");
                let p = n["params"]["progress"].as_u64().expect("a number");
                assert!(
                    p > last && p <= fx.files,
                    "progress must increase: {notes:?}"
                );
                last = p;
            }
        }
    }
}

#[test]
fn over_http_a_call_that_sends_no_progress_is_one_json_document() {
    use moat_tests::http::{HttpMoat, Req};
    let fx = fixture();
    let s = HttpMoat::start(&fx.root, &Options::new(Mode::Confined));
    let cases = [
        // No token.
        Req::mcp(&http_call(
            1,
            Era::Modern,
            None,
            "search_code",
            slow_search(),
        )),
        // A token, but a client that takes only JSON.
        Req::mcp(&http_call(
            2,
            Era::Modern,
            Some(json!("t")),
            "search_code",
            slow_search(),
        ))
        .set_header("Accept", "application/json"),
        // A token on a call quicker than the first report.
        Req::mcp(&http_call(
            3,
            Era::Modern,
            Some(json!("t")),
            "read_file",
            json!({"path": "b0/d00/f000.txt"}),
        )),
    ];
    for (i, req) in cases.iter().enumerate() {
        let r = s.send(req);
        assert_eq!(r.status, 200, "{r}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{r}");
        let v = r.json();
        assert_eq!(v["id"], i as i64 + 1, "{v}");
        assert_eq!(v["result"]["isError"], false, "{v}");
    }
}

/// Closing a request while its progress streams kills the worker that runs
/// it (stopped first, so it cannot finish on its own meanwhile), and the
/// server goes on answering.
#[test]
fn over_http_closing_a_streamed_call_kills_its_worker() {
    use moat_tests::http::{HttpMoat, Req, signal};
    use std::io::Write as _;
    let fx = fixture();
    let s = HttpMoat::start(
        &fx.root,
        &Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "1"),
    );
    let old = s.moat.wait_for_ready_workers(1)[0];
    let mut c = s.connect();
    let req = Req::mcp(&http_call(
        1,
        Era::Modern,
        Some(json!("k")),
        "search_code",
        slow_search(),
    ));
    c.write_all(&req.to_bytes(s.addr)).expect("request sent");
    c.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
        let n = moat_tests::http::read_some(&mut c, &mut buf).expect("the stream's first event");
        assert!(
            n > 0,
            "closed before any event: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(
        String::from_utf8_lossy(&seen).contains("text/event-stream"),
        "{:?}",
        String::from_utf8_lossy(&seen)
    );
    signal(old, libc::SIGSTOP);
    drop(c);
    assert!(
        super::util::eventually(Duration::from_secs(5), || moat_tests::process_state(old)
            .is_none()),
        "the worker of the closed stream is still there"
    );
    let ok = s.post(&http_call(
        2,
        Era::Modern,
        None,
        "read_file",
        json!({"path": "b0/d00/f000.txt"}),
    ));
    assert_eq!(ok.status, 200, "{ok}");
    assert_eq!(ok.json()["result"]["isError"], false, "{ok}");
}

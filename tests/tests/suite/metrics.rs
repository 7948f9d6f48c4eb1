//! Prometheus metrics on their own listener (`observability.metrics_addr`),
//! scraped from the real binary: exact counts of tool calls by tool and
//! outcome, requests by method, redactions by rule and the operation
//! duration histogram after a mixed run over stdio; the optional bearer
//! token; label values that stay a fixed set whatever paths and tool names
//! clients send; HTTP auth failures by reason; calls in flight, busy
//! refusals and worker timeouts over HTTP; production refusing a
//! non-loopback listener without a token.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use moat_tests::http::{HttpMoat, Req, Resp, log_events, modern_call};
use moat_tests::{Era, Fixture, Moat, Mode, Options, run_moat};
use serde_json::{Value, json};

const METRICS_TOKEN: &str = "metrics-token-4c9e1a7f3b2d8e60a5f1";

/// The address logged in `metrics.listening` (panics after 15 s).
#[track_caller]
fn metrics_addr(stderr: impl Fn() -> String) -> SocketAddr {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let text = stderr();
        if let Some(addr) = log_events(&text, "metrics.listening")
            .first()
            .and_then(|v| v["addr"].as_str().and_then(|a| a.parse().ok()))
        {
            return addr;
        }
        assert!(
            Instant::now() < until,
            "no metrics.listening within 15 s:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn scrape(addr: SocketAddr, token: Option<&str>) -> Resp {
    let mut req = Req::new("GET", "/metrics");
    if let Some(t) = token {
        req = req.bearer(t);
    }
    req.send(addr).expect("scrape")
}

/// One sample: metric name and its labels.
type Key = (String, BTreeMap<String, String>);

/// The samples of a Prometheus text exposition (comments skipped).
fn samples(text: &str) -> BTreeMap<Key, f64> {
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let (name, labels) = match series.split_once('{') {
            None => (series.to_owned(), BTreeMap::new()),
            Some((name, rest)) => {
                let inner = rest.strip_suffix('}').expect("closing brace");
                let labels = inner
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        let (k, v) = p.split_once('=').expect("label=value");
                        (k.to_owned(), v.trim_matches('"').to_owned())
                    })
                    .collect();
                (name.to_owned(), labels)
            }
        };
        out.insert((name, labels), value.parse().expect("a number"));
    }
    out
}

fn get(s: &BTreeMap<Key, f64>, name: &str, labels: &[(&str, &str)]) -> f64 {
    let labels = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    s.get(&(name.to_owned(), labels)).copied().unwrap_or(0.0)
}

/// Every value of label `label` across the series of `name`.
fn label_values(s: &BTreeMap<Key, f64>, name: &str, label: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .keys()
        .filter(|(n, _)| n == name)
        .filter_map(|(_, l)| l.get(label).cloned())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Sum of `name` over every series.
fn total(s: &BTreeMap<Key, f64>, name: &str) -> f64 {
    s.iter()
        .filter(|((n, _), _)| n == name)
        .map(|(_, v)| *v)
        .sum()
}

fn stdio_with_metrics(fx: &Fixture, mode: Mode, extra: &[(&str, &str)]) -> (Moat, SocketAddr) {
    let mut opts = Options::new(mode).env("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0");
    for (k, v) in extra {
        opts = opts.env(k, *v);
    }
    let m = Moat::connect(&fx.root, &opts, Era::Modern);
    let addr = metrics_addr(|| m.stderr());
    (m, addr)
}

#[test]
fn a_mixed_stdio_run_is_counted_exactly() {
    let fx = Fixture::new();
    fx.file("notes/readme.txt", "first line\nsecond line\n");
    fx.file(".env", "API_KEY=abc\n");
    let github = ["ghp_", &"x1Y2z3".repeat(6)].concat();
    let aws = ["AKIA", "Z7Q2M4N8P1R5T9W3"].concat();
    fx.file(
        "config/keys.txt",
        format!("one = {github}\ntwo = {github}\nthree = {aws}\n"),
    );
    let (mut m, addr) = stdio_with_metrics(&fx, Mode::Confined, &[]);

    let mut levels: BTreeMap<String, f64> = BTreeMap::new();
    let mut level_of = |r: &Value| {
        if let Some(l) = r["structuredContent"]["content_assessment"]["level"].as_str() {
            *levels.entry(l.to_owned()).or_default() += 1.0;
        }
    };
    let r = m.call("read_file", json!({"path": "notes/readme.txt"}));
    assert_ne!(r["isError"], true, "{r}");
    level_of(&r);
    let r = m.call("read_file", json!({"path": "notes/missing.txt"}));
    assert_eq!(r["structuredContent"]["error"], "not_found", "{r}");
    level_of(&r);
    let r = m.call("read_file", json!({"path": ".env"}));
    assert_eq!(r["structuredContent"]["error"], "denied_path", "{r}");
    level_of(&r);
    let r = m.call("search_code", json!({"pattern": "second", "path": "notes"}));
    assert_ne!(r["isError"], true, "{r}");
    level_of(&r);
    let r = m.call("read_file", json!({"path": "config/keys.txt"}));
    assert_eq!(r["structuredContent"]["redaction"]["count"], 3, "{r}");
    level_of(&r);
    let r = m.request("tools/list", json!({}));
    assert!(r["result"]["tools"].is_array(), "{r}");
    let r = m.request_raw("ping", json!({}));
    assert_eq!(r["result"], json!({}), "{r}");

    let resp = scrape(addr, None);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let s = samples(&resp.text());
    let calls = "moat_tool_calls_total";
    assert_eq!(
        get(&s, calls, &[("tool", "read_file"), ("outcome", "ok")]),
        2.0
    );
    assert_eq!(
        get(
            &s,
            calls,
            &[("tool", "read_file"), ("outcome", "not_found")]
        ),
        1.0
    );
    assert_eq!(
        get(
            &s,
            calls,
            &[("tool", "read_file"), ("outcome", "denied_path")]
        ),
        1.0
    );
    assert_eq!(
        get(&s, calls, &[("tool", "search_code"), ("outcome", "ok")]),
        1.0
    );
    assert_eq!(total(&s, calls), 5.0, "{s:?}");
    assert_eq!(get(&s, "moat_redactions_total", &[]), 3.0);
    assert_eq!(
        get(
            &s,
            "moat_redacted_answers_total",
            &[("rule", "github-token")]
        ),
        1.0
    );
    assert_eq!(
        get(
            &s,
            "moat_redacted_answers_total",
            &[("rule", "aws-access-key-id")]
        ),
        1.0
    );
    assert_eq!(total(&s, "moat_redacted_answers_total"), 2.0);
    let req = "moat_jsonrpc_requests_total";
    assert_eq!(get(&s, req, &[("method", "tools/call")]), 5.0);
    assert_eq!(get(&s, req, &[("method", "tools/list")]), 1.0);
    assert_eq!(get(&s, req, &[("method", "ping")]), 1.0);
    assert_eq!(total(&s, req), 7.0, "{s:?}");
    let count = "mcp_server_operation_duration_seconds_count";
    assert_eq!(
        get(
            &s,
            count,
            &[
                ("mcp_method_name", "tools/call"),
                ("gen_ai_tool_name", "read_file")
            ]
        ),
        4.0
    );
    assert_eq!(
        get(
            &s,
            count,
            &[
                ("mcp_method_name", "tools/call"),
                ("gen_ai_tool_name", "search_code")
            ]
        ),
        1.0
    );
    assert_eq!(get(&s, count, &[("mcp_method_name", "ping")]), 1.0);
    assert_eq!(total(&s, count), 7.0, "{s:?}");
    // The +Inf bucket holds every observation.
    assert_eq!(
        get(
            &s,
            "mcp_server_operation_duration_seconds_bucket",
            &[("mcp_method_name", "ping"), ("le", "+Inf")]
        ),
        1.0
    );
    // Content levels as the answers reported them.
    for (level, n) in &levels {
        assert_eq!(
            get(&s, "moat_content_assessments_total", &[("level", level)]),
            *n,
            "{level}"
        );
    }
    assert_eq!(
        total(&s, "moat_content_assessments_total"),
        levels.values().sum::<f64>()
    );
    assert!(!levels.is_empty());
    assert_eq!(get(&s, "moat_tool_calls_in_flight", &[]), 0.0);
    assert_eq!(get(&s, "moat_tool_calls_busy_total", &[]), 0.0);
    assert!(
        get(&s, "moat_worker_events_total", &[("event", "started")]) >= 1.0,
        "{s:?}"
    );

    // Only GET /metrics.
    let other = Req::new("GET", "/").send(addr).expect("get /");
    assert_eq!(other.status, 404);
    let post = Req::new("POST", "/metrics").send(addr).expect("post");
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET"));
    let (status, _) = m.finish();
    assert!(status.success());
}

#[test]
fn the_metrics_token_is_required_when_set() {
    let fx = Fixture::new();
    let (m, addr) = stdio_with_metrics(
        &fx,
        Mode::InProcess,
        &[("MOAT_OBSERVABILITY__METRICS_TOKEN", METRICS_TOKEN)],
    );
    let none = scrape(addr, None);
    assert_eq!(none.status, 401, "{}", none.text());
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert!(!none.text().contains("moat_"), "{}", none.text());
    let wrong = scrape(addr, Some("metrics-token-4c9e1a7f3b2d8e60a5f2"));
    assert_eq!(wrong.status, 401);
    let basic = Req::new("GET", "/metrics")
        .header("Authorization", &format!("Basic {METRICS_TOKEN}"))
        .send(addr)
        .expect("scrape");
    assert_eq!(basic.status, 401);
    let right = scrape(addr, Some(METRICS_TOKEN));
    assert_eq!(right.status, 200, "{}", right.text());
    assert!(
        right.text().contains("\nmoat_tool_calls_in_flight 0\n"),
        "{}",
        right.text()
    );
    let (_, _, stderr) = m.finish_with_stderr();
    assert!(!stderr.contains(METRICS_TOKEN), "the token is never logged");
}

#[test]
fn label_values_stay_a_fixed_set_whatever_clients_send() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    let (mut m, addr) = stdio_with_metrics(&fx, Mode::InProcess, &[]);
    m.call("read_file", json!({"path": "a.txt"}));
    m.call("read_file", json!({"path": "missing.txt"}));
    m.request(
        "tools/call",
        json!({"name": "no_such_tool_0", "arguments": {}}),
    );
    m.request("no/such/method-0", json!({}));
    let before = samples(&scrape(addr, None).text());
    for i in 0..50 {
        m.call(
            "read_file",
            json!({"path": format!("dir-{i}/file-{i}.txt")}),
        );
        m.request(
            "tools/call",
            json!({"name": format!("no_such_tool_{i}"), "arguments": {"path": format!("p{i}")}}),
        );
        m.request(&format!("no/such/method-{i}"), json!({}));
    }
    let text = scrape(addr, None).text();
    let after = samples(&text);
    let before_keys: Vec<&Key> = before.keys().collect();
    let after_keys: Vec<&Key> = after.keys().collect();
    assert_eq!(before_keys, after_keys, "no new series:\n{text}");
    assert!(!text.contains("dir-"), "{text}");
    assert!(!text.contains("no_such_tool"), "{text}");
    assert!(!text.contains("no/such"), "{text}");
    assert_eq!(
        label_values(&after, "moat_tool_calls_total", "tool"),
        ["read_file", "unknown"]
    );
    assert_eq!(
        get(
            &after,
            "moat_tool_calls_total",
            &[("tool", "unknown"), ("outcome", "invalid_params")]
        ),
        51.0
    );
    assert_eq!(
        get(
            &after,
            "moat_jsonrpc_requests_total",
            &[("method", "other")]
        ),
        51.0
    );
    m.close();
}

#[test]
fn http_auth_failures_are_counted_by_reason() {
    let fx = Fixture::new();
    let token = "http-token-for-metrics-3e8b1f0c7a9d2e64";
    let opts = Options::new(Mode::InProcess)
        .env("MOAT_HTTP__BEARER_TOKEN", token)
        .env("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0");
    let h = HttpMoat::start(&fx.root, &opts);
    let addr = metrics_addr(|| h.stderr());
    let call = modern_call(1, "read_file", json!({"path": "x"}));
    assert_eq!(h.send(&Req::mcp(&call)).status, 401);
    assert_eq!(h.send(&Req::mcp(&call)).status, 401);
    assert_eq!(h.send(&Req::mcp(&call).bearer("wrong")).status, 401);
    let own = h.own_origin();
    let evil = Req::mcp(&call)
        .bearer(token)
        .header("Origin", "http://evil.example");
    assert_eq!(h.send(&evil).status, 403);
    assert_eq!(
        h.send(&Req::mcp(&call).bearer(token).header("Origin", &own))
            .status,
        200
    );
    let s = samples(&scrape(addr, None).text());
    let name = "moat_http_auth_failures_total";
    assert_eq!(get(&s, name, &[("reason", "token_missing")]), 2.0);
    assert_eq!(get(&s, name, &[("reason", "token_rejected")]), 1.0);
    assert_eq!(get(&s, name, &[("reason", "origin_rejected")]), 1.0);
    assert_eq!(total(&s, name), 4.0, "{s:?}");
    // The refused calls never reached a tool; the admitted one did.
    assert_eq!(total(&s, "moat_tool_calls_total"), 1.0, "{s:?}");
}

#[test]
fn production_refuses_a_non_loopback_listener_without_a_token() {
    let fx = Fixture::new();
    let root = fx.root.display().to_string();
    let base = [
        ("MOAT_ENVIRONMENT", "production"),
        ("MOAT_SANDBOX__MODE", "in-process"),
        ("MOAT_SANDBOX__ALLOW_IN_PROCESS_IN_PRODUCTION", "true"),
    ];
    let serve = |extra: &[(&str, &str)]| {
        let mut env = base.to_vec();
        env.extend_from_slice(extra);
        run_moat(["serve", "--workspace", &root], &env)
    };
    let run = serve(&[("MOAT_OBSERVABILITY__METRICS_ADDR", "0.0.0.0:0")]);
    assert_eq!(run.code, Some(2), "{run}");
    assert!(
        run.stderr.contains("MOAT_OBSERVABILITY__METRICS_ADDR"),
        "{run}"
    );
    assert!(
        run.stderr.contains("refusing to start in production"),
        "{run}"
    );
    // A placeholder token is no better.
    let run = serve(&[
        ("MOAT_OBSERVABILITY__METRICS_ADDR", "0.0.0.0:0"),
        ("MOAT_OBSERVABILITY__METRICS_TOKEN", "changeme"),
    ]);
    assert_eq!(run.code, Some(2), "{run}");
    assert!(
        run.stderr.contains("MOAT_OBSERVABILITY__METRICS_TOKEN"),
        "{run}"
    );
    assert!(!run.stderr.contains("changeme"), "{run}");
    // With a real token, or on loopback, it starts (and ends at EOF).
    for extra in [
        &[
            ("MOAT_OBSERVABILITY__METRICS_ADDR", "0.0.0.0:0"),
            ("MOAT_OBSERVABILITY__METRICS_TOKEN", METRICS_TOKEN),
        ][..],
        &[("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0")][..],
    ] {
        let run = serve(extra);
        assert_eq!(run.code, Some(0), "{run}");
        assert!(run.stderr.contains("metrics.listening"), "{run}");
    }
    // A malformed address is refused by name everywhere.
    let run = run_moat(
        ["serve", "--workspace", &root],
        &[("MOAT_OBSERVABILITY__METRICS_ADDR", "localhost")],
    );
    assert_eq!(run.code, Some(2), "{run}");
    assert!(run.stderr.contains("observability.metrics_addr"), "{run}");
}

#[test]
fn calls_in_flight_busy_refusals_and_worker_timeouts_are_counted() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    let opts = Options::new(Mode::Confined)
        .env("MOAT_HTTP__MAX_IN_FLIGHT", "1")
        .env("MOAT_SANDBOX__WORKERS", "1")
        .env("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "3")
        .env("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0");
    let s = HttpMoat::start(&fx.root, &opts);
    let addr = metrics_addr(|| s.stderr());
    let worker = s.moat.wait_for_ready_workers(1)[0];
    // A stopped worker holds the only slot until the call's deadline.
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let http = s.addr;
    let slow = std::thread::spawn(move || {
        Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"}))).send(http)
    });
    let in_flight = || {
        get(
            &samples(&scrape(addr, None).text()),
            "moat_tool_calls_in_flight",
            &[],
        )
    };
    assert!(
        super::util::eventually(Duration::from_secs(10), || in_flight() == 1.0),
        "the slow call is never in flight"
    );
    let r = s.post(&modern_call(2, "read_file", json!({"path": "a.txt"})));
    assert_eq!(r.status, 503, "{r:?}");
    let first = slow.join().unwrap().unwrap();
    assert_eq!(
        first.json()["result"]["structuredContent"]["error"],
        "timed_out"
    );
    let st = samples(&scrape(addr, None).text());
    let calls = "moat_tool_calls_total";
    assert_eq!(
        get(&st, calls, &[("tool", "read_file"), ("outcome", "busy")]),
        1.0
    );
    assert_eq!(
        get(
            &st,
            calls,
            &[("tool", "read_file"), ("outcome", "timed_out")]
        ),
        1.0
    );
    assert_eq!(get(&st, "moat_tool_calls_busy_total", &[]), 1.0);
    assert_eq!(get(&st, "moat_tool_calls_in_flight", &[]), 0.0);
    let events = "moat_worker_events_total";
    assert_eq!(get(&st, events, &[("event", "timed_out")]), 1.0, "{st:?}");
    assert_eq!(get(&st, events, &[("event", "replaced")]), 1.0, "{st:?}");
    // The replacement starts: a second `started`.
    assert!(
        super::util::eventually(Duration::from_secs(10), || get(
            &samples(&scrape(addr, None).text()),
            events,
            &[("event", "started")]
        ) >= 2.0),
        "no replacement worker started"
    );
}

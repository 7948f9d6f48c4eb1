//! Availability under hostile load, through the real binary on real sockets
//! and pipes: clients that never read their answers, stalled request bodies,
//! every tool slot busy, floods of blank lines, and files a walk cannot
//! examine. Each check is functional ("answered at all while the attack is
//! held", "closed", "counted"); bounds on time are generous because the
//! machine may be loaded, and no check measures speed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use moat_tests::http::{HttpMoat, Req, modern, modern_call, read_response};
use moat_tests::{Era, Fixture, Moat, Mode, Options, error_code};
use serde_json::{Value, json};

use super::util::eventually;

/// Generous: a loaded 2-core machine may be slow, but a control message that
/// is queued behind a held tool call would wait for the whole tool timeout
/// (60 s here), far beyond this.
const ANSWERED_WITHIN: Duration = Duration::from_secs(10);

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    fx.file("src/lib.rs", "pub fn beta() {}\n");
    fx
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn stdio(fx: &Fixture, mode: Mode, extra: &[(&str, &str)]) -> Moat {
    let mut o = Options::new(mode);
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    Moat::connect(&fx.root, &o, Era::Legacy)
}

fn call_msg(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}})
}

/// Read answers until one with `id` arrives (others are kept); `None` after `d`.
fn recv_id(m: &mut Moat, id: i64, d: Duration, others: &mut Vec<Value>) -> Option<Value> {
    let until = Instant::now() + d;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let v = m.recv_within(left)?;
        if v["id"] == json!(id) {
            return Some(v);
        }
        others.push(v);
    }
}

// ---------------------------------------------------------------- stdio

#[test]
fn stdio_ping_tools_list_and_cancellations_are_answered_while_every_slot_is_busy() {
    let fx = fixture();
    let mut m = stdio(
        &fx,
        Mode::Confined,
        &[
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
        ],
    );
    let worker = m.wait_for_ready_workers(1)[0];
    // The only worker stops: every call that reaches it, or waits for it,
    // stays in flight for as long as it is stopped.
    moat_tests::http::signal(worker, libc::SIGSTOP);
    for id in 100..112 {
        m.send(&call_msg(id, "read_file", json!({"path": "a.txt"})));
    }
    m.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 100}}));
    m.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    m.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let mut others = Vec::new();
    let ping = recv_id(&mut m, 1, ANSWERED_WITHIN, &mut others);
    let list = recv_id(&mut m, 2, ANSWERED_WITHIN, &mut others);
    // The cancel of call 100 kills the stopped worker (it was running that
    // call); if it has not happened yet, the worker resumes. Either way the
    // signal's own result says nothing.
    // SAFETY: kill(2) on the pid of our broker's worker; ESRCH is expected.
    #[allow(unsafe_code)]
    let _ = unsafe { libc::kill(worker as i32, libc::SIGCONT) };
    let ping = ping.unwrap_or_else(|| panic!("ping was not answered while the slots were busy"));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let list = list.unwrap_or_else(|| panic!("tools/list was not answered"));
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{list}"
    );
    // Every call but the cancelled one is answered once the worker runs
    // again (or told it was busy); the cancelled one never is.
    let mut seen: Vec<i64> = others.iter().filter_map(|v| v["id"].as_i64()).collect();
    while seen.len() < 11 {
        let v = m
            .recv_within(Duration::from_secs(60))
            .unwrap_or_else(|| panic!("only {seen:?} answered; stderr:\n{}", m.stderr()));
        seen.push(v["id"].as_i64().unwrap());
    }
    seen.sort_unstable();
    assert_eq!(seen, (101..112).collect::<Vec<_>>());
    // And the server still serves.
    let r = m.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(error_code(&r), "", "{r}");
}

#[test]
fn stdio_a_call_that_waited_for_a_worker_gets_its_whole_budget() {
    // Two calls arrive together; one holds the only worker until its
    // deadline kills it, the other waits for a worker meanwhile. The
    // waiting call's deadline starts when it gets the replacement, so it
    // runs and succeeds instead of failing `timed_out` without having run.
    let fx = fixture();
    let mut m = stdio(
        &fx,
        Mode::Confined,
        &[
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "2"),
        ],
    );
    let worker = m.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    m.send(&call_msg(10, "read_file", json!({"path": "a.txt"})));
    m.send(&call_msg(11, "read_file", json!({"path": "a.txt"})));
    let mut others = Vec::new();
    let a = recv_id(&mut m, 10, Duration::from_secs(30), &mut others).expect("first answered");
    let mut others2 = Vec::new();
    let b = match others.pop() {
        Some(b) => b,
        None => recv_id(&mut m, 11, Duration::from_secs(30), &mut others2).expect("second"),
    };
    let mut codes = [error_code(&a["result"]), error_code(&b["result"])];
    codes.sort();
    assert_eq!(codes, [String::new(), "timed_out".to_owned()], "{a}\n{b}");
}

#[test]
fn stdio_a_call_that_never_got_a_worker_says_it_never_ran() {
    let fx = fixture();
    let mut m = stdio(
        &fx,
        Mode::Confined,
        &[
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
            ("MOAT_SANDBOX__QUEUE_TIMEOUT_MS", "500"),
        ],
    );
    let worker = m.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    m.send(&call_msg(10, "read_file", json!({"path": "a.txt"})));
    std::thread::sleep(Duration::from_millis(300));
    m.send(&call_msg(11, "read_file", json!({"path": "a.txt"})));
    let mut others = Vec::new();
    let second = recv_id(&mut m, 11, Duration::from_secs(20), &mut others);
    moat_tests::http::signal(worker, libc::SIGCONT);
    let second = second.expect("the queued call was answered before the first finished");
    let r = &second["result"];
    assert_eq!(r["isError"], json!(true), "{second}");
    assert_eq!(error_code(r), "not_started", "{second}");
    let text = moat_tests::text(r, 0);
    assert!(text.contains("did not run"), "{text}");
    assert!(!text.to_lowercase().contains("narrow"), "{text}");
}

#[test]
fn stdio_a_flood_of_blank_lines_then_a_ping_is_answered() {
    // Functional only: 16 MiB of newlines, then a ping. (Linear framing
    // itself is proven by the line reader's unit test counting copies.)
    let fx = fixture();
    let mut m = stdio(&fx, Mode::Confined, &[]);
    let blank = vec![b'\n'; 16 << 20];
    let mut stdin_bytes = blank;
    stdin_bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n");
    m.send_raw(&stdin_bytes);
    let v = m
        .recv_within(Duration::from_secs(60))
        .expect("ping after 16 MiB of blank lines answered");
    assert_eq!(v["id"], json!(7), "{v}");
}

// ---------------------------------------------------------------- HTTP

fn http(fx: &Fixture, extra: &[(&str, &str)]) -> HttpMoat {
    let mut o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "2");
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    HttpMoat::start(&fx.root, &o)
}

fn ping_ok(s: &HttpMoat) {
    let started = Instant::now();
    let r = s.post(&moat_tests::http::legacy(1, "ping", json!({})));
    assert_eq!(r.status, 200, "{r}");
    assert!(
        started.elapsed() < ANSWERED_WITHIN,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn http_stalled_bodies_do_not_lock_out_post_mcp_or_the_probes() {
    let fx = fixture();
    let s = http(&fx, &[("MOAT_HTTP__BODY_TIMEOUT_MS", "60000")]);
    // 80 clients send a head and half a body, then stall (more than the
    // default 64 tool slots).
    let mut stalled = Vec::new();
    for _ in 0..80 {
        let mut c = s.connect();
        write!(
            c,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
            s.addr
        )
        .unwrap();
        stalled.push(c);
    }
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let r = s.post(&modern_call(1, "read_file", json!({"path": "a.txt"})));
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(error_code(&r.json()["result"]), "", "{r}");
    assert!(started.elapsed() < ANSWERED_WITHIN);
    assert_eq!(s.get("/readyz").status, 200);
    ping_ok(&s);
    drop(stalled);
}

#[test]
fn http_control_messages_are_never_queued_behind_tool_calls_and_readyz_reports_saturation() {
    let fx = fixture();
    let s = http(
        &fx,
        &[
            ("MOAT_HTTP__MAX_IN_FLIGHT", "2"),
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
        ],
    );
    let worker = s.moat.wait_for_ready_workers(1)[0];
    assert_eq!(s.get("/readyz").status, 200);
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let addr = s.addr;
    let held: Vec<_> = (0..2)
        .map(|i| {
            std::thread::spawn(move || {
                Req::mcp(&modern_call(10 + i, "read_file", json!({"path": "a.txt"}))).send(addr)
            })
        })
        .collect();
    // Both tool slots are taken: readiness says so, so a balancer routes away.
    assert!(
        eventually(Duration::from_secs(10), || s.get("/readyz").status == 503),
        "readyz never reported saturation"
    );
    let ready = s.get("/readyz");
    assert_eq!(ready.json()["saturated"], json!(true), "{ready}");
    // Liveness is unaffected.
    assert_eq!(s.get("/healthz").status, 200);
    // Control messages are answered while every tool slot is busy.
    ping_ok(&s);
    let list = s.post(&modern(2, "tools/list", json!({})));
    assert_eq!(list.status, 200, "{list}");
    let disc = s.post(&modern(3, "server/discover", json!({})));
    assert_eq!(disc.status, 200, "{disc}");
    // A third tool call is refused at once.
    let busy = s.post(&modern_call(4, "read_file", json!({"path": "a.txt"})));
    assert_eq!(busy.status, 503, "{busy}");
    moat_tests::http::signal(worker, libc::SIGCONT);
    for h in held {
        let r = h.join().unwrap().unwrap();
        assert_eq!(r.status, 200, "{r}");
    }
    assert!(
        eventually(Duration::from_secs(10), || s.get("/readyz").status == 200),
        "readyz did not recover"
    );
}

/// Requests that run a tool under another method's name: a file read, a
/// listing of files, a completion that lists a directory.
fn tool_running_requests() -> Vec<(&'static str, Value)> {
    vec![
        ("resources/read", json!({"uri": "moat://workspace/a.txt"})),
        ("resources/list", json!({})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "moat://workspace/{+path}"},
                   "argument": {"name": "path", "value": "sr"}}),
        ),
    ]
}

#[test]
fn http_every_request_that_runs_a_tool_takes_a_tool_slot_whatever_its_method() {
    let fx = fixture();
    let s = http(
        &fx,
        &[
            ("MOAT_HTTP__MAX_IN_FLIGHT", "1"),
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
        ],
    );
    let worker = s.moat.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let addr = s.addr;
    let held = std::thread::spawn(move || {
        Req::mcp(&modern_call(10, "read_file", json!({"path": "a.txt"}))).send(addr)
    });
    assert!(
        eventually(Duration::from_secs(10), || s.get("/readyz").status == 503),
        "the held call never took the tool slot"
    );
    // The one tool slot is taken: each of these would run a tool, so each is
    // refused at once like a tool call, not run beside the bound (where it
    // would wait for the stopped worker).
    let mut outcomes = Vec::new();
    for (i, (method, params)) in tool_running_requests().into_iter().enumerate() {
        let (tx, rx) = std::sync::mpsc::channel();
        let body = modern(20 + i as i64, method, params);
        std::thread::spawn(move || {
            let _ = tx.send(Req::mcp(&body).send(addr));
        });
        outcomes.push((method, rx.recv_timeout(ANSWERED_WITHIN)));
    }
    ping_ok(&s);
    moat_tests::http::signal(worker, libc::SIGCONT);
    for (method, outcome) in outcomes {
        let r = outcome
            .unwrap_or_else(|_| {
                panic!("{method} waited for the busy worker outside the tool slots")
            })
            .unwrap();
        assert_eq!(r.status, 503, "{method}: {r}");
        assert!(r.text().contains("in flight"), "{method}: {r}");
    }
    assert_eq!(held.join().unwrap().unwrap().status, 200);
    // Once the slot is free, each is served.
    for (i, (method, params)) in tool_running_requests().into_iter().enumerate() {
        let r = s.post(&modern(30 + i as i64, method, params));
        assert_eq!(r.status, 200, "{method}: {r}");
        assert!(r.json().get("result").is_some(), "{method}: {r}");
    }
}

#[test]
fn stdio_every_request_that_runs_a_tool_is_run_off_the_reader_whatever_its_method() {
    let fx = fixture();
    let mut m = stdio(
        &fx,
        Mode::Confined,
        &[
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
        ],
    );
    let worker = m.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    m.send(&call_msg(100, "read_file", json!({"path": "a.txt"})));
    for (i, (method, params)) in tool_running_requests().into_iter().enumerate() {
        m.send(
            &json!({"jsonrpc": "2.0", "id": 200 + i as i64, "method": method, "params": params}),
        );
    }
    m.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    // Each of them waits for the stopped worker like a tool call, off the
    // reader: the ping behind them is answered at once.
    let mut others = Vec::new();
    let ping = recv_id(&mut m, 1, ANSWERED_WITHIN, &mut others);
    moat_tests::http::signal(worker, libc::SIGCONT);
    let ping = ping.unwrap_or_else(|| panic!("a request that runs a tool held the reader"));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let mut seen: Vec<i64> = others.iter().filter_map(|v| v["id"].as_i64()).collect();
    while seen.len() < 4 {
        let v = m
            .recv_within(Duration::from_secs(60))
            .unwrap_or_else(|| panic!("only {seen:?} answered; stderr:\n{}", m.stderr()));
        assert!(v.get("result").is_some(), "{v}");
        seen.push(v["id"].as_i64().unwrap());
    }
    seen.sort_unstable();
    assert_eq!(seen, vec![100, 200, 201, 202]);
}

#[test]
fn http_beyond_the_wait_queue_a_call_is_refused_at_once_and_says_it_did_not_run() {
    let fx = fixture();
    let s = http(
        &fx,
        &[
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_SANDBOX__MAX_QUEUED_CALLS", "1"),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
        ],
    );
    let worker = s.moat.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let addr = s.addr;
    // One runs (on the stopped worker), one waits for a worker.
    let held: Vec<_> = (0..2)
        .map(|i| {
            std::thread::spawn(move || {
                Req::mcp(&modern_call(10 + i, "read_file", json!({"path": "a.txt"}))).send(addr)
            })
        })
        .collect();
    assert!(
        eventually(
            Duration::from_secs(10),
            || s.get("/readyz").json()["saturated"] == json!(true)
        ),
        "the admission never filled"
    );
    let started = Instant::now();
    let busy = s.post(&modern_call(3, "read_file", json!({"path": "a.txt"})));
    assert!(started.elapsed() < ANSWERED_WITHIN);
    assert_eq!(busy.status, 503, "{busy}");
    assert!(busy.header("retry-after").is_some(), "{busy}");
    // Control messages still pass.
    ping_ok(&s);
    moat_tests::http::signal(worker, libc::SIGCONT);
    for h in held {
        let r = h.join().unwrap().unwrap();
        assert_eq!(r.status, 200, "{r}");
        assert_eq!(error_code(&r.json()["result"]), "", "{r}");
    }
}

/// With the wait queue left at its default, every call the HTTP in-flight
/// limit lets in is admitted to wait for a worker: none is refused 503 at a
/// load the operator allowed.
#[test]
fn http_every_call_the_in_flight_limit_lets_in_may_wait_for_a_worker() {
    const IN_FLIGHT: usize = 40;
    let fx = fixture();
    let in_flight = IN_FLIGHT.to_string();
    let s = http(
        &fx,
        &[
            ("MOAT_SANDBOX__WORKERS", "1"),
            ("MOAT_HTTP__MAX_IN_FLIGHT", in_flight.as_str()),
            ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "60"),
        ],
    );
    let ready = s.get("/readyz").json();
    assert!(
        ready["tool_calls"]["capacity"].as_u64().unwrap() >= IN_FLIGHT as u64,
        "{ready}"
    );
    let worker = s.moat.wait_for_ready_workers(1)[0];
    moat_tests::http::signal(worker, libc::SIGSTOP);
    let addr = s.addr;
    let held: Vec<_> = (0..IN_FLIGHT)
        .map(|i| {
            std::thread::spawn(move || {
                Req::mcp(&modern_call(
                    10 + i as i64,
                    "read_file",
                    json!({"path": "a.txt"}),
                ))
                .send(addr)
            })
        })
        .collect();
    let all_in = eventually(Duration::from_secs(20), || {
        s.get("/readyz").json()["tool_calls"]["admitted"] == json!(IN_FLIGHT)
    });
    moat_tests::http::signal(worker, libc::SIGCONT);
    assert!(all_in, "{}", s.get("/readyz").json());
    for h in held {
        let r = h.join().unwrap().unwrap();
        assert_eq!(r.status, 200, "{r}");
        assert_eq!(error_code(&r.json()["result"]), "", "{r}");
    }
}

/// A text file whose answer is several times its size once JSON-escaped:
/// long lines of control bytes (each becomes a six-byte `\u00XX`).
fn control_bytes(n: usize) -> Vec<u8> {
    let line: Vec<u8> = (0..240u32)
        .map(|i| [1u8, 2, 3, 4, 5, 6, 7, 0x0e, 0x0f, 0x10, 0x11, 0x12][i as usize % 12])
        .chain(std::iter::once(b'\n'))
        .collect();
    let mut v = Vec::with_capacity(n + line.len());
    while v.len() < n {
        v.extend_from_slice(&line);
    }
    v
}

#[test]
fn an_answer_over_the_cap_after_escaping_is_refused_with_a_clear_error() {
    let fx = fixture();
    // 300 KB on disk, under the 1 MiB file cap, but ~6 times that escaped.
    fx.file("ctl.txt", control_bytes(300_000));
    // The answer budget raised so the file is answered whole.
    let big = ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000");
    let s = http(&fx, &[("MOAT_SERVER__MAX_ANSWER_BYTES", "1048576"), big]);
    let r = s.post(&modern_call(1, "read_file", json!({"path": "ctl.txt"})));
    assert_eq!(r.status, 200, "{r}");
    assert!(r.body.len() < 64 * 1024, "{} bytes", r.body.len());
    let result = &r.json()["result"];
    assert_eq!(error_code(result), "answer_too_large", "{r}");
    assert!(
        moat_tests::text(result, 0).contains("1048576"),
        "{}",
        moat_tests::text(result, 0)
    );
    // A small file is still served.
    let ok = s.post(&modern_call(2, "read_file", json!({"path": "a.txt"})));
    assert_eq!(error_code(&ok.json()["result"]), "", "{ok}");
    // Over stdio too.
    let mut m = stdio(
        &fx,
        Mode::InProcess,
        &[("MOAT_SERVER__MAX_ANSWER_BYTES", "1048576"), big],
    );
    let r = m.call("read_file", json!({"path": "ctl.txt"}));
    assert_eq!(error_code(&r), "answer_too_large", "{r}");
}

/// Send one tools/call on a fresh connection whose receive buffer is small
/// and fixed (so the kernel cannot take the answer off the broker's hands),
/// and never read the answer.
fn non_reader(addr: std::net::SocketAddr, id: i64, path: &str) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&addr.into()).unwrap();
    let mut c: TcpStream = socket.into();
    c.write_all(&Req::mcp(&modern_call(id, "read_file", json!({"path": path}))).to_bytes(addr))
        .unwrap();
    c
}

#[test]
fn http_clients_that_never_read_are_closed_at_the_write_timeout_and_memory_stays_bounded() {
    let fx = fixture();
    // ~5.9 MB answers (950 KB of control bytes, escaped), under the answer
    // cap and larger than the kernel's socket buffers can take off the
    // broker's hands.
    fx.file("ctl.txt", control_bytes(950_000));
    let s = http(
        &fx,
        &[
            ("MOAT_HTTP__WRITE_TIMEOUT_MS", "1500"),
            ("MOAT_HTTP__MAX_QUEUED_BYTES", "8388608"),
            ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000"),
        ],
    );
    let pid = s.moat.pid();
    // Warm up (workers, allocator) before the baseline.
    let warm = s.post(&modern_call(1, "read_file", json!({"path": "ctl.txt"})));
    assert_eq!(warm.status, 200);
    let answer_len = warm.body.len() as u64;
    assert!(answer_len > 5_000_000, "answer only {answer_len} bytes");
    let base_kib = status_kib(pid, "VmRSS:");
    let conns: Vec<TcpStream> = (0..80)
        .map(|i| non_reader(s.addr, 100 + i, "ctl.txt"))
        .collect();
    // While they hold their answers, the server keeps answering others.
    std::thread::sleep(Duration::from_millis(800));
    ping_ok(&s);
    // Every call has been handled (answered, refused busy, or dropped for
    // the global bound) before the clock of the last write timeout starts.
    assert!(
        eventually(
            Duration::from_secs(120),
            || s.get("/readyz").json()["tool_calls"]["admitted"] == json!(0)
        ),
        "not every call was handled; stderr:\n{}",
        s.stderr()
    );
    std::thread::sleep(Duration::from_millis(300));
    let peak_kib = status_kib(pid, "VmHWM:");
    // Documented bound: at most http.max_queued_bytes of unread answers in
    // total (8 MiB here), plus the answers being built (one per worker) and
    // the allocator's slack, whatever the number of clients; without it each
    // of the 80 would pin what the kernel does not take, ~3 MB each,
    // ~240 MB in all.
    let grown_mib = peak_kib.saturating_sub(base_kib) / 1024;
    eprintln!("base {base_kib} KiB, peak {peak_kib} KiB, grown {grown_mib} MiB");
    assert!(
        grown_mib < 160,
        "RSS grew {grown_mib} MiB under 80 non-reading clients (answer {answer_len} bytes)"
    );
    // After the write timeout every non-reading connection is closed: reading
    // now yields less than a whole answer and then end of stream (or reset),
    // never the whole answer from a connection kept open.
    std::thread::sleep(Duration::from_secs(4));
    let mut whole = 0;
    for mut c in conns {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        if got.len() as u64 >= answer_len {
            whole += 1;
        }
    }
    assert_eq!(
        whole, 0,
        "{whole} non-reading connections kept their whole answer"
    );
    // Recovered by itself.
    ping_ok(&s);
    let r = s.post(&modern_call(2, "read_file", json!({"path": "a.txt"})));
    assert_eq!(error_code(&r.json()["result"]), "", "{r}");
}

#[test]
fn http_a_body_that_is_read_fully_is_answered_even_when_sent_slowly() {
    // The body timeout is per connection and starts with the body; a client
    // sending a small body in pieces within it is served normally.
    let fx = fixture();
    let s = http(&fx, &[("MOAT_HTTP__BODY_TIMEOUT_MS", "5000")]);
    let body = serde_json::to_vec(&moat_tests::http::legacy(1, "ping", json!({}))).unwrap();
    let mut c = s.connect();
    write!(
        c,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        s.addr,
        body.len()
    )
    .unwrap();
    for chunk in body.chunks(8) {
        c.write_all(chunk).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = read_response(&mut c).unwrap();
    assert_eq!(r.status, 200, "{r}");
}

// ---------------------------------------------------------------- walks

/// Make a directory chain whose path is longer than the kernel's path limit
/// (each step made relative to the previous one by bash's `cd`, which,
/// unlike dash's, does not need the whole path to fit), with
/// `file` at the bottom.
fn deep_tree(fx: &Fixture, file: &str, content: &str) {
    let name = "d".repeat(200);
    std::fs::create_dir_all(fx.root.join("deep")).unwrap();
    let script = format!(
        "cd deep && for i in $(seq 50); do mkdir {name} && cd {name} || exit 1; done; cat > {file}"
    );
    let mut child = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(&fx.root)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(content.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

fn skipped_reasons(structured: &Value) -> Value {
    structured["skipped_reasons"].clone()
}

#[test]
fn a_file_under_a_path_too_long_to_open_is_counted_as_skipped_with_its_reason() {
    for mode in Mode::BOTH {
        let fx = fixture();
        fx.file("shallow.py", "def needle():\n    pass\n");
        deep_tree(&fx, "deep.py", "def needle():\n    pass\n");
        let mut m = stdio(&fx, mode, &[]);

        let r = m.call("find_symbol", json!({"symbol": "needle"}));
        let sc = &r["structuredContent"];
        assert_eq!(error_code(&r), "", "{mode:?}: {r}");
        assert!(
            sc["files_skipped"].as_u64().unwrap_or(0) >= 1,
            "{mode:?}: {sc}"
        );
        assert!(
            skipped_reasons(sc)["path_too_long"].as_u64().unwrap_or(0) >= 1,
            "{mode:?}: {sc}"
        );
        assert!(moat_tests::text(&r, 0).contains("skipped"), "{mode:?}: {r}");

        let r = m.call("search_code", json!({"pattern": "needle"}));
        let sc = &r["structuredContent"];
        assert_eq!(error_code(&r), "", "{mode:?}: {r}");
        assert!(
            sc["files_skipped"].as_u64().unwrap_or(0) >= 1,
            "{mode:?}: {sc}"
        );
        assert!(
            skipped_reasons(sc)["path_too_long"].as_u64().unwrap_or(0) >= 1,
            "{mode:?}: {sc}"
        );
        assert!(moat_tests::text(&r, 0).contains("skipped"), "{mode:?}: {r}");
    }
}

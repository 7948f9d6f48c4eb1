//! Cancellation over stdio: `notifications/cancelled` for a call in flight
//! kills the worker running it (proven by its pid), sends no answer for that
//! id, frees the slot and replaces the worker; a call cancelled while it
//! waits for a worker never runs; a cancel for an unknown or finished id
//! changes nothing. In the in-process mode, with no worker to kill, the
//! cancelled call's work stops at its next deadline check.

use std::time::{Duration, Instant};

use moat_tests::{Era, Fixture, Moat, Mode, Options, process_state};
use serde_json::{Value, json};

use super::util::{eventually, zombies_of};

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a pid read from /proc as a child of our broker.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(pid as i32, sig) };
    assert_eq!(
        rc,
        0,
        "kill({pid}, {sig}): {}",
        std::io::Error::last_os_error()
    );
}

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    fx
}

fn one_worker() -> Options {
    Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "1")
}

fn call(m: &Moat, id: i64) -> Value {
    let mut params = json!({"name": "read_file", "arguments": {"path": "a.txt"}});
    if m.era == Era::Modern {
        params["_meta"] = Moat::modern_meta();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn cancel(m: &mut Moat, id: Value) {
    m.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "no longer needed"}),
    );
}

/// The next message is the answer to a ping sent now (nothing else was
/// waiting to be sent: no answer for a cancelled call).
fn only_the_ping_answers(m: &mut Moat, id: i64) {
    m.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
    let r = m
        .recv_within(Duration::from_secs(5))
        .expect("ping answered");
    assert_eq!(r["id"], id, "an answer other than the ping's arrived: {r}");
}

fn assert_works(m: &mut Moat) {
    let r = m.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(r["isError"], false, "{r}");
}

#[test]
fn a_cancelled_call_kills_its_worker_sends_no_answer_and_frees_the_slot() {
    let fx = fixture();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &one_worker(), era);
        assert_works(&mut m);
        let old = m.wait_for_ready_workers(1)[0];
        // A stopped worker holds the call as long as it is asked to.
        signal(old, libc::SIGSTOP);
        m.send(&call(&m, 900));
        std::thread::sleep(Duration::from_millis(100));
        let sent = Instant::now();
        cancel(&mut m, json!(900));
        let gone = eventually(Duration::from_secs(2), || process_state(old).is_none());
        let latency = sent.elapsed();
        assert!(
            gone,
            "{era:?}: the worker of the cancelled call is still there"
        );
        eprintln!("{era:?}: the worker was gone {latency:?} after the cancel");
        only_the_ping_answers(&mut m, 901);
        // The slot is free and a fresh worker serves.
        let ok = eventually(Duration::from_secs(5), || {
            let now = m.worker_pids();
            now.len() == 1 && !now.contains(&old)
        });
        assert!(ok, "{era:?}: not replaced: {:?}", m.worker_pids());
        assert_works(&mut m);
        assert!(zombies_of(m.pid()).is_empty());
        assert!(m.close().success());
    }
}

#[test]
fn a_call_cancelled_while_it_waits_for_a_worker_never_runs() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &one_worker(), Era::Modern);
    assert_works(&mut m);
    let old = m.wait_for_ready_workers(1)[0];
    signal(old, libc::SIGSTOP);
    m.send(&call(&m, 1));
    m.send(&call(&m, 2));
    std::thread::sleep(Duration::from_millis(100));
    // The second waits for the one worker: cancelled, it never reaches it.
    cancel(&mut m, json!(2));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        m.worker_pids(),
        [old],
        "a waiting call's cancel killed a worker"
    );
    // The first is still running on the stopped worker; cancel it too.
    cancel(&mut m, json!(1));
    assert!(eventually(Duration::from_secs(2), || process_state(old).is_none()));
    only_the_ping_answers(&mut m, 3);
    assert_works(&mut m);
    assert!(m.close().success());
}

#[test]
fn a_cancel_for_an_unknown_or_finished_id_changes_nothing() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__WORKERS", "1");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        assert_works(&mut m);
        let before = m.worker_pids();
        // Never sent, answered already, another id type, garbage.
        for id in [json!(424_242), json!("x"), json!(null), json!({"a": 1})] {
            cancel(&mut m, id);
        }
        m.notify("notifications/cancelled", json!({}));
        m.send(&call(&m, 7));
        let r = m.recv_within(Duration::from_secs(5)).expect("answered");
        assert_eq!(r["id"], 7, "{r}");
        cancel(&mut m, json!(7));
        only_the_ping_answers(&mut m, 8);
        assert_eq!(m.worker_pids(), before, "{mode:?}: a worker was killed");
        assert_works(&mut m);
    }
}

/// CPU time the process `pid` has used (every thread), in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name in parentheses: state is field 3, utime 14,
    // stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / hz as f64
}

#[test]
fn in_process_a_cancelled_call_is_not_answered_and_its_work_stops() {
    // No worker to kill: the call stops being waited for, its answer is
    // never sent, and its work stops at its next deadline check.
    let fx = fixture();
    let body: String = (0..200_000).map(|i| format!("line {i} needle\n")).collect();
    for i in 0..20 {
        fx.file(&format!("big{i}.txt"), &body);
    }
    let mut m = Moat::connect(
        &fx.root,
        &Options::new(Mode::InProcess).env("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "120"),
        Era::Modern,
    );
    // Six searches of about a second of CPU each, queued at once: together
    // several seconds of work for the machine's cores.
    let ids: Vec<i64> = (50..56).collect();
    let before = cpu_seconds(m.pid());
    for id in &ids {
        let mut params = json!({"name": "search_code", "arguments": {"pattern": format!("needle.*needle{id}|x{{0,50}}y"), "regex": true}});
        params["_meta"] = Moat::modern_meta();
        m.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }
    // They are running once the server burns CPU.
    assert!(
        eventually(Duration::from_secs(20), || cpu_seconds(m.pid()) - before
            > 0.3),
        "the searches never started"
    );
    for id in &ids {
        cancel(&mut m, json!(id));
    }
    only_the_ping_answers(&mut m, 60);
    std::thread::sleep(Duration::from_millis(300));
    let start = cpu_seconds(m.pid());
    std::thread::sleep(Duration::from_millis(1500));
    let spent = cpu_seconds(m.pid()) - start;
    assert!(
        spent < 0.3,
        "{spent:.2} s of CPU in the 1.5 s after the cancels: the cancelled searches ran on"
    );
    // No answer for any of them ever comes, and the server still works.
    let late = m.recv_within(Duration::from_secs(1));
    assert!(late.is_none(), "an answer for a cancelled call: {late:?}");
    assert_works(&mut m);
}

/// Over HTTP a request is cancelled by closing it: the worker working for it
/// is killed and replaced, and the server goes on serving.
#[test]
fn over_http_closing_the_request_kills_its_worker() {
    use moat_tests::http::{HttpMoat, Req, modern_call};
    use std::io::Write as _;
    let fx = fixture();
    let s = HttpMoat::start(&fx.root, &one_worker());
    let ok = s.post(&modern_call(1, "read_file", json!({"path": "a.txt"})));
    assert_eq!(ok.status, 200, "{ok}");
    let old = s.moat.wait_for_ready_workers(1)[0];
    signal(old, libc::SIGSTOP);
    let mut c = s.connect();
    c.write_all(&Req::mcp(&modern_call(2, "read_file", json!({"path": "a.txt"}))).to_bytes(s.addr))
        .expect("request sent");
    std::thread::sleep(Duration::from_millis(200));
    let closed = Instant::now();
    drop(c);
    let gone = eventually(Duration::from_secs(5), || process_state(old).is_none());
    assert!(gone, "the worker of the closed request is still there");
    eprintln!(
        "http: the worker was gone {:?} after the close",
        closed.elapsed()
    );
    assert!(eventually(Duration::from_secs(5), || {
        let now = s.moat.worker_pids();
        now.len() == 1 && !now.contains(&old)
    }));
    let ok = s.post(&modern_call(3, "read_file", json!({"path": "a.txt"})));
    assert_eq!(ok.status, 200, "{ok}");
}

/// Over HTTP no request belongs to a session another request could name:
/// a `notifications/cancelled` POST cancels nothing (one client cannot
/// stop another's call by guessing its id).
#[test]
fn over_http_a_cancel_notification_cannot_stop_another_request() {
    use moat_tests::http::{HttpMoat, Req, modern, modern_call};
    use std::io::Write as _;
    let fx = fixture();
    let s = HttpMoat::start(&fx.root, &one_worker());
    let old = s.moat.wait_for_ready_workers(1)[0];
    signal(old, libc::SIGSTOP);
    let mut c = s.connect();
    c.write_all(
        &Req::mcp(&modern_call(77, "read_file", json!({"path": "a.txt"}))).to_bytes(s.addr),
    )
    .expect("request sent");
    std::thread::sleep(Duration::from_millis(200));
    let mut note = modern(0, "notifications/cancelled", json!({"requestId": 77}));
    if let Some(o) = note.as_object_mut() {
        o.remove("id");
    }
    let r = s.post(&note);
    assert_eq!(r.status, 202, "{r}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        s.moat.worker_pids(),
        [old],
        "another client's cancel killed the worker"
    );
    signal(old, libc::SIGCONT);
    let answer = moat_tests::http::read_response(&mut c).expect("the call is answered");
    assert_eq!(answer.status, 200, "{answer}");
    assert_eq!(answer.json()["id"], 77, "{answer}");
}

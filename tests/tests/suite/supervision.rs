//! Supervision (confined mode): a worker that dies mid-request is reaped and
//! replaced and the request gets a tool error; a worker past its deadline is
//! killed, the request answered `timed_out` within 100 ms of the deadline;
//! no zombies; on end of input every worker is gone.

use std::time::{Duration, Instant};

use moat_tests::{Era, Fixture, Moat, Mode, Options, process_state};
use serde_json::{Value, json};

use super::util::{assert_response_line, eventually, zombies_of};

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

fn one_worker(extra: &[(&str, &str)]) -> Options {
    let mut o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "1");
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    o
}

fn read_request(m: &Moat, id: i64) -> Value {
    let mut params = json!({"name": "read_file", "arguments": {"path": "a.txt"}});
    if m.era == Era::Modern {
        params["_meta"] = Moat::modern_meta();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn the_worker(m: &Moat) -> u32 {
    m.wait_for_ready_workers(1)[0]
}

fn replaced(m: &Moat, old: u32, n: usize) -> Vec<u32> {
    let mut now = Vec::new();
    let ok = eventually(Duration::from_secs(5), || {
        now = m.worker_pids();
        now.len() == n && !now.contains(&old)
    });
    assert!(ok, "pool not restored to {n} without {old}: {now:?}");
    now
}

fn assert_works(m: &mut Moat) {
    let r = m.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["total_lines"], 1, "{r}");
}

#[test]
fn a_worker_killed_mid_request_is_replaced_and_the_request_answered() {
    let fx = fixture();
    for era in Era::BOTH {
        let mut m = Moat::connect(&fx.root, &one_worker(&[]), era);
        assert_works(&mut m);
        let old = the_worker(&m);
        signal(old, libc::SIGSTOP);
        m.send(&read_request(&m, 900));
        // Let the broker hand the request to the stopped worker.
        std::thread::sleep(Duration::from_millis(100));
        let killed = Instant::now();
        signal(old, libc::SIGKILL);
        let r = m
            .recv_within(Duration::from_secs(2))
            .expect("answered after the kill");
        let waited = killed.elapsed();
        assert!(
            waited < Duration::from_millis(500),
            "answered {waited:?} after the kill"
        );
        assert_eq!(r["id"], 900, "{r}");
        let res = &r["result"];
        assert_eq!(res["isError"], true, "{r}");
        assert_eq!(res["structuredContent"]["error"], "worker_failed", "{r}");
        assert!(res["structuredContent"]["redaction"].is_object(), "{r}");
        assert_eq!(process_state(old), None, "the dead worker was not reaped");
        let now = replaced(&m, old, 1);
        assert_works(&mut m);
        assert_eq!(m.worker_pids(), now, "the replacement serves");
        assert!(zombies_of(m.pid()).is_empty());
        assert!(m.close().success());
    }
}

#[test]
fn a_worker_past_its_deadline_is_killed_and_the_request_timed_out() {
    let fx = fixture();
    let mut m = Moat::connect(
        &fx.root,
        &one_worker(&[("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "0.5")]),
        Era::Modern,
    );
    assert_works(&mut m);
    for round in 0..2 {
        let old = the_worker(&m);
        signal(old, libc::SIGSTOP);
        let sent = Instant::now();
        m.send(&read_request(&m, 1000 + round));
        let r = m.recv_within(Duration::from_secs(5)).expect("answered");
        let took = sent.elapsed();
        assert_eq!(r["id"], 1000 + round, "{r}");
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(
            r["result"]["structuredContent"]["error"], "timed_out",
            "{r}"
        );
        assert!(
            took >= Duration::from_millis(500),
            "answered before the deadline: {took:?}"
        );
        // The stopped worker never answers, so any answer is the
        // deadline's; the bound only says it came near the deadline, with
        // room for a loaded machine, not whenever something else noticed.
        assert!(
            took < Duration::from_secs(3),
            "answered {took:?} after sending; the deadline was 500 ms"
        );
        assert_eq!(
            process_state(old),
            None,
            "the stopped worker is still there"
        );
        replaced(&m, old, 1);
        assert!(zombies_of(m.pid()).is_empty());
        assert_works(&mut m);
    }
}

#[test]
fn a_worker_dying_while_idle_costs_no_request() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &one_worker(&[]), Era::Modern);
    assert_works(&mut m);
    let old = the_worker(&m);
    signal(old, libc::SIGKILL);
    // Once it is dead (a zombie until the broker reaps it), the next request
    // must not be handed to it: the client did nothing wrong.
    assert!(eventually(Duration::from_secs(2), || {
        process_state(old).is_none_or(|s| s == 'Z')
    }));
    assert_works(&mut m);
    replaced(&m, old, 1);
    assert!(zombies_of(m.pid()).is_empty());
}

#[test]
fn a_worker_dying_while_idle_is_reaped_and_replaced_without_a_request() {
    let fx = fixture();
    let o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "2");
    let mut m = Moat::connect(&fx.root, &o, Era::Modern);
    let pids = m.wait_for_ready_workers(2);
    signal(pids[0], libc::SIGKILL);
    // No request is sent: the broker must notice by itself.
    let now = replaced(&m, pids[0], 2);
    assert!(now.contains(&pids[1]), "{now:?}");
    assert!(
        eventually(Duration::from_secs(2), || zombies_of(m.pid()).is_empty()),
        "{:?}",
        zombies_of(m.pid())
    );
    assert_eq!(process_state(pids[0]), None);
    assert_works(&mut m);
}

#[test]
fn the_pool_refills_to_its_size() {
    let fx = fixture();
    let o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "2");
    let mut m = Moat::connect(&fx.root, &o, Era::Legacy);
    let pids = m.wait_for_ready_workers(2);
    // Kill both while each holds a request.
    for p in &pids {
        signal(*p, libc::SIGSTOP);
    }
    m.send(&read_request(&m, 1));
    m.send(&read_request(&m, 2));
    std::thread::sleep(Duration::from_millis(100));
    for p in &pids {
        signal(*p, libc::SIGKILL);
    }
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = m.recv_within(Duration::from_secs(2)).expect("answered");
        assert_eq!(
            r["result"]["structuredContent"]["error"], "worker_failed",
            "{r}"
        );
        ids.push(r["id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    let mut now = Vec::new();
    assert!(
        eventually(Duration::from_secs(5), || {
            now = m.worker_pids();
            now.len() == 2 && !now.iter().any(|p| pids.contains(p))
        }),
        "{now:?}"
    );
    for _ in 0..4 {
        assert_works(&mut m);
    }
    assert!(zombies_of(m.pid()).is_empty());
}

#[track_caller]
fn assert_all_gone(pids: &[u32]) {
    for p in pids {
        assert_eq!(
            process_state(*p),
            None,
            "worker {p} survived the broker ({pids:?})"
        );
    }
}

#[test]
fn end_of_input_exits_zero_and_leaves_no_worker_behind() {
    let fx = fixture();
    let o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "2");
    let mut m = Moat::connect(&fx.root, &o, Era::Modern);
    assert_works(&mut m);
    let pids = m.wait_for_ready_workers(2);
    let (status, rest) = m.finish();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(rest.is_empty(), "{rest:?}");
    assert_all_gone(&pids);
}

#[test]
fn end_of_input_right_after_start_leaves_no_worker() {
    // Input ends while workers are still starting.
    let fx = fixture();
    let o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "3");
    for _ in 0..5 {
        let m = Moat::start(&fx.root, &o);
        let pids = m.wait_for_workers(1);
        let (status, rest) = m.finish();
        assert_eq!(status.code(), Some(0), "{status:?}");
        assert!(rest.is_empty(), "{rest:?}");
        assert_all_gone(&pids);
    }
}

#[test]
fn end_of_input_with_a_hung_request_answers_it_then_exits() {
    let fx = fixture();
    let mut m = Moat::connect(
        &fx.root,
        &one_worker(&[("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "0.5")]),
        Era::Modern,
    );
    assert_works(&mut m);
    let old = the_worker(&m);
    signal(old, libc::SIGSTOP);
    m.send(&read_request(&m, 5));
    let (status, rest) = m.finish();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(rest.len(), 1, "the pending request is answered: {rest:?}");
    let r = assert_response_line(&rest[0]);
    assert_eq!(
        r["result"]["structuredContent"]["error"], "timed_out",
        "{r}"
    );
    assert_all_gone(&[old]);
}

#[test]
fn no_child_is_ever_a_zombie_under_load_and_kills() {
    let fx = fixture();
    let o = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "2");
    let mut m = Moat::connect(&fx.root, &o, Era::Modern);
    for round in 0..5 {
        let pids = m.wait_for_ready_workers(2);
        signal(pids[round % pids.len()], libc::SIGKILL);
        for i in 0..5 {
            m.send(&read_request(&m, (round * 10 + i) as i64));
        }
        for _ in 0..5 {
            let r = m.recv();
            assert!(r.get("result").is_some(), "{r}");
        }
        assert!(zombies_of(m.pid()).is_empty(), "round {round}");
    }
}

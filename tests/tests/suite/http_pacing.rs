//! Authentication refusals are paced: beyond `http.auth_failures_per_second`
//! a refusal is held for `http.auth_failure_pause_ms` before it is answered,
//! on a connection that is the first to be shed when every slot is taken,
//! while callers with the right token are never held. A pause of 0 turns
//! pacing off. (With OAuth, a token not admitted before also waits before
//! its signature is checked: `http_oauth.rs`.)

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use moat_tests::http::{HttpMoat, Req, Resp, closed_within, modern_call, read_response};
use moat_tests::{Fixture, Mode, Options};
use serde_json::json;

const TOKEN: &str = "s3cret-token-for-pacing-tests-4b1d";

fn server(extra: &[(&str, &str)]) -> (Fixture, HttpMoat) {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut o = Options::new(Mode::Confined)
        .env("MOAT_SANDBOX__WORKERS", "1")
        .env("MOAT_HTTP__BEARER_TOKEN", TOKEN);
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    let s = HttpMoat::start(&fx.root, &o);
    (fx, s)
}

fn call() -> Req {
    Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"})))
}

#[track_caller]
fn assert_ok(r: &Resp) {
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(r.json()["result"]["isError"], false, "{r}");
}

#[track_caller]
fn assert_unauthorised(r: &Resp) {
    assert_eq!(r.status, 401, "{r}");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{r}");
    assert_eq!(r.json(), json!({"error": "unauthorised"}), "{r}");
}

/// The `paused_ms` of every `http.refused` line so far, in order.
fn pauses(s: &HttpMoat, n: usize) -> Vec<u64> {
    s.wait_events("http.refused", n)
        .iter()
        .map(|e| e["paused_ms"].as_u64().unwrap_or(u64::MAX))
        .collect()
}

#[test]
fn beyond_the_budget_a_refusal_is_held_and_a_caller_with_the_token_is_not() {
    let pause = Duration::from_millis(3000);
    let (_fx, s) = server(&[
        ("MOAT_HTTP__AUTH_FAILURES_PER_SECOND", "1"),
        ("MOAT_HTTP__AUTH_FAILURE_PAUSE_MS", "3000"),
    ]);
    // Within the budget: answered, and logged as not paused.
    assert_unauthorised(&s.send(&call().bearer("wrong")));
    assert_eq!(pauses(&s, 1), [0], "{}", s.stderr());
    // A burst of four more: the budget holds at most one of them.
    let done = Arc::new(AtomicUsize::new(0));
    let burst: Vec<_> = (0..4)
        .map(|_| {
            let (addr, done) = (s.addr, Arc::clone(&done));
            std::thread::spawn(move || {
                let started = Instant::now();
                let r = call().bearer("wrong").send(addr).unwrap();
                done.fetch_add(1, Ordering::SeqCst);
                (r, started.elapsed())
            })
        })
        .collect();
    // Give the burst time to arrive, then call with the token: answered
    // while the held refusals still wait.
    std::thread::sleep(Duration::from_millis(300));
    assert_ok(&s.send(&call().bearer(TOKEN)));
    assert!(
        done.load(Ordering::SeqCst) <= 1,
        "the refusals of the burst were not held: {}",
        s.stderr()
    );
    let mut held = 0;
    for t in burst {
        let (r, took) = t.join().unwrap();
        assert_unauthorised(&r);
        if took >= pause {
            held += 1;
        }
    }
    assert!(held >= 3, "{held} of 4 held: {}", s.stderr());
    let logged = pauses(&s, 5);
    assert_eq!(
        logged.iter().filter(|&&p| p == 3000).count(),
        held,
        "{logged:?}"
    );
    assert_eq!(s.events("tool.call").len(), 1, "{}", s.stderr());
}

#[test]
fn a_held_connection_is_shed_first_when_every_slot_is_taken() {
    let (_fx, s) = server(&[
        ("MOAT_HTTP__MAX_CONNECTIONS", "2"),
        ("MOAT_HTTP__AUTH_FAILURES_PER_SECOND", "1"),
        ("MOAT_HTTP__AUTH_FAILURE_PAUSE_MS", "20000"),
    ]);
    let keep_alive = |r: Req| r.header("Connection", "keep-alive").to_bytes(s.addr);
    // A: a good caller, idle on its keep-alive connection.
    let mut a = s.connect();
    a.write_all(&keep_alive(call().bearer(TOKEN))).unwrap();
    assert_ok(&read_response(&mut a).unwrap());
    // B: wrong tokens until one is held (the first is within the budget).
    let mut b = s.connect();
    let mut held = false;
    for _ in 0..5 {
        b.write_all(&keep_alive(call().bearer("wrong"))).unwrap();
        b.set_read_timeout(Some(Duration::from_millis(1500)))
            .unwrap();
        match read_response(&mut b) {
            Ok(r) => assert_unauthorised(&r),
            Err(_) => {
                held = true;
                break;
            }
        }
    }
    assert!(held, "no refusal was held: {}", s.stderr());
    // C: every slot is taken (A idle, B held). B is shed, not A.
    assert_ok(&s.send(&call().bearer(TOKEN)));
    assert!(
        closed_within(&mut b, Duration::from_secs(10)),
        "the held connection was not shed"
    );
    a.write_all(&keep_alive(call().bearer(TOKEN))).unwrap();
    assert_ok(&read_response(&mut a).expect("the idle good caller was shed instead"));
}

#[test]
fn a_pause_of_zero_answers_every_refusal_at_once() {
    let (_fx, s) = server(&[
        ("MOAT_HTTP__AUTH_FAILURES_PER_SECOND", "1"),
        ("MOAT_HTTP__AUTH_FAILURE_PAUSE_MS", "0"),
    ]);
    for _ in 0..10 {
        assert_unauthorised(&s.send(&call()));
    }
    assert_eq!(pauses(&s, 10), [0; 10], "{}", s.stderr());
}

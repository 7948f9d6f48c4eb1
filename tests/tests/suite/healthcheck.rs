//! `moat healthcheck [--ready]` (the container `HEALTHCHECK`; the image has
//! no curl) against a real `moat serve --transport http`: 0 on a 200, 1 on
//! anything else — a 503 from `/readyz`, nothing listening, a listener that
//! never answers, a configuration it cannot read — and never 2, which Docker
//! reserves.

use std::io::Write;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use moat_tests::http::HttpMoat;
use moat_tests::{Fixture, Mode, Options, moat_bin, run_moat};

use super::util::eventually;

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    fx
}

fn server(fx: &Fixture, host: &str) -> HttpMoat {
    let opts = Options::new(Mode::Confined)
        .env("MOAT_SANDBOX__WORKERS", "1")
        .env("MOAT_HTTP__HOST", host);
    HttpMoat::start(&fx.root, &opts)
}

fn healthcheck(host: &str, port: u16, ready: bool) -> moat_tests::Run {
    let port = port.to_string();
    let mut args = vec!["healthcheck"];
    if ready {
        args.push("--ready");
    }
    run_moat(
        &args,
        &[
            ("MOAT_HTTP__HOST", host),
            ("MOAT_HTTP__PORT", port.as_str()),
        ],
    )
}

#[test]
fn healthz_and_readyz_of_a_running_server_exit_0() {
    let fx = fixture();
    let s = server(&fx, "127.0.0.1");
    let live = healthcheck("127.0.0.1", s.port(), false);
    assert_eq!(live.code, Some(0), "{live}");
    assert_eq!(
        live.stdout.trim(),
        format!("http://127.0.0.1:{}/healthz: 200", s.port())
    );
    assert!(live.stderr.is_empty(), "{live}");
    let ready = healthcheck("127.0.0.1", s.port(), true);
    assert_eq!(ready.code, Some(0), "{ready}");
    assert!(ready.stdout.contains("/readyz: 200"), "{ready}");
}

#[test]
fn a_server_bound_to_every_interface_is_probed_on_loopback() {
    // The container sets MOAT_HTTP__HOST=0.0.0.0; the check, run inside the
    // same container with the same environment, must reach it on 127.0.0.1.
    let fx = fixture();
    let s = server(&fx, "0.0.0.0");
    assert!(s.addr.ip().is_unspecified(), "{}", s.addr);
    let run = healthcheck("0.0.0.0", s.port(), false);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("127.0.0.1"), "{run}");
}

#[test]
fn an_unready_server_is_alive_but_not_ready() {
    // The workspace disappears under a running server: /readyz turns 503, so
    // `--ready` exits 1, while the liveness check (which does not validate
    // the workspace) keeps exiting 0 and the orchestrator does not restart a
    // replica that only needs its volume back.
    let fx = fixture();
    let s = server(&fx, "127.0.0.1");
    let moved = fx.root.with_extension("moved");
    std::fs::rename(&fx.root, &moved).unwrap();
    let mut last = None;
    let turned = eventually(Duration::from_secs(5), || {
        let run = healthcheck("127.0.0.1", s.port(), true);
        let unready = run.code == Some(1);
        last = Some(run);
        unready
    });
    let unready = last.unwrap();
    assert!(turned, "{unready}");
    assert!(unready.stderr.contains("/readyz: 503"), "{unready}");
    assert!(unready.stdout.is_empty(), "{unready}");
    let live = healthcheck("127.0.0.1", s.port(), false);
    assert_eq!(live.code, Some(0), "{live}");
    std::fs::rename(&moved, &fx.root).unwrap();
    // Workers that failed to start meanwhile are retried with back-off (up
    // to 3.2 s apart), so readiness returns within a few seconds.
    let mut last = None;
    let back = eventually(Duration::from_secs(15), || {
        let run = healthcheck("127.0.0.1", s.port(), true);
        let ready = run.code == Some(0);
        last = Some(run);
        ready
    });
    assert!(back, "{}", last.unwrap());
}

#[test]
fn nothing_listening_exits_1_at_once() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let _ = moat_bin(); // built (once) before the clock starts
    let started = Instant::now();
    let run = healthcheck("127.0.0.1", port, false);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.starts_with("healthcheck: "), "{run}");
    assert!(run.stdout.is_empty(), "{run}");
    // Refused at once, not given up on after the 3 s timeout.
    assert!(started.elapsed() < Duration::from_secs(3), "{run}");
}

#[test]
fn a_listener_that_never_answers_exits_1_within_the_timeout() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // Accept and hold the connection without a word.
    let holder = std::thread::spawn(move || l.accept().map(|(s, _)| s));
    let _ = moat_bin(); // built (once) before the clock starts
    let started = Instant::now();
    let run = healthcheck("127.0.0.1", port, false);
    let took = started.elapsed();
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("timed out"), "{run}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "{took:?}"
    );
    drop(holder.join());
}

#[test]
fn a_listener_that_is_not_http_or_answers_an_error_exits_1() {
    for answer in [
        &b"SSH-2.0-OpenSSH_9.6\r\n"[..],
        b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
    ] {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let _ = s.write_all(answer);
        });
        let run = healthcheck("127.0.0.1", port, false);
        assert_eq!(
            run.code,
            Some(1),
            "{}: {run}",
            String::from_utf8_lossy(answer)
        );
        server.join().unwrap();
    }
}

#[test]
fn configuration_problems_exit_1_never_2() {
    for env in [
        &[("MOAT_HTTP__PORT", "0")][..],
        &[("MOAT_HTTP__PORT", "eighty")],
        &[("MOAT_HTTP__PROT", "8080")],
    ] {
        let run = run_moat(["healthcheck"], env);
        assert_eq!(run.code, Some(1), "{env:?}: {run}");
        assert!(run.stderr.starts_with("healthcheck: "), "{env:?}: {run}");
    }
    let missing = run_moat(["healthcheck", "--config", "/nonexistent/moat.toml"], &[]);
    assert_eq!(missing.code, Some(1), "{missing}");
}

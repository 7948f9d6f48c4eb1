//! One admission for every listener, through real sockets: when every
//! connection slot is taken, the connection shed for a new one is chosen by
//! what it costs and who it is (a paced refusal, then an idle connection
//! that never carried an admitted request, then a stalled body, and an
//! idle connection of an admitted caller last), whatever its state. So
//! stalled bodies sent with a valid token, slowloris heads, and idle
//! connections to the metrics listener never keep a caller with good
//! credentials, nor the probes, nor the scraper, out. (A flood of bad OAuth
//! tokens against a new good one: `http_oauth.rs`.)

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use moat_tests::http::{HttpMoat, Req, Resp, exchange, modern_call, read_response};
use moat_tests::{Fixture, Mode, Options, error_code};
use serde_json::json;

const TOKEN: &str = "admission-test-token-0123456789abcdef";

fn server(extra: &[(&str, &str)]) -> (Fixture, HttpMoat) {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut o = Options::new(Mode::InProcess).env("MOAT_HTTP__BEARER_TOKEN", TOKEN);
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    let s = HttpMoat::start(&fx.root, &o);
    (fx, s)
}

fn call(id: i64) -> Req {
    Req::mcp(&modern_call(id, "read_file", json!({"path": "a.txt"}))).bearer(TOKEN)
}

#[track_caller]
fn assert_ok(r: &Resp) {
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(error_code(&r.json()["result"]), "", "{r}");
}

/// Whether the server has not closed `c` (nor answered on it: an answer
/// to a stalled request comes with its closing).
fn is_open(c: &mut TcpStream) -> bool {
    use std::io::Read as _;
    if c.set_nonblocking(true).is_err() {
        return false;
    }
    let mut b = [0u8; 256];
    let open = matches!(c.read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    let _ = c.set_nonblocking(false);
    open
}

/// Keeps `n` connections of the kind `open` makes open while the returned
/// flag is set: one that is closed (shed, timed out) is opened again.
fn hold_open(
    n: usize,
    open: impl Fn() -> Option<TcpStream> + Send + Sync + 'static,
) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let running = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&running);
    let handle = std::thread::spawn(move || {
        let mut conns: Vec<TcpStream> = (0..n).filter_map(|_| open()).collect();
        while flag.load(Ordering::SeqCst) {
            conns.retain_mut(is_open);
            while conns.len() < n {
                match open() {
                    Some(c) => conns.push(c),
                    None => break,
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    (running, handle)
}

/// A connection with a valid token that sends its head and half its body,
/// then stalls.
fn stalled_body(addr: SocketAddr) -> Option<TcpStream> {
    let mut c = TcpStream::connect(addr).ok()?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
    );
    c.write_all(head.as_bytes()).ok()?;
    Some(c)
}

#[test]
fn stalled_bodies_sent_with_a_valid_token_never_lock_out_callers_or_probes() {
    // Bodies may stall for a minute: far beyond the harness's wait for an
    // answer, so a caller left in the backlog behind them fails.
    let (_fx, s) = server(&[
        ("MOAT_HTTP__MAX_CONNECTIONS", "8"),
        ("MOAT_HTTP__BODY_TIMEOUT_MS", "120000"),
    ]);
    let addr = s.addr;
    let (running, staller) = hold_open(8, move || stalled_body(addr));
    std::thread::sleep(Duration::from_millis(500));
    for i in 0..5 {
        assert_ok(&s.send(&call(i)));
        assert_eq!(s.get("/healthz").status, 200);
        assert_eq!(s.get("/readyz").status, 200);
    }
    running.store(false, Ordering::SeqCst);
    staller.join().unwrap();
}

/// An unauthenticated connection that sends half a request head, then
/// stalls (slowloris).
fn half_head(addr: SocketAddr) -> Option<TcpStream> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
        .ok()?;
    Some(c)
}

#[test]
fn an_admitted_callers_idle_connection_outlasts_every_unauthenticated_one() {
    let (_fx, s) = server(&[
        ("MOAT_HTTP__MAX_CONNECTIONS", "4"),
        ("MOAT_HTTP__HEADER_TIMEOUT_MS", "120000"),
    ]);
    let keep_alive = |r: Req| r.header("Connection", "keep-alive").to_bytes(s.addr);
    // A good caller, idle on its keep-alive connection: the oldest of all.
    let mut good = s.connect();
    good.write_all(&keep_alive(call(1))).unwrap();
    assert_ok(&read_response(&mut good).unwrap());
    // Twenty slowloris connections over three free slots: each new one
    // sheds an older one, never the good caller's.
    let mut slow = Vec::new();
    for _ in 0..20 {
        if let Some(c) = half_head(s.addr) {
            slow.push(c);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    good.write_all(&keep_alive(call(2))).unwrap();
    assert_ok(&read_response(&mut good).expect("the admitted caller's connection was shed"));
    drop(slow);
}

/// The `addr` of `metrics.listening`.
fn metrics_addr(s: &HttpMoat) -> SocketAddr {
    s.wait_events("metrics.listening", 1)
        .first()
        .and_then(|v| v["addr"].as_str()?.parse().ok())
        .unwrap_or_else(|| panic!("no metrics.listening: {}", s.stderr()))
}

fn scrape(addr: SocketAddr, token: Option<&str>) -> std::io::Result<Resp> {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    exchange(
        addr,
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n")
            .as_bytes(),
    )
}

#[test]
fn idle_connections_to_the_metrics_listener_never_lock_the_scraper_out() {
    let metrics_token = "metrics-token-for-the-admission-test-0123";
    let (_fx, s) = server(&[
        ("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0"),
        ("MOAT_OBSERVABILITY__METRICS_TOKEN", metrics_token),
    ]);
    let addr = metrics_addr(&s);
    // More idle connections than the listener takes, kept open: opened
    // again as soon as one is closed, sending nothing, no token needed.
    let (running, idler) = hold_open(80, move || TcpStream::connect(addr).ok());
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..5 {
        let r = scrape(addr, Some(metrics_token)).expect("the scraper was locked out");
        assert_eq!(r.status, 200, "{r}");
        assert!(r.text().contains("moat_tool_calls"), "{r}");
    }
    // A scraper that keeps its connection open between scrapes outlasts
    // every idle one that never scraped.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let get = format!(
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {metrics_token}\r\n\r\n"
    );
    for _ in 0..3 {
        kept.write_all(get.as_bytes()).unwrap();
        let r = read_response(&mut kept).expect("the scraper's connection was shed");
        assert_eq!(r.status, 200, "{r}");
        std::thread::sleep(Duration::from_millis(300));
    }
    running.store(false, Ordering::SeqCst);
    idler.join().unwrap();
}

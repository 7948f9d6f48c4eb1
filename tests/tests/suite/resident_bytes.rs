//! Every answer byte the broker holds for a client is counted until no copy
//! of it is left, over both transports, through the real binary: clients
//! that stop reading their answers (HTTP connections with a small receive
//! buffer that never read; a stdio client that never reads stdout) make
//! the broker hold at most its documented budget, whatever their number
//! of requests, and every request is still answered exactly once when the
//! client reads again.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use moat_tests::http::{HttpMoat, Req, modern_call};
use moat_tests::{Fixture, Mode, Options, moat_bin, moat_command};
use serde_json::{Value, json};

use super::util::eventually;

/// A text file whose answer is about six times its size once JSON-escaped:
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

fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Waits until `count()` has not changed for `quiet` (or `limit` passed).
fn settle(mut count: impl FnMut() -> usize, quiet: Duration, limit: Duration) -> usize {
    let until = Instant::now() + limit;
    let mut last = count();
    let mut since = Instant::now();
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        let now = count();
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            break;
        }
    }
    last
}

/// ~5.9 MB answers: 950 KB of control bytes, escaped.
const CONTROL_FILE_BYTES: usize = 950_000;
const MIB: u64 = 1024 * 1024;

#[test]
fn stdio_a_client_that_stops_reading_stdout_pins_at_most_the_stdout_budget() {
    let fx = Fixture::new();
    fx.file("ctl.txt", control_bytes(CONTROL_FILE_BYTES));
    let stderr_path = fx.outside.join("stderr.log");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    // The default budget (32 MiB).
    let budget_mib = 32;
    let mut child: std::process::Child = moat_command(&moat_bin())
        .args(["serve", "--workspace", fx.root.to_str().unwrap()])
        .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000")
        .env("MOAT_SANDBOX__WORKERS", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let call = |id: i64| {
        let mut l = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "ctl.txt"}}}))
        .unwrap();
        l.push(b'\n');
        l
    };
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
        .unwrap();
    // A warm-up call read in full: workers, allocator and the size of one
    // answer.
    stdin.write_all(&call(1)).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let answer_len = line.len() as u64;
    assert!(answer_len > 5_000_000, "answer of {answer_len} bytes");
    let base_kib = status_kib(pid, "VmRSS:");
    // Sixty calls, and stdout is no longer read.
    let calls = 60;
    for id in 0..calls {
        stdin.write_all(&call(100 + id)).unwrap();
    }
    let tool_calls = || {
        std::fs::read_to_string(&stderr_path)
            .unwrap_or_default()
            .matches("\"tool.call\"")
            .count()
    };
    let handled = settle(tool_calls, Duration::from_secs(3), Duration::from_secs(120));
    let peak_kib = status_kib(pid, "VmHWM:");
    let grown_mib = peak_kib.saturating_sub(base_kib) / 1024;
    eprintln!(
        "stdio non-reader: {handled} calls handled, base {base_kib} KiB, peak {peak_kib} KiB, grown {grown_mib} MiB"
    );
    // The budget (32 MiB of answers and reservations), the answers being
    // built (one per worker), the allocator's slack; without the bound
    // every admitted call's answer waits, ~50 × 5.9 MB.
    assert!(
        grown_mib < 2 * budget_mib + 16,
        "RSS grew {grown_mib} MiB with stdout unread ({handled} calls handled)"
    );
    // Reading again: every call answered exactly once.
    drop(stdin);
    let mut ids = Vec::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(
            v["result"]["isError"] == false,
            "{}",
            &line[..200.min(line.len())]
        );
        ids.push(v["id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (100..100 + calls).collect::<Vec<_>>());
    assert!(child.wait().unwrap().success());
}

/// Send one tools/call on a fresh connection whose receive buffer is small
/// and fixed (so the kernel cannot take the answer off the broker's hands),
/// and never read the answer.
fn non_reader(addr: std::net::SocketAddr, id: i64) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&addr.into()).unwrap();
    let mut c: TcpStream = socket.into();
    c.write_all(
        &Req::mcp(&modern_call(id, "read_file", json!({"path": "ctl.txt"}))).to_bytes(addr),
    )
    .unwrap();
    c
}

#[test]
fn http_clients_that_never_read_pin_at_most_the_answer_budget_with_default_settings() {
    let fx = Fixture::new();
    fx.file("ctl.txt", control_bytes(CONTROL_FILE_BYTES));
    // Defaults, but for the answer budget in characters (raised so the file
    // is answered whole) and a write timeout long enough to measure.
    let s = HttpMoat::start(
        &fx.root,
        &Options::new(Mode::Confined)
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000")
            .env("MOAT_HTTP__WRITE_TIMEOUT_MS", "60000"),
    );
    let pid = s.moat.pid();
    let warm = s.post(&modern_call(1, "read_file", json!({"path": "ctl.txt"})));
    assert_eq!(warm.status, 200);
    assert!(
        warm.body.len() > 5_000_000,
        "answer of {} bytes",
        warm.body.len()
    );
    let base_kib = status_kib(pid, "VmRSS:");
    let conns: Vec<TcpStream> = (0..100).map(|i| non_reader(s.addr, 100 + i)).collect();
    assert!(
        eventually(
            Duration::from_secs(180),
            || s.get("/readyz").json()["tool_calls"]["admitted"] == json!(0)
        ),
        "not every call was handled; stderr:\n{}",
        s.stderr()
    );
    std::thread::sleep(Duration::from_millis(500));
    let held = s.get("/readyz").json()["queued_answer_bytes"]
        .as_u64()
        .unwrap();
    let peak_kib = status_kib(pid, "VmHWM:");
    let grown_mib = peak_kib.saturating_sub(base_kib) / 1024;
    eprintln!(
        "http non-readers: base {base_kib} KiB, peak {peak_kib} KiB, grown {grown_mib} MiB, held {held} bytes"
    );
    // At most http.max_queued_bytes (32 MiB by default) of answers held,
    // counted until their buffers are dropped.
    assert!(held <= 32 * MIB, "{held} bytes held");
    // That, the answers being built (one per worker) and the allocator's
    // slack (freed blocks it keeps: about as much again under this load);
    // without the count (a buffer partly taken by the kernel counted as
    // less than it holds, answers encoded before they were counted), over
    // 230 MiB.
    assert!(
        grown_mib < 120,
        "RSS grew {grown_mib} MiB under 100 non-reading clients"
    );
    // Others are still served meanwhile.
    let ok = s.post(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    assert_eq!(ok.status, 200, "{ok}");
    drop(conns);
}

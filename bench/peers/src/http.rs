//! A closed-loop HTTP/1.1 load client: `connections` keep-alive connections,
//! each sending one pre-encoded request and reading its whole answer before
//! the next, on one thread (tokio current-thread runtime), for a fixed time.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use memchr::memmem;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::stats::Batch;

/// A full `POST` request (head and body) for `path` on `addr`.
pub fn post(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut r = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        r.push_str(k);
        r.push_str(": ");
        r.push_str(v);
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    r.push_str(body);
    r.into_bytes()
}

/// Read one answer into `buf`; returns (status, body start, body end).
async fn read_answer(s: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<(u16, usize, usize)> {
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(i) = memmem::find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(io::Error::other)?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other("bad status line"))?;
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .ok_or_else(|| io::Error::other("no content-length"))?;
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok((status, head_end, head_end + len))
}

/// What a load run saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadResult {
    /// Figures over the measured period.
    pub batch: Batch,
    /// Answers that were not 200 with `"isError":false`, or broken connections.
    pub errors: usize,
}

async fn connection(
    addr: SocketAddr,
    request: Arc<Vec<u8>>,
    measure_from: Instant,
    until: Instant,
) -> (Vec<f64>, usize) {
    let mut lat = Vec::new();
    let mut errors = 0;
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return (lat, 1);
    };
    let _ = s.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        let t = Instant::now();
        if t >= until {
            break;
        }
        if s.write_all(&request).await.is_err() {
            errors += 1;
            break;
        }
        match read_answer(&mut s, &mut buf).await {
            Ok((200, a, b)) if memmem::find(&buf[a..b], b"\"isError\":false").is_some() => {
                if t >= measure_from {
                    lat.push(t.elapsed().as_secs_f64() * 1000.0);
                }
            }
            Ok(_) => errors += 1,
            Err(_) => {
                errors += 1;
                break;
            }
        }
    }
    (lat, errors)
}

/// Run the load: `warmup`, then `duration` measured.
pub fn load(
    addr: SocketAddr,
    request: Vec<u8>,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> io::Result<LoadResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let request = Arc::new(request);
        let measure_from = Instant::now() + warmup;
        let until = measure_from + duration;
        let mut tasks = Vec::with_capacity(connections);
        for _ in 0..connections {
            tasks.push(tokio::spawn(connection(
                addr,
                Arc::clone(&request),
                measure_from,
                until,
            )));
        }
        let mut lat = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let (l, e) = t.await.map_err(io::Error::other)?;
            lat.extend(l);
            errors += e;
        }
        // Requests that started in the window, over the window.
        Ok(LoadResult {
            batch: Batch::from_latencies(lat, duration),
            errors,
        })
    })
}

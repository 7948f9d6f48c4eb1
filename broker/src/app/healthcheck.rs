//! `moat healthcheck [--ready]`: ask a `moat serve --transport http` on this
//! machine whether it is alive (`GET /healthz`) or ready (`GET /readyz`).
//!
//! It exists for the container `HEALTHCHECK`: the image has no curl and no
//! shell. The address is `http.host:http.port` from the same layers as
//! `serve` (file, environment, flags), so the check follows whatever the
//! server was started with; an unspecified bind address (`0.0.0.0`, `::`) is
//! probed on loopback. One plain HTTP/1.1 request over a
//! [`std::net::TcpStream`] with `Connection: close`, and [`TIMEOUT`] for the
//! whole exchange (connect, send, first line of the answer).
//!
//! Only `http.host` and `http.port` are read ([`config::http_address`]): a
//! liveness check must not fail because the workspace is briefly missing or
//! git was upgraded — `/readyz` reports those, and `--ready` asks it.
//!
//! Exit 0 when the answer's status is 200, otherwise 1 — including a
//! configuration that cannot be read. Never 2: Docker reserves that exit code
//! of a health check.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::exit::EXIT_FAILED;
use super::output::{print_stdout, startup_redactor};
use crate::config::{self, Sources};

/// The budget of one check, from the first connect to the status line.
/// Docker's own `HEALTHCHECK --timeout` (5 s in our Dockerfile) is longer, so
/// a stalled server is reported by us, with a reason, not killed by Docker.
pub const TIMEOUT: Duration = Duration::from_secs(3);

/// The most bytes read while looking for the status line: the probes answer
/// in a few hundred bytes, so this only bounds a hostile or wrong listener.
const MAX_HEAD: usize = 8 * 1024;

/// Run the check and print one line (stdout on success, stderr otherwise).
#[must_use]
pub fn run(sources: &Sources, ready: bool) -> ExitCode {
    let path = if ready { "/readyz" } else { "/healthz" };
    let (host, port) = match config::http_address(sources) {
        Ok(a) => a,
        Err(e) => {
            let e = startup_redactor(sources).text(&e.to_string()).into_owned();
            eprintln!("healthcheck: configuration refused: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if port == 0 {
        eprintln!("healthcheck: http.port is 0 (a port chosen at start-up): nothing to probe");
        return ExitCode::from(EXIT_FAILED);
    }
    match probe(&host, port, path, TIMEOUT) {
        Ok((addr, 200)) => {
            print_stdout(&format!("http://{addr}{path}: 200\n"));
            ExitCode::SUCCESS
        }
        Ok((addr, status)) => {
            eprintln!("healthcheck: http://{addr}{path}: {status}");
            ExitCode::from(EXIT_FAILED)
        }
        Err(e) => {
            eprintln!("healthcheck: {host}:{port}{path}: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// `GET path` on `host:port` within `timeout`; the address that answered and
/// the status code of its answer.
pub fn probe(
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
) -> io::Result<(SocketAddr, u16)> {
    let deadline = Instant::now() + timeout;
    let mut last = None;
    for addr in targets(host, port)? {
        match TcpStream::connect_timeout(&addr, remaining(deadline)?) {
            Ok(stream) => return exchange(stream, addr, path, deadline).map(|s| (addr, s)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address to probe")))
}

/// Where to connect: the bind address itself, or loopback when the server
/// binds every interface.
fn targets(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let bare = host.trim().trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        let ip = match ip {
            IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    Ok((bare, port).to_socket_addrs()?.collect())
}

fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
    }
    Ok(left)
}

fn exchange(
    mut stream: TcpStream,
    addr: SocketAddr,
    path: &str,
    deadline: Instant,
) -> io::Result<u16> {
    stream.set_write_timeout(Some(remaining(deadline)?))?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: moat-healthcheck/{}\r\nAccept: application/json\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    );
    stream.write_all(request.as_bytes())?;
    let mut head = Vec::with_capacity(256);
    let mut buf = [0u8; 1024];
    loop {
        if let Some(end) = memchr::memmem::find(&head, b"\r\n") {
            return parse_status(&head[..end]);
        }
        if head.len() >= MAX_HEAD {
            return Err(bad("no status line in the first 8 KiB"));
        }
        stream.set_read_timeout(Some(remaining(deadline)?))?;
        let n = match stream.read(&mut buf) {
            Ok(0) => return Err(bad("the connection closed before a status line")),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock) => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
            }
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&buf[..n]);
    }
}

/// `HTTP/1.x NNN reason` → `NNN`.
fn parse_status(line: &[u8]) -> io::Result<u16> {
    let line = std::str::from_utf8(line).map_err(|_| bad("the status line is not text"))?;
    let mut parts = line.split(' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(bad("malformed status line"));
    };
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        return Err(bad("not an HTTP/1.x status line"));
    }
    code.parse().map_err(|_| bad("malformed status code"))
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_bind_address_is_probed_on_loopback() {
        let v4 = targets("0.0.0.0", 8080).unwrap();
        assert_eq!(v4, vec!["127.0.0.1:8080".parse().unwrap()]);
        let v6 = targets("::", 8080).unwrap();
        assert_eq!(v6, vec!["[::1]:8080".parse().unwrap()]);
        let bracketed = targets("[::]", 1).unwrap();
        assert_eq!(bracketed, vec!["[::1]:1".parse().unwrap()]);
        let specific = targets("10.1.2.3", 9).unwrap();
        assert_eq!(specific, vec!["10.1.2.3:9".parse().unwrap()]);
    }

    #[test]
    fn status_lines_are_parsed_strictly() {
        assert_eq!(parse_status(b"HTTP/1.1 200 OK").unwrap(), 200);
        assert_eq!(
            parse_status(b"HTTP/1.0 503 Service Unavailable").unwrap(),
            503
        );
        for line in [
            &b""[..],
            b"HTTP/1.1",
            b"HTTP/2 200",
            b"SSH-2.0-OpenSSH_9.6",
            b"HTTP/1.1 20 OK",
            b"HTTP/1.1 2000 OK",
            b"HTTP/1.1 abc OK",
            b"\xff\xfe",
        ] {
            assert!(parse_status(line).is_err(), "{line:?}");
        }
    }
}

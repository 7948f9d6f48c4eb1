//! The HTTP side of the harness: start `moat serve --transport http` on an
//! ephemeral port of 127.0.0.1 and speak HTTP/1.1 to it **by hand** over
//! [`std::net::TcpStream`].
//!
//! Writing the request bytes ourselves (no HTTP client library) lets a test
//! send what a well-behaved client never would: a wrong `Host`, a
//! `Content-Length` that lies, a chunked body with no declared size, half a
//! header and then silence. Every request is sent with `Connection: close`
//! unless the test writes raw bytes, so a response is read to its declared
//! length (or chunked end, or EOF).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Moat, Options};

/// How long a test waits for any single response before failing.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `moat serve --transport http`.
pub struct HttpMoat {
    /// The process (stderr capture, worker pids, signals).
    pub moat: Moat,
    /// The address it logged in `http.listening`.
    pub addr: SocketAddr,
}

impl HttpMoat {
    /// Start the server on an ephemeral port (`MOAT_HTTP__PORT=0`) and wait
    /// for its `http.listening` log line (panics after 15 s).
    #[must_use]
    pub fn start(root: &Path, opts: &Options) -> HttpMoat {
        let mut opts = opts.clone();
        opts.args
            .splice(0..0, ["--transport".to_owned(), "http".to_owned()]);
        if !opts.env.iter().any(|(k, _)| k == "MOAT_HTTP__PORT") {
            opts.env.push(("MOAT_HTTP__PORT".into(), "0".into()));
        }
        let mut moat = Moat::start(root, &opts);
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(addr) = listening_addr(&moat.stderr()) {
                return HttpMoat { moat, addr };
            }
            if let Some(st) = moat.wait_timeout(Duration::from_millis(5)) {
                panic!(
                    "moat exited ({st}) before listening; stderr:\n{}",
                    moat.stderr()
                );
            }
            assert!(
                Instant::now() < until,
                "no http.listening within 15 s; stderr:\n{}",
                moat.stderr()
            );
        }
    }

    /// The bound port.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The server's own origin, `http://127.0.0.1:<port>`.
    #[must_use]
    pub fn own_origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Send `req` and read the response (panics on an I/O error).
    #[track_caller]
    pub fn send(&self, req: &Req) -> Resp {
        req.send(self.addr)
            .unwrap_or_else(|e| panic!("{} {}: {e}", req.method, req.path))
    }

    /// `POST /mcp` with `body`; the 2026-07-28 headers are added when the
    /// body carries modern `_meta`.
    #[track_caller]
    pub fn post(&self, body: &Value) -> Resp {
        self.send(&Req::mcp(body))
    }

    /// `GET path`.
    #[track_caller]
    pub fn get(&self, path: &str) -> Resp {
        self.send(&Req::new("GET", path))
    }

    /// Open a connection (for raw and stalled-connection tests).
    #[must_use]
    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(RESPONSE_TIMEOUT)).ok();
        s
    }

    /// Send a signal to the broker.
    pub fn signal(&self, sig: i32) {
        signal(self.moat.pid(), sig);
    }

    /// Wait up to `d` for the broker to exit.
    pub fn wait_exit(&mut self, d: Duration) -> Option<ExitStatus> {
        self.moat.wait_timeout(d)
    }

    /// Everything the broker wrote to stderr so far.
    #[must_use]
    pub fn stderr(&self) -> String {
        self.moat.stderr()
    }

    /// The stderr lines (JSON logs) whose message is `event`, so far.
    #[must_use]
    pub fn events(&self, event: &str) -> Vec<Value> {
        log_events(&self.stderr(), event)
    }

    /// The `event` log lines once there are at least `n` (or after 5 s):
    /// a line written just before a response may reach the harness's
    /// stderr reader just after it. Logs are written in order, so once a
    /// later event is seen every earlier one is there too.
    #[must_use]
    pub fn wait_events(&self, event: &str, n: usize) -> Vec<Value> {
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let found = self.events(event);
            if found.len() >= n || Instant::now() > until {
                return found;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// kill(2), panicking on failure.
pub fn signal(pid: u32, sig: i32) {
    let pid = i32::try_from(pid).expect("pid fits in pid_t");
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is one of
    // our own children or theirs.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(
        rc,
        0,
        "kill({pid}, {sig}): {}",
        std::io::Error::last_os_error()
    );
}

/// The `addr` of the first `http.listening` JSON log line in `stderr`.
#[must_use]
pub fn listening_addr(stderr: &str) -> Option<SocketAddr> {
    log_events(stderr, "http.listening")
        .first()
        .and_then(|v| v["addr"].as_str().and_then(|a| a.parse().ok()))
}

/// The JSON log lines of `stderr` whose `message` is `event`.
#[must_use]
pub fn log_events(stderr: &str, event: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v["message"]
                .as_str()
                .is_some_and(|m| m == event || m.starts_with(&format!("{event}:")))
        })
        .collect()
}

/// An HTTP/1.1 request, written by hand.
#[derive(Debug, Clone)]
pub struct Req {
    /// Method.
    pub method: String,
    /// Request target.
    pub path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Req {
    /// `METHOD path` with `Host: 127.0.0.1` filled in at send time unless
    /// set, and `Connection: close`.
    #[must_use]
    pub fn new(method: &str, path: &str) -> Req {
        Req {
            method: method.to_owned(),
            path: path.to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// `POST /mcp` carrying `body` as JSON, with the headers a 2026-07-28
    /// client sends (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name`
    /// for `tools/call` and `resources/read`) when the body carries modern `_meta`.
    #[must_use]
    pub fn mcp(body: &Value) -> Req {
        let mut r = Req::new("POST", "/mcp")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(body);
        let params = &body["params"];
        if let Some(v) = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str() {
            r = r.header("MCP-Protocol-Version", v);
            if let Some(m) = body["method"].as_str() {
                r = r.header("Mcp-Method", m);
            }
            let name = match body["method"].as_str() {
                Some("resources/read") => params["uri"].as_str(),
                _ => params["name"].as_str(),
            };
            if let Some(n) = name {
                r = r.header("Mcp-Name", n);
            }
        }
        r
    }

    /// Add a header (kept even if one of that name exists).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replace every header named `name` (case-insensitive) by one value.
    #[must_use]
    pub fn set_header(self, name: &str, value: &str) -> Req {
        self.without(name).header(name, value)
    }

    /// Remove every header named `name` (case-insensitive).
    #[must_use]
    pub fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self
    }

    /// `Authorization: Bearer <token>`.
    #[must_use]
    pub fn bearer(self, token: &str) -> Req {
        self.set_header("Authorization", &format!("Bearer {token}"))
    }

    /// A JSON body.
    #[must_use]
    pub fn json(mut self, v: &Value) -> Req {
        self.body = serde_json::to_vec(v).expect("serialise");
        self
    }

    /// A raw body.
    #[must_use]
    pub fn body(mut self, b: impl Into<Vec<u8>>) -> Req {
        self.body = b.into();
        self
    }

    fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(name))
    }

    /// The bytes on the wire: `Host` (unless set), the headers,
    /// `Content-Length` (unless a length or transfer coding is set, or the
    /// method is GET/DELETE without a body), `Connection: close`, the body.
    #[must_use]
    pub fn to_bytes(&self, addr: SocketAddr) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        if !self.has("host") {
            out.push_str(&format!("Host: {addr}\r\n"));
        }
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        let bodyless = matches!(self.method.as_str(), "GET" | "DELETE" | "HEAD");
        let sized = self.has("content-length") || self.has("transfer-encoding");
        let empty_get = bodyless && self.body.is_empty();
        if !(sized || empty_get) {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        if !self.has("connection") {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }

    /// Connect, write the request, read the response.
    pub fn send(&self, addr: SocketAddr) -> std::io::Result<Resp> {
        exchange(addr, &self.to_bytes(addr))
    }
}

/// Connect to `addr`, write `raw`, read one response.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> std::io::Result<Resp> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(RESPONSE_TIMEOUT))?;
    s.set_nodelay(true)?;
    s.write_all(raw)?;
    read_response(&mut s)
}

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct Resp {
    /// Status code.
    pub status: u16,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (chunked coding removed).
    pub body: Vec<u8>,
}

impl Resp {
    /// The first header named `name` (case-insensitive).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (panics if it is not).
    #[must_use]
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                self.text()
            )
        })
    }

    /// `error.code` of a JSON-RPC error body.
    #[must_use]
    #[track_caller]
    pub fn rpc_code(&self) -> i64 {
        let v = self.json();
        v["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not a JSON-RPC error (HTTP {}): {v}", self.status))
    }
}

impl std::fmt::Display for Resp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {} {:?} {}", self.status, self.headers, self.text())
    }
}

/// One `read` from `s`, again if it was interrupted. Linux never restarts
/// a socket read that has a receive timeout once a signal handler has run
/// (`SA_RESTART` notwithstanding) or the process was stopped and continued,
/// and every read here has a timeout: without the retry, an interruption
/// that has nothing to do with the test fails whichever test was reading.
pub fn read_some(s: &mut TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match s.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// Read one response from `s`: status line, headers, then the body by
/// `Content-Length`, by chunked coding, or to EOF.
pub fn read_response(s: &mut TcpStream) -> std::io::Result<Resp> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_owned());
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        let n = read_some(s, &mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "connection closed before a response head ({} bytes)",
                    buf.len()
                ),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut rest = buf[head_end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or_else(|| bad("no status line"))?;
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let get = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(len) = get("content-length") {
        let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        while rest.len() < len {
            let mut chunk = [0u8; 8192];
            let n = read_some(s, &mut chunk)?;
            if n == 0 {
                return Err(bad("body shorter than content-length"));
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        rest.truncate(len);
        rest
    } else if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        s.read_to_end(&mut rest)?;
        dechunk(&rest).ok_or_else(|| bad("bad chunked body"))?
    } else if status == 204 || status == 304 {
        Vec::new()
    } else {
        s.read_to_end(&mut rest)?;
        rest
    };
    Ok(Resp {
        status,
        headers,
        body,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = find(data, b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// Whether the peer has closed `s` (EOF or reset) within `d`; `false` if
/// it is still open and silent.
pub fn closed_within(s: &mut TcpStream, d: Duration) -> bool {
    s.set_read_timeout(Some(d)).ok();
    let mut b = [0u8; 512];
    loop {
        match read_some(s, &mut b) {
            Ok(0) => return true,
            // Bytes (e.g. an error response) then, presumably, EOF.
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// A 2026-07-28 request body (`_meta` filled in).
#[must_use]
pub fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = Moat::modern_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2026-07-28 `tools/call` body.
#[must_use]
pub fn modern_call(id: i64, tool: &str, args: Value) -> Value {
    modern(id, "tools/call", json!({"name": tool, "arguments": args}))
}

/// A request body with no `_meta` (legacy era, or for the envelope tests).
#[must_use]
pub fn legacy(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

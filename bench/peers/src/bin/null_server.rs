//! The client floor: a trivial MCP server that does no work.
//!
//! * `null-server` speaks JSON-RPC over stdio (one message per line): it
//!   answers `initialize`, `tools/list` (no tools) and every `tools/call` at
//!   once with a text result of `arguments.reply_bytes` bytes (default 100),
//!   so a measured request costs the client what the real one does.
//! * `null-server --http ADDR` answers every `POST` on `ADDR` with a fixed
//!   JSON result of `--reply-bytes N` bytes.
//!
//! Measured with the same client as the real servers, it shows what the
//! client and the pipes or sockets cost on their own.

#![allow(clippy::print_stderr, reason = "a benchmark helper")]

use std::io::{self, BufRead, Write};

use serde_json::Value;

fn result_with_text(id: &Value, len: usize) -> Vec<u8> {
    let text = "x".repeat(len);
    let v = serde_json::json!({
        "jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": false}
    });
    let mut out = serde_json::to_vec(&v).unwrap_or_default();
    out.push(b'\n');
    out
}

fn stdio() -> io::Result<()> {
    #[allow(clippy::disallowed_methods, reason = "this program's wire is stdout")]
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 17, stdout.lock());
    let mut input = io::BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id") else { continue };
        let method = msg["method"].as_str().unwrap_or("");
        let answer = match method {
            "initialize" => {
                let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "null", "version": "0"}}});
                let mut b = serde_json::to_vec(&v).unwrap_or_default();
                b.push(b'\n');
                b
            }
            "tools/list" => {
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[]}}}}\n")
                    .into_bytes()
            }
            _ => {
                let len = msg["params"]["arguments"]["reply_bytes"]
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(100);
                result_with_text(id, len)
            }
        };
        out.write_all(&answer)?;
        // Answer now unless more requests are already waiting (then they
        // go out together, as a server with pipelined input would).
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
}

async fn http_connection(mut s: tokio::net::TcpStream, answer: std::sync::Arc<Vec<u8>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = s.set_nodelay(true);
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    loop {
        let head_end = loop {
            if let Some(i) = memchr::memmem::find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buf.len() < head_end + len {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..head_end + len);
        if s.write_all(&answer).await.is_err() {
            return;
        }
    }
}

fn http(addr: &str, reply_bytes: usize) -> io::Result<()> {
    let body = result_with_text(&Value::from(1), reply_bytes);
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    let answer = std::sync::Arc::new(answer);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!("listening {}", listener.local_addr()?);
        loop {
            let (s, _) = listener.accept().await?;
            tokio::spawn(http_connection(s, std::sync::Arc::clone(&answer)));
        }
    })
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None => stdio(),
        Some("--http") => {
            let addr = args.get(1).map_or("127.0.0.1:0", String::as_str);
            let reply = args
                .iter()
                .position(|a| a == "--reply-bytes")
                .and_then(|i| args.get(i + 1))
                .and_then(|n| n.parse().ok())
                .unwrap_or(2000);
            http(addr, reply)
        }
        Some(other) => {
            eprintln!("usage: null-server [--http ADDR [--reply-bytes N]] (got {other})");
            return std::process::ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("null-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

//! A fast MCP client over stdio: requests are pre-encoded templates with only
//! the id written per request; answers are matched to requests by id (out of
//! order) with a byte search for the top-level `"id":` key, never parsed.
//!
//! That search is sound for the servers measured here: inside a JSON string a
//! quote is escaped (`\"id\":` never contains `"id":`), and none of the results
//! measured has a nested `id` member (checked once per scenario by
//! [`Peer::call_checked`], which parses the whole answer).

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use memchr::memmem;
use serde_json::Value;

use crate::stats::Batch;

/// How to start one server.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Short name for the table.
    pub name: String,
    /// Program and arguments.
    pub argv: Vec<String>,
    /// The whole environment (nothing is inherited).
    pub env: Vec<(String, String)>,
}

impl Spec {
    fn command(&self) -> Command {
        let mut c = Command::new(&self.argv[0]);
        c.args(&self.argv[1..])
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    }
}

/// A request with everything but its id encoded.
#[derive(Debug, Clone)]
pub struct Template {
    pre: Vec<u8>,
    post: Vec<u8>,
}

impl Template {
    /// `{"jsonrpc":"2.0","id":<id>,"method":METHOD,"params":PARAMS}` + newline.
    pub fn new(method: &str, params: &Value) -> Template {
        let mut post = format!(",\"method\":{}", Value::from(method)).into_bytes();
        post.extend_from_slice(b",\"params\":");
        post.extend_from_slice(params.to_string().as_bytes());
        post.extend_from_slice(b"}\n");
        Template {
            pre: b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec(),
            post,
        }
    }

    /// `tools/call` of `tool` with `arguments`.
    pub fn call(tool: &str, arguments: &Value) -> Template {
        Template::new(
            "tools/call",
            &serde_json::json!({"name": tool, "arguments": arguments}),
        )
    }

    fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.pre);
        out.extend_from_slice(id.to_string().as_bytes());
        out.extend_from_slice(&self.post);
    }
}

/// The top-level id of an answer (see the module doc), if it has a numeric one.
pub fn answer_id(line: &[u8]) -> Option<u64> {
    let at = memmem::find(line, b"\"id\":")? + 5;
    let digits = line[at..]
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| b.is_ascii_digit());
    let mut n: u64 = 0;
    let mut any = false;
    for d in digits {
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        any = true;
    }
    any.then_some(n)
}

/// Whether an answer is a JSON-RPC error or a tool error.
pub fn is_failure(line: &[u8]) -> bool {
    memmem::find(line, b"\"isError\":true").is_some()
        || memmem::find(line, b"\"error\":{").is_some()
}

/// A running server and the client's end of its pipes.
pub struct Peer {
    /// Its name.
    pub name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    line: Vec<u8>,
    wbuf: Vec<u8>,
    next_id: u64,
}

impl Peer {
    /// Start the server (not yet initialised).
    pub fn spawn(spec: &Spec) -> io::Result<Peer> {
        let mut child = spec.command().spawn()?;
        let stdin = child.stdin.take();
        let out = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        Ok(Peer {
            name: spec.name.clone(),
            child,
            stdin,
            out: BufReader::with_capacity(1 << 18, out),
            line: Vec::with_capacity(1 << 17),
            wbuf: Vec::with_capacity(1024),
            next_id: 1,
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, t: &Template, id: u64) -> io::Result<()> {
        t.write(id, &mut self.wbuf);
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::other("closed"))?;
        stdin.write_all(&self.wbuf)?;
        stdin.flush()
    }

    fn send_raw(&mut self, text: &str) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::other("closed"))?;
        stdin.write_all(text.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// Read the next line; `Err` at end of output.
    fn read_line(&mut self) -> io::Result<()> {
        self.line.clear();
        let n = self.out.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} closed its output", self.name),
            ));
        }
        Ok(())
    }

    /// Send one request and wait for the answer with its id (lines without
    /// one, such as notifications, are skipped). Returns the raw answer.
    pub fn call(&mut self, t: &Template) -> io::Result<&[u8]> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(t, id)?;
        loop {
            self.read_line()?;
            if answer_id(&self.line) == Some(id) {
                return Ok(&self.line);
            }
        }
    }

    /// [`Peer::call`], then parse the whole answer, check that the fast id
    /// search agrees with the parsed id, and that it is a success.
    pub fn call_checked(&mut self, t: &Template) -> io::Result<Value> {
        let id = self.next_id;
        let name = self.name.clone();
        let raw = self.call(t)?.to_vec();
        let v: Value = serde_json::from_slice(&raw)
            .map_err(|e| io::Error::other(format!("{name}: answer is not JSON: {e}")))?;
        if v.get("id").and_then(Value::as_u64) != Some(id) {
            return Err(io::Error::other(format!("{name}: id mismatch")));
        }
        if v.get("error").is_some()
            || v["result"]["isError"] == Value::Bool(true)
            || is_failure(&raw)
        {
            let shown: String = String::from_utf8_lossy(&raw).chars().take(400).collect();
            return Err(io::Error::other(format!("{name}: failed: {shown}")));
        }
        Ok(v)
    }

    /// The legacy handshake: `initialize`, its answer, `notifications/initialized`.
    pub fn initialize(&mut self) -> io::Result<()> {
        let init = Template::new(
            "initialize",
            &serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "moat-bench", "version": "0"}
            }),
        );
        self.call(&init)?;
        self.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
    }

    /// Run `t` with `in_flight` requests outstanding until `max_n` are
    /// answered or `max_time` has passed (then the outstanding ones finish).
    /// Every answer must be a success.
    pub fn batch(
        &mut self,
        t: &Template,
        in_flight: usize,
        max_n: usize,
        max_time: Duration,
    ) -> io::Result<Batch> {
        let base = self.next_id;
        let mut sent_at: Vec<Option<Instant>> = vec![None; max_n];
        let mut lat = Vec::with_capacity(max_n);
        let start = Instant::now();
        let deadline = start + max_time;
        let mut sent = 0usize;
        while sent < in_flight.min(max_n) {
            sent_at[sent] = Some(Instant::now());
            self.send(t, base + sent as u64)?;
            sent += 1;
        }
        let mut done = 0usize;
        while done < sent {
            self.read_line()?;
            let Some(id) = answer_id(&self.line) else {
                continue;
            };
            let now = Instant::now();
            let idx = id
                .checked_sub(base)
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| *i < sent)
                .ok_or_else(|| io::Error::other(format!("{}: unexpected id {id}", self.name)))?;
            let at = sent_at[idx]
                .take()
                .ok_or_else(|| io::Error::other(format!("{}: id {id} twice", self.name)))?;
            if is_failure(&self.line) {
                let shown: String = String::from_utf8_lossy(&self.line)
                    .chars()
                    .take(400)
                    .collect();
                return Err(io::Error::other(format!("{}: failed: {shown}", self.name)));
            }
            lat.push((now - at).as_secs_f64() * 1000.0);
            done += 1;
            if sent < max_n && now < deadline {
                sent_at[sent] = Some(Instant::now());
                self.send(t, base + sent as u64)?;
                sent += 1;
            }
        }
        let wall = start.elapsed();
        self.next_id = base + sent as u64;
        Ok(Batch::from_latencies(lat, wall))
    }

    /// Close stdin and wait for the exit (killed after `wait`).
    pub fn close(mut self, wait: Duration) {
        drop(self.stdin.take());
        let until = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(2)),
                Ok(None) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One cold start: spawn → `initialize` answered → `tools/list` answered →
/// the first `call` answered. Returns (ms to the tools/list answer, ms to the
/// first tool answer).
pub fn cold_start(spec: &Spec, call: &Template) -> io::Result<(f64, f64)> {
    let t0 = Instant::now();
    let mut peer = Peer::spawn(spec)?;
    peer.initialize()?;
    peer.call(&Template::new("tools/list", &serde_json::json!({})))?;
    let list = t0.elapsed().as_secs_f64() * 1000.0;
    let answer = peer.call(call)?;
    if is_failure(answer) {
        let shown: String = String::from_utf8_lossy(answer).chars().take(300).collect();
        return Err(io::Error::other(format!(
            "{}: first call failed: {shown}",
            spec.name
        )));
    }
    let first = t0.elapsed().as_secs_f64() * 1000.0;
    peer.close(Duration::from_secs(3));
    Ok((list, first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_where_servers_put_them() {
        assert_eq!(answer_id(br#"{"id":12,"jsonrpc":"2.0"}"#), Some(12));
        assert_eq!(
            answer_id(br#"{"result":{"text":"a \"id\": 5"},"jsonrpc":"2.0","id":7}"#),
            Some(7)
        );
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id": 3,"result":{}}"#),
            Some(3)
        );
        assert_eq!(answer_id(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        let t = Template::call("read_file", &serde_json::json!({"path": "a"}));
        let mut out = Vec::new();
        t.write(42, &mut out);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 42);
        assert_eq!(v["params"]["name"], "read_file");
    }
}

//! MCP over stdio: one JSON-RPC message per line on stdin, one per line on
//! stdout. This module is the only owner of stdout in `serve`.
//!
//! * A line longer than `http.max_request_bytes` (1 MiB by default) is answered
//!   with `-32700` as soon as the cap is crossed, and the rest of it is
//!   drained up to the next newline, so the stream resynchronises without the
//!   line ever being held in memory.
//! * Invalid UTF-8 or JSON: `-32700`; nesting deeper than serde_json's 128
//!   levels is a parse error too.
//! * Reading never waits for a tool slot. Every request that runs a tool
//!   ([`jsonrpc::runs_a_tool`]: `tools/call`, `resources/read`,
//!   `resources/list`, `completion/complete`) runs concurrently off the reader, as many as the admission
//!   ([`crate::supervisor::admission`]) has room for, the rest in arrival
//!   order, and are answered as they finish. Every other message
//!   (`initialize`, `ping`, `tools/list`, notifications such as
//!   `notifications/cancelled`) is answered by the reader itself, in order,
//!   however busy the tool slots are. The reader pauses only when stdout is
//!   not being drained, or when the tool-call lines it has read and not yet
//!   finished reach 16 MiB (back-pressure on tool calls only).
//! * Line framing is linear in the input (see [`LineReader`]).
//! * On end of input, in-flight requests finish and are answered, every
//!   worker is killed and reaped, and the process exits 0.
//! * The answer bytes held for the client are bounded ([`out`]): a tool
//!   call reserves room for its answer before it runs, and a client that
//!   stops reading stdout makes the broker hold at most
//!   `server.max_stdout_bytes`.
//! * stdin and stdout are served by one thread each, with blocking reads and
//!   writes, handing chunks and lines to and from the runtime over bounded
//!   channels (back-pressure is kept). tokio's own stdin/stdout would run
//!   every read and write as a separate task on its blocking pool, two
//!   thread hand-offs per operation; on a small machine those hand-offs were a
//!   large part of a request's latency (bench/peers.sh). Answers that are
//!   ready together leave in one write.

mod out;

use std::io::Read as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;
use tracing::Instrument as _;

use crate::mcp::jsonrpc::{self, RpcError, code};
use crate::mcp::{INLINE_WORK_BYTES, Server, Session, TransportInfo};

/// One unit from the line reader.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (without its newline).
    Data(Vec<u8>),
    /// A line crossed the cap; it is being discarded.
    TooLong,
    /// End of input.
    Eof,
}

/// A newline splitter with a hard cap on line length.
///
/// Framing is linear in the input: a consumed line only moves a start index
/// forward, and the unconsumed rest of the buffer is moved to the front once
/// per read from the source, never once per line (removing each line from
/// the front would copy the rest of the buffer per line: quadratic in a
/// read full of short or blank lines).
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Where the first unconsumed byte is.
    start: usize,
    /// Bytes from `start` up to here hold no newline.
    scanned: usize,
    cap: usize,
    discarding: bool,
    eof: bool,
    moved: u64,
    skip_blank: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Wrap `inner` with a line cap of `cap` bytes.
    pub fn new(inner: R, cap: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(64 * 1024),
            start: 0,
            scanned: 0,
            cap,
            discarding: false,
            eof: false,
            moved: 0,
            skip_blank: false,
        }
    }

    /// Pass over blank lines (`\n`, `\r\n`) without returning them: a run
    /// of them is consumed in one tight pass rather than one line at a time.
    #[must_use]
    pub fn skipping_blank_lines(mut self) -> Self {
        self.skip_blank = true;
        self
    }

    /// Bytes moved inside the buffer so far by compaction (lines handed out
    /// are not counted): at most the input's length, whatever its lines.
    #[cfg(test)]
    #[must_use]
    pub fn bytes_moved(&self) -> u64 {
        self.moved
    }

    fn reset(&mut self) {
        self.buf.clear();
        self.start = 0;
        self.scanned = 0;
    }

    /// The next line, a too-long marker, or end of input.
    pub async fn next_line(&mut self) -> std::io::Result<Line> {
        loop {
            if self.skip_blank && !self.discarding && self.scanned == self.start {
                // At the start of a line: line ends and carriage returns
                // there only make blank lines (or lead a line, where JSON
                // ignores them as whitespace).
                let run = self.buf[self.start..]
                    .iter()
                    .take_while(|b| matches!(b, b'\n' | b'\r'))
                    .count();
                self.start += run;
                self.scanned = self.start;
            }
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + pos;
                let begin = self.start;
                self.start = end + 1;
                self.scanned = self.start;
                if self.discarding {
                    self.discarding = false;
                    continue;
                }
                let mut line = &self.buf[begin..end];
                if let [rest @ .., b'\r'] = line {
                    line = rest;
                }
                if line.len() > self.cap {
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Data(line.to_vec()));
            }
            self.scanned = self.buf.len();
            // A trailing `\r` may be the start of the line's `\r\n`, which is
            // not counted: a line that fits must not be refused because the
            // read ended between the two.
            let held = self.buf.len() - self.start;
            let pending = held - usize::from(held > 0 && self.buf.last() == Some(&b'\r'));
            if self.discarding {
                self.reset();
            } else if pending > self.cap {
                self.reset();
                self.discarding = true;
                return Ok(Line::TooLong);
            }
            if self.eof {
                if self.buf.len() == self.start || self.discarding {
                    return Ok(Line::Eof);
                }
                let line = self.buf[self.start..].to_vec();
                self.reset();
                if line.len() > self.cap {
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Data(line));
            }
            // Compact once per read: the unconsumed rest (no newline in it,
            // under the cap) moves to the front.
            if self.start > 0 {
                let rest = self.buf.len() - self.start;
                self.moved += rest as u64;
                self.buf.copy_within(self.start.., 0);
                self.buf.truncate(rest);
                self.scanned -= self.start;
                self.start = 0;
            }
            // Read straight into the buffer's spare capacity: no zeroed
            // scratch array per read, no copy. The buffer stays bounded: a
            // pending line over the cap was dropped above.
            self.buf.reserve(READ_SPARE);
            let n = self.inner.read_buf(&mut self.buf).await?;
            if n == 0 {
                self.eof = true;
            }
        }
    }
}

/// Spare room made in a [`LineReader`]'s buffer before each read.
const READ_SPARE: usize = 64 * 1024;

/// Chunks of stdin read ahead by the reader thread.
const READ_AHEAD_CHUNKS: usize = 4;

/// Size of one read from stdin.
const READ_CHUNK: usize = 64 * 1024;

/// stdin as an [`AsyncRead`], read by a dedicated thread (see the module
/// docs). End of input, or a read error, is end of stream.
#[derive(Debug)]
pub struct ThreadedStdin {
    rx: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl ThreadedStdin {
    /// Start the reader thread.
    pub fn start() -> std::io::Result<ThreadedStdin> {
        let (tx, rx) = mpsc::channel::<Vec<u8>>(READ_AHEAD_CHUNKS);
        std::thread::Builder::new()
            .name("moat-stdin".into())
            .spawn(move || {
                let mut stdin = std::io::stdin().lock();
                let mut buf = vec![0u8; READ_CHUNK];
                loop {
                    match stdin.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => {
                            if tx.blocking_send(buf[..n].to_vec()).is_err() {
                                return;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => return,
                    }
                }
            })?;
        Ok(ThreadedStdin {
            rx,
            chunk: Vec::new(),
            at: 0,
        })
    }
}

impl AsyncRead for ThreadedStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at >= self.chunk.len() {
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => {
                    self.chunk = chunk;
                    self.at = 0;
                }
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = buf.remaining().min(self.chunk.len() - self.at);
        let at = self.at;
        buf.put_slice(&self.chunk[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

/// Whether a message takes a place among the admitted tool calls (and so is
/// run off the reader, concurrently with other calls). Everything else is
/// answered by the reader itself, in order, at once.
fn takes_a_slot(msg: &jsonrpc::Message) -> bool {
    jsonrpc::runs_a_tool(msg)
}

/// Bytes of tool-call lines read but not yet finished. Past it the reader
/// stops reading (back-pressure, on tool calls only: the client has this
/// much work outstanding already).
const MAX_PENDING_CALL_BYTES: usize = 16 << 20;

/// Serve MCP on stdin/stdout until end of input. Returns the exit code.
pub async fn serve(server: Arc<Server>) -> i32 {
    let cap = usize::try_from(server.config().http.max_request_bytes).unwrap_or(1 << 20);
    let config = server.config();
    let started = ThreadedStdin::start().and_then(|stdin| {
        out::Stdout::start(
            config.server.max_stdout_bytes,
            config.server.max_answer_bytes,
        )
        .map(|(out, writer)| (out, writer, stdin))
    });
    let (tx, writer, stdin) = match started {
        Ok(started) => started,
        Err(e) => {
            tracing::error!(error = %e, "stdio.failed");
            server.executor().shutdown().await;
            return 1;
        }
    };
    tracing::info!(workspace = %server.config().sandbox.workspace.display(), mode = server.config().sandbox.mode.as_str(), tools = server.registry().len(), "stdio.started");

    let session = Arc::new(Session::default());
    // Tool calls go to the dispatcher, which runs as many at once as the
    // admission has room for (so a pipelining client's calls wait their
    // turn here rather than being refused), and the rest in arrival order.
    // What they may hold in memory meanwhile is bounded in bytes.
    let pending_bytes = Arc::new(Semaphore::new(MAX_PENDING_CALL_BYTES));
    let (calls_tx, calls_rx) = mpsc::unbounded_channel::<Call>();
    let dispatcher = tokio::spawn(dispatch(
        Arc::clone(&server),
        Arc::clone(&session),
        calls_rx,
        tx.clone(),
    ));
    let mut reader = LineReader::new(stdin, cap).skipping_blank_lines();
    loop {
        let line = match reader.next_line().await {
            Ok(Line::Data(l)) => l,
            Ok(Line::TooLong) => {
                let e = RpcError::new(
                    None,
                    code::PARSE_ERROR,
                    format!("parse error: the line exceeds the {cap}-byte line limit"),
                );
                crate::logging::request_span().in_scope(|| refused(&e, ""));
                tx.send(e.to_reply().encode()).await;
                continue;
            }
            Ok(Line::Eof) | Err(_) => break,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let span = crate::logging::request_span();
        let msg = match jsonrpc::parse(&line) {
            Ok(m) => m,
            Err(e) => {
                span.in_scope(|| refused(&e, &jsonrpc::method_hint(&line)));
                tx.send(e.to_reply().encode()).await;
                continue;
            }
        };
        if jsonrpc::runs_nothing(&msg) {
            // A request sent as a notification: it cannot be answered, so
            // it is not run (and holds nothing).
            span.in_scope(|| server.refuse_notification(&msg, &session, TransportInfo::default()));
            continue;
        }
        if !takes_a_slot(&msg) {
            // initialize, ping, tools/list, server/discover, notifications
            // (cancellations among them), errors: answered here, in order,
            // never behind a tool call. None of them waits on anything a
            // tool call holds.
            let answer = server
                .handle(msg, &session, TransportInfo::default())
                .instrument(span)
                .await;
            if let Some(v) = answer {
                tx.send(v.encode()).await;
            }
            continue;
        }
        let weight = u32::try_from(line.len().clamp(1, MAX_PENDING_CALL_BYTES)).unwrap_or(u32::MAX);
        let Ok(held) = Arc::clone(&pending_bytes).acquire_many_owned(weight).await else {
            break;
        };
        // Noted as in flight from now: a cancel that arrives while the call
        // still waits for a slot stops it before it reaches a worker.
        let cancel = msg.id.as_ref().map(|id| session.begin_call(id));
        if calls_tx
            .send(Call {
                msg,
                held,
                span,
                cancel,
            })
            .is_err()
        {
            break;
        }
    }
    drop(calls_tx);
    let _ = dispatcher.await;
    drop(tx);
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    server.executor().shutdown().await;
    tracing::info!("stdio.closed");
    0
}

/// A line refused before it reached the server core (not JSON, not a
/// JSON-RPC request, too long): logged once as `rpc.error`, as the core
/// logs its own errors.
fn refused(e: &RpcError, method: &str) {
    if let Some(id) = &e.id {
        crate::logging::record_rpc_id(id);
    }
    tracing::warn!(method, code = e.code, error_message = %e.message, "rpc.error");
}

/// A tool call read from stdin, on its way to a slot.
struct Call {
    msg: jsonrpc::Message,
    /// Its share of the bytes of calls read and not finished.
    held: OwnedSemaphorePermit,
    span: tracing::Span,
    /// Fires when the client cancels it (`None`: it has no id to cancel by).
    cancel: Option<Arc<tokio::sync::Notify>>,
}

/// Run tool calls as the admission has room, in arrival order; at end of
/// input, finish every one and answer it. A call the client cancels is
/// dropped where it is: waiting, it never runs; running, its worker is
/// killed and replaced (dropping the call does that), and no answer is sent
/// for it.
async fn dispatch(
    server: Arc<Server>,
    session: Arc<Session>,
    mut calls: mpsc::UnboundedReceiver<Call>,
    tx: out::Stdout,
) {
    let slots = Arc::new(Semaphore::new(server.admission().capacity()));
    let mut tasks = JoinSet::new();
    while let Some(Call {
        msg,
        held,
        span,
        cancel,
    }) = calls.recv().await
    {
        while tasks.try_join_next().is_some() {}
        // Room for its answer first: while answers wait for a client that
        // does not read them, no more calls run.
        let Some(room) = tx.reserve().await else {
            break;
        };
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        let server = Arc::clone(&server);
        let session = Arc::clone(&session);
        let tx = tx.clone();
        let call = async move {
            let id = msg.id.clone();
            // Progress a call asked for goes out on stdout with the answers.
            let handled = crate::mcp::NOTIFY.scope(
                tx.notes(),
                server.handle(msg.clone(), &session, TransportInfo::default()),
            );
            let answer = match cancel {
                Some(cancel) => {
                    tokio::select! {
                        biased;
                        () = cancel.notified() => {
                            server.record_cancelled(&msg, &session);
                            None
                        }
                        v = handled => v,
                    }
                }
                None => handled.await,
            };
            if let Some(id) = &id {
                session.end_call(id);
            }
            if let Some(v) = answer {
                // Held at its size from now until it is written.
                let len = v.encoded_len();
                let room = tx.fit(room, len).await;
                // Encoding a large answer is CPU work: off the (single)
                // runtime thread, which also reads and answers control
                // messages. A small one is encoded here: the hand-off to a
                // thread and back would cost more.
                let small = crate::mcp::answer_text_bytes(v.body()) <= INLINE_WORK_BYTES / 2;
                // Written into a buffer of exactly its size: a large answer
                // is never copied as its buffer grows.
                let encode = move || {
                    let mut line = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
                    v.encode_into(&mut line);
                    line
                };
                let line = if small {
                    Ok(encode())
                } else {
                    tokio::task::spawn_blocking(encode).await
                };
                if let Ok(line) = line {
                    tx.send_held(line, room).await;
                }
            }
            drop(slot);
            drop(held);
        };
        tasks.spawn(call.instrument(span));
    }
    while tasks.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], cap: usize) -> Vec<Line> {
        let mut r = LineReader::new(input, cap);
        let mut out = Vec::new();
        loop {
            let l = r.next_line().await.unwrap();
            let done = l == Line::Eof;
            out.push(l);
            if done {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn splits_caps_and_resyncs() {
        let got = lines(b"a\r\nbb\n\nccc", 2).await;
        assert_eq!(
            got,
            vec![
                Line::Data(b"a".to_vec()),
                Line::Data(b"bb".to_vec()),
                Line::Data(vec![]),
                Line::TooLong,
                Line::Eof
            ]
        );
        let mut input = vec![b'x'; 300_000];
        input.extend_from_slice(b"\nok\n");
        let got = lines(&input, 64).await;
        assert_eq!(
            got,
            vec![Line::TooLong, Line::Data(b"ok".to_vec()), Line::Eof]
        );
    }

    // See: fuzz/stdio_framer, first finding. A line of exactly the cap ending
    // in `\r\n` was refused when a read ended between the `\r` and the `\n`
    // (the `\r` was counted against the cap), and accepted otherwise.
    #[test]
    fn r_fuzz_crlf_split_across_reads_at_the_cap() {
        use crate::fuzzing::read_lines;
        for chunks in [&[][..], &[1], &[3], &[200]] {
            assert_eq!(
                read_lines(b"\r\n", 0, chunks).unwrap(),
                vec![Line::Data(vec![]), Line::Eof],
                "{chunks:?}"
            );
            assert_eq!(
                read_lines(b"ab\r\ncd", 2, chunks).unwrap(),
                vec![
                    Line::Data(b"ab".to_vec()),
                    Line::Data(b"cd".to_vec()),
                    Line::Eof
                ],
                "{chunks:?}"
            );
            // Unterminated, the `\r` is part of the line and counts.
            assert_eq!(
                read_lines(b"ab\r", 2, chunks).unwrap(),
                vec![Line::TooLong, Line::Eof],
                "{chunks:?}"
            );
        }
    }

    #[test]
    fn framing_moves_each_byte_at_most_once_however_many_lines() {
        // 4 MiB of blank lines, read 64 KiB at a time: removing each line
        // from the front of the buffer would move ~(4 MiB)^2 / 2 bytes in
        // all; compacting once per read moves at most the input.
        use std::pin::pin;
        use std::task::{Context, Waker};
        struct Chunks<'a>(&'a [u8]);
        impl AsyncRead for Chunks<'_> {
            fn poll_read(
                mut self: Pin<&mut Self>,
                _cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<std::io::Result<()>> {
                let n = buf.remaining().min(self.0.len()).min(READ_CHUNK);
                buf.put_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Poll::Ready(Ok(()))
            }
        }
        let mut input = vec![b'\n'; 4 << 20];
        input.extend_from_slice(b"{\"tail\":1}");
        let mut r = LineReader::new(Chunks(&input), 1 << 20);
        let mut cx = Context::from_waker(Waker::noop());
        let mut blank = 0usize;
        loop {
            let mut next = pin!(r.next_line());
            let Poll::Ready(line) = next.as_mut().poll(&mut cx) else {
                panic!("pending")
            };
            match line.unwrap() {
                Line::Data(l) if l.is_empty() => blank += 1,
                Line::Data(l) => assert_eq!(l, b"{\"tail\":1}"),
                Line::TooLong => panic!("too long"),
                Line::Eof => break,
            }
        }
        assert_eq!(blank, 4 << 20);
        assert!(
            r.bytes_moved() <= input.len() as u64,
            "moved {} bytes for {} of input",
            r.bytes_moved(),
            input.len()
        );
        // A long line split over many reads is moved once per read at most.
        let mut input = vec![b'x'; 900_000];
        input.push(b'\n');
        let mut r = LineReader::new(Chunks(&input), 1 << 20);
        let mut next = pin!(r.next_line());
        let Poll::Ready(line) = next.as_mut().poll(&mut cx) else {
            panic!("pending")
        };
        assert_eq!(line.unwrap(), Line::Data(vec![b'x'; 900_000]));
    }

    #[tokio::test]
    async fn skipping_blank_lines_passes_over_them_and_keeps_the_rest() {
        let mut input = b"\n\r\n\n{\"a\":1}\r\n\n\n".to_vec();
        input.extend_from_slice(&vec![b'\n'; 1 << 20]);
        input.extend_from_slice(b"xyz\n\n");
        let mut r = LineReader::new(&input[..], 4).skipping_blank_lines();
        assert_eq!(r.next_line().await.unwrap(), Line::TooLong);
        assert_eq!(r.next_line().await.unwrap(), Line::Data(b"xyz".to_vec()));
        assert_eq!(r.next_line().await.unwrap(), Line::Eof);
        let mut r = LineReader::new(&input[..], 64).skipping_blank_lines();
        assert_eq!(
            r.next_line().await.unwrap(),
            Line::Data(b"{\"a\":1}".to_vec())
        );
        assert_eq!(r.next_line().await.unwrap(), Line::Data(b"xyz".to_vec()));
        assert_eq!(r.next_line().await.unwrap(), Line::Eof);
    }
}

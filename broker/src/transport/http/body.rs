//! Response bodies: one JSON document, or a `text/event-stream` that carries
//! a call's `notifications/progress` and then its answer.
//!
//! # When an answer is a stream
//!
//! A `tools/call` or `resources/read` whose client accepts
//! `text/event-stream` runs with a channel for notifications. The response
//! head is held back until the first of two things happens:
//!
//! * the answer is ready first (a quick call, a call without a
//!   `progressToken`, a refusal by the admission): it is sent as one JSON
//!   document with its own status, exactly as for a client that accepts
//!   only JSON;
//! * a progress notification is ready first: the response becomes
//!   `200 text/event-stream`; each notification is one `message` event, the
//!   answer the last one, and the stream ends.
//!
//! While streaming, the call runs in a task of its own that this body
//! owns: a client that closes its request drops the body, which aborts the
//! task, and the call's worker is killed as for a closed JSON request.
//! Every event's bytes count against the connection's and the global
//! queued-answer figures ([`super::output`]) from the moment the event is
//! produced until the socket has taken it; an answer that would take the
//! global figure over its bound is replaced by a `server busy` error.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use hyper::body::{Bytes, Frame, SizeHint};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::output::Outbox;
use crate::mcp::jsonrpc::{self, code};

/// Most notifications held for a client that does not read them; a report
/// beyond this is dropped (progress is advisory, the answer is not).
pub const NOTIFICATION_QUEUE: usize = 16;

/// A response body.
pub enum Body {
    /// One document, sent whole (`None` once it has been).
    Full(Option<Bytes>),
    /// An event stream.
    Stream(Box<EventStream>),
}

impl Body {
    /// A whole-document body.
    pub fn full(bytes: impl Into<Bytes>) -> Body {
        let b: Bytes = bytes.into();
        Body::Full((!b.is_empty()).then_some(b))
    }

    /// Whether this body is an event stream.
    pub fn is_stream(&self) -> bool {
        matches!(self, Body::Stream(_))
    }

    /// For a stream: count its events on `outbox`, and call `done` once it
    /// has ended or been dropped (the connection then waits for its next
    /// request head). A whole-document body ignores both.
    pub fn attach(&mut self, outbox: Arc<Outbox>, done: Box<dyn FnOnce() + Send + Sync>) {
        if let Body::Stream(s) = self {
            s.outbox = Some(outbox);
            s.done = Some(done);
        }
    }
}

/// A call running in its own task, aborted when dropped.
pub struct Call(JoinHandle<Option<Value>>);

impl Call {
    /// Run `fut` in a task of its own.
    pub fn spawn(fut: impl Future<Output = Option<Value>> + Send + 'static) -> Call {
        Call(tokio::spawn(fut))
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Future for Call {
    type Output = Option<Value>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Value>> {
        // A task that panicked or was aborted has no answer.
        Pin::new(&mut self.0).poll(cx).map(|r| r.ok().flatten())
    }
}

/// The events of a streamed call: notifications as they come, then the
/// answer.
pub struct EventStream {
    call: Option<Call>,
    /// The request's id, for an answer the call could not give.
    id: Value,
    notes: mpsc::Receiver<Vec<u8>>,
    ready: VecDeque<Bytes>,
    /// The global queued-answer figure and its bound.
    global: Arc<AtomicU64>,
    max_queued: u64,
    outbox: Option<Arc<Outbox>>,
    done: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl EventStream {
    /// A stream whose first event is `first`, then the rest of `notes`,
    /// then `call`'s answer.
    pub fn new(
        first: &[u8],
        notes: mpsc::Receiver<Vec<u8>>,
        call: Call,
        id: Value,
        global: Arc<AtomicU64>,
        max_queued: u64,
    ) -> EventStream {
        EventStream {
            call: Some(call),
            id,
            notes,
            ready: VecDeque::from([event(first)]),
            global,
            max_queued,
            outbox: None,
            done: None,
        }
    }

    /// The answer's event; one that would take the bytes waiting for
    /// clients over their bound becomes a `server busy` error for the same
    /// id.
    fn answer(&self, reply: Option<Value>) -> Bytes {
        let reply = reply.unwrap_or_else(|| {
            json!({"jsonrpc": "2.0", "id": self.id, "error": {
                "code": code::INTERNAL_ERROR, "message": "internal error: no response"}})
        });
        let ev = event(&jsonrpc::encode(&reply));
        if self.global.load(Ordering::SeqCst) + ev.len() as u64 > self.max_queued {
            tracing::warn!(reason = "answer_dropped", bytes = ev.len(), "http.refused");
            let busy = json!({"jsonrpc": "2.0", "id": self.id,
                "error": {"code": code::INTERNAL_ERROR,
                    "message": "server busy: too many answers are waiting for their clients"}});
            return event(&jsonrpc::encode(&busy));
        }
        ev
    }

    fn finish(&mut self) {
        if let Some(done) = self.done.take() {
            done();
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One SSE `message` event carrying one JSON-RPC message (which holds no
/// newline: JSON strings escape them).
fn event(json: &[u8]) -> Bytes {
    let json = json.strip_suffix(b"\n").unwrap_or(json);
    let mut out = Vec::with_capacity(json.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(s) => s.poll_event(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Full(b) => b.is_none(),
            Body::Stream(s) => s.call.is_none() && s.ready.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

impl EventStream {
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            if let Some(ev) = self.ready.pop_front() {
                if let Some(o) = &self.outbox {
                    o.queue(ev.len() as u64);
                }
                return Poll::Ready(Some(ev));
            }
            let Some(call) = self.call.as_mut() else {
                self.finish();
                return Poll::Ready(None);
            };
            if let Poll::Ready(Some(note)) = self.notes.poll_recv(cx) {
                self.ready.push_back(event(&note));
                continue;
            }
            match Pin::new(call).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(reply) => {
                    self.call = None;
                    // Notifications sent before the answer go first.
                    while let Ok(note) = self.notes.try_recv() {
                        self.ready.push_back(event(&note));
                    }
                    let ev = self.answer(reply);
                    self.ready.push_back(ev);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    #[tokio::test]
    async fn a_stream_carries_its_notifications_then_the_answer_and_ends() {
        let (tx, rx) = mpsc::channel(NOTIFICATION_QUEUE);
        let call = Call::spawn(async move {
            let _ = tx.send(b"{\"n\":2}".to_vec()).await;
            Some(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
        });
        let global = Arc::new(AtomicU64::new(0));
        let s = EventStream::new(
            b"{\"n\":1}\n",
            rx,
            call,
            json!(1),
            Arc::clone(&global),
            u64::MAX,
        );
        let body = Body::Stream(Box::new(s));
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap_or(""),
            "event: message\ndata: {\"n\":1}\n\nevent: message\ndata: {\"n\":2}\n\n\
             event: message\ndata: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n\n"
        );
    }

    #[tokio::test]
    async fn dropping_the_stream_aborts_its_call_and_reports_the_end() {
        let (_tx, rx) = mpsc::channel(NOTIFICATION_QUEUE);
        let (alive_tx, alive_rx) = tokio::sync::oneshot::channel::<()>();
        let call = Call::spawn(async move {
            let _alive = alive_tx;
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            None
        });
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut body = Body::Stream(Box::new(EventStream::new(
            b"{}",
            rx,
            call,
            json!(1),
            Arc::new(AtomicU64::new(0)),
            u64::MAX,
        )));
        let flag = Arc::clone(&ended);
        body.attach(
            Arc::new(Outbox::new(Arc::new(AtomicU64::new(0)))),
            Box::new(move || flag.store(true, Ordering::SeqCst)),
        );
        drop(body);
        assert!(ended.load(Ordering::SeqCst));
        // The task was aborted: its end of the channel is dropped.
        assert!(alive_rx.await.is_err());
    }
}

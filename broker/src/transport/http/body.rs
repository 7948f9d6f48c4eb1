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
//! answer figures ([`super::output`]) from the moment the event is produced
//! until the buffer that holds it is dropped; an answer that would take the
//! global figure over its bound is replaced by a `server busy` error before
//! it is encoded.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::{Bytes, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::output::{Outbox, counted};
use crate::mcp::jsonrpc::{Id, Reply, RpcError, code};

/// Most notifications held for a client that does not read them; a report
/// beyond this is dropped (progress is advisory, the answer is not).
pub const NOTIFICATION_QUEUE: usize = 16;

/// A response body.
pub enum Body {
    /// One document, sent whole (`None` once it has been). Its bytes are
    /// counted once the connection takes it (see `super::serve_on`), unless
    /// they were counted when it was made ([`Body::Counted`]).
    Full(Option<Bytes>),
    /// One document whose buffer already counts its bytes.
    Counted(Option<Bytes>),
    /// An event stream.
    Stream(Box<EventStream>),
}

impl Body {
    /// A whole-document body.
    pub fn full(bytes: impl Into<Bytes>) -> Body {
        let b: Bytes = bytes.into();
        Body::Full((!b.is_empty()).then_some(b))
    }

    /// A whole-document body whose buffer already counts its bytes
    /// ([`counted`]).
    pub fn counted(bytes: Bytes) -> Body {
        Body::Counted((!bytes.is_empty()).then_some(bytes))
    }

    /// A whole-document body not yet counted: counted now on `outbox`.
    pub fn count_on(&mut self, outbox: &Arc<Outbox>) {
        if let Body::Full(b) = self {
            let bytes = b.take().map(|b| {
                let held = outbox.hold(b.len() as u64);
                counted(b.to_vec(), held)
            });
            *self = Body::Counted(bytes);
        }
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
pub struct Call(JoinHandle<Option<Reply>>);

impl Call {
    /// Run `fut` in a task of its own.
    pub fn spawn(fut: impl Future<Output = Option<Reply>> + Send + 'static) -> Call {
        Call(tokio::spawn(fut))
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Future for Call {
    type Output = Option<Reply>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Reply>> {
        // A task that panicked or was aborted has no answer.
        Pin::new(&mut self.0).poll(cx).map(|r| r.ok().flatten())
    }
}

/// The events of a streamed call: notifications as they come, then the
/// answer.
pub struct EventStream {
    call: Option<Call>,
    /// The request's id, for an answer the call could not give.
    id: Option<Id>,
    notes: mpsc::Receiver<Vec<u8>>,
    /// Events made and not yet sent (counted once the outbox is attached).
    ready: VecDeque<Vec<u8>>,
    /// The answer, once the call has given it.
    answer: Option<Reply>,
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
        id: Option<Id>,
    ) -> EventStream {
        EventStream {
            call: Some(call),
            id,
            notes,
            ready: VecDeque::from([event(first)]),
            answer: None,
            outbox: None,
            done: None,
        }
    }

    /// The answer's event, counted on `outbox` before it is encoded; one
    /// that would take the answers held for clients over their bound
    /// becomes a `server busy` error for the same id.
    fn answer_event(&self, reply: Option<Reply>, outbox: &Arc<Outbox>) -> Bytes {
        let reply = reply.unwrap_or_else(|| {
            RpcError::new(
                self.id.clone(),
                code::INTERNAL_ERROR,
                "internal error: no response",
            )
            .to_reply()
        });
        let len = reply.encoded_len() + EVENT_FRAMING;
        if let Some(held) = outbox.try_hold(len) {
            let mut ev = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            ev.extend_from_slice(EVENT_START);
            reply.encode_into(&mut ev);
            ev.extend_from_slice(EVENT_END);
            return counted(ev, held);
        }
        tracing::warn!(reason = "answer_dropped", bytes = len, "http.refused");
        let busy = RpcError::new(
            self.id.clone(),
            code::INTERNAL_ERROR,
            "server busy: too many answers are waiting for their clients",
        )
        .to_reply();
        let ev = event(&busy.encode());
        let held = outbox.hold(ev.len() as u64);
        counted(ev, held)
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

/// What [`event`] writes before a message.
const EVENT_START: &[u8] = b"event: message\ndata: ";
/// What [`event`] writes after a message.
const EVENT_END: &[u8] = b"\n\n";
/// What [`event`] adds to a message.
const EVENT_FRAMING: u64 = (EVENT_START.len() + EVENT_END.len()) as u64;

/// One SSE `message` event carrying one JSON-RPC message (which holds no
/// newline: JSON strings escape them).
fn event(json: &[u8]) -> Vec<u8> {
    let json = json.strip_suffix(b"\n").unwrap_or(json);
    let mut out = Vec::with_capacity(json.len() + EVENT_FRAMING as usize);
    out.extend_from_slice(EVENT_START);
    out.extend_from_slice(json);
    out.extend_from_slice(EVENT_END);
    out
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(b) | Body::Counted(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(s) => s.poll_event(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Full(b) | Body::Counted(b) => b.is_none(),
            Body::Stream(s) => s.call.is_none() && s.ready.is_empty() && s.answer.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(b) | Body::Counted(b) => {
                SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64))
            }
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

impl EventStream {
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            if let Some(ev) = self.ready.pop_front() {
                let bytes = match &self.outbox {
                    Some(o) => {
                        let held = o.hold(ev.len() as u64);
                        counted(ev, held)
                    }
                    None => Bytes::from(ev),
                };
                return Poll::Ready(Some(bytes));
            }
            if self.call.is_none() {
                let answer = self.answer.take();
                return match (answer, &self.outbox) {
                    (Some(reply), Some(o)) => Poll::Ready(Some(self.answer_event(Some(reply), o))),
                    (Some(reply), None) => Poll::Ready(Some(Bytes::from(event(&reply.encode())))),
                    (None, _) => {
                        self.finish();
                        Poll::Ready(None)
                    }
                };
            }
            if let Poll::Ready(Some(note)) = self.notes.poll_recv(cx) {
                self.ready.push_back(event(&note));
                continue;
            }
            let Some(call) = self.call.as_mut() else {
                continue;
            };
            match Pin::new(call).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(reply) => {
                    self.call = None;
                    // Notifications sent before the answer go first.
                    while let Ok(note) = self.notes.try_recv() {
                        self.ready.push_back(event(&note));
                    }
                    self.answer = Some(reply.unwrap_or_else(|| {
                        RpcError::new(
                            self.id.clone(),
                            code::INTERNAL_ERROR,
                            "internal error: no response",
                        )
                        .to_reply()
                    }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::output::Total;
    use http_body_util::BodyExt as _;
    use std::sync::atomic::Ordering;

    #[tokio::test]
    async fn a_stream_carries_its_notifications_then_the_answer_and_ends() {
        let (tx, rx) = mpsc::channel(NOTIFICATION_QUEUE);
        let call = Call::spawn(async move {
            let _ = tx.send(b"{\"n\":2}".to_vec()).await;
            Some(Reply::success(
                Id::Number("1".into()),
                serde_json::json!({}),
            ))
        });
        let answers = Total::new(u64::MAX);
        let outbox = Arc::new(Outbox::new(Arc::clone(&answers), Total::new(u64::MAX)));
        let s = EventStream::new(b"{\"n\":1}\n", rx, call, Some(Id::Number("1".into())));
        let mut body = Body::Stream(Box::new(s));
        body.attach(outbox, Box::new(|| {}));
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
        assert_eq!(answers.held(), 0, "every event was given back");
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
            Some(Id::Number("1".into())),
        )));
        let flag = Arc::clone(&ended);
        body.attach(
            Arc::new(Outbox::new(Total::new(u64::MAX), Total::new(u64::MAX))),
            Box::new(move || flag.store(true, Ordering::SeqCst)),
        );
        drop(body);
        assert!(ended.load(Ordering::SeqCst));
        // The task was aborted: its end of the channel is dropped.
        assert!(alive_rx.await.is_err());
    }
}

//! Bytes the broker holds for its HTTP clients, counted per connection and
//! over all connections until no copy of them is left, and a write timeout
//! for clients that do not take their answers.
//!
//! An answer is queued whole before hyper writes it, and the buffer it is
//! in stays in the broker's memory until hyper has written its last byte
//! and dropped it (a buffer partly written is not partly freed). A client
//! that sends a request and never reads the answer would otherwise pin it
//! for as long as it keeps the connection open. So:
//!
//! * every answer is counted from the moment its size is known, before it
//!   is encoded, until the buffer that holds it is dropped: the buffer owns
//!   its [`Held`] share ([`counted`]), so the count falls only when no copy
//!   is left, whatever happened to the connection. A tool call whose answer
//!   would take the total over `http.max_queued_bytes` is answered `503`
//!   instead, before the answer is encoded;
//! * request bodies are counted the same way while they are read, in a
//!   figure of their own with the same bound;
//! * once a write to a connection blocks, the answers held for it must be
//!   taken in full within `http.write_timeout_ms` ([`Guarded`]); past it
//!   the write fails, hyper closes the connection and the answer is freed.
//!   The clock runs from the first blocked write until an answer is
//!   released, so a client that takes a byte now and then does not reset
//!   it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// Bytes held over all connections, and their bound.
#[derive(Debug)]
pub struct Total {
    held: AtomicU64,
    max: u64,
}

impl Total {
    /// A total bounded by `max`.
    #[must_use]
    pub fn new(max: u64) -> Arc<Total> {
        Arc::new(Total {
            held: AtomicU64::new(0),
            max,
        })
    }

    /// Bytes held now.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }

    /// Whether the bound is passed.
    #[must_use]
    pub fn over(&self) -> bool {
        self.held() > self.max
    }

    /// Take `n` more bytes if the total stays within its bound.
    fn try_take(&self, n: u64) -> bool {
        let mut cur = self.held.load(Ordering::SeqCst);
        loop {
            if cur.saturating_add(n) > self.max {
                return false;
            }
            match self
                .held
                .compare_exchange(cur, cur + n, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    fn take(&self, n: u64) {
        self.held.fetch_add(n, Ordering::SeqCst);
    }

    fn give_back(&self, n: u64) {
        self.held.fetch_sub(n, Ordering::SeqCst);
    }
}

/// The bytes held for one connection, and the totals they add to.
#[derive(Debug)]
pub struct Outbox {
    /// Answer bytes held for this connection.
    queued: AtomicU64,
    /// Answers released so far (the write timeout restarts when one is).
    released: AtomicU64,
    answers: Arc<Total>,
    bodies: Arc<Total>,
}

impl Outbox {
    /// A connection's outbox, adding to the answer and body totals.
    #[must_use]
    pub fn new(answers: Arc<Total>, bodies: Arc<Total>) -> Outbox {
        Outbox {
            queued: AtomicU64::new(0),
            released: AtomicU64::new(0),
            answers,
            bodies,
        }
    }

    /// Hold `n` answer bytes if the total stays within its bound.
    #[must_use]
    pub fn try_hold(self: &Arc<Self>, n: u64) -> Option<Held> {
        self.answers.try_take(n).then(|| self.held(n, Kind::Answer))
    }

    /// Hold `n` answer bytes whatever the total (a small answer that must
    /// be sent: a refusal, a control message's answer, a notification).
    #[must_use]
    pub fn hold(self: &Arc<Self>, n: u64) -> Held {
        self.answers.take(n);
        self.held(n, Kind::Answer)
    }

    /// Hold `n` bytes of a request body if their total stays within its
    /// bound.
    #[must_use]
    pub fn try_hold_body(self: &Arc<Self>, n: u64) -> Option<Held> {
        self.bodies.try_take(n).then(|| Held {
            n,
            kind: Kind::Body,
            outbox: Arc::clone(self),
        })
    }

    fn held(self: &Arc<Self>, n: u64, kind: Kind) -> Held {
        self.queued.fetch_add(n, Ordering::SeqCst);
        Held {
            n,
            kind,
            outbox: Arc::clone(self),
        }
    }

    /// Answer bytes held for this connection.
    #[must_use]
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::SeqCst)
    }

    fn released(&self) -> u64 {
        self.released.load(Ordering::SeqCst)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Answer,
    Body,
}

/// A share of the bytes held for a connection, given back when dropped.
#[derive(Debug)]
pub struct Held {
    n: u64,
    kind: Kind,
    outbox: Arc<Outbox>,
}

impl Held {
    /// Grow this share by `n` bytes if the total stays within its bound.
    #[must_use]
    pub fn try_grow(&mut self, n: u64) -> bool {
        let total = match self.kind {
            Kind::Answer => &self.outbox.answers,
            Kind::Body => &self.outbox.bodies,
        };
        if !total.try_take(n) {
            return false;
        }
        if self.kind == Kind::Answer {
            self.outbox.queued.fetch_add(n, Ordering::SeqCst);
        }
        self.n += n;
        true
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        match self.kind {
            Kind::Answer => {
                self.outbox.queued.fetch_sub(self.n, Ordering::SeqCst);
                self.outbox.released.fetch_add(1, Ordering::SeqCst);
                self.outbox.answers.give_back(self.n);
            }
            Kind::Body => self.outbox.bodies.give_back(self.n),
        }
    }
}

/// A buffer that keeps its share counted for as long as it lives.
struct Counted {
    bytes: Vec<u8>,
    _held: Held,
}

impl AsRef<[u8]> for Counted {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// `bytes` as a body buffer that gives `held` back when hyper drops its
/// last copy (after the last byte is written, or with the connection).
#[must_use]
pub fn counted(bytes: Vec<u8>, held: Held) -> Bytes {
    Bytes::from_owner(Counted { bytes, _held: held })
}

/// A connection's stream with the write timeout.
pub struct Guarded<S> {
    inner: S,
    outbox: Arc<Outbox>,
    timeout: Duration,
    /// The running clock, and how many answers had been released when it
    /// started.
    stalled: Option<(Pin<Box<Sleep>>, u64)>,
}

impl<S> Guarded<S> {
    /// Wrap `inner`.
    pub fn new(inner: S, outbox: Arc<Outbox>, timeout: Duration) -> Guarded<S> {
        Guarded {
            inner,
            outbox,
            timeout,
            stalled: None,
        }
    }

    fn after_write(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match r {
            Poll::Ready(Ok(n)) => {
                if self.outbox.queued() == 0 {
                    self.stalled = None;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => {
                let released = self.outbox.released();
                // An answer released since the clock started: the client
                // took it; the clock starts again for the next.
                if self
                    .stalled
                    .as_ref()
                    .is_some_and(|(_, since)| *since != released)
                {
                    self.stalled = None;
                }
                let timeout = self.timeout;
                let (sleep, _) = self
                    .stalled
                    .get_or_insert_with(|| (Box::pin(tokio::time::sleep(timeout)), released));
                if sleep.as_mut().poll(cx).is_ready() {
                    tracing::debug!("http.write_timeout");
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client did not take its answer in time",
                    )));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.after_write(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.after_write(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        // Always: hyper then queues an answer's buffer as it is instead of
        // copying it into a flat buffer of its own, a copy the count
        // would not see.
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outbox(max: u64) -> (Arc<Total>, Arc<Outbox>) {
        let answers = Total::new(max);
        let outbox = Arc::new(Outbox::new(Arc::clone(&answers), Total::new(max)));
        (answers, outbox)
    }

    #[test]
    fn an_answer_is_counted_until_its_last_copy_is_dropped() {
        let (total, a) = outbox(1000);
        let b = Arc::new(Outbox::new(Arc::clone(&total), Total::new(1000)));
        let bytes = counted(vec![7; 100], a.try_hold(100).unwrap());
        let other = counted(vec![7; 50], b.try_hold(50).unwrap());
        assert_eq!(total.held(), 150);
        // Written in part: a slice of the buffer still holds all of it.
        let rest = bytes.slice(60..);
        drop(bytes);
        assert_eq!(a.queued(), 100);
        drop(rest);
        assert_eq!(a.queued(), 0);
        assert_eq!(total.held(), 50);
        drop(other);
        assert_eq!(total.held(), 0);
    }

    #[test]
    fn beyond_the_bound_nothing_more_is_held_unless_it_must_be() {
        let (total, a) = outbox(100);
        let first = a.try_hold(80).unwrap();
        assert!(a.try_hold(30).is_none());
        let small = a.hold(30);
        assert!(total.over());
        drop((first, small));
        assert_eq!(total.held(), 0);
        let mut body = a.try_hold_body(60).unwrap();
        assert!(!body.try_grow(50));
        assert!(body.try_grow(40));
        assert!(a.try_hold_body(1).is_none());
        drop(body);
        assert!(a.try_hold_body(100).is_some());
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_is_cut_off_at_the_write_timeout() {
        use tokio::io::AsyncWriteExt;
        let (client, server) = tokio::io::duplex(1024);
        let (total, outbox) = outbox(u64::MAX);
        let held = outbox.hold(1 << 20);
        let mut g = Guarded::new(server, Arc::clone(&outbox), Duration::from_millis(100));
        let err = tokio::time::timeout(Duration::from_secs(10), g.write_all(&vec![0u8; 1 << 20]))
            .await
            .expect("the write timeout fired")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(g);
        drop(held);
        drop(outbox);
        assert_eq!(total.held(), 0);
        drop(client);
    }
}

//! Answer bytes waiting for their clients: counted per connection and over
//! all connections, and a write timeout for clients that do not take them.
//!
//! An answer is queued in full before hyper writes it, and stays in the
//! broker's memory until the kernel has taken it. A client that sends a
//! request and never reads the answer would otherwise pin it for as long as
//! it keeps the connection open. So:
//!
//! * every answer's bytes are counted on its connection and in a global
//!   figure until they have been written to the socket ([`Outbox`]); a tool
//!   call whose answer would take the global figure over
//!   `http.max_queued_bytes` is answered `503` instead;
//! * once a write to a connection blocks, the answer queued on it must be
//!   taken in full within `http.write_timeout_ms` ([`Guarded`]); past it the
//!   write fails, hyper closes the connection and the answer is freed. (The
//!   clock runs from the first blocked write until the connection's queue is
//!   empty, so a client that takes a byte now and then does not reset it.)

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// Answer bytes queued on one connection, and the global figure it adds to.
#[derive(Debug)]
pub struct Outbox {
    queued: AtomicU64,
    global: Arc<AtomicU64>,
}

impl Outbox {
    /// A connection's outbox, adding to `global`.
    #[must_use]
    pub fn new(global: Arc<AtomicU64>) -> Outbox {
        Outbox {
            queued: AtomicU64::new(0),
            global,
        }
    }

    /// `n` answer bytes are queued on this connection.
    pub fn queue(&self, n: u64) {
        self.queued.fetch_add(n, Ordering::SeqCst);
        self.global.fetch_add(n, Ordering::SeqCst);
    }

    /// `n` bytes were written to the socket: they leave the count (header
    /// bytes count against the body; the figure never goes below zero).
    fn written(&self, n: u64) {
        let mut cur = self.queued.load(Ordering::SeqCst);
        loop {
            let take = cur.min(n);
            match self
                .queued
                .compare_exchange(cur, cur - take, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    self.global.fetch_sub(take, Ordering::SeqCst);
                    return;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// Bytes queued on this connection.
    #[must_use]
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::SeqCst)
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        // A closed connection's unsent answer is freed with it.
        let left = self.queued.swap(0, Ordering::SeqCst);
        self.global.fetch_sub(left, Ordering::SeqCst);
    }
}

/// A connection's stream with byte accounting and the write timeout.
pub struct Guarded<S> {
    inner: S,
    outbox: Arc<Outbox>,
    timeout: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
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
                self.outbox.written(n as u64);
                if self.outbox.queued() == 0 {
                    self.stalled = None;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let sleep = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
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
        self.inner.is_write_vectored()
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

    #[test]
    fn bytes_leave_the_count_when_written_and_when_the_connection_closes() {
        let global = Arc::new(AtomicU64::new(0));
        let a = Outbox::new(Arc::clone(&global));
        let b = Outbox::new(Arc::clone(&global));
        a.queue(100);
        b.queue(50);
        assert_eq!(global.load(Ordering::SeqCst), 150);
        a.written(30);
        assert_eq!(a.queued(), 70);
        a.written(1000);
        assert_eq!(a.queued(), 0);
        assert_eq!(global.load(Ordering::SeqCst), 50);
        drop(b);
        assert_eq!(global.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_is_cut_off_at_the_write_timeout() {
        use tokio::io::AsyncWriteExt;
        let (client, server) = tokio::io::duplex(1024);
        let global = Arc::new(AtomicU64::new(0));
        let outbox = Arc::new(Outbox::new(Arc::clone(&global)));
        outbox.queue(1 << 20);
        let mut g = Guarded::new(server, Arc::clone(&outbox), Duration::from_millis(100));
        let err = tokio::time::timeout(Duration::from_secs(10), g.write_all(&vec![0u8; 1 << 20]))
            .await
            .expect("the write timeout fired")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(g);
        drop(outbox);
        assert_eq!(global.load(Ordering::SeqCst), 0);
        drop(client);
    }
}

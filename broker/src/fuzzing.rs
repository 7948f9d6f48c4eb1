//! Entry points for the fuzz targets in `fuzz/`. Not part of the API: hidden
//! from the documentation, and nothing but the fuzz targets (and the
//! regression tests of what they found) may call it.
//!
//! Built only with the `fuzzing` feature (which fuzz/ enables) and in the
//! unit tests. Everything else the targets exercise is public already
//! ([`crate::jsonrpc`], [`crate::redact`], [`crate::scan`],
//! [`crate::Controls`]); this module adds what a target needs to reach code
//! that normally runs inside the runtime.

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, ReadBuf};

pub use crate::transport::stdio::Line;
use crate::transport::stdio::LineReader;

/// Reads `input` through the stdio transport's `LineReader`, capped at
/// `cap` bytes per line, the underlying reader handing over at most
/// `chunks[i % chunks.len()]` bytes on its `i`th read (zero, or an empty `chunks`, counts as one byte). Returns
/// every unit the reader yields, ending with [`Line::Eof`].
///
/// The reader is always ready, so each line is produced by one poll; no
/// runtime is needed.
pub fn read_lines(input: &[u8], cap: usize, chunks: &[u8]) -> io::Result<Vec<Line>> {
    let source = Chunked {
        rest: input,
        chunks,
        reads: 0,
    };
    let mut reader = LineReader::new(source, cap);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    loop {
        let mut next = pin!(reader.next_line());
        let line = match next.as_mut().poll(&mut cx) {
            Poll::Ready(line) => line?,
            Poll::Pending => {
                return Err(io::Error::other("an always-ready reader returned pending"));
            }
        };
        let done = line == Line::Eof;
        out.push(line);
        if done {
            return Ok(out);
        }
    }
}

/// An in-memory reader that splits its input into the given chunk sizes.
struct Chunked<'a> {
    rest: &'a [u8],
    chunks: &'a [u8],
    reads: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let size = match self.chunks {
            [] => 1,
            chunks => usize::from(chunks[self.reads % chunks.len()]).max(1),
        };
        self.reads += 1;
        let n = size.min(self.rest.len()).min(buf.remaining());
        let (head, tail) = self.rest.split_at(n);
        buf.put_slice(head);
        self.rest = tail;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_out_whatever_the_chunking() {
        for chunks in [&[][..], &[1], &[3, 1, 200]] {
            let got = read_lines(b"ab\ncd\r\n\nlong line\ntail", 4, chunks).unwrap();
            assert_eq!(
                got,
                vec![
                    Line::Data(b"ab".to_vec()),
                    Line::Data(b"cd".to_vec()),
                    Line::Data(vec![]),
                    Line::TooLong,
                    Line::Data(b"tail".to_vec()),
                    Line::Eof,
                ],
                "{chunks:?}"
            );
        }
    }
}

//! Length-prefixed frames.
//!
//! A frame is `len: u32 (little endian)` followed by `len` bytes of postcard.
//!
//! # Invariants
//!
//! * A length is compared with the reader's maximum **before** a buffer is
//!   allocated ([`parse_header`]); an oversized length is an error, not an
//!   allocation.
//! * Decoding never panics on any input; every failure is a [`FrameError`].
//! * A frame's payload must be consumed exactly: trailing bytes are an error.
//!   The encoding is not canonical, though: postcard accepts an over-long
//!   varint (`[137, 0]` for 9), so two byte strings may decode to the same
//!   message. Nothing relies on a frame's bytes, only on the message they
//!   decode to, and a decoded message re-encodes to a frame that decodes to
//!   it again (`fuzz/frame`).

use std::fmt;
use std::io::{self, Read, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use crate::limits::{MAX_REQUEST_FRAME_LEN, MAX_RESPONSE_FRAME_LEN};

/// Size of the length prefix.
pub const HEADER_LEN: usize = 4;

/// Why a frame could not be read or decoded.
#[derive(Debug)]
#[non_exhaustive]
pub enum FrameError {
    /// The declared length exceeds the reader's maximum.
    TooLarge {
        /// Declared payload length.
        len: usize,
        /// The reader's maximum.
        max: usize,
    },
    /// The payload is not a valid encoding of the expected message.
    Malformed(String),
    /// The payload decoded but left bytes over.
    TrailingBytes(usize),
    /// The peer closed the stream in the middle of a frame.
    Truncated,
    /// An I/O error on the stream.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { len, max } => {
                write!(f, "frame of {len} bytes exceeds the {max}-byte limit")
            }
            FrameError::Malformed(e) => write!(f, "malformed frame: {e}"),
            FrameError::TrailingBytes(n) => write!(f, "frame has {n} trailing bytes"),
            FrameError::Truncated => write!(f, "stream ended inside a frame"),
            FrameError::Io(e) => write!(f, "frame i/o: {e}"),
        }
    }
}

impl std::error::Error for FrameError {}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> Self {
        FrameError::Io(e)
    }
}

/// Parse a frame header, refusing lengths over `max` before anything is allocated.
pub fn parse_header(header: [u8; HEADER_LEN], max: usize) -> Result<usize, FrameError> {
    let len = u32::from_le_bytes(header) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    Ok(len)
}

/// Encode `msg` as one complete frame (header included).
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, FrameError> {
    let out = postcard::to_extend(msg, vec![0u8; HEADER_LEN])
        .map_err(|e| FrameError::Malformed(e.to_string()))?;
    finish(out)
}

fn finish(mut out: Vec<u8>) -> Result<Vec<u8>, FrameError> {
    let payload = out.len() - HEADER_LEN;
    let len = u32::try_from(payload).map_err(|_| FrameError::TooLarge {
        len: payload,
        max: u32::MAX as usize,
    })?;
    out[..HEADER_LEN].copy_from_slice(&len.to_le_bytes());
    Ok(out)
}

/// Decode a payload (without header) as `T`, requiring every byte to be used.
pub fn decode_payload<T: DeserializeOwned>(payload: &[u8]) -> Result<T, FrameError> {
    let (value, rest) = postcard::take_from_bytes::<T>(payload)
        .map_err(|e| FrameError::Malformed(e.to_string()))?;
    if !rest.is_empty() {
        return Err(FrameError::TrailingBytes(rest.len()));
    }
    Ok(value)
}

/// Decode the first frame in `buf`. `Ok(None)` means more bytes are needed;
/// `Ok(Some((msg, used)))` gives the message and the bytes consumed.
pub fn decode<T: DeserializeOwned>(
    buf: &[u8],
    max: usize,
) -> Result<Option<(T, usize)>, FrameError> {
    let Some(header) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    let mut h = [0u8; HEADER_LEN];
    h.copy_from_slice(header);
    let len = parse_header(h, max)?;
    let Some(payload) = buf.get(HEADER_LEN..HEADER_LEN + len) else {
        return Ok(None);
    };
    Ok(Some((decode_payload(payload)?, HEADER_LEN + len)))
}

/// Read one frame's payload from a blocking reader. `Ok(None)` on a clean end
/// of stream before the first header byte.
pub fn read_payload<R: Read>(r: &mut R, max: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut header = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match r.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let len = parse_header(header, max)?;
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FrameError::Truncated,
        _ => FrameError::Io(e),
    })?;
    Ok(Some(payload))
}

/// Read and decode one frame from a blocking reader.
pub fn read<R: Read, T: DeserializeOwned>(r: &mut R, max: usize) -> Result<Option<T>, FrameError> {
    match read_payload(r, max)? {
        None => Ok(None),
        Some(p) => decode_payload(&p).map(Some),
    }
}

/// Encode and write one frame to a blocking writer.
pub fn write<W: Write, T: Serialize>(w: &mut W, msg: &T) -> Result<(), FrameError> {
    let bytes = encode(msg)?;
    w.write_all(&bytes)?;
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{ListDirectoryArgs, Request, RequestEnvelope};
    use crate::response::{Response, ToolOutput};
    use proptest::prelude::*;

    fn sample() -> RequestEnvelope {
        RequestEnvelope {
            budget_ms: 1000,
            progress: false,
            request: Request::ListDirectory(ListDirectoryArgs {
                path: "src".into(),
                include_hidden: true,
                skip: 0,
            }),
        }
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&sample()).unwrap();
        let (back, used): (RequestEnvelope, usize) =
            decode(&bytes, MAX_REQUEST_FRAME_LEN).unwrap().unwrap();
        assert_eq!(back, sample());
        assert_eq!(used, bytes.len());
    }

    #[test]
    fn oversized_header_is_refused_before_allocating() {
        let header = (u32::MAX).to_le_bytes();
        assert!(matches!(
            parse_header(header, MAX_RESPONSE_FRAME_LEN),
            Err(FrameError::TooLarge { .. })
        ));
        let mut r: &[u8] = &header;
        assert!(matches!(
            read_payload(&mut r, 16),
            Err(FrameError::TooLarge { len, max: 16 }) if len == u32::MAX as usize
        ));
    }

    #[test]
    fn partial_input_asks_for_more() {
        let bytes = encode(&sample()).unwrap();
        for cut in 0..bytes.len() {
            let r: Result<Option<(RequestEnvelope, usize)>, _> =
                decode(&bytes[..cut], MAX_REQUEST_FRAME_LEN);
            assert!(matches!(r, Ok(None)), "cut at {cut}");
        }
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        let mut bytes = encode(&sample()).unwrap();
        bytes.push(0);
        let len = (bytes.len() - HEADER_LEN) as u32;
        bytes[..4].copy_from_slice(&len.to_le_bytes());
        let r: Result<Option<(RequestEnvelope, usize)>, _> = decode(&bytes, MAX_REQUEST_FRAME_LEN);
        assert!(matches!(r, Err(FrameError::TrailingBytes(1))));
    }

    // See: fuzz/frame. The module docs once said no two byte strings decode
    // to the same message; postcard accepts over-long varints.
    #[test]
    fn r_fuzz_an_overlong_varint_decodes_to_the_same_message() {
        // Done(Err(NotAFile, variant 3), Work of six zero counters).
        let short: Response = decode_payload(&[0, 1, 3, 0, 0, 0, 0, 0, 0]).unwrap();
        let long: Response = decode_payload(&[0, 1, 131, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(short, long);
        assert_eq!(
            encode(&long).unwrap()[HEADER_LEN..],
            [0, 1, 3, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn truncated_stream_is_reported() {
        let bytes = encode(&sample()).unwrap();
        let mut r: &[u8] = &bytes[..bytes.len() - 1];
        assert!(matches!(
            read_payload(&mut r, 1 << 20),
            Err(FrameError::Truncated)
        ));
        let mut empty: &[u8] = &[];
        assert!(matches!(read_payload(&mut empty, 1 << 20), Ok(None)));
    }

    proptest! {
        // A hostile worker controls every byte: decoding must never panic, and
        // must never claim to have used more bytes than it was given.
        #[test]
        fn hostile_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(Some((_, used))) = decode::<Response>(&bytes, MAX_RESPONSE_FRAME_LEN) {
                prop_assert!(used <= bytes.len());
            }
        }

        #[test]
        fn any_text_round_trips(text in ".*", size in any::<u64>()) {
            let msg = Response::Done(Ok(ToolOutput::ReadFile(crate::response::ReadFileOutput {
                path: "a".into(), size_bytes: size, total_lines: 1, start_line: 1, end_line: 1,
                cut: None, columns: Default::default(), text: text.clone(), redaction: Default::default(),
            })), crate::response::Work::default());
            let bytes = encode(&msg).unwrap();
            let (back, _): (Response, usize) = decode(&bytes, MAX_RESPONSE_FRAME_LEN).unwrap().unwrap();
            prop_assert_eq!(back, msg);
        }
    }
}

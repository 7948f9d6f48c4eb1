//! The broker↔worker frame decoder on hostile worker bytes
//! (`moat_protocol::frame::decode` with the response cap), for the two
//! messages the broker reads from a worker: `Response` and `WorkerHello`.
//!
//! Properties:
//! * decoding never panics;
//! * a decoded frame never claims more bytes than it was given, and uses
//!   exactly its header plus its declared length;
//! * `Ok(None)` (more bytes needed) only when the frame really is incomplete,
//!   and `TooLarge` only when the declared length is over the cap;
//! * a decoded message re-encodes to a frame that decodes to the same message,
//!   using every byte of it.
#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use moat_protocol::frame::{self, FrameError, HEADER_LEN, MAX_RESPONSE_FRAME_LEN};
use moat_protocol::response::{Response, WorkerHello};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn check<T: DeserializeOwned + Serialize + PartialEq + Debug>(bytes: &[u8]) {
    let declared = bytes
        .get(..HEADER_LEN)
        .map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize);
    match frame::decode::<T>(bytes, MAX_RESPONSE_FRAME_LEN) {
        Ok(Some((msg, used))) => {
            assert!(used <= bytes.len(), "used {used} of {} bytes", bytes.len());
            assert_eq!(
                Some(used - HEADER_LEN),
                declared,
                "used is not header + length"
            );
            let again = frame::encode(&msg).expect("a decoded message encodes");
            let (back, used_again) = frame::decode::<T>(&again, MAX_RESPONSE_FRAME_LEN)
                .expect("a re-encoded frame decodes")
                .expect("a re-encoded frame is complete");
            assert_eq!(
                used_again,
                again.len(),
                "the re-encoded frame has bytes over"
            );
            assert_eq!(back, msg, "the message changed in a round trip");
        }
        Ok(None) => match declared {
            None => {}
            Some(len) => assert!(
                bytes.len() < HEADER_LEN + len,
                "asked for more bytes with a complete frame"
            ),
        },
        Err(FrameError::TooLarge { len, max }) => {
            assert_eq!(Some(len), declared);
            assert!(len > max && max == MAX_RESPONSE_FRAME_LEN);
        }
        Err(_) => {}
    }
}

fuzz_target!(|bytes: &[u8]| {
    check::<Response>(bytes);
    check::<WorkerHello>(bytes);
    // The fuzzer rarely writes a correct length prefix: also try the input
    // as a payload behind a header that declares its exact length.
    if let Ok(len) = u32::try_from(bytes.len()) {
        let mut framed = len.to_le_bytes().to_vec();
        framed.extend_from_slice(bytes);
        check::<Response>(&framed);
        check::<WorkerHello>(&framed);
    }
});

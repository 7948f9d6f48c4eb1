//! The broker's stdio line framer (`broker::stdio::LineReader`), fed the input
//! in arbitrary chunk sizes.
//!
//! Properties:
//! * no `Data` line is longer than the cap;
//! * the units yielded are exactly those of a reference splitter that sees the
//!   whole input at once: each newline-terminated line (one trailing `\r`
//!   dropped) gives `Data` when it fits the cap and one `TooLong` when it does
//!   not, then the unterminated tail the same way, then `Eof`. So no byte of a
//!   yielded line is lost or duplicated, the reader resynchronises at the next
//!   newline after an over-long line, and the chunking makes no difference.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use moat_broker::fuzzing::{Line, read_lines};

#[derive(Arbitrary, Debug)]
struct Input {
    /// Line cap: small, so the fuzzer reaches it often; sometimes large.
    cap: u8,
    large_cap: bool,
    /// Sizes of successive reads.
    chunks: Vec<u8>,
    data: Vec<u8>,
}

fn reference(data: &[u8], cap: usize) -> Vec<Line> {
    let unit = |line: &[u8]| {
        if line.len() > cap {
            Line::TooLong
        } else {
            Line::Data(line.to_vec())
        }
    };
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
        let mut line = &rest[..pos];
        if let [head @ .., b'\r'] = line {
            line = head;
        }
        out.push(unit(line));
        rest = &rest[pos + 1..];
    }
    if !rest.is_empty() {
        out.push(unit(rest));
    }
    out.push(Line::Eof);
    out
}

fuzz_target!(|input: Input| {
    let cap = if input.large_cap {
        usize::from(input.cap) * 1024
    } else {
        usize::from(input.cap)
    };
    let got = read_lines(&input.data, cap, &input.chunks).expect("in-memory reads never fail");
    for line in &got {
        if let Line::Data(bytes) = line {
            assert!(
                bytes.len() <= cap,
                "a {}-byte line passed a {cap}-byte cap",
                bytes.len()
            );
        }
    }
    assert_eq!(
        got,
        reference(&input.data, cap),
        "cap {cap}, chunks {:?}",
        input.chunks
    );
});

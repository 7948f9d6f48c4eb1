//! Parsing one file with one grammar: a parser per thread, the time a
//! parse may take (CPU time, per byte), and whether a tree with error nodes
//! is wanted or the parse stops at the first error.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, ParseState, Parser, Tree};

use super::Grammar;

/// What one parse gave.
pub(super) enum Parsed {
    Tree(Tree),
    /// A tree with error nodes (kept only when the caller reads partial
    /// trees).
    Partial(Tree),
    Error,
    TimedOut,
}

thread_local! {
    /// One parser per thread, reused across files (its language is set per
    /// parse; that is cheap).
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

pub(super) fn parse(
    grammar: Grammar,
    source: &str,
    deadline: Option<Instant>,
    partial: bool,
) -> Parsed {
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Parsed::TimedOut;
    }
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => parse_with(
            slot.get_or_insert_with(Parser::new),
            grammar,
            source,
            deadline,
            partial,
        ),
        // Not reachable (nothing here re-enters), but never panic over it.
        Err(_) => parse_with(&mut Parser::new(), grammar, source, deadline, partial),
    })
}

/// Fixed part of one file's parse-time allowance (CPU time, see [`ParseClock`]).
const PARSE_TIME_BASE: Duration = Duration::from_millis(50);
/// Per-byte part of one file's parse-time allowance: healthy code parses at
/// 2 to 15 MB/s (0.07 to 0.45 µs a byte, the slow end being one huge line),
/// so 2 µs a byte (2.1 s for a 1 MiB file) is a wide margin,
/// while tree-sitter's error recovery on garbage can go quadratic (a
/// 45 KB garbage file takes the Go grammar over half a second, 450 KB over a
/// minute). A parse over its allowance counts as a syntax error: the file
/// falls back to patterns and is reported unparseable.
const PARSE_TIME_PER_BYTE: Duration = Duration::from_micros(2);

/// Time a parse has spent: CPU time of this thread where the platform
/// reports it, so a loaded machine (other processes, other walker threads)
/// does not make healthy code look like runaway error recovery; wall-clock
/// time elsewhere.
struct ParseClock {
    cpu_at_start: Option<Duration>,
    started: Instant,
}

impl ParseClock {
    fn start() -> ParseClock {
        ParseClock {
            cpu_at_start: moat_sandbox::thread_cpu_time(),
            started: Instant::now(),
        }
    }

    fn used(&self) -> Duration {
        match (self.cpu_at_start, moat_sandbox::thread_cpu_time()) {
            (Some(start), Some(now)) => now.saturating_sub(start),
            _ => self.started.elapsed(),
        }
    }
}

fn parse_with(
    parser: &mut Parser,
    grammar: Grammar,
    source: &str,
    deadline: Option<Instant>,
    partial: bool,
) -> Parsed {
    if parser.set_language(&grammar.language()).is_err() {
        return Parsed::Error;
    }
    let clock = ParseClock::start();
    let per_byte =
        PARSE_TIME_PER_BYTE.saturating_mul(u32::try_from(source.len()).unwrap_or(u32::MAX));
    let allowance = PARSE_TIME_BASE.saturating_add(per_byte);
    let mut timed_out = false;
    let mut calls: u32 = 0;
    let mut progress = |state: &ParseState| {
        if !partial && state.has_error() {
            // Every parse version is recovering from an error: the tree will
            // have an ERROR node, which this caller cannot use, so stop now
            // rather than finish the recovery.
            return ControlFlow::Break(());
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            timed_out = true;
            return ControlFlow::Break(());
        }
        // The allowance is CPU time (a system call to read), looked at
        // every few calls.
        calls = calls.wrapping_add(1);
        if calls.is_multiple_of(8) && clock.used() >= allowance {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    };
    let bytes = source.as_bytes();
    let tree = parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
        None,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    match tree {
        Some(tree) if !tree.root_node().has_error() => Parsed::Tree(tree),
        Some(tree) if partial => Parsed::Partial(tree),
        Some(_) => Parsed::Error,
        None => {
            // A cancelled parse leaves state behind for resumption; drop it.
            parser.reset();
            if timed_out {
                Parsed::TimedOut
            } else {
                Parsed::Error
            }
        }
    }
}

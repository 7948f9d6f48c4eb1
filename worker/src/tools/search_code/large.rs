//! `search_code` over a file larger than `max_file_bytes`: streamed page by
//! page, with bounded memory and the search's deadline.
//!
//! `max_file_bytes` bounds what one answer may hold, not which files can be
//! searched. A smaller file is searched and redacted whole
//! ([`super`]); a larger one is read once from the start and cut at
//! line ends into pages of about `max_file_bytes`. Each page is searched
//! with the lines around it as the redactor's context, as `read_file` reads
//! a window of a large file: up to [`CONTEXT_BYTES`] of the lines before it
//! (and the `BEGIN` line of a PEM block still open at its start) and up to
//! [`CONTEXT_BYTES`] after it. Only matches on the page's own lines count,
//! so each line is answered for once; context lines shown around a match
//! come from the same redacted text.
//!
//! A NUL byte anywhere makes the file binary (skipped, as a small one would
//! be); a line longer than `max_file_bytes` cannot be searched in one page,
//! so the file is skipped as too large. Past the deadline the file stops
//! where it is and what its earlier pages found is kept, marked timed out.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::walk::SkipReason;

use super::{FileHits, Span, Want, search_text};
use crate::tools::read_file::{Before, CONTEXT_BYTES};

/// Smallest page, whatever `max_file_bytes` is: a page is searched with up
/// to twice [`CONTEXT_BYTES`] around it, which should not outweigh it.
const MIN_PAGE_BYTES: usize = 256 * 1024;

/// One line of the file, with its `\n` if it has one.
enum Next {
    Line(Vec<u8>),
    End,
}

/// Reads lines of at most `cap` bytes.
struct Lines {
    reader: BufReader<File>,
    cap: usize,
}

impl Lines {
    fn next(&mut self) -> Result<Next, SkipReason> {
        let mut line = Vec::new();
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(SkipReason::Unreadable),
            };
            if buf.is_empty() {
                return Ok(if line.is_empty() {
                    Next::End
                } else {
                    Next::Line(line)
                });
            }
            let (take, ends) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let part = &buf[..take];
            if memchr::memchr(0, part).is_some() {
                return Err(SkipReason::Binary);
            }
            if line.len() + take > self.cap {
                return Err(SkipReason::TooLarge);
            }
            line.extend_from_slice(part);
            self.reader.consume(take);
            if ends {
                return Ok(Next::Line(line));
            }
        }
    }
}

/// Search `file` (larger than `max_file_bytes`) page by page, each page as
/// [`search_text`] searches a text, `want.max` matches in all. `Err` says
/// why the file is skipped.
pub(super) fn scan(
    ws: &Workspace,
    file: File,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    want: &Want<'_>,
    deadline: &Deadline,
) -> Result<FileHits, SkipReason> {
    let limit = usize::try_from(ws.limits().max_file_bytes).unwrap_or(usize::MAX);
    let page_bytes = limit.max(MIN_PAGE_BYTES);
    let mut lines = Lines {
        reader: BufReader::with_capacity(64 * 1024, file),
        cap: limit,
    };
    let mut hits = FileHits::default();
    let mut before = Before::default();
    // Lines read ahead of the page being built: the context after the last
    // page, which starts the next one.
    let mut ahead: VecDeque<Vec<u8>> = VecDeque::new();
    let mut ahead_bytes = 0usize;
    // The file's number of the first line of `ahead`.
    let mut next_line: u64 = 1;
    let mut at_end = false;
    let mut page: Vec<u8> = Vec::new();
    loop {
        if deadline.expired() {
            hits.timed_out = true;
            break;
        }
        let mut core: Vec<Vec<u8>> = Vec::new();
        let mut core_bytes = 0usize;
        while core_bytes < page_bytes {
            let line = match ahead.pop_front() {
                Some(line) => {
                    ahead_bytes -= line.len();
                    line
                }
                None if at_end => break,
                None => match lines.next()? {
                    Next::Line(line) => line,
                    Next::End => {
                        at_end = true;
                        break;
                    }
                },
            };
            core_bytes += line.len();
            core.push(line);
        }
        if core.is_empty() {
            break;
        }
        while !at_end && ahead_bytes < CONTEXT_BYTES {
            match lines.next()? {
                Next::Line(line) => {
                    ahead_bytes += line.len();
                    ahead.push_back(line);
                }
                Next::End => at_end = true,
            }
        }
        page.clear();
        let (block, kept) = before.write(&mut page);
        let first_core = (block + kept) as u64 + 1;
        for line in core.iter().chain(&ahead) {
            page.extend_from_slice(line);
            if !line.ends_with(b"\n") {
                page.push(b'\n');
            }
        }
        let span = Span {
            answered: first_core..=first_core + core.len() as u64 - 1,
            first_real: block as u64 + 1,
            first_file_line: next_line - kept as u64,
        };
        let page_want = Want {
            max: want.max.saturating_sub(hits.matches.len()),
            ..*want
        };
        let found = search_text(ws, &page, &span, matcher, searcher, &page_want)
            .ok_or(SkipReason::Unreadable)?;
        hits.found += found.found;
        hits.matches.extend(found.matches);
        hits.report.merge(&found.report);
        next_line += core.len() as u64;
        for mut line in core {
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            let len = line.len();
            before.keep(line, len);
        }
    }
    Ok(hits)
}

//! `read_file` of a file larger than `max_file_bytes`: the requested lines,
//! streamed, with bounded memory.
//!
//! `max_file_bytes` bounds what one answer may hold, not which files can be
//! read. A file under it is read whole and redacted whole
//! ([`super`]); a larger one is read once from the start, keeping
//! only:
//!
//! * up to [`CONTEXT_BYTES`] of the lines before the first requested line,
//! * the requested lines (at most `max_read_lines`, and no more text than
//!   one answer holds, `max_answer_chars`; the first one whole up to
//!   `max_file_bytes`, so that it is redacted whole even when the answer
//!   holds only some of its columns),
//! * up to [`CONTEXT_BYTES`] of the lines after them,
//!
//! and counting the rest. The kept window is the source the redactor judges,
//! so a credential is judged with the context around it (the key on the line
//! before its value, the header before its token). A PEM block can be longer
//! than the context: when the window starts inside one, the block's `BEGIN`
//! line is put in front of the window so the body is judged as the block it
//! is. Lines longer than the context are not kept as context (a credential's
//! surroundings are short lines); a requested line longer than
//! `max_file_bytes` cannot be redacted whole, so it is not answered even in
//! part, and is refused as too large. Lines and columns are then selected
//! from the redacted window as from a file read whole ([`super::select`]).

use std::collections::VecDeque;
use std::io::Read;

use moat_protocol::response::{Limit, ReadFileOutput, ToolOutput};
use moat_protocol::wire_error::{Missing, TooLarge, Unsupported, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::redact::RedactionReport;
use crate::sources;

use super::{select, split_lines};

/// Context kept on each side of the requested lines for the redactor.
pub const CONTEXT_BYTES: usize = 64 * 1024;

/// Longest line remembered as the start of an open PEM block.
const BEGIN_LINE_MAX: usize = 256;

const CHUNK: usize = 64 * 1024;

/// What `read_file` asked for.
pub(super) struct Asked {
    /// First line.
    pub(super) start: u64,
    /// Last line (`None`: to the end, within the line bound).
    pub(super) end: Option<u64>,
    /// Column of the first line to start at.
    pub(super) start_column: u64,
    /// Last column of the last line.
    pub(super) end_column: Option<u64>,
}

/// Which lines to keep, and how many bytes of them.
struct Plan {
    start: u64,
    start_column: u64,
    end_column: Option<u64>,
    end: u64,
    /// The last line asked for (`u64::MAX`: to the end of the file).
    asked_end: u64,
    /// The answer budget: the selected lines with their numbers.
    answer_bytes: usize,
    /// The longest single line an answer may be (`max_file_bytes`): the
    /// first requested line is sent whole up to it, even past the budget.
    line_cap: usize,
}

/// What numbering adds to a line in the answer, at most (the number, two
/// blanks and the line break).
const NUMBER_CHARS: usize = 24;

/// One line being read: its bytes while they are still wanted, or only its
/// length once it is too long to keep.
#[derive(Default)]
struct Line {
    bytes: Vec<u8>,
    len: usize,
}

impl Line {
    fn push(&mut self, part: &[u8], keep_up_to: usize) {
        self.len += part.len();
        if self.len <= keep_up_to {
            self.bytes.extend_from_slice(part);
        } else {
            self.bytes = Vec::new();
        }
    }
}

/// The lines before a window, kept as the redactor's context: at most
/// [`CONTEXT_BYTES`] of them, and the `BEGIN` line of a PEM block still open
/// at the window's start even when it is further back.
#[derive(Default)]
pub(crate) struct Before {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    open_block: Option<Vec<u8>>,
    /// Whether `open_block` is still among `lines`.
    block_in_lines: bool,
}

impl Before {
    /// Keep one more line (`bytes` of a line `len` long: shorter when the
    /// line was too long to keep whole), dropping the oldest beyond the
    /// context.
    pub(crate) fn keep(&mut self, bytes: Vec<u8>, len: usize) {
        if len > CONTEXT_BYTES {
            // Nothing before a line this long is context for what follows it.
            self.lines.clear();
            self.bytes = 0;
            self.block_in_lines = false;
            return;
        }
        if bytes.starts_with(b"-----BEGIN ") && len <= BEGIN_LINE_MAX {
            self.open_block = Some(bytes.clone());
            self.block_in_lines = true;
        } else if bytes.starts_with(b"-----END ") {
            self.open_block = None;
            self.block_in_lines = false;
        }
        self.bytes += len + 1;
        self.lines.push_back(bytes);
        while self.bytes > CONTEXT_BYTES {
            let Some(old) = self.lines.pop_front() else {
                break;
            };
            self.bytes -= old.len() + 1;
            if self.block_in_lines && self.open_block.as_deref() == Some(old.as_slice()) {
                self.block_in_lines = false;
            }
        }
    }

    /// Bytes [`write`](Self::write) appends, at most.
    pub(crate) fn len(&self) -> usize {
        self.bytes + BEGIN_LINE_MAX + 1
    }

    /// Append the kept lines (each ended by `\n`) to `out`, after the open
    /// block's `BEGIN` line when it is no longer among them, so the block's
    /// body is judged as the block it is. Returns how many lines came before
    /// the kept ones (0 or 1) and how many were kept.
    pub(crate) fn write(&self, out: &mut Vec<u8>) -> (usize, usize) {
        let mut lead = 0;
        if let (Some(begin), false) = (&self.open_block, self.block_in_lines) {
            out.extend_from_slice(begin);
            out.push(b'\n');
            lead = 1;
        }
        for l in &self.lines {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        (lead, self.lines.len())
    }
}

#[derive(Default)]
struct Window {
    before: Before,
    selected: Vec<Vec<u8>>,
    selected_bytes: usize,
    after: Vec<Vec<u8>>,
    after_bytes: usize,
    /// The requested range stopped early at the answer's byte bound.
    cut_at: Option<u64>,
}

/// Answer `read_file` for what `asked` names of a file larger than
/// `max_file_bytes`.
pub(super) fn run<R: Read>(
    ws: &Workspace,
    display: String,
    mut file: R,
    size: u64,
    asked: Asked,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let Asked {
        start,
        end: requested_end,
        start_column,
        end_column,
    } = asked;
    if let Some(end) = requested_end.filter(|end| *end < start) {
        return Err(WireError::Unsupported(Unsupported::EndBeforeStart {
            start,
            end,
        }));
    }
    let limits = ws.limits();
    let plan = Plan {
        start,
        start_column,
        end_column,
        end: requested_end
            .unwrap_or(u64::MAX)
            .min(start.saturating_add(u64::from(limits.max_read_lines)) - 1),
        asked_end: requested_end.unwrap_or(u64::MAX),
        answer_bytes: limits
            .answer_bytes()
            .min(usize::try_from(limits.max_file_bytes).unwrap_or(usize::MAX)),
        line_cap: usize::try_from(limits.max_file_bytes).unwrap_or(usize::MAX),
    };
    let mut window = Window::default();
    let mut line = Line::default();
    // Lines completed so far; the line being read is number `done + 1`.
    let mut done: u64 = 0;
    let mut cr_pending = false;
    let mut first = true;
    let mut buf = vec![0u8; CHUNK];
    loop {
        if deadline.expired() {
            return Err(WireError::TimedOut {
                budget_ms: deadline.budget_ms(),
            });
        }
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(WireError::NotFound(Missing::Unreadable)),
        };
        let chunk = &buf[..n];
        if first {
            first = false;
            let sniff = &chunk[..chunk.len().min(moat_protocol::limits::BINARY_SNIFF_BYTES)];
            if memchr::memchr(0, sniff).is_some() {
                return Err(WireError::BinaryFile);
            }
        }
        // The `\n` of a `\r\n` split across two reads ends no line.
        let mut from = usize::from(std::mem::take(&mut cr_pending) && chunk[0] == b'\n');
        for i in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            if i < from {
                continue;
            }
            let number = done + 1;
            line.push(&chunk[from..i], keep_for(&plan, &window, number));
            finish(&plan, &mut window, std::mem::take(&mut line), number)?;
            done = number;
            if chunk[i] == b'\r' {
                if chunk.get(i + 1) == Some(&b'\n') {
                    from = i + 2;
                } else if i + 1 == chunk.len() {
                    cr_pending = true;
                    from = i + 1;
                } else {
                    from = i + 1;
                }
            } else {
                from = i + 1;
            }
        }
        if from < chunk.len() {
            line.push(&chunk[from..], keep_for(&plan, &window, done + 1));
        }
    }
    if line.len > 0 {
        let number = done + 1;
        finish(&plan, &mut window, line, number)?;
        done = number;
    }
    let total = done;
    if start > total {
        return Err(WireError::Unsupported(Unsupported::LineOutOfRange {
            start,
            total,
        }));
    }
    answer(ws, display, size, &plan, window, total)
}

/// How many bytes of line `number` are worth keeping.
fn keep_for(plan: &Plan, window: &Window, number: u64) -> usize {
    if number < plan.start {
        CONTEXT_BYTES.max(BEGIN_LINE_MAX)
    } else if number <= plan.end && window.cut_at.is_none() {
        room(plan, window)
    } else {
        CONTEXT_BYTES.saturating_sub(window.after_bytes)
    }
}

/// Bytes the next requested line may take: the rest of the budget, or for
/// the first one, a whole line up to the line cap.
fn room(plan: &Plan, window: &Window) -> usize {
    if window.selected.is_empty() {
        plan.line_cap.max(plan.answer_bytes) + NUMBER_CHARS
    } else {
        plan.answer_bytes.saturating_sub(window.selected_bytes)
    }
}

fn finish(plan: &Plan, window: &mut Window, line: Line, number: u64) -> Result<(), WireError> {
    if number < plan.start {
        window.before.keep(line.bytes, line.len);
    } else if number <= plan.end && window.cut_at.is_none() {
        if line.len + NUMBER_CHARS > room(plan, window) || line.bytes.len() < line.len {
            if window.selected.is_empty() {
                // Not even the first requested line fits in one answer.
                return Err(WireError::TooLarge(TooLarge::Line {
                    line: number,
                    size: line.len as u64,
                    limit: plan.line_cap as u64,
                }));
            }
            window.cut_at = Some(number);
            keep_after(window, line);
        } else {
            window.selected_bytes += line.len + NUMBER_CHARS;
            window.selected.push(line.bytes);
        }
    } else {
        keep_after(window, line);
    }
    Ok(())
}

fn keep_after(window: &mut Window, line: Line) {
    if window.after_bytes < CONTEXT_BYTES && line.bytes.len() == line.len {
        window.after_bytes += line.len + 1;
        window.after.push(line.bytes);
    } else {
        // Past the context (or a line too long to be context): only counted.
        window.after_bytes = CONTEXT_BYTES;
    }
}

fn answer(
    ws: &Workspace,
    display: String,
    size: u64,
    plan: &Plan,
    window: Window,
    total: u64,
) -> Result<ToolOutput, WireError> {
    let selected = window.selected.len();
    let end = plan.start + selected as u64 - 1;
    let mut source =
        Vec::with_capacity(window.before.len() + window.selected_bytes + window.after_bytes);
    let (block, kept) = window.before.write(&mut source);
    for l in window.selected.iter().chain(&window.after) {
        source.extend_from_slice(l);
        source.push(b'\n');
    }
    let lead = block + kept;
    let raw = sources::decode(&source);
    let mut report = RedactionReport::default();
    let redacted = sources::redact_source(ws.redactor(), &raw, &mut report);
    let lines = split_lines(&redacted);
    // The requested lines, redacted with their context; the columns and the
    // budget are applied to them as to a file read whole.
    let kept_lines = lines.get(lead..lead + selected).unwrap_or_default();
    let selection = select::select(
        kept_lines,
        plan.start,
        &select::Range {
            start_line: plan.start,
            start_column: plan.start_column,
            end_line: end,
            // The asked last column counts only on the asked last line.
            end_column: plan.end_column.filter(|_| end == plan.asked_end),
            max_lines: u64::MAX,
            budget: plan.answer_bytes,
        },
    )?;
    let cut = if selection.cut.is_some() || window.cut_at.is_some() {
        // The answer budget cut the selection.
        Some(Limit::Bytes)
    } else if end < plan.asked_end.min(total) {
        // The line cap ended it before the asked range did (a range the
        // caller ended early is complete).
        Some(Limit::Lines)
    } else {
        None
    };
    Ok(ToolOutput::ReadFile(ReadFileOutput {
        path: display,
        size_bytes: size,
        total_lines: total,
        start_line: plan.start,
        end_line: selection.end_line,
        cut,
        columns: selection.columns,
        text: selection.text,
        redaction: sources::counts(&report),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use moat_protocol::limits::Limits;
    use moat_protocol::request::{SandboxRequest, WorkerInit};
    use std::time::Duration;

    /// A reader handing out at most `step` bytes per read, so line ends fall
    /// on every kind of read boundary.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn asked(start: u64, end: Option<u64>) -> Asked {
        Asked {
            start,
            end,
            start_column: 1,
            end_column: None,
        }
    }

    fn workspace(dir: &std::path::Path) -> Workspace {
        Workspace::open(&WorkerInit {
            workspace: dir.to_string_lossy().into_owned(),
            limits: Limits {
                max_file_bytes: 1024,
                ..Limits::default()
            },
            follow_symlinks: false,
            allow_hard_links: false,
            deny_extra: vec![],
            redact: true,
            inside_repository: false,
            sandbox: SandboxRequest::ProcessOnly,
        })
        .unwrap()
    }

    fn read(
        ws: &Workspace,
        data: &[u8],
        step: usize,
        start: u64,
        end: Option<u64>,
    ) -> ReadFileOutput {
        let deadline = Deadline::after(Duration::from_secs(60));
        let file = Trickle { data, step };
        match run(
            ws,
            "f".into(),
            file,
            data.len() as u64,
            asked(start, end),
            &deadline,
        ) {
            Ok(ToolOutput::ReadFile(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_read_boundary_gives_the_whole_file_reader_lines() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path());
        let mut data = String::new();
        for i in 0..700 {
            data.push_str(&format!("l{i}"));
            data.push_str(["\n", "\r\n", "\r", "\r\r\n", "\n\n"][i % 5]);
        }
        data.push_str("last, unterminated");
        let expected = split_lines(&data);
        for step in [1, 2, 3, 7, 64, 4096, CHUNK] {
            let mut got = Vec::new();
            let mut start = 1;
            loop {
                let o = read(&ws, data.as_bytes(), step, start, None);
                assert_eq!(o.total_lines, expected.len() as u64, "step {step}");
                got.extend(o.text.split('\n').map(str::to_owned));
                if o.cut.is_none() {
                    break;
                }
                start = o.end_line + 1;
            }
            assert_eq!(got, expected, "step {step}");
        }
    }

    #[test]
    fn a_file_ending_in_a_lone_cr_or_a_split_crlf_counts_its_lines_once() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path());
        for (data, lines) in [
            ("a\r", 1),
            ("a\r\n", 1),
            ("a\r\nb", 2),
            ("a\r\rb\r", 3),
            ("\r\n\r\n", 2),
        ] {
            for step in [1, 2, 64] {
                let o = read(&ws, data.as_bytes(), step, 1, None);
                assert_eq!(o.total_lines, lines, "{data:?} step {step}");
            }
        }
    }

    #[test]
    fn binary_files_and_reversed_ranges_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path());
        let deadline = Deadline::after(Duration::from_secs(60));
        let bin = b"ab\0cd\n".repeat(400);
        let r = run(
            &ws,
            "f".into(),
            &bin[..],
            bin.len() as u64,
            asked(1, None),
            &deadline,
        );
        assert_eq!(r, Err(WireError::BinaryFile));
        let text = b"line\n".repeat(400);
        let r = run(
            &ws,
            "f".into(),
            &text[..],
            text.len() as u64,
            asked(5, Some(2)),
            &deadline,
        );
        assert_eq!(
            r,
            Err(WireError::Unsupported(Unsupported::EndBeforeStart {
                start: 5,
                end: 2
            }))
        );
    }
}

//! The audit trail: one event for every `tools/call` the broker answers,
//! whatever its outcome (a result, a refusal, a timeout, `busy`, a request
//! refused for its envelope or its arguments). Probes, `ping`,
//! `initialize`, `tools/list` and the other methods are not audited.
//!
//! # What an event holds
//!
//! `timestamp` (RFC 3339, UTC), `level`, `message` (`"audit"`), the
//! request's `request_id` and `rpc_id` (as on every other line of the
//! request), then `caller` (`stdio`, `bearer` for HTTP with the static
//! bearer token, `anonymous` for HTTP without one, and with OAuth the
//! token's `sub`, escaped and cut at 256 characters), `client` (the client's
//! `name/version` label), `tool`, the path-like arguments the call named —
//! `path` and `file_glob`, nothing else, never another argument's value,
//! never content — then `outcome` (`ok` or the error code), `bytes` (the
//! size of the answer as sent), `redactions`, `content_level` and
//! `duration_us`.
//!
//! The path-like values are the client's text: each is put in its escaped
//! text form ([`escape_for_prose`]: no control, separator or invisible
//! character left raw), cut at [`MAX_PATH_CHARS`] characters with
//! [`CUT_MARKER`], and redacted like every log value ([`LogRedactor`]).
//! The tool name is cut at 100 characters. Every value of the event, the
//! request's `rpc_id` among them (the client's text too), goes through the
//! log redactor and its cut ([`logging::MAX_VALUE_CHARS`]).
//!
//! # One event is bounded
//!
//! An event is at most [`MAX_EVENT_BYTES`] bytes as written: when its
//! values would make it longer, its longest string value is cut in half
//! (ending with [`CUT_MARKER`]), again until it fits. Whatever a client
//! sends, its calls add at most that much each to the trail, so one client
//! cannot push the others' events out of a bounded file in a few requests;
//! see docs/operations.md for shipping the trail off the host.
//!
//! # Where events go
//!
//! By default each event is a line on stderr, in the format of the other log
//! lines (JSON or text), whatever `observability.log_level` says. With
//! `observability.audit_path` set, each event is instead one JSON line
//! appended to that file, opened at start-up (append-only, created with mode
//! 0600, never truncated; a file that cannot be opened refuses start-up).
//!
//! The file is bounded by `observability.audit_max_bytes`: when the next line
//! would take it past the bound, the file is renamed to `<path>.1` (replacing
//! an older `.1`) and a fresh file is started, so the trail on disk is at most
//! about twice the bound. A single line larger than the bound is written to a
//! fresh file of its own. Each line is written whole with one write, under a
//! lock, so lines from concurrent calls never interleave.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::config::ObservabilityConfig;
use crate::content::Findings;
use crate::content::fence::escape_for_prose;
use crate::logging::{self, LogRedactor};

/// Longest path-like argument kept in an event, in characters.
pub const MAX_PATH_CHARS: usize = 1024;
/// Most `file_glob` entries kept in an event.
pub const MAX_GLOBS: usize = 20;
/// Appended to a value that was cut.
pub const CUT_MARKER: &str = "…[cut]";
/// Longest tool name kept, in characters (an unknown tool's name is the
/// client's text).
const MAX_TOOL_CHARS: usize = 100;
/// Longest event, in bytes as written (newline included).
pub const MAX_EVENT_BYTES: usize = 4096;

/// What the broker learnt about one tool call, filled in as it is served.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    /// `stdio`, `bearer`, `anonymous`, or an OAuth token's subject.
    pub caller: Cow<'static, str>,
    /// The client's label.
    pub client: String,
    /// The tool named (the client's text, cut).
    pub tool: String,
    /// The `path` argument, when it is a string.
    pub path: Option<String>,
    /// The `file_glob` argument's strings, when it is a list.
    pub file_glob: Option<Vec<String>>,
    /// `ok`, or the error code of the answer.
    pub outcome: Cow<'static, str>,
    /// Size of the answer as sent.
    pub bytes: u64,
    /// What the content controls found in the answer (redactions, rules,
    /// assessment level).
    pub findings: Findings,
    /// The work the tool did, when it ran.
    pub work: Option<moat_protocol::response::Work>,
}

impl Facts {
    /// The facts the request itself gives: the tool and the path-like
    /// arguments of `params` (a `tools/call`'s).
    #[must_use]
    pub fn of_call(
        params: &serde_json::Map<String, Value>,
        caller: Cow<'static, str>,
        client: &str,
    ) -> Facts {
        let tool = params
            .get("name")
            .and_then(Value::as_str)
            .map(|n| cut(n, MAX_TOOL_CHARS))
            .unwrap_or_default();
        let args = params.get("arguments").and_then(Value::as_object);
        let path = args
            .and_then(|a| a.get("path"))
            .and_then(Value::as_str)
            .map(path_text);
        let file_glob = args
            .and_then(|a| a.get("file_glob"))
            .and_then(Value::as_array)
            .map(|globs| {
                let mut kept: Vec<String> = globs
                    .iter()
                    .filter_map(Value::as_str)
                    .take(MAX_GLOBS)
                    .map(path_text)
                    .collect();
                let strings = globs.iter().filter(|g| g.is_string()).count();
                if strings > MAX_GLOBS {
                    kept.push(format!("{CUT_MARKER} {} more", strings - MAX_GLOBS));
                }
                kept
            });
        Facts {
            caller,
            client: client.to_owned(),
            tool,
            path,
            file_glob,
            outcome: Cow::Borrowed(""),
            ..Facts::default()
        }
    }
}

/// A path-like value in its escaped text form, cut at [`MAX_PATH_CHARS`].
fn path_text(raw: &str) -> String {
    cut(&escape_for_prose(raw), MAX_PATH_CHARS)
}

/// `text` cut at `max` characters, with [`CUT_MARKER`] when it was.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}{CUT_MARKER}", &text[..at]),
        None => text.to_owned(),
    }
}

/// Why the audit file cannot be used; the text names the path.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file cannot be opened for appending.
    #[error("cannot open the audit file {}: {source}", path.display())]
    Open {
        /// The configured path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The opened file's metadata cannot be read.
    #[error("cannot read the audit file {}: {source}", path.display())]
    Metadata {
        /// The configured path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// Where events are written.
enum Destination {
    /// Lines on stderr with the other logs (`json`: in JSON, else text).
    Stderr { json: bool },
    /// JSON lines in a size-bounded file.
    File(Mutex<AuditFile>),
}

struct Sink {
    redactor: LogRedactor,
    destination: Destination,
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Set up the audit trail for `o` (at start-up, once; later calls are
/// ignored). `redactor` is the log redactor, configured secrets included.
///
/// # Errors
///
/// When `observability.audit_path` is set and the file cannot be opened for
/// appending: the message names the path.
pub fn init(o: &ObservabilityConfig, redactor: LogRedactor) -> Result<(), AuditError> {
    let destination = match &o.audit_path {
        None => Destination::Stderr { json: o.log_json },
        Some(path) => Destination::File(Mutex::new(AuditFile::open(path, o.audit_max_bytes)?)),
    };
    let _ = SINK.set(Sink {
        redactor,
        destination,
    });
    Ok(())
}

/// Record one tool call that took `duration_us` (nothing when [`init`] was
/// not called: the one-shot `moat call`, unit tests).
pub fn record(facts: &Facts, duration_us: u64) {
    let Some(sink) = SINK.get() else {
        return;
    };
    let r = &sink.redactor;
    let mut values: Vec<(&'static str, Value)> = logging::request_fields()
        .into_iter()
        .map(|(name, value)| (name, r.field(name, value)))
        .collect();
    values.push((
        "caller",
        r.field("caller", Value::from(facts.caller.as_ref())),
    ));
    values.push((
        "client",
        r.field("client", Value::from(facts.client.as_str())),
    ));
    values.push(("tool", r.field("tool", Value::from(facts.tool.as_str()))));
    if let Some(path) = &facts.path {
        values.push(("path", r.field("path", Value::from(path.as_str()))));
    }
    if let Some(globs) = &facts.file_glob {
        let globs = globs
            .iter()
            .map(|g| r.field("file_glob", Value::from(g.as_str())))
            .collect();
        values.push(("file_glob", Value::Array(globs)));
    }
    values.push(("outcome", Value::from(facts.outcome.as_ref())));
    values.push(("bytes", Value::from(facts.bytes)));
    values.push(("redactions", Value::from(facts.findings.redactions)));
    values.push(("content_level", Value::from(facts.findings.content_level)));
    values.push(("duration_us", Value::from(duration_us)));
    if let Some(w) = &facts.work {
        values.push((
            "work",
            serde_json::json!({
                "files_read": w.files_read,
                "bytes_read": w.bytes_read,
                "sources_redacted": w.sources_redacted,
                "bytes_redacted": w.bytes_redacted,
                "searches": w.searches,
                "bytes_searched": w.bytes_searched,
            }),
        ));
    }
    let timestamp = logging::timestamp();
    let message = Value::from("audit");
    let json = match &sink.destination {
        Destination::Stderr { json } => *json,
        Destination::File(_) => true,
    };
    let write = |values: &[(&str, Value)]| {
        if json {
            logging::json_line(&timestamp, "INFO", &message, None, values)
        } else {
            logging::text_line(&timestamp, "INFO", &message, None, values)
        }
    };
    let mut line = write(&values);
    // Within its bound: the longest string halved until it fits (each turn
    // shortens the line, so this ends).
    while line.len() + 1 > MAX_EVENT_BYTES && halve_longest(&mut values) {
        line = write(&values);
    }
    match &sink.destination {
        Destination::Stderr { .. } => {
            let mut line = line;
            line.push('\n');
            let _ = io::stderr().lock().write_all(line.as_bytes());
        }
        Destination::File(file) => {
            let mut line = line;
            line.push('\n');
            let failed = match file.lock() {
                Ok(mut f) => f.append(line.as_bytes()),
                Err(_) => None,
            };
            if let Some((path, error)) = failed {
                // Said once per run of failures, on stderr beside the other
                // logs (not through `tracing`: this may run inside it).
                let warning = logging::json_line(
                    &logging::timestamp(),
                    "ERROR",
                    &Value::from("audit.write_failed"),
                    None,
                    &[
                        ("path", r.field("path", Value::from(path))),
                        ("error", r.field("error", Value::from(error))),
                    ],
                );
                let _ = io::stderr()
                    .lock()
                    .write_all(format!("{warning}\n").as_bytes());
            }
        }
    }
}

/// Cut the longest string among `values` (and inside their lists) to half
/// its characters, with [`CUT_MARKER`]; `false` when no string is left
/// worth cutting.
fn halve_longest(values: &mut [(&str, Value)]) -> bool {
    fn longest(v: &mut Value) -> Option<&mut String> {
        match v {
            Value::String(s) => Some(s),
            Value::Array(items) => items.iter_mut().filter_map(longest).max_by_key(|s| s.len()),
            _ => None,
        }
    }
    let Some(s) = values
        .iter_mut()
        .filter_map(|(_, v)| longest(v))
        .max_by_key(|s| s.len())
    else {
        return false;
    };
    let chars = s.chars().count();
    if chars <= 2 * CUT_MARKER.chars().count() {
        return false;
    }
    *s = cut(s, chars / 2 - CUT_MARKER.chars().count());
    true
}

/// The audit file: append-only, rotated once at its bound.
struct AuditFile {
    path: PathBuf,
    file: File,
    /// Bytes in the current file.
    len: u64,
    max: u64,
    /// Whether the last write failed (the failure is reported once).
    failing: bool,
}

impl AuditFile {
    fn open(path: &Path, max: u64) -> Result<AuditFile, AuditError> {
        let file = open_append(path).map_err(|source| AuditError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let len = file
            .metadata()
            .map_err(|source| AuditError::Metadata {
                path: path.to_path_buf(),
                source,
            })?
            .len();
        Ok(AuditFile {
            path: path.to_path_buf(),
            file,
            len,
            max,
            failing: false,
        })
    }

    /// Append one line, rotating first when it would take the file past its
    /// bound. On the first failure of a run: the path and the error.
    fn append(&mut self, line: &[u8]) -> Option<(String, String)> {
        match self.write(line) {
            Ok(()) => {
                self.failing = false;
                None
            }
            Err(e) if !self.failing => {
                self.failing = true;
                Some((self.path.display().to_string(), e.to_string()))
            }
            Err(_) => None,
        }
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        let n = u64::try_from(line.len()).unwrap_or(u64::MAX);
        if self.len > 0 && self.len.saturating_add(n) > self.max {
            self.rotate()?;
        }
        self.file.write_all(line)?;
        self.len = self.len.saturating_add(n);
        Ok(())
    }

    /// `<path>` becomes `<path>.1` (replacing an older one); a fresh file
    /// takes its place.
    fn rotate(&mut self) -> io::Result<()> {
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        match std::fs::rename(&self.path, &old) {
            Ok(()) => {}
            // Moved away by someone else: a fresh file is started all the same.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        self.file = open_append(&self.path)?;
        self.len = self.file.metadata()?.len();
        Ok(())
    }
}

/// Open `path` for appending, creating it readable by its owner only.
fn open_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_path_like_arguments_are_kept_escaped_and_cut() {
        let long = "a/".repeat(MAX_PATH_CHARS);
        let params = json!({
            "name": "search_code",
            "arguments": {
                "pattern": "needle-value",
                "path": format!("src/\u{1b}[31m\n{long}"),
                "file_glob": ["*.rs", "x\u{202e}y"],
                "context_lines": 2
            }
        });
        let facts = Facts::of_call(params.as_object().unwrap(), "stdio".into(), "c/1");
        assert_eq!(facts.tool, "search_code");
        let path = facts.path.unwrap();
        assert!(path.starts_with("src/"), "{path}");
        assert!(!path.contains('\u{1b}') && !path.contains('\n'), "{path}");
        assert!(path.ends_with(CUT_MARKER), "{path}");
        assert_eq!(
            path.chars().count(),
            MAX_PATH_CHARS + CUT_MARKER.chars().count()
        );
        let globs = facts.file_glob.unwrap();
        assert_eq!(globs[0], "*.rs");
        assert!(!globs[1].contains('\u{202e}'), "{globs:?}");
        assert!(!format!("{:?}", (&facts.client, &facts.tool, &globs)).contains("needle"));
    }

    #[test]
    fn an_event_is_cut_to_its_bound_longest_value_first() {
        let mut values: Vec<(&str, Value)> = vec![
            ("rpc_id", Value::from("i".repeat(1030))),
            ("caller", Value::from("stdio")),
            ("path", Value::from("p".repeat(1030))),
            (
                "file_glob",
                Value::Array((0..20).map(|_| Value::from("g".repeat(1030))).collect()),
            ),
            ("outcome", Value::from("ok")),
            ("bytes", Value::from(12u64)),
        ];
        let line =
            |v: &[(&str, Value)]| logging::json_line("t", "INFO", &Value::from("audit"), None, v);
        assert!(line(&values).len() > MAX_EVENT_BYTES);
        while line(&values).len() + 1 > MAX_EVENT_BYTES && halve_longest(&mut values) {}
        let written = line(&values);
        assert!(written.len() < MAX_EVENT_BYTES, "{}", written.len());
        let v: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(v["caller"], "stdio");
        assert_eq!(v["outcome"], "ok");
        assert_eq!(v["file_glob"].as_array().map(Vec::len), Some(20));
        assert!(v["path"].as_str().unwrap().ends_with(CUT_MARKER));
    }

    #[test]
    fn many_globs_are_cut_with_a_count() {
        let globs: Vec<String> = (0..MAX_GLOBS + 3).map(|i| format!("{i}.rs")).collect();
        let params = json!({"name": "search_code", "arguments": {"file_glob": globs}});
        let facts = Facts::of_call(params.as_object().unwrap(), "stdio".into(), "c/1");
        let kept = facts.file_glob.unwrap();
        assert_eq!(kept.len(), MAX_GLOBS + 1);
        assert_eq!(kept[MAX_GLOBS], format!("{CUT_MARKER} 3 more"));
    }

    #[test]
    fn the_file_rotates_once_at_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut f = AuditFile::open(&path, 100).unwrap();
        let line = [b'x'; 39];
        let mut line = line.to_vec();
        line.push(b'\n');
        for _ in 0..2 {
            assert!(f.append(&line).is_none());
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 80);
        assert!(f.append(&line).is_none());
        let rotated = dir.path().join("audit.jsonl.1");
        assert_eq!(std::fs::metadata(&rotated).unwrap().len(), 80);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 40);
        // A line larger than the bound has a fresh file to itself.
        assert!(f.append(&[b'y'; 300]).is_none());
        assert_eq!(std::fs::metadata(&rotated).unwrap().len(), 40);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 300);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_created_owner_only_and_appended_to() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "earlier\n").unwrap();
        let mut f = AuditFile::open(&path, 1 << 20).unwrap();
        assert!(f.append(b"later\n").is_none());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "earlier\nlater\n");
        let fresh = dir.path().join("fresh.jsonl");
        drop(AuditFile::open(&fresh, 1 << 20).unwrap());
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn an_unopenable_path_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("audit.jsonl");
        let e = AuditFile::open(&path, 1 << 20).err().unwrap().to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}

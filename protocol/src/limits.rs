//! Every hard cap in moat, with what it bounds, why this value, and what happens
//! at the cap.
//!
//! Configuration may *lower* the configurable caps ([`Limits`]) but never raise
//! them above the `*_MAX` constants here; the broker refuses such a configuration
//! at start-up. Fixed caps (no configuration) are plain constants.

use serde::{Deserialize, Serialize};

/// Largest `read_file` size a configuration may allow (64 MiB).
///
/// Why: a read is held in memory twice (worker and broker) and copied once more
/// into the response line; 64 MiB keeps the worst case far below the worker's
/// address-space limit. At the cap: `too_large`.
pub const MAX_FILE_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Smallest `max_file_bytes` a configuration may set.
pub const MAX_FILE_BYTES_MIN: u64 = 1024;
/// Default `max_file_bytes` (1 MiB): large enough for any hand-written
/// source file, small enough to answer in one message.
pub const MAX_FILE_BYTES_DEFAULT: u64 = 1024 * 1024;

/// Bounds and default of `max_read_lines`: lines returned by one `read_file`.
/// At the cap the read is cut and reported `truncated: true`.
pub const MAX_READ_LINES_MAX: u32 = 100_000;
/// Lower bound of `max_read_lines`.
pub const MAX_READ_LINES_MIN: u32 = 10;
/// Default of `max_read_lines`.
pub const MAX_READ_LINES_DEFAULT: u32 = 4_000;

/// Bounds and default of `max_search_results`: matches of one `search_code`,
/// definitions of one `find_symbol`. At the cap: `truncated: true`.
pub const MAX_SEARCH_RESULTS_MAX: u32 = 1_000;
/// Lower bound of `max_search_results`.
pub const MAX_SEARCH_RESULTS_MIN: u32 = 1;
/// Default of `max_search_results`.
pub const MAX_SEARCH_RESULTS_DEFAULT: u32 = 200;

/// Bounds and default of `max_search_files`: files one walk yields
/// (search, symbols, overview). At the cap the walk stops early.
pub const MAX_SEARCH_FILES_MAX: u32 = 1_000_000;
/// Lower bound of `max_search_files`.
pub const MAX_SEARCH_FILES_MIN: u32 = 1;
/// Default of `max_search_files`.
pub const MAX_SEARCH_FILES_DEFAULT: u32 = 20_000;

/// Bounds and default of `max_result_bytes`: rendered search output. At the cap
/// the search stops and reports `truncated: true`.
pub const MAX_RESULT_BYTES_MAX: u32 = 8 * 1024 * 1024;
/// Lower bound of `max_result_bytes`.
pub const MAX_RESULT_BYTES_MIN: u32 = 1024;
/// Default of `max_result_bytes` (256 KiB).
pub const MAX_RESULT_BYTES_DEFAULT: u32 = 256 * 1024;

/// Bounds and default of `max_directory_entries`: entries of one listing. At
/// the cap the listing is cut and reported `truncated: true`.
pub const MAX_DIRECTORY_ENTRIES_MAX: u32 = 20_000;
/// Lower bound of `max_directory_entries`.
pub const MAX_DIRECTORY_ENTRIES_MIN: u32 = 1;
/// Default of `max_directory_entries`.
pub const MAX_DIRECTORY_ENTRIES_DEFAULT: u32 = 1_000;

/// Bounds and default of `max_answer_chars`: characters of text one answer
/// holds. The default fits the smallest common client limit: Claude Code
/// warns above 10,000 tokens and refuses a tool result over 25,000 tokens by
/// default (about 100,000 characters of code), several other agents cut
/// results near 30,000–50,000 characters; 40,000 characters is about 10,000
/// tokens of source. Declared to clients in each tool's
/// `_meta["anthropic/maxResultSizeChars"]`.
pub const MAX_ANSWER_CHARS_MIN: u32 = 4_000;
/// Upper bound of `max_answer_chars`.
pub const MAX_ANSWER_CHARS_MAX: u32 = 4_000_000;
/// Default of `max_answer_chars`.
pub const MAX_ANSWER_CHARS_DEFAULT: u32 = 40_000;
/// Characters an answer's summary, notes and fence lines may add to the
/// text a tool cut to its budget (the declared size hint includes them).
pub const ANSWER_FRAME_CHARS: u32 = 2_000;

/// The furthest a paging cursor of search_code, find_symbol or git_log reaches: the
/// items before a page are found again (and held) to find where the page
/// starts, so past this many an answer asks for a narrower query instead of
/// offering a cursor.
pub const MAX_PAGED_ITEMS: u64 = 10_000;

/// Bounds and default of `max_git_entries`: commits of one `git_log`.
pub const MAX_GIT_ENTRIES_MAX: u32 = 1_000;
/// Lower bound of `max_git_entries`.
pub const MAX_GIT_ENTRIES_MIN: u32 = 1;
/// Default of `max_git_entries`.
pub const MAX_GIT_ENTRIES_DEFAULT: u32 = 200;

/// Bounds and default of the per-request wall-clock budget, in milliseconds.
/// Past it the worker stops cooperatively (partial results, or `timed_out`)
/// and, as the backstop, the broker kills it.
pub const TOOL_TIMEOUT_MS_MAX: u64 = 300_000;
/// Lower bound of the per-request budget (0.1 s).
pub const TOOL_TIMEOUT_MS_MIN: u64 = 100;
/// Default per-request budget (15 s).
pub const TOOL_TIMEOUT_MS_DEFAULT: u64 = 15_000;

/// How long after the budget the broker waits for a worker's cooperative
/// answer before it kills the worker's process group. Small, so a stuck
/// request is answered within 100 ms of its deadline.
pub const KILL_GRACE_MS: u64 = 40;

/// Longest path argument, in characters (schema `maxLength`).
pub const MAX_PATH_CHARS: usize = 4096;
/// Longest search pattern, in characters. Longer: `bad_pattern`.
pub const MAX_PATTERN_CHARS: usize = 512;
/// Longest symbol name for `find_symbol`.
pub const MAX_SYMBOL_CHARS: usize = 200;
/// Longest git revision.
pub const MAX_REVISION_CHARS: usize = 200;
/// Most `file_glob` entries, and the longest one.
pub const MAX_GLOBS: usize = 20;
/// Longest single `file_glob` entry.
pub const MAX_GLOB_CHARS: usize = 200;

/// Longest paging cursor, in characters (schema `maxLength`). A cursor is
/// 17 bytes (version, query fingerprint, position) in unpadded base64url:
/// 23 characters; anything longer is not one this server issued.
pub const MAX_CURSOR_CHARS: usize = 64;
/// Deepest `directory_tree` (levels below its top). Beyond ten levels a tree
/// is rarely an overview; the entry cap bounds the cost either way.
pub const MAX_TREE_DEPTH: u8 = 10;
/// `directory_tree` depth when none is asked for.
pub const TREE_DEPTH_DEFAULT: u8 = 3;
/// Most definitions one `file_outline` answer lists (the file's first ones
/// in source order; `truncated` says when there were more).
pub const OUTLINE_MAX_ITEMS: usize = 1_000;

/// Most context lines around each `search_code` match (schema `maximum`).
pub const MAX_SEARCH_CONTEXT_LINES: u8 = 5;
/// Most context lines of a `git_diff` or `git_show` diff (schema `maximum`).
pub const MAX_DIFF_CONTEXT_LINES: u8 = 10;
/// Context lines of a diff when none are asked for.
pub const DIFF_CONTEXT_LINES_DEFAULT: u8 = 3;

/// Bytes sniffed for a NUL to call a file binary (8 KiB, as git does).
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// Default of `server.max_answer_bytes`: the largest tool answer as sent,
/// after JSON escaping (control bytes grow sixfold when escaped, so a file
/// under its own cap can make a much larger answer).
pub const MAX_ANSWER_BYTES_DEFAULT: u64 = 8 * 1024 * 1024;
/// Lower bound of `server.max_answer_bytes`.
pub const MAX_ANSWER_BYTES_MIN: u64 = 64 * 1024;
/// Upper bound of `server.max_answer_bytes`.
pub const MAX_ANSWER_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// Default of `sandbox.max_queued_calls`: tool calls that may wait for a
/// worker beyond those running.
pub const MAX_QUEUED_CALLS_DEFAULT: u64 = 32;
/// Upper bound of `sandbox.max_queued_calls`.
pub const MAX_QUEUED_CALLS_MAX: u64 = 4096;
/// Default of `sandbox.queue_timeout_ms`: longest wait for a worker.
pub const QUEUE_TIMEOUT_MS_DEFAULT: u64 = 30_000;

/// Default of `http.write_timeout_ms`: how long a blocked answer may wait
/// for its client to take it before the connection is closed.
pub const WRITE_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// Default of `http.max_queued_bytes`: answer bytes held for HTTP clients
/// over all connections, from the moment an answer's size is known until
/// no copy of it is left (and, counted apart with the same bound, request
/// body bytes being read). Sized so that both figures full, on top of an
/// idle broker's ~20 MiB, stay well under 128 MiB.
pub const MAX_QUEUED_BYTES_DEFAULT: u64 = 32 * 1024 * 1024;
/// Default of `server.max_stdout_bytes`: answer bytes held for the stdio
/// client (answers waiting for stdout, and the room each running call
/// holds for its answer: `server.max_answer_bytes`).
pub const MAX_STDOUT_BYTES_DEFAULT: u64 = 32 * 1024 * 1024;

/// `search_code` cuts each reported line (and context line) to this many characters.
pub const SEARCH_LINE_CHARS: usize = 400;
/// `project_overview` counts lines and parses manifests only up to this size.
pub const OVERVIEW_MAX_FILE_BYTES: u64 = 262_144;
/// `find_symbol` signature cap, in characters.
pub const SIGNATURE_CHARS: usize = 160;
/// Most lines one `git_blame` answer attributes.
pub const MAX_BLAME_LINES: u64 = 500;
/// Most commits one `git_blame` walk looks at.
pub const MAX_BLAME_COMMITS: u64 = 20_000;
/// Most work-tree entries one `git_status` looks at for untracked paths.
pub const MAX_STATUS_WALK: u64 = 200_000;
/// Most commits one `git_status` walks to count ahead and behind.
pub const MAX_AHEAD_BEHIND_WALK: u64 = 100_000;
/// git output cap, in bytes; output beyond it is dropped and `truncated` set.
pub const GIT_OUTPUT_BYTES: usize = 256 * 1024;
/// git's stderr line forwarded to the client is cut to this many characters.
pub const GIT_STDERR_CHARS: usize = 300;

/// Largest frame a worker may send (72 MiB): the largest file read plus room
/// for the envelope. Checked before allocating; a bigger frame kills the worker.
pub const MAX_RESPONSE_FRAME_LEN: usize = (MAX_FILE_BYTES_MAX as usize) + 8 * 1024 * 1024;
/// Largest frame the broker sends (1 MiB): requests are a handful of short
/// strings; the initial configuration frame is the largest.
pub const MAX_REQUEST_FRAME_LEN: usize = 1024 * 1024;

/// How a bounded setting is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A whole number, written as it is held (a count, bytes, milliseconds,
    /// seconds, a port).
    Number,
    /// A duration held in milliseconds but written in seconds, with a
    /// fraction (`sandbox.tool_timeout_seconds`).
    MillisAsSeconds,
    /// The length of a text, in characters.
    Chars,
}

/// One bounded configuration setting: its bounds (inclusive) and default.
/// The broker checks the setting against exactly these figures, and
/// docs/configuration.md's table of settings states them (a unit test
/// compares the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// `section.field`, as in the file (`sandbox.max_file_bytes`).
    pub key: &'static str,
    /// Smallest value accepted.
    pub min: u64,
    /// Largest value accepted.
    pub max: u64,
    /// The value when the setting is not given; `None` when it has no
    /// number (a text) or is computed at start-up (`sandbox.workers`).
    pub default: Option<u64>,
    /// How the value is written.
    pub unit: Unit,
}

const fn number(key: &'static str, min: u64, max: u64, default: u64) -> Bound {
    Bound {
        key,
        min,
        max,
        default: Some(default),
        unit: Unit::Number,
    }
}

const fn chars(key: &'static str, min: u64, max: u64) -> Bound {
    Bound {
        key,
        min,
        max,
        default: None,
        unit: Unit::Chars,
    }
}

/// `server.name`: 1 to 100 characters.
pub const SERVER_NAME: Bound = chars("server.name", 1, 100);
/// `server.title`: at most 200 characters.
pub const SERVER_TITLE: Bound = chars("server.title", 0, 200);
/// `server.instructions`: at most 4000 characters.
pub const SERVER_INSTRUCTIONS: Bound = chars("server.instructions", 0, 4000);
/// `server.discovery_ttl_ms`: 0 to one day, default one hour.
pub const DISCOVERY_TTL_MS: Bound = number("server.discovery_ttl_ms", 0, 86_400_000, 3_600_000);
/// `server.max_answer_bytes`.
pub const MAX_ANSWER_BYTES: Bound = number(
    "server.max_answer_bytes",
    MAX_ANSWER_BYTES_MIN,
    MAX_ANSWER_BYTES_MAX,
    MAX_ANSWER_BYTES_DEFAULT,
);
/// `sandbox.max_file_bytes`.
pub const MAX_FILE_BYTES: Bound = number(
    "sandbox.max_file_bytes",
    MAX_FILE_BYTES_MIN,
    MAX_FILE_BYTES_MAX,
    MAX_FILE_BYTES_DEFAULT,
);
/// `sandbox.max_read_lines`.
pub const MAX_READ_LINES: Bound = number(
    "sandbox.max_read_lines",
    MAX_READ_LINES_MIN as u64,
    MAX_READ_LINES_MAX as u64,
    MAX_READ_LINES_DEFAULT as u64,
);
/// `sandbox.max_search_results`.
pub const MAX_SEARCH_RESULTS: Bound = number(
    "sandbox.max_search_results",
    MAX_SEARCH_RESULTS_MIN as u64,
    MAX_SEARCH_RESULTS_MAX as u64,
    MAX_SEARCH_RESULTS_DEFAULT as u64,
);
/// `sandbox.max_search_files`.
pub const MAX_SEARCH_FILES: Bound = number(
    "sandbox.max_search_files",
    MAX_SEARCH_FILES_MIN as u64,
    MAX_SEARCH_FILES_MAX as u64,
    MAX_SEARCH_FILES_DEFAULT as u64,
);
/// `sandbox.max_result_bytes`.
pub const MAX_RESULT_BYTES: Bound = number(
    "sandbox.max_result_bytes",
    MAX_RESULT_BYTES_MIN as u64,
    MAX_RESULT_BYTES_MAX as u64,
    MAX_RESULT_BYTES_DEFAULT as u64,
);
/// `sandbox.max_directory_entries`.
pub const MAX_DIRECTORY_ENTRIES: Bound = number(
    "sandbox.max_directory_entries",
    MAX_DIRECTORY_ENTRIES_MIN as u64,
    MAX_DIRECTORY_ENTRIES_MAX as u64,
    MAX_DIRECTORY_ENTRIES_DEFAULT as u64,
);
/// `sandbox.max_git_entries`.
pub const MAX_GIT_ENTRIES: Bound = number(
    "sandbox.max_git_entries",
    MAX_GIT_ENTRIES_MIN as u64,
    MAX_GIT_ENTRIES_MAX as u64,
    MAX_GIT_ENTRIES_DEFAULT as u64,
);
/// `sandbox.max_answer_chars`.
pub const MAX_ANSWER_CHARS: Bound = number(
    "sandbox.max_answer_chars",
    MAX_ANSWER_CHARS_MIN as u64,
    MAX_ANSWER_CHARS_MAX as u64,
    MAX_ANSWER_CHARS_DEFAULT as u64,
);
/// `sandbox.tool_timeout_seconds`, held in milliseconds.
pub const TOOL_TIMEOUT: Bound = Bound {
    key: "sandbox.tool_timeout_seconds",
    min: TOOL_TIMEOUT_MS_MIN,
    max: TOOL_TIMEOUT_MS_MAX,
    default: Some(TOOL_TIMEOUT_MS_DEFAULT),
    unit: Unit::MillisAsSeconds,
};
/// `sandbox.workers`: its default is one per CPU, within
/// [`WORKERS_DEFAULT_MIN`]`..=`[`WORKERS_DEFAULT_MAX`].
pub const WORKERS: Bound = Bound {
    key: "sandbox.workers",
    min: 1,
    max: 64,
    default: None,
    unit: Unit::Number,
};
/// Fewest workers started by default, whatever the CPUs.
pub const WORKERS_DEFAULT_MIN: usize = 2;
/// Most workers started by default, whatever the CPUs.
pub const WORKERS_DEFAULT_MAX: usize = 4;
/// `sandbox.max_queued_calls`.
pub const MAX_QUEUED_CALLS: Bound = number(
    "sandbox.max_queued_calls",
    0,
    MAX_QUEUED_CALLS_MAX,
    MAX_QUEUED_CALLS_DEFAULT,
);
/// `sandbox.queue_timeout_ms`.
pub const QUEUE_TIMEOUT_MS: Bound = number(
    "sandbox.queue_timeout_ms",
    100,
    300_000,
    QUEUE_TIMEOUT_MS_DEFAULT,
);
/// `server.max_stdout_bytes`: at most 4 GiB (a count of bytes the stdio
/// transport holds in one semaphore).
pub const MAX_STDOUT_BYTES: Bound = number(
    "server.max_stdout_bytes",
    1_048_576,
    4_294_967_295,
    MAX_STDOUT_BYTES_DEFAULT,
);
/// `http.port` (0: any free port).
pub const HTTP_PORT: Bound = number("http.port", 0, 65_535, 8080);
/// `http.bearer_token`: at most 512 characters.
pub const BEARER_TOKEN: Bound = chars("http.bearer_token", 0, 512);
/// `http.max_request_bytes`.
pub const MAX_REQUEST_BYTES: Bound = number("http.max_request_bytes", 1024, 16_777_216, 1_048_576);
/// `http.max_connections`.
pub const MAX_CONNECTIONS: Bound = number("http.max_connections", 1, 65_536, 256);
/// `http.max_in_flight`.
pub const MAX_IN_FLIGHT: Bound = number("http.max_in_flight", 1, 4096, 64);
/// `http.header_timeout_ms`.
pub const HEADER_TIMEOUT_MS: Bound = number("http.header_timeout_ms", 100, 300_000, 10_000);
/// `http.body_timeout_ms`.
pub const BODY_TIMEOUT_MS: Bound = number("http.body_timeout_ms", 100, 300_000, 30_000);
/// `http.write_timeout_ms`.
pub const WRITE_TIMEOUT_MS: Bound = number(
    "http.write_timeout_ms",
    100,
    300_000,
    WRITE_TIMEOUT_MS_DEFAULT,
);
/// `http.max_queued_bytes`.
pub const MAX_QUEUED_BYTES: Bound = number(
    "http.max_queued_bytes",
    1_048_576,
    1 << 34,
    MAX_QUEUED_BYTES_DEFAULT,
);
/// `http.auth_failures_per_second`: authentication refusals answered at
/// once, per second (with a second's worth as a burst).
pub const AUTH_FAILURES_PER_SECOND: Bound = number("http.auth_failures_per_second", 1, 100_000, 20);
/// `http.auth_failure_pause_ms`: how long a refusal beyond that budget is
/// held; 0 turns pacing off. At most a minute.
pub const AUTH_FAILURE_PAUSE_MS: Bound = number("http.auth_failure_pause_ms", 0, 60_000, 1_000);
/// `http.oauth.leeway_seconds`: clock skew allowed on `exp` and `nbf`, at
/// most five minutes.
pub const OAUTH_LEEWAY_SECONDS: Bound = number("http.oauth.leeway_seconds", 0, 300, 60);
/// `http.oauth.jwks_min_refresh_seconds`: least time between two JWKS
/// refreshes caused by unknown `kid`s, at most a day.
pub const OAUTH_JWKS_MIN_REFRESH_SECONDS: Bound =
    number("http.oauth.jwks_min_refresh_seconds", 1, 86_400, 60);
/// `http.oauth.jwks_refresh_seconds`: how often the JWKS is read again
/// whatever the tokens say, so a key the authorization server withdrew
/// stops being accepted; at most a day.
pub const OAUTH_JWKS_REFRESH_SECONDS: Bound =
    number("http.oauth.jwks_refresh_seconds", 1, 86_400, 900);
/// Default `observability.audit_max_bytes` (64 MiB).
pub const AUDIT_MAX_BYTES_DEFAULT: u64 = 64 * 1024 * 1024;
/// `observability.audit_max_bytes`.
pub const AUDIT_MAX_BYTES: Bound = number(
    "observability.audit_max_bytes",
    1024,
    1 << 40,
    AUDIT_MAX_BYTES_DEFAULT,
);
/// `observability.metrics_token`: at most 512 characters.
pub const METRICS_TOKEN: Bound = chars("observability.metrics_token", 0, 512);

/// Every bounded configuration setting, in the order of
/// docs/configuration.md.
pub const BOUNDS: &[Bound] = &[
    SERVER_NAME,
    SERVER_TITLE,
    SERVER_INSTRUCTIONS,
    DISCOVERY_TTL_MS,
    MAX_ANSWER_BYTES,
    MAX_STDOUT_BYTES,
    MAX_FILE_BYTES,
    MAX_READ_LINES,
    MAX_SEARCH_RESULTS,
    MAX_SEARCH_FILES,
    MAX_RESULT_BYTES,
    MAX_DIRECTORY_ENTRIES,
    MAX_GIT_ENTRIES,
    MAX_ANSWER_CHARS,
    TOOL_TIMEOUT,
    WORKERS,
    MAX_QUEUED_CALLS,
    QUEUE_TIMEOUT_MS,
    HTTP_PORT,
    BEARER_TOKEN,
    MAX_REQUEST_BYTES,
    MAX_CONNECTIONS,
    MAX_IN_FLIGHT,
    HEADER_TIMEOUT_MS,
    BODY_TIMEOUT_MS,
    WRITE_TIMEOUT_MS,
    MAX_QUEUED_BYTES,
    AUTH_FAILURES_PER_SECOND,
    AUTH_FAILURE_PAUSE_MS,
    OAUTH_LEEWAY_SECONDS,
    OAUTH_JWKS_MIN_REFRESH_SECONDS,
    OAUTH_JWKS_REFRESH_SECONDS,
    AUDIT_MAX_BYTES,
    METRICS_TOKEN,
];

/// The configurable caps, as the broker validated them. Sent to each worker in
/// [`crate::request::WorkerInit`]; each value is within its `*_MIN..=*_MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// `read_file` size cap in bytes.
    pub max_file_bytes: u64,
    /// Lines per `read_file`.
    pub max_read_lines: u32,
    /// Matches per search, definitions per `find_symbol`.
    pub max_search_results: u32,
    /// Files one walk yields.
    pub max_search_files: u32,
    /// Rendered search output, in characters.
    pub max_result_bytes: u32,
    /// Entries per listing.
    pub max_directory_entries: u32,
    /// Commits per `git_log`.
    pub max_git_entries: u32,
    /// Characters of text per answer: every tool cuts its text to it and
    /// says how to go on.
    #[serde(default = "default_answer_chars")]
    pub max_answer_chars: u32,
    /// Per-request budget in milliseconds.
    pub tool_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: MAX_FILE_BYTES_DEFAULT,
            max_read_lines: MAX_READ_LINES_DEFAULT,
            max_search_results: MAX_SEARCH_RESULTS_DEFAULT,
            max_search_files: MAX_SEARCH_FILES_DEFAULT,
            max_result_bytes: MAX_RESULT_BYTES_DEFAULT,
            max_directory_entries: MAX_DIRECTORY_ENTRIES_DEFAULT,
            max_git_entries: MAX_GIT_ENTRIES_DEFAULT,
            max_answer_chars: MAX_ANSWER_CHARS_DEFAULT,
            tool_timeout_ms: TOOL_TIMEOUT_MS_DEFAULT,
        }
    }
}

fn default_answer_chars() -> u32 {
    MAX_ANSWER_CHARS_DEFAULT
}

impl Limits {
    /// The byte budget of one tool's text: bytes are at least characters, so
    /// text cut to this many bytes never passes the character budget.
    #[must_use]
    pub fn answer_bytes(&self) -> usize {
        self.max_answer_chars as usize
    }

    /// The byte cap of a search-like answer's text: `max_result_bytes`,
    /// within the answer budget.
    #[must_use]
    pub fn result_bytes(&self) -> usize {
        (self.max_result_bytes as usize).min(self.answer_bytes())
    }

    /// The byte cap of a git answer's text: [`GIT_OUTPUT_BYTES`], within the
    /// answer budget.
    #[must_use]
    pub fn git_bytes(&self) -> usize {
        GIT_OUTPUT_BYTES.min(self.answer_bytes())
    }

    /// Clamp every value into its hard bounds. The broker validates first and
    /// refuses out-of-range configuration; the worker clamps again so that a
    /// wrong value can never *raise* a cap.
    #[must_use]
    pub fn clamped(self) -> Limits {
        Limits {
            max_file_bytes: self
                .max_file_bytes
                .clamp(MAX_FILE_BYTES_MIN, MAX_FILE_BYTES_MAX),
            max_read_lines: self
                .max_read_lines
                .clamp(MAX_READ_LINES_MIN, MAX_READ_LINES_MAX),
            max_search_results: self
                .max_search_results
                .clamp(MAX_SEARCH_RESULTS_MIN, MAX_SEARCH_RESULTS_MAX),
            max_search_files: self
                .max_search_files
                .clamp(MAX_SEARCH_FILES_MIN, MAX_SEARCH_FILES_MAX),
            max_result_bytes: self
                .max_result_bytes
                .clamp(MAX_RESULT_BYTES_MIN, MAX_RESULT_BYTES_MAX),
            max_directory_entries: self
                .max_directory_entries
                .clamp(MAX_DIRECTORY_ENTRIES_MIN, MAX_DIRECTORY_ENTRIES_MAX),
            max_git_entries: self
                .max_git_entries
                .clamp(MAX_GIT_ENTRIES_MIN, MAX_GIT_ENTRIES_MAX),
            max_answer_chars: self
                .max_answer_chars
                .clamp(MAX_ANSWER_CHARS_MIN, MAX_ANSWER_CHARS_MAX),
            tool_timeout_ms: self
                .tool_timeout_ms
                .clamp(TOOL_TIMEOUT_MS_MIN, TOOL_TIMEOUT_MS_MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamping_never_raises_a_cap() {
        let wild = Limits {
            max_file_bytes: u64::MAX,
            max_read_lines: u32::MAX,
            max_search_results: u32::MAX,
            max_search_files: u32::MAX,
            max_result_bytes: u32::MAX,
            max_directory_entries: u32::MAX,
            max_git_entries: u32::MAX,
            max_answer_chars: u32::MAX,
            tool_timeout_ms: u64::MAX,
        }
        .clamped();
        assert_eq!(wild.max_answer_chars, MAX_ANSWER_CHARS_MAX);
        assert_eq!(wild.max_file_bytes, MAX_FILE_BYTES_MAX);
        assert_eq!(wild.max_read_lines, MAX_READ_LINES_MAX);
        assert_eq!(wild.max_search_results, MAX_SEARCH_RESULTS_MAX);
        assert_eq!(wild.tool_timeout_ms, TOOL_TIMEOUT_MS_MAX);
        assert_eq!(Limits::default().clamped(), Limits::default());
    }
}

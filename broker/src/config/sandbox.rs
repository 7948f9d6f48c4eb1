//! `[sandbox]`: what is served, where tool calls run, and the limits of one
//! call.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use moat_protocol::limits::{self, Limits};

use super::Sources;
use super::error::ConfigError;
use super::values::{as_u32, as_usize, bounded, bounded_or, choice};

/// Where tool requests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// Confined worker processes (Landlock + seccomp on Linux).
    Confined,
    /// The worker library on threads inside the broker (no OS confinement).
    InProcess,
}

impl SandboxMode {
    /// Config-file spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Confined => "confined",
            SandboxMode::InProcess => "in-process",
        }
    }
}

/// `[sandbox]`.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Canonical workspace root.
    pub workspace: PathBuf,
    /// Tool caps.
    pub limits: Limits,
    /// Follow in-workspace symbolic links.
    pub follow_symlinks: bool,
    /// Extra denylist entries.
    pub deny_extra: Vec<String>,
    /// Where requests run.
    pub mode: SandboxMode,
    /// Whether `mode` was chosen automatically (no Landlock, non-Linux).
    pub mode_automatic: bool,
    /// Workers kept ready (default: [`default_workers`]).
    pub workers: usize,
    /// Serve multiply-linked files.
    pub allow_hard_links: bool,
    /// Accept `in-process` in production (explicit opt-out of OS confinement).
    pub allow_in_process_in_production: bool,
    /// Tool calls that may wait for a worker beyond those running; past
    /// them a call is answered `busy` at once.
    pub max_queued_calls: usize,
    /// Longest a tool call waits for a worker before it is answered
    /// `not_started`, in milliseconds (not part of its own deadline).
    #[cfg_attr(
        not(unix),
        allow(
            dead_code,
            reason = "only the worker pool (unix) uses it; the in-process fallback has no worker"
        )
    )]
    pub queue_timeout_ms: u64,
}

/// `[sandbox]` as given.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSandbox {
    workspace: Option<String>,
    max_file_bytes: Option<u64>,
    max_read_lines: Option<u64>,
    max_search_results: Option<u64>,
    max_search_files: Option<u64>,
    max_result_bytes: Option<u64>,
    max_directory_entries: Option<u64>,
    max_git_entries: Option<u64>,
    max_answer_chars: Option<u64>,
    tool_timeout_seconds: Option<f64>,
    follow_symlinks: Option<bool>,
    deny_extra: Option<Vec<String>>,
    mode: Option<String>,
    workers: Option<u64>,
    allow_hard_links: Option<bool>,
    allow_in_process_in_production: Option<bool>,
    pub(super) max_queued_calls: Option<u64>,
    queue_timeout_ms: Option<u64>,
}

/// `sandbox.workers` when not configured: one worker per CPU, at least 2 and
/// at most 4.
///
/// Tool work is CPU-bound, so workers beyond the CPUs add no throughput
/// (measured on 2 CPUs: 2 and 4 workers serve 8 requests in flight at the same
/// rate), while each worker that has served a few different tools holds
/// 7–10 MiB of RSS (the code it ran, counted in every process that maps it).
/// Two keep one slow call (a search at its time budget) from holding up
/// every other; four cap the memory on large machines.
#[must_use]
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(limits::WORKERS_DEFAULT_MIN, |n| {
        n.get()
            .clamp(limits::WORKERS_DEFAULT_MIN, limits::WORKERS_DEFAULT_MAX)
    })
}

/// `sandbox.mode`'s values.
const MODES: &[&str] = &["confined", "in-process"];

/// The workspace as served: `~` expanded, canonical, a directory other than
/// the root, with a UTF-8 path.
fn resolve_workspace(raw: &Path) -> Result<PathBuf, ConfigError> {
    let expanded = match raw.to_str() {
        Some(s) if s == "~" || s.starts_with("~/") => match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(s.trim_start_matches('~').trim_start_matches('/')),
            None => raw.to_path_buf(),
        },
        _ => raw.to_path_buf(),
    };
    let canon = expanded.canonicalize().map_err(|e| {
        ConfigError::Workspace(format!("{} cannot be resolved: {e}", expanded.display()))
    })?;
    if !canon.is_dir() {
        return Err(ConfigError::Workspace(format!(
            "{} is not a directory",
            canon.display()
        )));
    }
    if canon.parent().is_none() {
        return Err(ConfigError::Workspace(
            "the filesystem root cannot be served".into(),
        ));
    }
    if canon.to_str().is_none() {
        return Err(ConfigError::Workspace(
            "the workspace path is not valid UTF-8".into(),
        ));
    }
    Ok(canon)
}

/// `sandbox.tool_timeout_seconds` in milliseconds, within
/// [`limits::TOOL_TIMEOUT`] (its bounds written in seconds).
fn tool_timeout_ms(seconds: Option<f64>) -> Result<u64, ConfigError> {
    let b = limits::TOOL_TIMEOUT;
    let ms = |s: u64| s as f64 / 1000.0;
    let default = b.default.map_or(ms(b.min), ms);
    let value = seconds.unwrap_or(default);
    let (min, max) = (ms(b.min), ms(b.max));
    if !(min..=max).contains(&value) {
        return Err(ConfigError::SecondsOutOfBounds {
            key: b.key,
            min,
            max,
            value,
        });
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "range-checked above: within the bound's milliseconds"
    )]
    Ok((value * 1000.0).round() as u64)
}

/// `[sandbox]`, checked, and the workspace resolved: from `--workspace`,
/// else the setting, else the working directory.
pub(super) fn validate(
    sb: RawSandbox,
    sources: &Sources,
    landlock_available: bool,
) -> Result<SandboxConfig, ConfigError> {
    let tool_timeout_ms = tool_timeout_ms(sb.tool_timeout_seconds)?;
    let limits = Limits {
        max_file_bytes: bounded(&limits::MAX_FILE_BYTES, sb.max_file_bytes)?,
        max_read_lines: as_u32(bounded(&limits::MAX_READ_LINES, sb.max_read_lines)?),
        max_search_results: as_u32(bounded(&limits::MAX_SEARCH_RESULTS, sb.max_search_results)?),
        max_search_files: as_u32(bounded(&limits::MAX_SEARCH_FILES, sb.max_search_files)?),
        max_result_bytes: as_u32(bounded(&limits::MAX_RESULT_BYTES, sb.max_result_bytes)?),
        max_directory_entries: as_u32(bounded(
            &limits::MAX_DIRECTORY_ENTRIES,
            sb.max_directory_entries,
        )?),
        max_git_entries: as_u32(bounded(&limits::MAX_GIT_ENTRIES, sb.max_git_entries)?),
        max_answer_chars: as_u32(bounded(&limits::MAX_ANSWER_CHARS, sb.max_answer_chars)?),
        tool_timeout_ms,
    };
    let (mode, mode_automatic) = match choice("sandbox.mode", sb.mode.as_deref(), MODES)? {
        None => {
            if cfg!(target_os = "linux") && landlock_available {
                (SandboxMode::Confined, false)
            } else {
                (SandboxMode::InProcess, true)
            }
        }
        Some("confined") => (SandboxMode::Confined, false),
        // `choice` returns one of MODES: "in-process".
        Some(_) => (SandboxMode::InProcess, false),
    };
    if mode == SandboxMode::Confined && !cfg!(unix) {
        return Err(ConfigError::ConfinedNeedsLinux);
    }
    let default_workers = default_workers();
    let workers = as_usize(bounded_or(
        &limits::WORKERS,
        sb.workers,
        default_workers as u64,
    )?);
    if let Some(flag) = &sources.workspace_flag
        && flag.to_str().is_some_and(|f| f.trim().is_empty())
    {
        return Err(ConfigError::Workspace(
            "--workspace is empty: give the directory to serve, or leave the flag out".into(),
        ));
    }
    if sources.workspace_flag.is_none()
        && sb.workspace.as_deref().is_some_and(|w| w.trim().is_empty())
    {
        // The file's empty value is refused while the file is read, so
        // this one came from the environment.
        return Err(ConfigError::Workspace(
            "MOAT_SANDBOX__WORKSPACE is empty: give the directory to serve, or unset it to \
             serve the working directory"
                .into(),
        ));
    }
    let workspace_raw = sources
        .workspace_flag
        .clone()
        .or_else(|| sb.workspace.map(PathBuf::from))
        .or_else(|| sources.cwd.clone())
        .ok_or_else(|| {
            ConfigError::Workspace("no workspace given and no working directory".into())
        })?;
    let workspace = resolve_workspace(&workspace_raw)?;
    let deny_extra: Vec<String> = sb
        .deny_extra
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.trim().to_lowercase())
        .filter(|e| !e.is_empty())
        .collect();
    Ok(SandboxConfig {
        workspace,
        limits,
        follow_symlinks: sb.follow_symlinks.unwrap_or(false),
        deny_extra,
        mode,
        mode_automatic,
        workers,
        allow_hard_links: sb.allow_hard_links.unwrap_or(false),
        allow_in_process_in_production: sb.allow_in_process_in_production.unwrap_or(false),
        max_queued_calls: as_usize(bounded(&limits::MAX_QUEUED_CALLS, sb.max_queued_calls)?),
        queue_timeout_ms: bounded(&limits::QUEUE_TIMEOUT_MS, sb.queue_timeout_ms)?,
    })
}

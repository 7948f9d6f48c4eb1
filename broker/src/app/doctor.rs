//! `moat doctor`: what would be served, every limit, the sandbox status, and
//! the warnings — and whether a confined worker actually starts.

use std::process::ExitCode;
use std::sync::Arc;

use super::executor::{ExecutorError, executor};
use super::exit::EXIT_FAILED;
use super::output::{print_stdout, startup_redactor};
use crate::config::{self, SandboxMode, Sources, Transport};
use crate::mcp::meta;
use serde_json::{Value, json};

/// Whether the kernel offers Landlock.
#[must_use]
pub fn landlock_available() -> bool {
    moat_sandbox::landlock_abi() > 0
}

/// The report's checks in order: a label and its value (text, number or
/// flag), printed as aligned lines or, with `--json`, as one object whose keys
/// are the labels with `_` for blanks.
#[derive(Default)]
struct Report(Vec<(&'static str, Value)>);

fn line(out: &mut Report, label: &'static str, value: impl Into<Value>) {
    out.0.push((label, value.into()));
}

impl Report {
    fn text(&self) -> String {
        let mut out = String::new();
        for (label, value) in &self.0 {
            match value {
                Value::String(s) => out.push_str(&format!("{label:<19}{s}\n")),
                v => out.push_str(&format!("{label:<19}{v}\n")),
            }
        }
        out
    }

    fn json(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(label, value)| (label.replace(' ', "_"), value.clone()))
                .collect(),
        )
    }
}

/// Run the checks and print the report on stdout.
pub fn run(sources: &Sources, transport: Transport, as_json: bool) -> ExitCode {
    let config = match config::load(sources, transport, landlock_available()) {
        Ok(c) => Arc::new(c),
        Err(e @ config::ConfigError::Workspace(_)) => {
            eprintln!("{}", startup_redactor(sources).text(&e.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
        Err(e) => {
            let e = startup_redactor(sources).text(&e.to_string()).into_owned();
            eprintln!("configuration refused: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let mut out = Report::default();
    line(&mut out, "environment", config.environment.as_str());
    line(
        &mut out,
        "protocol",
        format!(
            "{} (stateless), {} (initialize)",
            meta::MODERN_VERSION,
            meta::LEGACY_VERSIONS.join(", ")
        ),
    );
    line(
        &mut out,
        "workspace",
        config.sandbox.workspace.display().to_string(),
    );
    let registry = crate::tool::Registry::new();
    if let Ok(r) = &registry {
        let names: Vec<&str> = r
            .declarations()
            .filter_map(|d| d["name"].as_str())
            .collect();
        line(
            &mut out,
            "tools",
            format!("{} ({})", names.len(), names.join(", ")),
        );
    }
    let l = &config.sandbox.limits;
    line(&mut out, "max file bytes", l.max_file_bytes);
    line(&mut out, "max read lines", l.max_read_lines);
    line(&mut out, "max search results", l.max_search_results);
    line(&mut out, "max search files", l.max_search_files);
    line(&mut out, "max result bytes", l.max_result_bytes);
    line(&mut out, "max dir entries", l.max_directory_entries);
    line(&mut out, "max git entries", l.max_git_entries);
    line(
        &mut out,
        "tool timeout",
        format!("{} ms", l.tool_timeout_ms),
    );
    line(&mut out, "follow symlinks", config.sandbox.follow_symlinks);
    line(
        &mut out,
        "allow hard links",
        config.sandbox.allow_hard_links,
    );
    line(&mut out, "redact secrets", config.security.redact_secrets);
    line(
        &mut out,
        "scan content",
        config.security.scan_untrusted_content,
    );
    let deny = moat_worker::Denylist::new(&config.sandbox.deny_extra);
    line(&mut out, "denied names", deny.name_count());
    line(&mut out, "denied patterns", deny.pattern_count());
    line(
        &mut out,
        "http auth",
        match config.http.auth {
            config::HttpAuth::None => "NOT SET",
            config::HttpAuth::Bearer => "set",
            config::HttpAuth::Oauth => "oauth",
        },
    );
    let mut failed = false;
    if let Some(o) = &config.http.oauth {
        line(&mut out, "oauth issuers", o.issuers.join(", "));
        line(&mut out, "oauth audience", o.audience.as_str());
        line(&mut out, "oauth scope", o.required_scope.as_str());
        line(&mut out, "oauth metadata", o.resource_metadata_url.as_str());
        match crate::transport::http::oauth::probe_keys(o) {
            Ok(found) => line(&mut out, "oauth keys", found),
            Err(e) => {
                failed = true;
                line(&mut out, "oauth keys", format!("FAILED: {e}"));
            }
        }
    }
    let mode = match (config.sandbox.mode, config.sandbox.mode_automatic) {
        (SandboxMode::Confined, _) => "confined (worker processes)".to_owned(),
        (SandboxMode::InProcess, true) => {
            "in-process (automatic: no Landlock on this host) — NOT kernel-confined".to_owned()
        }
        (SandboxMode::InProcess, false) => {
            "in-process (configured) — NOT kernel-confined".to_owned()
        }
    };
    line(&mut out, "sandbox mode", mode);
    line(&mut out, "landlock abi", moat_sandbox::landlock_abi());
    line(&mut out, "workers", config.sandbox.workers);
    line(
        &mut out,
        "git",
        "read in-process (no git binary); workers can execute no program",
    );
    // The repository as the git tools will see it (an unsafe one is a
    // warning: every other tool still serves the workspace).
    let mut repo_warning = None;
    match moat_worker::Workspace::open(&super::executor::worker_init(&config)) {
        Ok(ws) => {
            let repo = match moat_worker::repository_verdict(&ws) {
                moat_worker::RepositoryVerdict::None => {
                    "none at the workspace root (git tools answer not_a_repository)".to_owned()
                }
                moat_worker::RepositoryVerdict::Readable => "readable by the git tools".to_owned(),
                moat_worker::RepositoryVerdict::Unsafe(rule) => {
                    let text = format!(
                        "refused by the git tools: {} {}",
                        crate::error::unsafe_rule(rule),
                        crate::error::unsafe_remedy(rule)
                    );
                    repo_warning = Some(format!("repository {text}"));
                    text
                }
            };
            line(&mut out, "repository", repo);
        }
        Err(e) => {
            failed = true;
            line(&mut out, "repository", format!("FAILED: {e}"));
        }
    }

    if config.sandbox.mode == SandboxMode::Confined {
        match probe_worker(&config) {
            Ok(report) => {
                line(&mut out, "worker", "started and confined");
                line(&mut out, "landlock", format!("{:?}", report.landlock));
                line(&mut out, "fs restricted", report.fs_restricted);
                line(&mut out, "tcp denied", report.tcp_denied);
                line(&mut out, "ipc scoped", report.ipc_scoped);
                let seccomp = match (report.seccomp, moat_sandbox::seccomp_policy()) {
                    (true, Some((file, insns))) => {
                        format!(
                            "allow-list installed: {file} ({insns} BPF instructions; anything else kills the worker)"
                        )
                    }
                    (true, None) => "allow-list installed (default: kill)".to_owned(),
                    (false, _) => "not installed".to_owned(),
                };
                line(&mut out, "seccomp", seccomp);
                line(&mut out, "no_new_privs", report.no_new_privs);
                let rl: Vec<String> = report
                    .rlimits
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                line(&mut out, "rlimits", rl.join(", "));
            }
            Err(e) => {
                failed = true;
                line(&mut out, "worker", format!("FAILED: {e}"));
            }
        }
    }
    let mut warnings = config.violations.clone();
    warnings.extend(repo_warning);
    if moat_worker::USERLAND_CHECKS_DISABLED {
        warnings.push("TEST BUILD: userland containment checks are disabled (dangerous-disable-userland-checks)".into());
    }
    let status = if failed {
        "not ready"
    } else if warnings.is_empty() {
        "ready"
    } else {
        "ready, with warnings"
    };
    if as_json {
        let report = json!({
            "checks": out.json(),
            "warnings": warnings,
            "ready": !failed,
            "status": status,
        });
        print_stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ));
    } else {
        let mut text = out.text();
        if !warnings.is_empty() {
            text.push_str("\nwarnings:\n");
            for w in &warnings {
                text.push_str(&format!("  - {w}\n"));
            }
        }
        text.push_str(&format!("\n{status}\n"));
        print_stdout(&text);
    }
    if failed {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Why `doctor` could not start a worker to ask it for its sandbox report.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    /// The runtime to start it in.
    #[error("{0}")]
    Runtime(std::io::Error),
    /// The executor.
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    /// The worker's start-up failed, as the pool reports it.
    #[error("{0}")]
    Worker(String),
    /// No worker was ready in time.
    #[error("no worker started within 10 s")]
    NoWorker,
}

fn probe_worker(
    config: &Arc<config::Config>,
) -> Result<moat_protocol::response::SandboxReport, ProbeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProbeError::Runtime)?;
    rt.block_on(async {
        let mut one = (**config).clone();
        one.sandbox.workers = 1;
        let executor = executor(&one, false)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let result = loop {
            if let Some(r) = executor.sandbox_report() {
                break Ok(r);
            }
            if let Some(e) = executor.last_error() {
                break Err(ProbeError::Worker(e));
            }
            if std::time::Instant::now() > deadline {
                break Err(ProbeError::NoWorker);
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        };
        executor.shutdown().await;
        result
    })
}

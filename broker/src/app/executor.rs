//! Where tool requests run: the worker start-up frame and the executor a
//! configuration asks for (a pool of confined workers, or in-process).

#[cfg(unix)]
use std::path::PathBuf;
use std::sync::Arc;

use moat_protocol::request::{SandboxRequest, WorkerInit};

use crate::config::{Config, SandboxMode};
use crate::supervisor::Executor;
#[cfg(unix)]
use crate::supervisor::{Pool, PoolConfig};

/// The start-up frame for workers.
#[must_use]
pub fn worker_init(config: &Config) -> WorkerInit {
    WorkerInit {
        workspace: config.sandbox.workspace.to_string_lossy().into_owned(),
        limits: config.sandbox.limits,
        follow_symlinks: config.sandbox.follow_symlinks,
        allow_hard_links: config.sandbox.allow_hard_links,
        deny_extra: config.sandbox.deny_extra.clone(),
        redact: config.security.redact_secrets,
        inside_repository: inside_repository(&config.sandbox.workspace),
        // Workers run only in confined mode, and there confinement is not
        // negotiable: on a kernel without Landlock the worker exits 76 and
        // the broker reports it. The in-process fallback for such kernels is
        // chosen (and refused in production) by the configuration, never by
        // quietly starting unconfined workers here.
        sandbox: SandboxRequest::Confined,
    }
}

/// Whether a strict ancestor of `workspace` holds `.git` (a directory, or
/// the file a linked worktree or submodule has): the workspace is then part
/// of a repository, and ignore files apply in it as they do in the
/// repository. The ancestors are looked at here, before any worker starts,
/// because a worker is confined to the workspace.
fn inside_repository(workspace: &std::path::Path) -> bool {
    workspace
        .ancestors()
        .skip(1)
        .any(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
}

/// Why the executor a configuration asks for cannot be started.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    /// In-process: the workspace cannot be opened.
    #[error("the workspace cannot be opened: {0}")]
    Workspace(std::io::Error),
    /// Confined workers on a system without them.
    #[cfg(not(unix))]
    #[error("confined workers need a Unix system; use sandbox.mode = in-process")]
    NotUnix,
    /// The program to start workers from cannot be found.
    #[cfg(unix)]
    #[error("{0}")]
    Program(std::io::Error),
    /// The pool's spawner cannot be started.
    #[cfg(unix)]
    #[error("cannot start the worker pool: {0}")]
    Pool(std::io::Error),
}

/// Build the executor for `config` (inside a runtime).
///
/// # Errors
/// When the workspace (in-process) or the worker pool cannot be set up.
pub fn executor(config: &Config, inherit_stderr: bool) -> Result<Executor, ExecutorError> {
    let init = worker_init(config);
    match config.sandbox.mode {
        SandboxMode::InProcess => {
            let ws = moat_worker::Workspace::open(&init).map_err(ExecutorError::Workspace)?;
            Ok(Executor::InProcess(Arc::new(ws)))
        }
        #[cfg(not(unix))]
        SandboxMode::Confined => {
            let _ = inherit_stderr;
            Err(ExecutorError::NotUnix)
        }
        #[cfg(unix)]
        SandboxMode::Confined => {
            let program = if cfg!(target_os = "linux") {
                PathBuf::from("/proc/self/exe")
            } else {
                std::env::current_exe().map_err(ExecutorError::Program)?
            };
            let pool = Pool::start(PoolConfig {
                program,
                size: config.sandbox.workers,
                init,
                inherit_stderr,
                queue_timeout: std::time::Duration::from_millis(config.sandbox.queue_timeout_ms),
            })
            .map_err(ExecutorError::Pool)?;
            Ok(Executor::Pool(pool))
        }
    }
}

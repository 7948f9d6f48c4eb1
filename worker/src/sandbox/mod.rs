//! TEMPORARY stub, replaced by the real sandbox (rlimits, Landlock, seccomp).
#![allow(unsafe_code)]

use std::path::{Path, PathBuf};

use moat_protocol::response::SandboxReport;

mod socket;
pub use socket::{SOCKET_FD, take_socket};
#[cfg(unix)]
pub mod spawn;

/// What to confine to.
pub struct Policy<'a> {
    /// Workspace root.
    pub workspace: &'a Path,
    /// git and loader.
    pub exec_paths: &'a [PathBuf],
    /// Libraries.
    pub read_paths: &'a [PathBuf],
    /// Full confinement.
    pub confine: bool,
    /// The socket.
    pub socket_fd: i32,
}

/// Sandbox failure.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Not available.
    #[error("confinement is not implemented in this build")]
    Unavailable,
}

impl SandboxError {
    /// Exit code.
    #[must_use]
    pub fn exit_code(&self) -> i32 {
        70
    }
}

/// Enter the sandbox.
pub fn enter(policy: &Policy<'_>) -> Result<SandboxReport, SandboxError> {
    if policy.confine {
        return Err(SandboxError::Unavailable);
    }
    Ok(SandboxReport::default())
}

/// Landlock ABI.
#[must_use]
pub fn landlock_abi() -> u8 {
    0
}

/// Describe a sandbox exit code.
#[must_use]
pub fn describe_exit_code(code: i32) -> Option<&'static str> {
    (code == 70).then_some("the worker could not confine itself")
}

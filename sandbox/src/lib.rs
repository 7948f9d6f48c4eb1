//! moat's privileged code: the worker's sandbox (what a worker does to itself
//! before it reads its first request) and the broker's start of a worker.
//!
//! This is the only crate of the workspace that may contain `unsafe` code
//! (system calls with no safe wrapper: `close_range`, `prctl`, rlimits,
//! Landlock, seccomp, and the fork-to-exec hook); every other crate forbids
//! it. It depends on nothing of moat but `moat-protocol` (for
//! [`SandboxReport`]), so the worker and the broker may both import it: the
//! worker calls [`take_socket`], [`enter`] and [`describe_exit_code`]; the
//! broker calls [`spawn::spawn_worker`], [`landlock_abi`] and
//! [`seccomp_policy`].
//!
//! [`enter`] runs at the very top of the worker's `main`, **before any thread
//! exists**, and applies these steps in this order, each failing closed:
//!
//! | step | what | why |
//! |---|---|---|
//! | 0 precondition | exactly one thread; `socket_fd` is an open socket | Landlock and seccomp restrict only the calling thread |
//! | 1 fds | close every fd but 0, 1, 2 and the socket (`close_range`) | an fd opened before Landlock keeps its access |
//! | 2 stdio | stdin and stdout onto `/dev/null`, stderr kept for logs | nothing but frames on the socket |
//! | 3 dumpable | `PR_SET_DUMPABLE 0` | no ptrace attach or core of worker memory |
//! | 4 rlimits | core 0, fsize 0, nofile, address space (`rlimit.rs`) | bound what a runaway request can take |
//! | 5 `no_new_privs` | `PR_SET_NO_NEW_PRIVS 1` | required by Landlock and seccomp; no setuid gain |
//! | 6 Landlock | read-only workspace, `/dev/null`; no Execute right anywhere; no TCP; scoped IPC (`landlock.rs`) | the kernel backs path containment and no program can run |
//! | 7 seccomp | the allow-list in `seccomp/<arch>.json`, compiled at build time (`seccomp.rs`) | no `execve`/`execveat`, no new process (`clone` only with `CLONE_THREAD`), no sockets to the network, no ptrace, no namespaces, nothing that loosens the sandbox |
//!
//! With [`Policy::confine`] `false` (the in-process fallback, or a kernel without
//! Landlock when the configuration allows it), steps 0 to 5 still run and steps 6
//! and 7 are skipped; the returned [`SandboxReport`] says so.
//!
//! The worker executes no program: git repositories are read in-process
//! (`worker/src/git/`), so nothing outside the workspace is granted at all.
//!
//! # Exit codes
//!
//! A worker that cannot reach the requested level must exit with
//! [`SandboxError::exit_code`], one code per step, so the broker can tell which
//! step failed without parsing text:
//!
//! | code | step |
//! |---|---|
//! | 70 | precondition: more than one thread, or `socket_fd` is not an open socket |
//! | 71 | closing inherited file descriptors |
//! | 72 | stdin/stdout onto `/dev/null` |
//! | 73 | `PR_SET_DUMPABLE` |
//! | 74 | resource limits |
//! | 75 | `no_new_privs` |
//! | 76 | Landlock unavailable (kernel without it, or not Linux) while confinement is requested |
//! | 77 | Landlock ruleset: a rule path cannot be opened (e.g. the workspace does not exist), the ruleset cannot be built or applied, or it is not enforced |
//! | 78 | seccomp: no compiled policy for this architecture, or installing it failed |
//!
//! Codes 70-79 are outside what a Rust program uses on its own (0, 1, 101),
//! the worker loop's own codes (64-67, `exit` in `worker/src/serve.rs`) and what a shell
//! reports for signals (128 + n). A worker killed by the seccomp allow-list
//! has no exit code: it dies by SIGSYS (signal 31).
//!
//! Also here: [`spawn`] (broker side: starting a worker with its socket on
//! fd 3) and [`take_socket`] (worker side: adopting that socket).

#![allow(
    unsafe_code,
    reason = "the sandbox is FFI: close_range, prctl, rlimits, Landlock, seccomp, pre_exec, the thread clock; every block has a SAFETY comment"
)]
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

use moat_protocol::response::SandboxReport;

mod clock;
#[cfg(target_os = "linux")]
mod landlock;
mod memory;
#[cfg(target_os = "linux")]
mod process;
#[cfg(target_os = "linux")]
mod rlimit;
#[cfg(target_os = "linux")]
mod seccomp;
mod socket;
#[cfg(unix)]
pub mod spawn;

pub use clock::thread_cpu_time;
pub use memory::release_free_heap;
pub use socket::SOCKET_FD;
#[cfg(unix)]
pub use socket::take_socket;

/// Exit code of each failing step, with what an operator should read (see
/// [`SandboxError::exit_code`] and [`describe_exit_code`]).
const EXIT_CODES: [(i32, &str); 9] = [
    (
        70,
        "the worker was not single-threaded, or fd 3 was not its socket, when it entered the sandbox",
    ),
    (
        71,
        "the worker could not close the file descriptors it inherited",
    ),
    (
        72,
        "the worker could not point stdin and stdout at /dev/null",
    ),
    (73, "the worker could not make itself non-dumpable"),
    (74, "the worker could not set its resource limits"),
    (75, "the worker could not set no_new_privs"),
    (
        76,
        "confinement was requested but this kernel has no Landlock",
    ),
    (
        77,
        "the worker could not apply its Landlock ruleset (is the workspace an existing directory?)",
    ),
    (78, "the worker could not install its seccomp filter"),
];

/// What the worker confines itself to. Built by the worker from what the broker
/// sent; the paths are absolute and were resolved by the broker at start-up.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'a> {
    /// The workspace root: the only directory the worker may read (ReadFile +
    /// ReadDir beneath it, never Execute nor any write right).
    pub workspace: &'a Path,
    /// `true`: apply Landlock and seccomp (fail if they cannot be applied).
    /// `false`: fds, stdio, dumpable, rlimits and `no_new_privs` only.
    pub confine: bool,
    /// The inherited socket to the broker. Always 3; kept open, everything
    /// else above 2 is closed.
    pub socket_fd: i32,
}

/// Why [`enter`] failed. One variant per step; the
/// worker exits with [`SandboxError::exit_code`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The process has more than one thread: Landlock and seccomp would not
    /// cover the others.
    #[error("the sandbox must be entered while single-threaded, found {threads} threads")]
    NotSingleThreaded {
        /// Threads counted in `/proc/self/stat`.
        threads: u64,
    },
    /// `socket_fd` is not an open socket above stderr.
    #[error("fd {fd} is not the broker socket")]
    BadSocket {
        /// The fd the policy named.
        fd: i32,
        /// What `fstat` said, if it failed.
        #[source]
        source: Option<std::io::Error>,
    },
    /// `close_range` failed.
    #[error("cannot close inherited file descriptors")]
    CloseFds(#[source] std::io::Error),
    /// stdin/stdout could not be pointed at `/dev/null`.
    #[error("cannot point stdin and stdout at /dev/null")]
    Stdio(#[source] std::io::Error),
    /// `PR_SET_DUMPABLE 0` failed.
    #[error("cannot make the worker non-dumpable")]
    Dumpable(#[source] std::io::Error),
    /// A resource limit could not be set.
    #[error("cannot set resource limit {resource}")]
    Rlimit {
        /// The limit's name, e.g. `RLIMIT_NOFILE`.
        resource: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `PR_SET_NO_NEW_PRIVS 1` failed.
    #[error("cannot set no_new_privs")]
    NoNewPrivs(#[source] std::io::Error),
    /// Confinement was requested but the kernel offers no Landlock (or the
    /// platform is not Linux).
    #[error("landlock is not available (abi {abi}) but confinement was requested")]
    LandlockUnavailable {
        /// What the kernel reported (0 = none).
        abi: u8,
    },
    /// A path given to Landlock cannot be opened or is of the wrong kind.
    #[error("cannot grant landlock access to {}", path.display())]
    LandlockPath {
        /// The path of the rule.
        path: PathBuf,
        /// Why it cannot be used.
        #[source]
        source: std::io::Error,
    },
    /// Building or applying the Landlock ruleset failed.
    #[error("cannot apply the landlock ruleset")]
    LandlockRuleset(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The kernel accepted the ruleset but does not enforce it.
    #[error("the landlock ruleset is not enforced")]
    LandlockNotEnforced,
    /// No seccomp policy was compiled in for this architecture, or it is
    /// malformed.
    #[error("no usable seccomp policy {filter:?} for this architecture")]
    SeccompPolicy {
        /// The filter's name in the JSON file.
        filter: &'static str,
    },
    /// Installing a seccomp filter failed.
    #[error("cannot install seccomp filter {filter:?}")]
    SeccompInstall {
        /// The filter's name in the JSON file.
        filter: &'static str,
        /// The error from seccompiler.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl SandboxError {
    /// The process exit code of a worker that failed at this step (70-79; see
    /// the table in the [module docs](self)).
    #[must_use]
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::NotSingleThreaded { .. } | Self::BadSocket { .. } => 70,
            Self::CloseFds(_) => 71,
            Self::Stdio(_) => 72,
            Self::Dumpable(_) => 73,
            Self::Rlimit { .. } => 74,
            Self::NoNewPrivs(_) => 75,
            Self::LandlockUnavailable { .. } => 76,
            Self::LandlockPath { .. } | Self::LandlockRuleset(_) | Self::LandlockNotEnforced => 77,
            Self::SeccompPolicy { .. } | Self::SeccompInstall { .. } => 78,
        }
    }
}

/// The seccomp policy compiled into this build: its file and the number of
/// BPF instructions of its allow-list (`None` off Linux).
#[must_use]
pub fn seccomp_policy() -> Option<(&'static str, usize)> {
    #[cfg(target_os = "linux")]
    {
        Some(seccomp::policy())
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// What a worker exit code in 70-79 says about the sandbox step that failed;
/// `None` for any other code.
#[must_use]
pub fn describe_exit_code(code: i32) -> Option<&'static str> {
    EXIT_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, text)| *text)
}

/// The Landlock ABI the running kernel offers (0: none, or not Linux). For
/// `doctor` and the worker's report; the ruleset handles every right this ABI
/// knows.
#[must_use]
pub fn landlock_abi() -> u8 {
    #[cfg(target_os = "linux")]
    {
        landlock::kernel_abi()
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Enters the sandbox described by `policy`: see the [module docs](self) for the
/// steps. Must be called first thing in the worker's `main`, before any thread
/// is started. On error the process is left partly restricted and must exit
/// with [`SandboxError::exit_code`]; it must not serve requests.
#[cfg(target_os = "linux")]
pub fn enter(policy: &Policy<'_>) -> Result<SandboxReport, SandboxError> {
    process::check_single_threaded()?;
    process::check_socket(policy.socket_fd)?;
    process::close_other_fds(policy.socket_fd)?;
    process::stdio_to_dev_null()?;
    process::set_non_dumpable()?;
    let rlimits = rlimit::apply()?;
    process::set_no_new_privs()?;

    let mut report = SandboxReport {
        landlock_abi: landlock::kernel_abi(),
        rlimits,
        ..SandboxReport::default()
    };
    if policy.confine {
        let status = landlock::restrict(policy)?;
        report.landlock = status.enforcement;
        report.fs_restricted = true;
        report.tcp_denied = status.tcp_denied;
        report.ipc_scoped = status.ipc_scoped;
    }
    // Read back before seccomp, which does not allow the query; the bit can
    // never be cleared again.
    report.no_new_privs = process::no_new_privs_is_set();
    if policy.confine {
        seccomp::install()?;
        report.seccomp = true;
    }
    Ok(report)
}

/// Enters the sandbox described by `policy`. Not Linux: no Landlock, no
/// seccomp, so only `confine: false` is supported (the in-process fallback);
/// nothing is restricted and the report says so.
#[cfg(not(target_os = "linux"))]
pub fn enter(policy: &Policy<'_>) -> Result<SandboxReport, SandboxError> {
    if policy.confine {
        return Err(SandboxError::LandlockUnavailable { abi: 0 });
    }
    Ok(SandboxReport::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_has_its_own_exit_code() {
        let io = || std::io::Error::from_raw_os_error(libc_eperm());
        let errors = [
            SandboxError::BadSocket {
                fd: 3,
                source: None,
            },
            SandboxError::CloseFds(io()),
            SandboxError::Stdio(io()),
            SandboxError::Dumpable(io()),
            SandboxError::Rlimit {
                resource: "RLIMIT_CORE",
                source: io(),
            },
            SandboxError::NoNewPrivs(io()),
            SandboxError::LandlockUnavailable { abi: 0 },
            SandboxError::LandlockNotEnforced,
            SandboxError::SeccompPolicy { filter: "worker" },
        ];
        let codes: Vec<i32> = errors.iter().map(SandboxError::exit_code).collect();
        assert_eq!(codes, (70..=78).collect::<Vec<_>>());
        for code in codes {
            assert!(
                describe_exit_code(code).is_some(),
                "{code} has no description"
            );
        }
        assert_eq!(describe_exit_code(69), None);
        assert_eq!(describe_exit_code(80), None);
        assert_eq!(
            SandboxError::NotSingleThreaded { threads: 2 }.exit_code(),
            70
        );
        let path = SandboxError::LandlockPath {
            path: "/nope".into(),
            source: io(),
        };
        assert_eq!(path.exit_code(), 77);
    }

    fn libc_eperm() -> i32 {
        1
    }
}

//! Sandbox probe: enters moat's real worker sandbox
//! (`moat_sandbox::enter`), then tries ONE named action and reports
//! what happened, like firecracker's seccomp demos
//! (`src/firecracker/examples/seccomp/{harmless,malicious,panic}.rs`).
//! Driven by `tests/tests/suite/sandbox.rs`; `bench/sandbox-spawn.sh` uses
//! `probe bench`.
//!
//! ```text
//! probe run ACTION [--no-confine] [--git PATH] [--fault STEP] [--bad-socket] [--workspace PATH]
//! probe bench N [--no-confine]
//! probe bench-moat N PATH-TO-MOAT
//! probe child ...            (internal: the confined side)
//! ```
//!
//! `run` ([`driver`]) builds a temporary workspace (files, an escaping
//! symlink, a git repository with two commits and a dirty worktree) and a
//! secret file outside it, and
//! spawns itself as `child` the way the broker spawns a worker: environment
//! cleared, stdin and stdout null, the socket on fd 3 (`dup2` in `pre_exec`),
//! its own process group, `PR_SET_PDEATHSIG(SIGKILL)` with a parent check. The
//! child ([`actions`]) calls `moat_sandbox::enter`, sends `ready`, performs the
//! action and sends `result`. The parent prints `key=value` lines: `ready_ms`,
//! `report`, `reply`, `thread` (one per thread, read from
//! `/proc/<pid>/task/*/status` by the parent: the child cannot read `/proc`),
//! `listener_accepted`, `status` (`exit:N` or `signal:N`) and `stderr`.
//!
//! `--fault STEP` installs, before exec, a seccomp filter that makes exactly one
//! step's syscall fail (as a kernel or a container might), to prove the
//! step's exit code: `close_range`, `dup2`, `dumpable`, `setrlimit`, `nnp`,
//! `no_landlock`, `landlock_restrict`, `seccomp`. `--bad-socket` puts
//! `/dev/null` on fd 3 instead of the socket.
//!
//! `bench N` spawns N children that confine themselves (or not, with
//! `--no-confine`) and answer once, and prints the median time from spawn to
//! the child's `ready` line. `bench-moat N MOAT` ([`moat_bench`]) times the
//! real binary: spawn to first `tools/list` answer, spawn to the first answer
//! from a confined worker, and `moat doctor`.
//!
//! Linux only: on other systems the probe says so and exits 2.
#![allow(unsafe_code, reason = "probe: raw syscalls that the sandbox must stop")]
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_macros,
    reason = "the probe reports to its driver on stdout, and its own failures on stderr"
)]

use std::process::ExitCode;

// `src/bin/probe/` has no `main.rs`, so cargo does not take it for a binary.
#[cfg(target_os = "linux")]
#[path = "probe/actions.rs"]
mod actions;
#[cfg(target_os = "linux")]
#[path = "probe/driver.rs"]
mod driver;
#[cfg(target_os = "linux")]
#[path = "probe/moat_bench.rs"]
mod moat_bench;

/// Where the broker puts the worker's socket (`moat_sandbox::SOCKET_FD`).
#[cfg(target_os = "linux")]
const SOCKET_FD: i32 = moat_sandbox::SOCKET_FD;

/// Errors of the probe itself (not of the action it tries).
#[cfg(target_os = "linux")]
type Res<T> = Result<T, Box<dyn std::error::Error>>;

#[cfg(target_os = "linux")]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1).map(String::as_str) {
        Some("child") => actions::child_main(&args[2..]),
        Some("run") => driver::run_main(&args[2..]),
        Some("bench") => driver::bench_main(&args[2..]),
        Some("bench-moat") => moat_bench::bench_moat_main(&args[2..]),
        _ => Err(
            "usage: probe run ACTION [options] | probe bench N [--no-confine] | probe bench-moat N MOAT"
                .into(),
        ),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("probe: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!("probe: the worker sandbox (Landlock + seccomp) exists on Linux only");
    ExitCode::from(2)
}

/// `exit:N` or `signal:N`, as the tests compare them.
#[cfg(target_os = "linux")]
fn status_text(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit:{code}"),
        (None, Some(sig)) => format!("signal:{sig}"),
        _ => "unknown".to_owned(),
    }
}

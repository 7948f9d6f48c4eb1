//! Starting a worker process from the broker.
//!
//! The child is the broker's own binary re-executed with a hidden subcommand.
//! Between fork and exec (async-signal-safe calls only) it: puts its end of
//! the socketpair on fd 3, becomes the leader of its own process group (so the
//! broker can kill it and every thread with one signal), and asks for
//! `SIGKILL` when its parent dies, then checks the parent did not already die.
//! The environment is built from nothing; stdin and stdout are /dev/null.
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, so
//! call [`spawn_worker`] from a thread that lives as long as the broker.

use std::ffi::OsStr;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::SOCKET_FD;

/// What to start.
#[derive(Debug)]
pub struct SpawnSpec<'a> {
    /// The program (the broker's own binary, e.g. `/proc/self/exe`).
    pub program: &'a Path,
    /// Arguments (the hidden worker subcommand).
    pub args: &'a [&'a OsStr],
    /// The complete environment of the child.
    pub env: &'a [(&'a str, &'a str)],
    /// Whether the child's stderr goes to the broker's stderr (else /dev/null).
    pub inherit_stderr: bool,
}

/// Start a worker; returns the child and the broker's end of its socket.
pub fn spawn_worker(spec: &SpawnSpec<'_>) -> io::Result<(Child, UnixStream)> {
    let (broker_end, worker_end) = UnixStream::pair()?;
    let worker_fd = worker_end.as_raw_fd();
    let parent = rustix::process::getpid();
    let parent_raw = parent.as_raw_nonzero().get();

    let mut cmd = Command::new(spec.program);
    cmd.args(spec.args)
        .env_clear()
        .envs(spec.env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(if spec.inherit_stderr {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
    // SAFETY: the closure runs in the child between fork and exec and only makes
    // async-signal-safe system calls (dup2, fcntl, setpgid, prctl, getppid,
    // _exit); it touches no locks and allocates nothing. `worker_fd` stays open
    // in the parent until after spawn returns, so it is valid in the child.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            if worker_fd == SOCKET_FD {
                // dup2 onto itself would keep close-on-exec: clear it instead.
                if libc::fcntl(SOCKET_FD, libc::F_SETFD, 0) == -1 {
                    return Err(io::Error::last_os_error());
                }
            } else if libc::dup2(worker_fd, SOCKET_FD) == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::setpgid(0, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) == -1
                {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != parent_raw {
                    // The broker died before the death signal was armed.
                    libc::_exit(1);
                }
            }
            Ok(())
        });
    }
    let _ = parent_raw;
    let child = cmd.spawn()?;
    drop(worker_end);
    Ok((child, broker_end))
}

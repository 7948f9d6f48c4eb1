//! Process hygiene before the kernel sandbox: single-thread check, the socket,
//! inherited fds, stdio, dumpable and `no_new_privs` (steps 0-3 and 5).

use std::io;

use super::SandboxError;

/// `/proc/self/stat` field 20 (`num_threads`) must be 1: Landlock (ABI < 8) and
/// seccomp without TSYNC restrict only the calling thread, so a thread started
/// earlier (by a library constructor, say) would stay unconfined.
pub(super) fn check_single_threaded() -> Result<(), SandboxError> {
    // Without /proc (a container without it) the count cannot be read: this is
    // a safety net, the worker is single-threaded by construction, so go on.
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Ok(());
    };
    match thread_count(&stat) {
        Some(1) | None => Ok(()),
        Some(threads) => Err(SandboxError::NotSingleThreaded { threads }),
    }
}

/// `num_threads` from the text of `/proc/<pid>/stat`. The command name (field
/// 2) may contain spaces and parentheses, so fields are counted after the last
/// `)`: there `state` is field 3, and `num_threads` field 20.
fn thread_count(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(20 - 3)?.parse().ok()
}

/// The socket the worker serves must be an open socket above stderr.
pub(super) fn check_socket(fd: i32) -> Result<(), SandboxError> {
    if fd <= 2 {
        return Err(SandboxError::BadSocket { fd, source: None });
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstat writes at most one `struct stat` into the pointer, which
    // points to a zeroed, properly aligned local of that type.
    let rc = unsafe { libc::fstat(fd, st.as_mut_ptr()) };
    if rc != 0 {
        return Err(SandboxError::BadSocket {
            fd,
            source: Some(io::Error::last_os_error()),
        });
    }
    // SAFETY: fstat returned 0, so it filled the struct (and it was zeroed
    // before anyway, which is a valid `stat`).
    let st = unsafe { st.assume_init() };
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(SandboxError::BadSocket { fd, source: None });
    }
    Ok(())
}

/// Closes every fd above stderr except `socket_fd`: an fd opened before
/// Landlock keeps the access it was opened with, so nothing the broker (or the
/// broker's parent) leaked may survive.
pub(super) fn close_other_fds(socket_fd: i32) -> Result<(), SandboxError> {
    let socket = u32::try_from(socket_fd).map_err(|_| SandboxError::BadSocket {
        fd: socket_fd,
        source: None,
    })?;
    if socket > 3 {
        close_range(3, socket - 1)?;
    }
    close_range(socket.saturating_add(1), u32::MAX)
}

fn close_range(first: u32, last: u32) -> Result<(), SandboxError> {
    // SAFETY: close_range takes plain integers; closing fds we do not own
    // through a Rust object is what this step is for, and no thread exists that
    // could be using them (checked first).
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if rc != 0 {
        return Err(SandboxError::CloseFds(io::Error::last_os_error()));
    }
    Ok(())
}

/// Points fds 0 and 1 at `/dev/null`; fd 2 stays (the broker reads it as the
/// worker's log). Opened before Landlock, so this open does not depend on the
/// ruleset; the fd itself is closed again (only 0 and 1 keep it).
pub(super) fn stdio_to_dev_null() -> Result<(), SandboxError> {
    let path = c"/dev/null";
    // SAFETY: `path` is a NUL-terminated C string that outlives the call.
    let null = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if null < 0 {
        return Err(SandboxError::Stdio(io::Error::last_os_error()));
    }
    for target in [0, 1] {
        if null != target {
            // SAFETY: both are plain fd numbers; dup2 atomically replaces
            // `target` (stdin or stdout, which we own as the process).
            let rc = unsafe { libc::dup2(null, target) };
            if rc < 0 {
                return Err(SandboxError::Stdio(io::Error::last_os_error()));
            }
        }
    }
    if null > 2 {
        // SAFETY: `null` was opened above and is not used afterwards.
        unsafe { libc::close(null) };
    }
    Ok(())
}

/// `PR_SET_DUMPABLE 0`: no core dump, no ptrace attach by same-uid processes,
/// `/proc/<pid>` files owned by root. Lasts for the worker's life: it never
/// executes another program.
pub(super) fn set_non_dumpable() -> Result<(), SandboxError> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
    if rc != 0 {
        return Err(SandboxError::Dumpable(io::Error::last_os_error()));
    }
    Ok(())
}

/// `PR_SET_NO_NEW_PRIVS 1`: execve can never grant privileges (setuid bits,
/// file capabilities) again; required by Landlock and by seccomp filters for
/// unprivileged processes, set explicitly so `confine: false` gets it too.
pub(super) fn set_no_new_privs() -> Result<(), SandboxError> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) };
    if rc != 0 {
        return Err(SandboxError::NoNewPrivs(io::Error::last_os_error()));
    }
    Ok(())
}

/// Reads the `no_new_privs` bit back for the report. Called before seccomp is
/// installed (the allow-list does not answer this prctl); the bit cannot be
/// cleared once set.
pub(super) fn no_new_privs_is_set() -> bool {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0 as libc::c_ulong, 0, 0, 0) };
    rc == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_skips_a_command_name_with_spaces_and_parens() {
        let stat = "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 7 0 \
                    12345 1000 100";
        assert_eq!(thread_count(stat), Some(7));
    }

    #[test]
    fn thread_count_of_this_process_is_readable() {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(thread_count(&stat).unwrap() >= 1);
    }
}

//! Resource limits (step 4). Soft and hard limits are set to the same value;
//! raising a hard limit again would need `setrlimit`/`prlimit64` with a new
//! value, which the seccomp allow-list refuses (only reads are allowed), so the
//! limits hold for the worker's whole life.
//!
//! Not set, on purpose:
//! - `RLIMIT_CPU` counts CPU time over the worker's whole life, and pooled
//!   workers serve many requests: a lifetime limit would kill a healthy worker.
//!   Runaway requests are ended by the broker's wall-clock deadline instead.
//! - `RLIMIT_NPROC` is per user and not enforced for root (measured): it would
//!   be a limit in name only for the case that matters here (CI runs as root).

use std::io;

use super::SandboxError;

/// `RLIMIT_CORE`: no core files. A core of a worker would put workspace
/// content (and whatever the request carried) on disk outside the workspace.
const CORE: u64 = 0;

/// `RLIMIT_FSIZE`: the worker never writes regular files; a write of
/// even one byte to one is refused (`EFBIG`; the `SIGXFSZ` would end the
/// process). Pipes, sockets and `/dev/null` are not regular files and are
/// unaffected.
const FSIZE: u64 = 0;

/// `RLIMIT_NOFILE`: open fds. The worker holds the socket, stdio, at most one
/// directory and one file per walker thread (the `ignore` walker uses at most
/// 12 threads), and the pack and index files gitoxide keeps open while it reads
/// a repository. 512 leaves more than tenfold headroom
/// and still stops an fd leak long before the system limit.
const NOFILE: u64 = 512;

/// `RLIMIT_AS`: virtual address space, 4 GiB. It bounds reservations, not
/// resident memory: each walker thread's glibc malloc arena reserves 64 MiB
/// and its stack 2 MiB (12 threads: under 1 GiB), a file read is at most
/// `MAX_FILE_BYTES_MAX` (64 MiB) held a few times over, and gitoxide maps
/// pack and index files. A runaway allocation fails (`ENOMEM`, a Rust abort)
/// at 4 GiB instead of pushing the machine into swap or the OOM killer; a
/// repository whose packs cannot be mapped within it fails that git call.
const ADDRESS_SPACE: u64 = 4 * 1024 * 1024 * 1024;

/// The type libc uses for the resource argument (glibc and musl differ).
#[cfg(target_env = "gnu")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type Resource = libc::c_int;

/// The limits, in the order they are applied, with the names the report uses.
const LIMITS: [(&str, Resource, u64); 4] = [
    ("RLIMIT_CORE", libc::RLIMIT_CORE, CORE),
    ("RLIMIT_FSIZE", libc::RLIMIT_FSIZE, FSIZE),
    ("RLIMIT_NOFILE", libc::RLIMIT_NOFILE, NOFILE),
    ("RLIMIT_AS", libc::RLIMIT_AS, ADDRESS_SPACE),
];

/// Applies every limit (soft = hard) and returns `(name, soft)` pairs for the
/// report. A limit already lower than ours is kept (never raised).
pub(super) fn apply() -> Result<Vec<(String, u64)>, SandboxError> {
    let mut applied = Vec::with_capacity(LIMITS.len());
    for (name, resource, value) in LIMITS {
        let soft = set(name, resource, value)?;
        applied.push((name.to_owned(), soft));
    }
    Ok(applied)
}

fn set(name: &'static str, resource: Resource, value: u64) -> Result<u64, SandboxError> {
    let err = |source| SandboxError::Rlimit {
        resource: name,
        source,
    };
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `struct rlimit` into a valid local.
    if unsafe { libc::getrlimit(resource, &mut current) } != 0 {
        return Err(err(io::Error::last_os_error()));
    }
    // Never raise: an inherited lower hard limit wins (raising would fail for
    // an unprivileged worker anyway).
    let value = value.min(current.rlim_max);
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit reads one `struct rlimit` from a valid local.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(err(io::Error::last_os_error()));
    }
    Ok(value)
}

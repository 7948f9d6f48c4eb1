//! seccomp (step 7, last): the syscall allow-list in `seccomp/<arch>.json` in
//! this crate, compiled to BPF by `build.rs` and embedded here.
//!
//! Two filters are stacked, in this order (see `seccomp/README.md`):
//! 1. `enosys`: default allow; `clone3` and `io_uring_*` answered `ENOSYS`. glibc
//!    then falls back from `clone3` (whose flags live in memory, out of a
//!    filter's reach) to `clone`, whose flags the allow-list checks.
//! 2. `worker`: the allow-list; anything else kills the whole process
//!    (`SECCOMP_RET_KILL_PROCESS`, seen by the broker as SIGSYS).
//!
//! The kernel runs every installed filter and keeps the most severe answer
//! (KILL > ERRNO > ALLOW), so a syscall the first filter answers with ENOSYS
//! must be *allowed* by the second; `build.rs` checks that. Filters are
//! inherited by every thread started later.
//! Installation needs no thread sync (TSYNC): [`super::enter`] has checked that
//! the process is single-threaded. seccompiler sets `no_new_privs` before each
//! filter (already set in step 5); after the allow-list nothing can be
//! installed any more, because it allows neither `seccomp` nor that `prctl`.

use seccompiler::{BpfProgram, sock_filter};

use super::SandboxError;

/// The `enosys` filter, compiled from `seccomp/<arch>.json` by `build.rs`.
const ENOSYS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/seccomp_enosys.bpf"));
/// The `worker` allow-list, compiled from `seccomp/<arch>.json` by `build.rs`.
const WORKER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/seccomp_worker.bpf"));

/// Size of one encoded instruction: `code: u16, jt: u8, jf: u8, k: u32`, all
/// little-endian (the encoding `build.rs` writes).
const INSN_LEN: usize = 8;

/// Most instructions a classic BPF program may have (`BPF_MAXINSNS`).
const MAX_INSNS: usize = 4096;

/// The policy file compiled into this build and the size of its compiled
/// allow-list, for `doctor`.
#[must_use]
pub fn policy() -> (&'static str, usize) {
    let file = if cfg!(target_arch = "aarch64") {
        "sandbox/seccomp/aarch64.json"
    } else {
        "sandbox/seccomp/x86_64.json"
    };
    (file, WORKER.len() / 8)
}

/// Installs both filters on the calling thread, `enosys` first. Both are
/// decoded before either is installed, so a broken build fails before the
/// process is half-filtered.
pub(super) fn install() -> Result<(), SandboxError> {
    let enosys = decode("enosys", ENOSYS)?;
    let worker = decode("worker", WORKER)?;
    apply("enosys", &enosys)?;
    apply("worker", &worker)
}

/// Rebuilds `sock_filter`s from the embedded bytes. Empty (no policy for this
/// architecture) or malformed bytes are an error: fail closed.
fn decode(filter: &'static str, bytes: &[u8]) -> Result<BpfProgram, SandboxError> {
    let insns = bytes.len() / INSN_LEN;
    if bytes.is_empty() || !bytes.len().is_multiple_of(INSN_LEN) || insns > MAX_INSNS {
        return Err(SandboxError::SeccompPolicy { filter });
    }
    let program = bytes
        .chunks_exact(INSN_LEN)
        .map(|c| sock_filter {
            code: u16::from_le_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect();
    Ok(program)
}

fn apply(filter: &'static str, program: &BpfProgram) -> Result<(), SandboxError> {
    seccompiler::apply_filter(program).map_err(|e| SandboxError::SeccompInstall {
        filter,
        source: Box::new(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_policies_decode() {
        let enosys = decode("enosys", ENOSYS).unwrap();
        let worker = decode("worker", WORKER).unwrap();
        assert!(enosys.len() > 4 && worker.len() > enosys.len());
        // Both start with seccompiler's architecture check: load the
        // `arch` field of `struct seccomp_data` (offset 4).
        for program in [&enosys, &worker] {
            assert_eq!(
                (program[0].code, program[0].k),
                (0x20, 4),
                "BPF_LD|W|ABS arch"
            );
        }
    }

    #[test]
    fn malformed_bytes_are_refused() {
        assert!(decode("x", &[]).is_err());
        assert!(decode("x", &[0; 9]).is_err());
        assert!(decode("x", &vec![0; INSN_LEN * (MAX_INSNS + 1)]).is_err());
    }
}

//! The calling thread's CPU time.
//!
//! Read with one `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, a call the
//! worker's seccomp policy allows; no library initialisation runs behind it
//! (a raw-syscall library would first read the auxiliary vector with
//! `prctl`, which the policy does not allow).

use std::time::Duration;

/// CPU time the calling thread has used, or `None` where the platform does
/// not report it.
#[must_use]
pub fn thread_cpu_time() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the
        // call, and CLOCK_THREAD_CPUTIME_ID is a clock every supported Unix
        // has; the call writes only `ts`.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
        if rc != 0 {
            return None;
        }
        Some(Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_clock_advances_with_work_on_this_thread() {
        let before = thread_cpu_time().expect("reported on Unix");
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let after = thread_cpu_time().expect("reported on Unix");
        assert!(after > before, "{before:?} → {after:?}");
    }
}

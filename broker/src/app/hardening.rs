//! Process hardening applied first thing in `main`, in the broker and (before
//! its own sandbox) in every worker: no core dumps and not dumpable, so the
//! memory of a process holding a bearer token or file contents cannot be read
//! by another process of the same user or written to disk.

/// Apply the hardening. Failures are ignored: each step only narrows what
/// another process could see, and none is available on every platform.
pub fn apply() {
    #[cfg(target_os = "linux")]
    {
        let _ =
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    }
    #[cfg(unix)]
    {
        let zero = rustix::process::Rlimit {
            current: Some(0),
            maximum: Some(0),
        };
        let _ = rustix::process::setrlimit(rustix::process::Resource::Core, zero);
    }
}

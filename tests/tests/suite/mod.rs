// One file per control (see STYLE.md §4).
mod handshake; // both eras: initialize, discover, tools/list paging, serverInfo

// Worker sandbox (Landlock + seccomp): Linux only.
#[cfg(target_os = "linux")]
mod kernel_only; // userland checks compiled out: Landlock alone refuses every escape; in-process leaks (the control); production refuses the build
#[cfg(target_os = "linux")]
mod sandbox; // the worker sandbox from inside, via the probe: denials, SIGSYS per rule, exit codes, threads, panic, git
#[cfg(target_os = "linux")]
mod sandbox_worker; // the real `moat serve` workers: Seccomp 2 + NoNewPrivs 1 on every thread (also mid-search), fds, rlimits, doctor
#[cfg(target_os = "linux")]
mod supervision_sandbox; // fail closed: a worker that cannot confine exits 76/77/78, doctor and /readyz say why, calls get worker_failed at once

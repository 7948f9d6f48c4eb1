// One file per control (see STYLE.md §4).
mod handshake; // both eras: initialize, discover, tools/list paging, serverInfo
mod kernel_only;
mod sandbox; // the worker sandbox from inside, via the probe: denials, SIGSYS, exit codes, threads, git
mod sandbox_worker; // the real `moat serve` workers: Seccomp 2 + NoNewPrivs 1 on every thread (also mid-search), fds, rlimits, doctor // userland checks compiled out: Landlock alone refuses every escape; in-process leaks (the control); production refuses the build
mod supervision_sandbox; // fail closed: a worker that cannot confine exits 76/77/78, doctor says why, calls get worker_failed at once

//! Worker sandbox, from the inside: drives `probe` (`tests/src/bin/probe.rs`),
//! which enters moat's real sandbox code (`moat_sandbox::enter`) the
//! way a worker does and tries one action; each test asserts what the kernel
//! did. Built for a kernel with Landlock ABI ≥ 6 and seccomp (the test
//! machine: Linux 6.18, ABI 7, root): nothing is skipped, a missing feature
//! fails the test.
//!
//! The same controls seen from outside, through the real `moat serve`, are in
//! `sandbox_worker.rs`; the kernel-alone proof is in `kernel_only.rs`.

use std::collections::BTreeMap;
use std::process::Command;

/// What one `probe run` printed.
#[derive(Debug)]
struct Outcome {
    fields: BTreeMap<String, String>,
    threads: Vec<String>,
}

impl Outcome {
    fn get(&self, key: &str) -> &str {
        self.fields
            .get(key)
            .map(String::as_str)
            .unwrap_or("<missing>")
    }

    fn status(&self) -> &str {
        self.get("status")
    }

    fn reply(&self) -> &str {
        self.get("reply")
    }
}

fn probe(args: &[&str]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_probe"))
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "probe {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut fields = BTreeMap::new();
    let mut threads = Vec::new();
    for line in stdout.lines() {
        let (key, value) = line.split_once('=').unwrap();
        if key == "thread" {
            threads.push(value.to_owned());
        } else {
            fields.insert(key.to_owned(), value.to_owned());
        }
    }
    Outcome { fields, threads }
}

const SIGSYS: &str = "signal:31";
const EACCES: &str = "errno:13";

fn assert_killed_by_seccomp(action: &str) {
    let o = probe(&[action]);
    assert_eq!(o.status(), SIGSYS, "{action}: {o:?}");
    assert!(
        !o.fields.contains_key("reply"),
        "{action} must not get to reply: {o:?}"
    );
}

#[test]
fn report_says_everything_is_enforced() {
    let o = probe(&["ping"]);
    assert_eq!(o.status(), "exit:0", "{o:?}");
    assert_eq!(o.reply(), "pong");
    let report = o.get("report");
    for part in [
        "landlock_abi: 7",
        "landlock: Full",
        "fs_restricted: true",
        "tcp_denied: true",
        "ipc_scoped: true",
        "seccomp: true",
        "no_new_privs: true",
        "(\"RLIMIT_CORE\", 0)",
        "(\"RLIMIT_FSIZE\", 0)",
        "(\"RLIMIT_NOFILE\", 512)",
        "(\"RLIMIT_AS\", 4294967296)",
    ] {
        assert!(report.contains(part), "missing {part} in {report}");
    }
}

#[test]
fn unconfined_mode_sets_rlimits_and_no_new_privs_only() {
    let o = probe(&["read-hostname", "--no-confine"]);
    assert_eq!(o.status(), "exit:0");
    assert_eq!(
        o.reply(),
        "ok",
        "nothing restricts reads without confinement"
    );
    let report = o.get("report");
    assert!(
        report.contains("landlock: None") && report.contains("seccomp: false"),
        "{report}"
    );
    assert!(
        report.contains("no_new_privs: true") && report.contains("RLIMIT_CORE"),
        "{report}"
    );
}

#[test]
fn only_stdio_and_the_socket_survive() {
    // The parent leaks fd 7; the probe itself clones the socket (fd 4) after
    // `enter` to write its replies.
    assert_eq!(probe(&["open-fds"]).reply(), "0,1,2,3,4");
    assert_eq!(probe(&["open-fds", "--no-confine"]).reply(), "0,1,2,3,4");
}

#[test]
fn reading_inside_the_workspace_works() {
    let o = probe(&["read-inside"]);
    assert!(
        o.reply().starts_with("ok:hello from the workspace"),
        "{o:?}"
    );
    let o = probe(&["list-inside"]);
    assert!(o.reply().starts_with("ok:"), "{o:?}");
}

#[test]
fn etc_hostname_is_denied() {
    assert_eq!(probe(&["read-hostname"]).reply(), EACCES);
}

#[test]
fn a_file_outside_the_workspace_is_denied() {
    assert_eq!(probe(&["read-outside"]).reply(), EACCES);
}

#[test]
fn an_escaping_symlink_is_denied() {
    assert_eq!(probe(&["read-escape"]).reply(), EACCES);
}

#[test]
fn listing_the_root_is_denied() {
    assert_eq!(probe(&["list-root"]).reply(), EACCES);
}

#[test]
fn proc_is_not_readable() {
    assert_eq!(probe(&["proc-self"]).reply(), EACCES);
}

#[test]
fn workspace_files_cannot_be_opened_for_writing_or_created() {
    assert_eq!(probe(&["write-inside"]).reply(), EACCES);
    assert_eq!(probe(&["create-inside"]).reply(), EACCES);
}

#[test]
fn no_program_can_be_executed_inside_the_worker() {
    // execve itself, and starting a program the std way (posix_spawn: a
    // clone without CLONE_THREAD), are both killed by seccomp.
    assert_killed_by_seccomp("execve-raw");
    assert_killed_by_seccomp("exec-sh");
}

#[test]
fn an_inet_socket_kills_the_worker() {
    assert_killed_by_seccomp("socket-inet");
}

#[test]
fn a_unix_socket_may_be_created() {
    assert!(probe(&["socket-unix"]).reply().starts_with("rc:"));
}

#[test]
fn connecting_to_a_local_listener_is_impossible() {
    let o = probe(&["connect-tcp"]);
    assert_eq!(o.status(), SIGSYS, "{o:?}");
    assert_eq!(o.get("listener_accepted"), "false");
    // Landlock denies it on its own too: see the unit test
    // `landlock::tests::tcp_connect_is_denied_by_landlock_alone`.
}

#[test]
fn ptrace_mount_unshare_and_memfd_kill_the_worker() {
    for action in ["ptrace", "mount", "unshare", "memfd"] {
        assert_killed_by_seccomp(action);
    }
}

#[test]
fn nothing_can_loosen_the_sandbox_or_leave_the_allowed_arguments() {
    for action in [
        "clone-newuser",
        "prctl-nnp",
        "prctl-dumpable",
        "seccomp-again",
        "landlock-again",
        "raise-rlimit",
        "ioctl-tiocsti",
    ] {
        assert_killed_by_seccomp(action);
    }
}

/// Each argument condition of the allow-list (`sandbox/seccomp/README.md`, "Argument
/// conditions in use"): the case the worker needs passes, a perturbed one
/// kills, like firecracker's `test_seccomp_validate.py`.
#[test]
fn every_argument_condition_lets_its_case_through_and_kills_the_rest() {
    for (action, reply) in [
        ("socket-unix", "rc:"),
        ("sendto-null", "rc:1"),
        ("ioctl-fioclex", "rc:0"),
        ("prctl-name", "rc:0"),
        ("prlimit-own", "rc:0"),
    ] {
        let o = probe(&[action]);
        assert_eq!(o.status(), "exit:0", "{action}: {o:?}");
        assert!(o.reply().starts_with(reply), "{action}: {o:?}");
    }
    for action in [
        "socket-inet",
        "socketpair-inet",
        "sendto-addressed",
        "ioctl-tiocsti",
        "prctl-nnp",
        "prlimit-other",
        "raise-rlimit",
        "clone-newuser",
    ] {
        assert_killed_by_seccomp(action);
    }
}

/// x32 system calls carry the x86_64 audit architecture with bit 30 set in
/// the number: an allow-list matches none of them. (This kernel has no x32
/// support at all; the filter must kill before the kernel would say ENOSYS.)
#[cfg(target_arch = "x86_64")]
#[test]
fn x32_system_call_numbers_kill_the_worker() {
    assert_killed_by_seccomp("x32-getpid");
}

#[test]
fn clone3_and_io_uring_answer_enosys() {
    assert_eq!(probe(&["clone3"]).reply(), "errno:38");
    assert_eq!(probe(&["io-uring"]).reply(), "errno:38");
}

#[test]
fn the_parent_cannot_be_signalled() {
    let o = probe(&["signal-parent"]);
    assert_eq!(o.reply(), "errno:1", "Landlock's signal scope: {o:?}");
}

#[test]
fn openat2_resolves_beneath_without_symlinks() {
    let o = probe(&["openat2"]);
    assert_eq!(
        o.reply(),
        "inside=Ok(\"nested, changed\\n\") symlink=Err(40) dotdot=Err(18)",
        "ELOOP for the symlink, EXDEV for ..: {o:?}"
    );
}

#[test]
fn metadata_listing_clocks_randomness_and_allocation_work() {
    let o = probe(&["worker-ops"]);
    assert_eq!(o.status(), "exit:0", "{o:?}");
    assert_eq!(
        o.reply(),
        "statx=ok lstat=ok readdir=ok readlink=ok getrandom=rc:16 sleep=true \
         clock_gettime=rc:0 alloc=33554433 parallelism=ok"
    );
}

#[test]
fn threads_started_after_confinement_are_all_confined() {
    let o = probe(&["threads"]);
    assert_eq!(o.status(), "exit:0", "{o:?}");
    assert!(
        o.reply().starts_with("walked=") && o.reply().ends_with("joined=4"),
        "{o:?}"
    );
    assert_eq!(o.get("threads_spawned"), "4");
    assert_eq!(o.threads.len(), 5, "main + 4: {:?}", o.threads);
    for t in &o.threads {
        assert!(t.contains(" seccomp=2 ") && t.contains(" nnp=1 "), "{t}");
        assert!(
            t.ends_with(" filters=2"),
            "both filters on every thread: {t}"
        );
    }
}

#[test]
fn a_panic_aborts_instead_of_dying_by_sigsys() {
    let o = probe(&["panic"]);
    assert_eq!(o.status(), "signal:6", "{o:?}");
    assert!(o.get("stderr").contains("probe panic on purpose"));
}

#[test]
fn each_failing_step_has_its_own_exit_code() {
    let cases: [(&[&str], &str, &str); 11] = [
        (
            &["ping", "--bad-socket"],
            "exit:70",
            "not the broker socket",
        ),
        (&["thread-before-enter"], "exit:70", "single-threaded"),
        (
            &["ping", "--fault", "close_range"],
            "exit:71",
            "close inherited",
        ),
        (&["ping", "--fault", "dup2"], "exit:72", "/dev/null"),
        (&["ping", "--fault", "dumpable"], "exit:73", "non-dumpable"),
        (&["ping", "--fault", "setrlimit"], "exit:74", "RLIMIT_CORE"),
        (&["ping", "--fault", "nnp"], "exit:75", "no_new_privs"),
        (
            &["ping", "--fault", "no_landlock"],
            "exit:76",
            "landlock is not available",
        ),
        (
            &["ping", "--fault", "landlock_restrict"],
            "exit:77",
            "landlock ruleset",
        ),
        (
            &["ping", "--workspace", "/nonexistent/moat-ws"],
            "exit:77",
            "/nonexistent/moat-ws",
        ),
        (&["ping", "--fault", "seccomp"], "exit:78", "seccomp filter"),
    ];
    for (args, status, message) in cases {
        let o = probe(args);
        assert_eq!(o.status(), status, "{args:?}: {o:?}");
        assert!(o.get("stderr").contains(message), "{args:?}: {o:?}");
        assert!(
            !o.fields.contains_key("ready_ms"),
            "a failed worker must not serve: {o:?}"
        );
    }
}

#[test]
fn without_landlock_the_unconfined_mode_still_starts() {
    let o = probe(&["ping", "--no-confine", "--fault", "no_landlock"]);
    assert_eq!(o.status(), "exit:0", "{o:?}");
    assert!(o.get("report").contains("landlock_abi: 0"));
}

//! Worker sandbox, from the outside: the real `moat serve` in confined mode,
//! its real workers (`moat __moat_worker`) read through `/proc`, and what
//! `moat doctor` prints. `sandbox.rs` proves the same controls from inside
//! with the probe; this file proves the shipped binary actually applies them.
//!
//! `/proc/<worker>/task/<tid>/status` is read for **every thread**: seccomp
//! (without TSYNC) and Landlock (ABI < 8) restrict only the thread that
//! installs them and the threads it creates afterwards, so one thread started
//! before confinement would be an unconfined thread in a confined process.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use moat_tests::{Fixture, Moat, Mode, Options};
use serde_json::json;

/// The fields of one thread's `/proc/<pid>/task/<tid>/status` this suite
/// looks at, by name (`Seccomp`, `NoNewPrivs`, ...).
type Status = BTreeMap<String, String>;

/// Every thread of `pid` with its status fields. Threads that exit between
/// listing and reading are skipped.
pub(crate) fn thread_statuses(pid: u32) -> Vec<(u32, Status)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        let fields = text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
            .collect();
        out.push((tid, fields));
    }
    out.sort_by_key(|(tid, _)| *tid);
    out
}

/// Panics unless thread `tid` of `pid` is in seccomp filter mode with both of
/// moat's filters (`enosys`, then the `worker` allow-list) and has
/// `no_new_privs`.
pub(crate) fn assert_thread_confined(pid: u32, tid: u32, st: &Status) {
    let f = |k: &str| st.get(k).map_or("<missing>", String::as_str);
    assert_eq!(f("Seccomp"), "2", "worker {pid} thread {tid}: {st:?}");
    assert_eq!(f("NoNewPrivs"), "1", "worker {pid} thread {tid}: {st:?}");
    assert_eq!(
        f("Seccomp_filters"),
        "2",
        "worker {pid} thread {tid}: enosys + worker filters: {st:?}"
    );
}

fn confined(fx: &Fixture, workers: usize) -> (Moat, Vec<u32>) {
    let opts = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", workers.to_string());
    let m = Moat::connect(&fx.root, &opts, moat_tests::Era::Modern);
    // Ready: the worker said hello, which it does only once both seccomp
    // filters are installed (mode 2 alone is set by the first of them).
    let pids = m.wait_for_ready_workers(workers);
    (m, pids)
}

/// `/proc/<pid>/limits` as `name -> (soft, hard)`.
fn limits(pid: u32) -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            // "Max open files            512                  512                  files"
            let name = l.get(..26)?.trim().to_owned();
            let mut rest = l.get(26..)?.split_whitespace();
            Some((name, (rest.next()?.to_owned(), rest.next()?.to_owned())))
        })
        .collect()
}

#[test]
fn every_thread_of_every_idle_worker_is_confined() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let (m, pids) = confined(&fx, 4);
    for pid in pids {
        let threads = thread_statuses(pid);
        assert!(!threads.is_empty(), "worker {pid} has no readable threads");
        for (tid, st) in &threads {
            assert_thread_confined(pid, *tid, st);
        }
    }
    // The broker itself is not confined (it serves the client); what this
    // test sees is the workers' own doing.
    let broker = thread_statuses(m.pid());
    assert!(
        broker.iter().all(|(_, st)| st["Seccomp"] == "0"),
        "{broker:?}"
    );
}

#[test]
fn a_real_worker_keeps_only_stdio_and_its_socket() {
    let fx = Fixture::new();
    let (_m, pids) = confined(&fx, 1);
    let pid = pids[0];
    let mut fds: Vec<(u32, String)> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .map(|e| {
            let n = e.file_name().to_str().unwrap().parse().unwrap();
            let target = std::fs::read_link(e.path()).unwrap();
            (n, target.to_string_lossy().into_owned())
        })
        .collect();
    fds.sort();
    let numbers: Vec<u32> = fds.iter().map(|(n, _)| *n).collect();
    // 0-2 stdio, 3 the socket, 4 the workspace root opened after confinement
    // (every open is relative to it, `openat2(RESOLVE_BENEATH)`).
    assert!(
        numbers.starts_with(&[0, 1, 2, 3]) && numbers.len() <= 5,
        "{fds:?}"
    );
    assert_eq!(fds[0].1, "/dev/null", "stdin: {fds:?}");
    assert_eq!(fds[1].1, "/dev/null", "stdout: {fds:?}");
    assert!(fds[3].1.starts_with("socket:"), "fd 3: {fds:?}");
    if let Some((_, extra)) = fds.get(4) {
        assert_eq!(Path::new(extra), fx.root, "fd 4: {fds:?}");
    }
}

#[test]
fn a_real_worker_runs_under_its_rlimits() {
    let fx = Fixture::new();
    let (_m, pids) = confined(&fx, 1);
    let l = limits(pids[0]);
    let both = |v: &str| (v.to_owned(), v.to_owned());
    assert_eq!(l["Max core file size"], both("0"), "{l:?}");
    assert_eq!(l["Max file size"], both("0"), "{l:?}");
    assert_eq!(l["Max open files"], both("512"), "{l:?}");
    assert_eq!(l["Max address space"], both("4294967296"), "{l:?}");
}

/// A tree big enough that a search keeps its walker threads alive for a
/// while: 1,500 files of ~40 KB in 30 directories.
fn big_tree(fx: &Fixture) {
    let line = "let value = compute(alpha, beta, gamma); // nothing to see here\n";
    let body = line.repeat(600);
    for d in 0..30 {
        for f in 0..50 {
            fx.file(&format!("d{d:02}/f{f:03}.rs"), &body);
        }
    }
    fx.file("d00/needle.rs", "the NEEDLE-42 is here\n");
}

#[test]
fn walker_threads_of_a_running_search_are_confined() {
    let fx = Fixture::new();
    big_tree(&fx);
    let (mut m, pids) = confined(&fx, 1);
    let pid = pids[0];
    // Poll every thread while searches run; repeat until a search was caught
    // with its walker threads alive (the walk is parallel on every host with
    // two or more CPUs).
    let mut seen_threads = BTreeMap::new();
    for attempt in 0..20 {
        let id = 1000 + attempt;
        let mut req = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "search_code", "arguments": {"pattern": "NEEDLE-[0-9]+", "regex": true}}
        });
        req["params"]["_meta"] = Moat::modern_meta();
        m.send(&req);
        let reply = loop {
            for (tid, st) in thread_statuses(pid) {
                assert_thread_confined(pid, tid, &st);
                seen_threads.insert(tid, st.get("Name").cloned().unwrap_or_default());
            }
            if let Some(r) = m.recv_within(Duration::from_micros(200)) {
                break r;
            }
        };
        assert_eq!(reply["id"], json!(id), "{reply}");
        let result = &reply["result"];
        assert!(
            result["structuredContent"]["matches"]
                .to_string()
                .contains("NEEDLE-42"),
            "{reply}"
        );
        if seen_threads.len() > 1 {
            break;
        }
    }
    assert!(
        seen_threads.len() > 1,
        "no search was caught with walker threads running: {seen_threads:?}"
    );
    // The same worker served every search: nothing was killed by seccomp, and
    // whatever threads remain are still confined.
    assert_eq!(m.worker_pids(), vec![pid]);
    for (tid, st) in thread_statuses(pid) {
        assert_thread_confined(pid, tid, &st);
    }
}

#[test]
fn threads_left_after_a_search_are_confined() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", "pub fn needle() {}\n");
    fx.file("src/main.rs", "fn main() { needle(); }\n");
    let (mut m, pids) = confined(&fx, 1);
    let r = m.call("search_code", json!({"pattern": "needle"}));
    assert_ne!(r["isError"], json!(true), "{r}");
    let pid = pids[0];
    assert_eq!(m.worker_pids(), vec![pid], "the worker survived the search");
    let threads = thread_statuses(pid);
    for (tid, st) in &threads {
        assert_thread_confined(pid, *tid, st);
    }
}

/// `moat doctor` output as `label -> value` (labels are padded to 19 columns).
fn doctor(root: &Path, env: &[(&str, &str)]) -> (i32, BTreeMap<String, String>, String) {
    let ws = [
        std::ffi::OsStr::new("doctor"),
        "--workspace".as_ref(),
        root.as_os_str(),
    ];
    let out = moat_tests::run_moat(ws, env);
    let fields = out
        .stdout
        .lines()
        .filter(|l| l.len() > 19 && !l.starts_with(' '))
        .map(|l| {
            let (k, v) = l.split_at(19);
            (k.trim().to_owned(), v.to_owned())
        })
        .collect();
    let all = format!("{}\nstderr:\n{}", out.stdout, out.stderr);
    (out.code.unwrap_or(-1), fields, all)
}

#[test]
fn doctor_reports_the_confinement_a_real_worker_reached() {
    let fx = Fixture::new();
    let (code, f, all) = doctor(&fx.root, &[("MOAT_SANDBOX__MODE", "confined")]);
    assert_eq!(code, 0, "{all}");
    let abi = moat_sandbox::landlock_abi();
    assert!(
        abi >= 6,
        "the test machine must offer Landlock ABI >= 6 (has {abi})"
    );
    let expect = [
        ("sandbox mode", "confined (worker processes)".to_owned()),
        ("landlock abi", abi.to_string()),
        ("worker", "started and confined".to_owned()),
        ("landlock", "Full".to_owned()),
        ("fs restricted", "true".to_owned()),
        ("tcp denied", "true".to_owned()),
        ("ipc scoped", "true".to_owned()),
        (
            "seccomp",
            format!(
                "allow-list installed: {} ({} BPF instructions; anything else kills the worker)",
                moat_sandbox::seccomp_policy().unwrap().0,
                moat_sandbox::seccomp_policy().unwrap().1
            ),
        ),
        ("no_new_privs", "true".to_owned()),
        (
            "rlimits",
            "RLIMIT_CORE=0, RLIMIT_FSIZE=0, RLIMIT_NOFILE=512, RLIMIT_AS=4294967296".to_owned(),
        ),
    ];
    for (label, value) in expect {
        assert_eq!(
            f.get(label).map(String::as_str),
            Some(value.as_str()),
            "{label}:\n{all}"
        );
    }
    assert!(all.contains("\nready\n"), "{all}");
}

#[test]
fn doctor_says_plainly_when_requests_are_not_kernel_confined() {
    let fx = Fixture::new();
    let (code, f, all) = doctor(&fx.root, &[("MOAT_SANDBOX__MODE", "in-process")]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(
        f.get("sandbox mode").map(String::as_str),
        Some("in-process (configured) — NOT kernel-confined"),
        "{all}"
    );
    // No worker is started, so nothing claims a confinement that is not there.
    for label in ["worker", "landlock", "seccomp", "no_new_privs"] {
        assert!(!f.contains_key(label), "{label} in:\n{all}");
    }
}

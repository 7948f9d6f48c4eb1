//! Fail closed: a worker that cannot reach confinement exits with its step's
//! code (70-79, `sandbox/src/lib.rs`), never serves, and the broker
//! says why — `moat doctor` prints `worker FAILED: <reason>`, a tool call gets
//! `worker_failed` at once instead of hanging, and `serve` logs
//! `worker.spawn_failed` with the reason.
//!
//! No test switch exists in the product for this. The failures are caused the
//! way a host would cause them:
//! * the process tree moat starts in refuses something the worker needs (a
//!   kernel without Landlock, a container profile that forbids nested seccomp
//!   filters, a process already nested in the maximum of 16 Landlock domains):
//!   the test installs that restriction between fork and exec of `moat`, and
//!   every worker inherits it;
//! * a file the worker must grant itself access to disappears while the
//!   broker runs (the workspace directory), and the worker that replaces a dead one cannot build its
//!   Landlock ruleset.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use moat_tests::{Era, Fixture, Moat, Mode, Options, error_code, moat_bin, text};
use serde_json::{Value, json};

/// A host condition that keeps a worker from confining itself.
#[derive(Debug, Clone, Copy)]
enum Host {
    /// A kernel without Landlock: the three Landlock syscalls answer
    /// `ENOSYS`, as on a kernel built without it.
    NoLandlock,
    /// A container whose seccomp profile refuses nested filters:
    /// `seccomp()` answers `EPERM`.
    NoNestedSeccomp,
    /// Already inside 16 Landlock domains (sandboxes nested in sandboxes):
    /// the kernel's limit, so one more `landlock_restrict_self` is `E2BIG`.
    LandlockLayersExhausted,
}

/// `LANDLOCK_ACCESS_FS_MAKE_BLOCK`: the one right the filler domains handle
/// (with no rule, so only creating block devices is denied: moat never does).
const ACCESS_FS_MAKE_BLOCK: u64 = 1 << 11;
/// `LANDLOCK_MAX_NUM_LAYERS` (security/landlock/limits.h).
const LANDLOCK_MAX_LAYERS: usize = 16;

/// Installs `host`'s restriction on the calling process. Runs in the child
/// between fork and exec: only raw system calls, nothing allocated.
#[allow(unsafe_code, reason = "raw prctl and Landlock system calls")]
fn restrict(host: Host, filter: Option<&seccompiler::BpfProgram>) -> std::io::Result<()> {
    match host {
        Host::NoLandlock | Host::NoNestedSeccomp => {
            let Some(filter) = filter else {
                return Err(std::io::Error::other("no filter"));
            };
            seccompiler::apply_filter(filter).map_err(|_| std::io::Error::last_os_error())
        }
        Host::LandlockLayersExhausted => {
            // SAFETY: prctl with integer arguments only.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let attr: u64 = ACCESS_FS_MAKE_BLOCK;
            for _ in 0..LANDLOCK_MAX_LAYERS {
                // SAFETY: `attr` is a valid `struct landlock_ruleset_attr`
                // prefix of the size passed (the kernel accepts the first
                // field alone); the kernel only reads it.
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_landlock_create_ruleset,
                        &attr as *const u64,
                        size_of::<u64>(),
                        0u32,
                    )
                };
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // SAFETY: `fd` is the ruleset just created; flags 0.
                let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
                // SAFETY: `fd` is ours and not used again.
                unsafe { libc::close(fd as i32) };
                if rc != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        }
    }
}

/// The seccomp filter for `host`, built before fork.
fn filter_for(host: Host) -> Option<seccompiler::BpfProgram> {
    use seccompiler::{SeccompAction, SeccompFilter, TargetArch};
    let (syscalls, errno): (Vec<i64>, i32) = match host {
        Host::NoLandlock => (
            vec![
                libc::SYS_landlock_create_ruleset,
                libc::SYS_landlock_add_rule,
                libc::SYS_landlock_restrict_self,
            ],
            libc::ENOSYS,
        ),
        Host::NoNestedSeccomp => (vec![libc::SYS_seccomp], libc::EPERM),
        Host::LandlockLayersExhausted => return None,
    };
    let arch = if cfg!(target_arch = "x86_64") {
        TargetArch::x86_64
    } else {
        TargetArch::aarch64
    };
    let filter = SeccompFilter::new(
        syscalls.into_iter().map(|s| (s, vec![])).collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .unwrap();
    Some(filter.try_into().unwrap())
}

/// Runs `moat ARGS --workspace ROOT` under `host`, with `env`; returns
/// `(exit code, stdout, stderr)` and how long it took.
fn moat_under(
    host: Host,
    args: &[&str],
    root: &Path,
    env: &[(&str, &str)],
) -> (i32, String, String, Duration) {
    let filter = filter_for(host);
    let mut cmd = moat_tests::moat_command(&moat_bin());
    cmd.args(args)
        .arg("--workspace")
        .arg(root)
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    // SAFETY: the hook runs between fork and exec and only makes raw system
    // calls (prctl, landlock_*, seccomp through seccompiler's apply_filter,
    // close) on data built before fork; it allocates nothing and takes no lock.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || restrict(host, filter.as_ref()));
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        started.elapsed(),
    )
}

/// The value of `label` in `doctor`'s output (labels are padded to 19).
fn doctor_line<'a>(stdout: &'a str, label: &str) -> Option<&'a str> {
    stdout
        .lines()
        .find(|l| l.len() > 19 && l[..19].trim_end() == label)
        .map(|l| &l[19..])
}

/// `doctor` and `call` under `host` with confinement requested: doctor names
/// the failing step, the call is a prompt `worker_failed`.
fn assert_fails_closed(host: Host, reason: &str) {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let confined = [("MOAT_SANDBOX__MODE", "confined")];

    let (code, stdout, stderr, _) = moat_under(host, &["doctor"], &fx.root, &confined);
    assert_eq!(code, 1, "{host:?}: {stdout}\n{stderr}");
    let worker = doctor_line(&stdout, "worker").unwrap_or_default();
    assert!(
        worker.starts_with("FAILED: ") && worker.contains(reason),
        "{host:?}: worker line {worker:?} should name {reason:?}:\n{stdout}"
    );
    assert!(stdout.ends_with("\nnot ready\n"), "{host:?}: {stdout}");
    for label in ["landlock", "seccomp", "no_new_privs"] {
        assert!(
            doctor_line(&stdout, label).is_none(),
            "{host:?}: a failed worker reports no {label}:\n{stdout}"
        );
    }

    let (code, stdout, stderr, took) = moat_under(
        host,
        &["call", "read_file", r#"{"path": "a.txt"}"#, "--json"],
        &fx.root,
        &confined,
    );
    assert_eq!(code, 1, "{host:?}: {stdout}\n{stderr}");
    let reply: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(error_code(&reply["result"]), "worker_failed", "{reply}");
    assert!(
        !stdout.contains("alpha"),
        "{host:?}: nothing was served: {stdout}"
    );
    assert!(
        took < Duration::from_secs(5),
        "{host:?}: answered in {took:?}, not at once"
    );
}

/// `sandbox.mode = confined` is a demand, not a preference: on a kernel
/// without Landlock no worker may serve, in production least of all.
// See: the broker used to start such workers unconfined (`ProcessOnly`) while
// doctor said "confined (worker processes)" and "ready".
#[test]
fn without_landlock_a_confined_worker_exits_76_and_doctor_says_why() {
    assert_fails_closed(
        Host::NoLandlock,
        "confinement was requested but this kernel has no Landlock",
    );
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let prod = [
        ("MOAT_ENVIRONMENT", "production"),
        ("MOAT_SANDBOX__MODE", "confined"),
    ];
    let (code, stdout, stderr, _) = moat_under(
        Host::NoLandlock,
        &["call", "read_file", r#"{"path": "a.txt"}"#, "--json"],
        &fx.root,
        &prod,
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(!stdout.contains("alpha"), "served unconfined: {stdout}");
}

#[test]
fn when_the_landlock_ruleset_cannot_be_applied_the_worker_exits_77() {
    assert_fails_closed(
        Host::LandlockLayersExhausted,
        "the worker could not apply its Landlock ruleset",
    );
}

#[test]
fn when_seccomp_cannot_be_installed_the_worker_exits_78() {
    assert_fails_closed(
        Host::NoNestedSeccomp,
        "the worker could not install its seccomp filter",
    );
}

/// The kernel support policy: with the mode left to moat, a kernel
/// without Landlock gets the in-process fallback, loudly, and production
/// refuses it unless explicitly allowed.
#[test]
fn without_landlock_the_automatic_mode_falls_back_loudly_and_production_refuses() {
    let fx = Fixture::new();
    let (code, stdout, stderr, _) = moat_under(Host::NoLandlock, &["doctor"], &fx.root, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        doctor_line(&stdout, "sandbox mode"),
        Some("in-process (automatic: no Landlock on this host) — NOT kernel-confined"),
        "{stdout}"
    );
    assert_eq!(doctor_line(&stdout, "landlock abi"), Some("0"), "{stdout}");
    assert!(stdout.ends_with("\nready, with warnings\n"), "{stdout}");

    let prod = [("MOAT_ENVIRONMENT", "production")];
    let (code, stdout, stderr, _) = moat_under(Host::NoLandlock, &["serve"], &fx.root, &prod);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("refusing to start in production") && stderr.contains("in-process"),
        "{stderr}"
    );

    let allowed = [
        ("MOAT_ENVIRONMENT", "production"),
        ("MOAT_SANDBOX__ALLOW_IN_PROCESS_IN_PRODUCTION", "true"),
    ];
    let (code, _, stderr, _) = moat_under(Host::NoLandlock, &["serve"], &fx.root, &allowed);
    assert_eq!(code, 0, "explicitly allowed: {stderr}");
    assert!(stderr.contains("NOT confined by the kernel"), "{stderr}");
}

/// One worker, so the replacement is the only one.
fn one_worker(fx: &Fixture, env: &[(&str, String)]) -> Moat {
    let mut opts = Options::new(Mode::Confined).env("MOAT_SANDBOX__WORKERS", "1");
    for (k, v) in env {
        opts = opts.env(k, v.clone());
    }
    let mut m = Moat::connect(&fx.root, &opts, Era::Modern);
    let r = m.call("read_file", json!({"path": "a.txt"}));
    assert!(text(&r, 1).contains("alpha"), "{r}");
    m
}

fn kill(pid: u32) {
    // SAFETY: plain integer arguments; `pid` is a worker of the broker under
    // test, alive a moment ago (a recycled pid within the test is
    // implausible, and the worker is killed by process group anyway).
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert_eq!(rc, 0, "kill {pid}");
}

/// Calls `read_file` until the pool reports it has no worker at all: every
/// answer on the way must be a prompt `worker_failed`, never content.
fn until_no_worker(m: &mut Moat) -> Value {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let started = Instant::now();
        let r = m.call("read_file", json!({"path": "a.txt"}));
        assert!(started.elapsed() < Duration::from_secs(5), "slow: {r}");
        assert_eq!(error_code(&r), "worker_failed", "{r}");
        if r["structuredContent"]["message"]
            .as_str()
            .is_some_and(|s| s.starts_with("no sandboxed worker could be started"))
        {
            return r;
        }
        assert!(Instant::now() < until, "never reported unavailable: {r}");
    }
}

/// Waits (up to 5 s: the broker's stderr reaches the harness through a
/// reader thread) for a `worker.spawn_failed` log line containing `reason`.
fn assert_spawn_failure_logged(m: &Moat, reason: &str) {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let log = m.stderr();
        if log
            .lines()
            .any(|l| l.contains("worker.spawn_failed") && l.contains(reason))
        {
            return;
        }
        assert!(
            Instant::now() < until,
            "no worker.spawn_failed naming {reason:?} in:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_replacement_that_cannot_find_the_workspace_fails_closed_and_is_logged() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut m = one_worker(&fx, &[]);
    let pid = m.wait_for_workers(1)[0];

    let moved = fx.root.with_extension("moved");
    std::fs::rename(&fx.root, &moved).unwrap();
    kill(pid);
    let r = until_no_worker(&mut m);
    assert!(!r.to_string().contains("alpha"), "{r}");
    assert_spawn_failure_logged(&m, "the worker could not apply its Landlock ruleset");

    // Put it back: the pool retries with back-off and serves again.
    std::fs::rename(&moved, &fx.root).unwrap();
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let r = m.call("read_file", json!({"path": "a.txt"}));
        if text(&r, 1).contains("alpha") {
            break;
        }
        assert_eq!(error_code(&r), "worker_failed", "{r}");
        assert!(Instant::now() < until, "the pool never recovered: {r}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_replacement_whose_workspace_vanished_fails_closed() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut m = one_worker(&fx, &[]);
    let pid = m.wait_for_workers(1)[0];

    // A replacement cannot open the workspace for its Landlock rule.
    std::fs::remove_dir_all(&fx.root).unwrap();
    kill(pid);
    until_no_worker(&mut m);
    assert_spawn_failure_logged(&m, "is the workspace an existing directory?");
}

/// One HTTP/1.1 exchange with `Connection: close`: `(status, body)`.
fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let payload = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        payload.len()
    );
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: {}\r\nMcp-Method: {}\r\nMcp-Name: {}\r\n",
            moat_tests::MODERN,
            b["method"].as_str().unwrap_or_default(),
            b["params"]["name"].as_str().unwrap_or_default()
        ));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(payload.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn http_read_file(addr: &str, path: &str) -> Value {
    let mut req = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": path}}
    });
    req["params"]["_meta"] = Moat::modern_meta();
    let (status, body) = http(addr, "POST", "/mcp", Some(&req));
    assert_eq!(status, 200, "{body}");
    body["result"].clone()
}

/// `/readyz` is what a load balancer or Kubernetes asks; a replica that
/// cannot start a single worker must say so, not keep taking traffic.
// See: readyz kept answering 200 `workers_ready: true` once one worker had
// ever started, however many start-ups failed afterwards.
#[test]
fn readyz_turns_unready_while_no_worker_can_start() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut opts = Options::new(Mode::Confined)
        .env("MOAT_SANDBOX__WORKERS", "1")
        .env("MOAT_HTTP__PORT", "0");
    opts.args = vec!["--transport".into(), "http".into()];
    let m = Moat::start(&fx.root, &opts);
    let until = Instant::now() + Duration::from_secs(10);
    let addr = loop {
        let log = m.stderr();
        if let Some(line) = log.lines().find(|l| l.contains("http.listening")) {
            let v: Value = serde_json::from_str(line).unwrap();
            break v["addr"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < until, "not listening:\n{log}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let r = http_read_file(&addr, "a.txt");
    assert!(text(&r, 1).contains("alpha"), "{r}");
    let (status, body) = http(&addr, "GET", "/readyz", None);
    assert_eq!(
        (status, &body["sandbox"]["workers_ready"]),
        (200, &json!(true)),
        "{body}"
    );

    // No replacement can start: its Landlock rule cannot open the workspace.
    std::fs::remove_dir_all(&fx.root).unwrap();
    kill(m.wait_for_workers(1)[0]);
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let r = http_read_file(&addr, "a.txt");
        assert_eq!(error_code(&r), "worker_failed", "{r}");
        if text(&r, 0).starts_with("no sandboxed worker could be started") {
            break;
        }
        assert!(Instant::now() < until, "{r}");
    }
    let (status, body) = http(&addr, "GET", "/readyz", None);
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unready", "{body}");
    assert_eq!(body["workspace_present"], json!(false), "{body}");
}

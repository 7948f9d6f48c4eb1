//! The parent side of the probe (the "broker"): builds the fixture, spawns
//! `probe child` as the broker spawns a worker, and prints what happened.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::symlink;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::{Res, SOCKET_FD, status_text};

/// An fd the parent leaks into the child on purpose (no `O_CLOEXEC`):
/// `enter` must close it.
const LEAKED_FD: i32 = 7;

/// The first `git` on `PATH`, canonical; the tests pass `--git` to pick one.
fn default_git() -> Res<PathBuf> {
    let path = std::env::var_os("PATH").ok_or("no PATH to find git on")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .find_map(|dir| dir.join("git").canonicalize().ok())
        .ok_or_else(|| "no git on PATH".into())
}

struct Options {
    action: String,
    confine: bool,
    git: PathBuf,
    fault: Option<String>,
    bad_socket: bool,
    workspace: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Res<Options> {
    let mut it = args.iter();
    let action = it.next().ok_or("missing action")?.clone();
    let mut opts = Options {
        action,
        confine: true,
        git: default_git()?,
        fault: None,
        bad_socket: false,
        workspace: None,
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--no-confine" => opts.confine = false,
            "--bad-socket" => opts.bad_socket = true,
            "--git" => opts.git = PathBuf::from(it.next().ok_or("--git PATH")?),
            "--fault" => opts.fault = Some(it.next().ok_or("--fault STEP")?.clone()),
            "--workspace" => {
                opts.workspace = Some(PathBuf::from(it.next().ok_or("--workspace PATH")?))
            }
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(opts)
}

/// The fixture: a workspace and a secret outside it.
struct Fixture {
    _root: tempfile::TempDir,
    workspace: PathBuf,
    secret: PathBuf,
}

fn git_cmd(git: &Path, dir: &Path, args: &[&str]) -> Res<()> {
    let out = Command::new(git)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "probe")
        .env("GIT_AUTHOR_EMAIL", "probe@example.invalid")
        .env("GIT_COMMITTER_NAME", "probe")
        .env("GIT_COMMITTER_EMAIL", "probe@example.invalid")
        .output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

fn make_fixture(git: &Path) -> Res<Fixture> {
    let root = tempfile::Builder::new().prefix("moat-probe-").tempdir()?;
    let workspace = root.path().join("ws");
    let outside = root.path().join("outside");
    fs::create_dir_all(workspace.join("sub/dir"))?;
    fs::create_dir_all(&outside)?;
    let secret = outside.join("secret.txt");
    fs::write(&secret, "TOP SECRET\n")?;
    fs::write(workspace.join("file.txt"), "hello from the workspace\n")?;
    fs::write(workspace.join("sub/dir/nested.txt"), "nested\n")?;
    for i in 0..40 {
        fs::write(
            workspace.join(format!("sub/f{i}.rs")),
            format!("fn f{i}() {{}}\n"),
        )?;
    }
    git_cmd(git, &workspace, &["init", "-q", "-b", "main"])?;
    git_cmd(git, &workspace, &["add", "-A"])?;
    git_cmd(git, &workspace, &["commit", "-q", "-m", "first commit"])?;
    fs::write(
        workspace.join("file.txt"),
        "hello from the workspace\nsecond line\n",
    )?;
    git_cmd(git, &workspace, &["commit", "-q", "-am", "second commit"])?;
    // A dirty worktree for `git diff`, and the escaping symlink (untracked).
    fs::write(workspace.join("sub/dir/nested.txt"), "nested, changed\n")?;
    symlink(&secret, workspace.join("escape"))?;
    Ok(Fixture {
        _root: root,
        workspace,
        secret,
    })
}

struct Spawned {
    child: std::process::Child,
    sock: Option<BufReader<UnixStream>>,
    started: Instant,
}

/// What `probe child` is told.
struct ChildSpec<'a> {
    action: &'a str,
    workspace: &'a Path,
    secret: &'a Path,
    confine: bool,
    git: &'a Path,
    /// Files the child is told about (always empty: nothing is executable).
    files: &'a (Vec<PathBuf>, Vec<PathBuf>),
    fault: Option<&'a str>,
    bad_socket: bool,
}

/// Spawns `probe child` like the broker spawns a worker.
fn spawn_child(spec: &ChildSpec<'_>) -> Res<Spawned> {
    let ChildSpec {
        action,
        workspace,
        secret,
        confine,
        git,
        files,
        fault,
        bad_socket,
    } = *spec;
    let (ours, theirs) = UnixStream::pair()?;
    let theirs_fd = theirs.as_raw_fd();
    let null: OwnedFd = fs::File::open("/dev/null")?.into();
    let null_fd = null.as_raw_fd();
    let fault_filter = match fault {
        Some(step) => Some(fault_filter(step)?),
        None => None,
    };
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("child")
        .arg(action)
        .arg(workspace)
        .arg(secret)
        .arg(if confine { "1" } else { "0" })
        .arg(git)
        .arg(files.0.len().to_string());
    cmd.args(&files.0).args(&files.1);
    cmd.env_clear()
        .env("RUST_BACKTRACE", "0")
        // A built environment, as the broker gives a worker: HOME set, so
        // nothing falls back to getpwuid (glibc would try nscd's socket:
        // connect, which the allow-list kills).
        .env("HOME", "/nonexistent")
        .env("PROBE_PARENT_PID", std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let parent_pid = std::process::id();
    let source_fd = if bad_socket { null_fd } else { theirs_fd };
    // SAFETY: the closure only makes async-signal-safe calls (dup2, fcntl,
    // setpgid, prctl, getppid, seccomp via seccompiler's apply_filter, which
    // neither allocates nor locks) on fds and data prepared before fork.
    unsafe {
        cmd.pre_exec(move || {
            if source_fd == SOCKET_FD {
                if libc::fcntl(SOCKET_FD, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            } else if libc::dup2(source_fd, SOCKET_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
            // A leaked fd without O_CLOEXEC, as a careless parent would pass
            // it: `enter` must close it.
            if libc::dup2(null_fd, LEAKED_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent_pid {
                libc::_exit(1);
            }
            if let Some(filter) = &fault_filter {
                seccompiler::apply_filter(filter)
                    .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let child = cmd.spawn()?;
    drop(theirs);
    drop(null);
    ours.set_read_timeout(Some(Duration::from_secs(20)))?;
    Ok(Spawned {
        child,
        sock: Some(BufReader::new(ours)),
        started,
    })
}

/// A filter that makes exactly one step's syscall fail.
fn fault_filter(step: &str) -> Res<seccompiler::BpfProgram> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
        SeccompFilter, SeccompRule,
    };
    let arg_eq = |i, v| -> Res<SeccompRule> {
        Ok(SeccompRule::new(vec![Cond::new(
            i,
            Len::Dword,
            Op::Eq,
            v,
        )?])?)
    };
    let (syscall, rules, errno): (i64, Vec<SeccompRule>, i32) = match step {
        "close_range" => (libc::SYS_close_range, vec![], libc::EPERM),
        #[cfg(target_arch = "x86_64")]
        "dup2" => (libc::SYS_dup2, vec![], libc::EPERM),
        #[cfg(not(target_arch = "x86_64"))]
        "dup2" => (libc::SYS_dup3, vec![], libc::EPERM),
        "dumpable" => (
            libc::SYS_prctl,
            vec![arg_eq(0, libc::PR_SET_DUMPABLE as u64)?],
            libc::EPERM,
        ),
        "setrlimit" => (
            libc::SYS_prlimit64,
            vec![SeccompRule::new(vec![Cond::new(
                2,
                Len::Qword,
                Op::Ne,
                0,
            )?])?],
            libc::EPERM,
        ),
        "nnp" => (
            libc::SYS_prctl,
            vec![arg_eq(0, libc::PR_SET_NO_NEW_PRIVS as u64)?],
            libc::EPERM,
        ),
        "no_landlock" => (libc::SYS_landlock_create_ruleset, vec![], libc::ENOSYS),
        "landlock_restrict" => (libc::SYS_landlock_restrict_self, vec![], libc::EPERM),
        "seccomp" => (libc::SYS_seccomp, vec![], libc::EPERM),
        other => return Err(format!("unknown fault step {other}").into()),
    };
    let arch = if cfg!(target_arch = "x86_64") {
        seccompiler::TargetArch::x86_64
    } else {
        seccompiler::TargetArch::aarch64
    };
    let filter = SeccompFilter::new(
        BTreeMap::from([(syscall, rules)]),
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}

fn read_line(sock: &mut BufReader<UnixStream>) -> Option<String> {
    let mut line = String::new();
    match sock.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches('\n').to_owned()),
    }
}

/// `Seccomp:` and `NoNewPrivs:` of every thread of `pid`.
fn thread_statuses(pid: u32) -> Res<Vec<String>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(format!("/proc/{pid}/task"))? {
        let entry = entry?;
        let status = fs::read_to_string(entry.path().join("status"))?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
                .unwrap_or_default()
        };
        out.push(format!(
            "{} name={} seccomp={} nnp={} filters={}",
            entry.file_name().to_string_lossy(),
            field("Name:"),
            field("Seccomp:"),
            field("NoNewPrivs:"),
            field("Seccomp_filters:")
        ));
    }
    Ok(out)
}

pub(crate) fn run_main(args: &[String]) -> Res<ExitCode> {
    let opts = parse_options(args)?;
    let fixture = make_fixture(&opts.git)?;
    // The sandbox grants no file to execute: nothing to resolve.
    let files: (Vec<PathBuf>, Vec<PathBuf>) = (Vec::new(), Vec::new());
    let workspace = opts
        .workspace
        .clone()
        .unwrap_or_else(|| fixture.workspace.clone());

    let mut listener = None;
    let mut action = opts.action.clone();
    if action == "connect-tcp" {
        let l = TcpListener::bind("127.0.0.1:0")?;
        action = format!("connect-tcp:{}", l.local_addr()?.port());
        l.set_nonblocking(true)?;
        listener = Some(l);
    }

    let mut spawned = spawn_child(&ChildSpec {
        action: &action,
        workspace: &workspace,
        secret: &fixture.secret,
        confine: opts.confine,
        git: &opts.git,
        files: &files,
        fault: opts.fault.as_deref(),
        bad_socket: opts.bad_socket,
    })?;
    let mut stderr = spawned.child.stderr.take().ok_or("no stderr")?;
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    if let Some(mut sock) = spawned.sock.take()
        && let Some(ready) = read_line(&mut sock)
    {
        let ms = spawned.started.elapsed().as_secs_f64() * 1000.0;
        println!("ready_ms={ms:.3}");
        println!("report={}", ready.strip_prefix("ready ").unwrap_or(&ready));
        while let Some(line) = read_line(&mut sock) {
            if let Some(n) = line.strip_prefix("threads-up ") {
                println!("threads_spawned={n}");
                for t in thread_statuses(spawned.child.id())? {
                    println!("thread={t}");
                }
                sock.get_mut().write_all(b"done\n")?;
            } else {
                println!("reply={}", line.strip_prefix("result ").unwrap_or(&line));
            }
        }
    }
    let status = spawned.child.wait()?;
    if let Some(l) = listener {
        let accepted = !matches!(l.accept(), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
        println!("listener_accepted={accepted}");
    }
    println!("status={}", status_text(status));
    let stderr = stderr_reader.join().unwrap_or_default();
    println!("stderr={}", stderr.replace('\n', "\\n"));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn bench_main(args: &[String]) -> Res<ExitCode> {
    let n: usize = args.first().ok_or("bench N")?.parse()?;
    let confine = !args.iter().any(|a| a == "--no-confine");
    let git = default_git()?;
    let fixture = make_fixture(&git)?;
    // Resolved once, as the broker does at start-up.
    let files: (Vec<PathBuf>, Vec<PathBuf>) = (Vec::new(), Vec::new());
    let mut ready = Vec::with_capacity(n);
    let mut reaped = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = spawn_child(&ChildSpec {
            action: "ping",
            workspace: &fixture.workspace,
            secret: &fixture.secret,
            confine,
            git: &git,
            files: &files,
            fault: None,
            bad_socket: false,
        })?;
        let mut sock = s.sock.take().ok_or("no socket")?;
        read_line(&mut sock).ok_or("no ready line")?;
        ready.push(s.started.elapsed());
        read_line(&mut sock).ok_or("no result line")?;
        drop(sock);
        let status = s.child.wait()?;
        reaped.push(s.started.elapsed());
        if !status.success() {
            return Err(format!("child failed: {}", status_text(status)).into());
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    let p = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0;
    let m = median(&mut ready);
    println!(
        "confine={confine} n={n} spawn_to_ready_median_ms={m:.3} p10={:.3} p90={:.3} \
         spawn_to_reaped_median_ms={:.3}",
        p(&ready, 0.1),
        p(&ready, 0.9),
        median(&mut reaped)
    );
    Ok(ExitCode::SUCCESS)
}

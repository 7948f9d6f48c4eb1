//! The child side of the probe (the "worker"): enters the sandbox exactly as
//! a worker does, then performs one action and reports its result on the
//! socket. Each action is one thing a compromised worker might try, or one
//! thing a real worker must still be able to do.

use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use moat_sandbox::Policy;

use super::{Res, SOCKET_FD, status_text};

pub(crate) fn child_main(args: &[String]) -> Res<ExitCode> {
    let [action, workspace, secret, confine, git, n_exec, rest @ ..] = args else {
        return Err("bad child arguments".into());
    };
    // The driver still passes git's files; the sandbox grants them nothing
    // (no Execute right anywhere, no execve in seccomp).
    let _ = (n_exec, rest);
    let workspace = PathBuf::from(workspace);

    // For the precondition test: a thread that exists before `enter`.
    let early_thread = (action == "thread-before-enter")
        .then(|| std::thread::spawn(|| std::thread::sleep(Duration::from_secs(5))));

    let policy = Policy {
        workspace: &workspace,
        confine: confine == "1",
        socket_fd: SOCKET_FD,
    };
    let report = match moat_sandbox::enter(&policy) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("sandbox: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            std::process::exit(e.exit_code());
        }
    };
    drop(early_thread);

    // SAFETY: fd 3 is the socket the parent put there; `enter` kept it open and
    // nothing else owns it.
    let sock = unsafe { UnixStream::from_raw_fd(SOCKET_FD) };
    let mut out = sock.try_clone()?;
    let mut input = BufReader::new(sock);
    writeln!(out, "ready {report:?}")?;

    let ctx = Ctx {
        workspace,
        secret: PathBuf::from(secret),
        git: PathBuf::from(git),
    };
    let result = perform(action, &ctx, &mut out, &mut input);
    writeln!(out, "result {}", result.replace('\n', "\\n"))?;
    Ok(ExitCode::SUCCESS)
}

struct Ctx {
    workspace: PathBuf,
    secret: PathBuf,
    git: PathBuf,
}

fn errno_text<T>(r: io::Result<T>) -> String {
    match r {
        Ok(_) => "ok".to_owned(),
        Err(e) => match e.raw_os_error() {
            Some(code) => format!("errno:{code}"),
            None => format!("error:{e}"),
        },
    }
}

fn last_errno(rc: libc::c_long) -> String {
    if rc >= 0 {
        format!("rc:{rc}")
    } else {
        format!(
            "errno:{}",
            io::Error::last_os_error().raw_os_error().unwrap_or(0)
        )
    }
}

fn git_command(ctx: &Ctx, args: &[&str]) -> Command {
    let mut cmd = Command::new(&ctx.git);
    cmd.args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.pager=cat",
        "--no-pager",
    ])
    .args(args)
    .current_dir(&ctx.workspace)
    .env_clear()
    .env("HOME", "/nonexistent")
    .env("GIT_CONFIG_NOSYSTEM", "1")
    .env("GIT_CONFIG_GLOBAL", "/dev/null")
    .env("GIT_OPTIONAL_LOCKS", "0")
    .env("GIT_TERMINAL_PROMPT", "0")
    .env("LC_ALL", "C")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd
}

fn run_git(ctx: &Ctx, args: &[&str]) -> String {
    match git_command(ctx, args).output() {
        Ok(out) => format!(
            "{} stdout={} stderr={}",
            status_text(out.status),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => format!("spawn-error:{}", e.raw_os_error().unwrap_or(0)),
    }
}

/// `struct open_how` (linux/openat2.h).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;

fn openat2(dirfd: i32, path: &str) -> Result<OwnedFd, i32> {
    let path = std::ffi::CString::new(path).map_err(|_| libc::EINVAL)?;
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `path` is NUL-terminated, `how` is a valid open_how of the size
    // passed; the kernel only reads both.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            path.as_ptr(),
            &how as *const OpenHow,
            size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: the kernel returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn perform(
    action: &str,
    ctx: &Ctx,
    out: &mut UnixStream,
    input: &mut BufReader<UnixStream>,
) -> String {
    let ws = &ctx.workspace;
    match action {
        "ping" | "thread-before-enter" => "pong".to_owned(),
        "open-fds" => {
            let open: Vec<String> = (0..1024)
                // SAFETY: F_GETFD only queries the fd number.
                .filter(|fd| unsafe { libc::fcntl(*fd, libc::F_GETFD) } != -1)
                .map(|fd| fd.to_string())
                .collect();
            // The socket clone made for writing is the one extra fd.
            open.join(",")
        }
        "read-inside" => match fs::read_to_string(ws.join("file.txt")) {
            Ok(text) => format!("ok:{text}"),
            Err(e) => errno_text::<()>(Err(e)),
        },
        "read-hostname" => errno_text(fs::read("/etc/hostname")),
        "read-outside" => errno_text(fs::read(&ctx.secret)),
        "read-escape" => errno_text(fs::read(ws.join("escape"))),
        "list-root" => errno_text(fs::read_dir("/")),
        "list-inside" => match fs::read_dir(ws) {
            Ok(rd) => format!("ok:{}", rd.count()),
            Err(e) => errno_text::<()>(Err(e)),
        },
        "proc-self" => errno_text(fs::read("/proc/self/status")),
        "write-inside" => errno_text(fs::OpenOptions::new().write(true).open(ws.join("file.txt"))),
        "create-inside" => errno_text(fs::File::create(ws.join("new.txt"))),
        "exec-sh" => match Command::new("/bin/sh").arg("-c").arg("true").status() {
            Ok(s) => format!("ran:{}", status_text(s)),
            Err(e) => errno_text::<()>(Err(e)),
        },
        "execve-raw" => {
            // execve straight through the syscall, no fork: seccomp must kill
            // the process before the kernel looks at the path.
            let path = c"/bin/true";
            let argv = [path.as_ptr(), std::ptr::null()];
            let envp = [std::ptr::null::<libc::c_char>()];
            // SAFETY: NUL-terminated path and NULL-terminated arrays that
            // outlive the call; on success the process image is replaced.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_execve,
                    path.as_ptr(),
                    argv.as_ptr(),
                    envp.as_ptr(),
                )
            };
            last_errno(rc)
        }
        "socket-inet" => {
            // SAFETY: plain integer arguments.
            let rc = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
            last_errno(rc.into())
        }
        "socket-unix" => {
            // SAFETY: plain integer arguments.
            let rc =
                unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
            last_errno(rc.into())
        }
        a if a.starts_with("connect-tcp:") => {
            let port: u16 = a["connect-tcp:".len()..].parse().unwrap_or(0);
            errno_text(std::net::TcpStream::connect(("127.0.0.1", port)))
        }
        "ptrace" => {
            // SAFETY: PTRACE_TRACEME takes no pointers.
            let rc = unsafe { libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) };
            last_errno(rc)
        }
        "mount" => {
            // SAFETY: NUL-terminated literals; data is NULL.
            let rc = unsafe {
                libc::mount(
                    c"none".as_ptr(),
                    c"/tmp".as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            last_errno(rc.into())
        }
        "unshare" => {
            // SAFETY: plain integer argument.
            let rc = unsafe { libc::unshare(libc::CLONE_NEWUSER) };
            last_errno(rc.into())
        }
        "memfd" => {
            // SAFETY: NUL-terminated name.
            let rc = unsafe { libc::memfd_create(c"x".as_ptr(), 0) };
            last_errno(rc.into())
        }
        "clone-newuser" => {
            // SAFETY: raw clone without CLONE_VM: a fork-like child that exits
            // at once (if it ever ran); the filter kills before the kernel acts.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_clone,
                    (libc::CLONE_NEWUSER | libc::SIGCHLD) as libc::c_ulong,
                    0,
                    0,
                    0,
                    0,
                )
            };
            if rc == 0 {
                // SAFETY: in the child: leave immediately.
                unsafe { libc::_exit(0) };
            }
            last_errno(rc)
        }
        "prctl-nnp" => {
            // SAFETY: plain integer arguments.
            let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) };
            last_errno(rc.into())
        }
        "prctl-dumpable" => {
            // SAFETY: plain integer arguments.
            let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1 as libc::c_ulong, 0, 0, 0) };
            last_errno(rc.into())
        }
        "seccomp-again" => {
            let action: u32 = 0;
            // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 from a valid local.
            let rc = unsafe { libc::syscall(libc::SYS_seccomp, 2u32, 0u32, &action as *const u32) };
            last_errno(rc)
        }
        "landlock-again" => {
            // SAFETY: NULL attribute, size 0, VERSION flag: reads no memory.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_landlock_create_ruleset,
                    std::ptr::null::<libc::c_void>(),
                    0usize,
                    1u32,
                )
            };
            last_errno(rc)
        }
        "raise-rlimit" => {
            let limit = libc::rlimit {
                rlim_cur: 4096,
                rlim_max: 4096,
            };
            // SAFETY: reads one rlimit from a valid local.
            let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
            last_errno(rc.into())
        }
        "ioctl-tiocsti" => {
            let byte = b'x';
            // SAFETY: TIOCSTI reads one byte from a valid local (and fails on
            // a non-terminal if it ever ran).
            let rc = unsafe { libc::ioctl(2, libc::TIOCSTI, &byte as *const u8) };
            last_errno(rc.into())
        }
        "ioctl-fioclex" => {
            // SAFETY: FIOCLEX takes no argument; fd 0 is /dev/null.
            let rc = unsafe { libc::ioctl(0, libc::FIOCLEX) };
            last_errno(rc.into())
        }
        "prctl-name" => {
            // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16
            // bytes from a static literal.
            let rc = unsafe { libc::prctl(libc::PR_SET_NAME, c"probe-named".as_ptr(), 0, 0, 0) };
            last_errno(rc.into())
        }
        "prlimit-own" | "prlimit-other" => {
            let pid: libc::pid_t = if action == "prlimit-own" {
                0
            } else {
                std::env::var("PROBE_PARENT_PID")
                    .ok()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1)
            };
            let mut old = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: new limit NULL (read only); `old` is a valid rlimit to
            // write.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_prlimit64,
                    pid,
                    libc::RLIMIT_NOFILE,
                    std::ptr::null::<libc::rlimit>(),
                    &mut old as *mut libc::rlimit,
                )
            };
            last_errno(rc)
        }
        "socketpair-inet" => {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors.
            let rc =
                unsafe { libc::socketpair(libc::AF_INET, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) };
            last_errno(rc.into())
        }
        "sendto-null" | "sendto-addressed" => {
            let (a, _b) = match UnixStream::pair() {
                Ok(p) => p,
                Err(e) => return errno_text::<()>(Err(e)),
            };
            // An abstract address: only its non-NULL pointer matters here.
            // SAFETY: an all-zero sockaddr_un is valid.
            let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
            addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
            let (ptr, len) = if action == "sendto-null" {
                (std::ptr::null(), 0)
            } else {
                (
                    (&addr as *const libc::sockaddr_un).cast::<libc::sockaddr>(),
                    size_of::<libc::sockaddr_un>() as libc::socklen_t,
                )
            };
            // SAFETY: one byte from a valid local; `ptr` is NULL or points to
            // `addr`, valid for `len` bytes.
            let rc = unsafe { libc::sendto(a.as_raw_fd(), b"x".as_ptr().cast(), 1, 0, ptr, len) };
            last_errno(rc as libc::c_long)
        }
        #[cfg(target_arch = "x86_64")]
        "x32-getpid" => {
            /// `__X32_SYSCALL_BIT`: x32 system calls are the x86_64 numbers
            /// with bit 30 set, under the same audit architecture.
            const X32_SYSCALL_BIT: libc::c_long = 0x4000_0000;
            // SAFETY: getpid takes no arguments.
            let rc = unsafe { libc::syscall(X32_SYSCALL_BIT | libc::SYS_getpid) };
            last_errno(rc)
        }
        "clone3" => {
            // SAFETY: NULL args with size 0: the kernel (or the filter) rejects it
            // before touching memory.
            let rc = unsafe {
                libc::syscall(libc::SYS_clone3, std::ptr::null::<libc::c_void>(), 0usize)
            };
            last_errno(rc)
        }
        "io-uring" => {
            let mut params = [0u8; 120];
            // SAFETY: `params` is a zeroed buffer at least as large as
            // `struct io_uring_params`.
            let rc = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
            last_errno(rc)
        }
        "signal-parent" => {
            // The parent's pid comes from the environment: getppid is not in
            // the allow-list (nothing in the worker needs it).
            let parent: i32 = std::env::var("PROBE_PARENT_PID")
                .ok()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            // SAFETY: plain integer arguments; SIGTERM would end the parent if
            // Landlock's signal scope did not stop it.
            let rc = unsafe { libc::kill(parent, libc::SIGTERM) };
            last_errno(rc.into())
        }
        "openat2" => {
            let root = match fs::File::open(ws) {
                Ok(f) => f,
                Err(e) => return errno_text::<()>(Err(e)),
            };
            let fd = root.as_raw_fd();
            let inside = openat2(fd, "sub/dir/nested.txt").map(|fd| {
                let mut text = String::new();
                let _ = fs::File::from(fd).read_to_string(&mut text);
                text
            });
            format!(
                "inside={:?} symlink={:?} dotdot={:?}",
                inside,
                openat2(fd, "escape").map(|_| ()),
                openat2(fd, "../outside/secret.txt").map(|_| ())
            )
        }
        "worker-ops" => worker_ops(ctx),
        "git-log" => run_git(ctx, &["log", "--oneline", "-n", "3"]),
        "git-diff" => run_git(
            ctx,
            &["diff", "--no-ext-diff", "--no-textconv", "HEAD~1", "HEAD"],
        ),
        "git-diff-stat" => run_git(
            ctx,
            &[
                "diff",
                "--no-ext-diff",
                "--no-textconv",
                "--stat",
                "HEAD~1",
                "HEAD",
            ],
        ),
        "git-diff-worktree" => run_git(ctx, &["diff", "--no-ext-diff", "--no-textconv", "--stat"]),
        "git-kill" => git_kill(ctx),
        "threads" => threads(ctx, out, input),
        "panic" => panic!("probe panic on purpose"),
        other => format!("unknown-action:{other}"),
    }
}

/// What the real worker does besides plain reads: metadata, listing,
/// readlink, randomness, clocks, sleeping.
fn worker_ops(ctx: &Ctx) -> String {
    let ws = &ctx.workspace;
    let mut results = Vec::new();
    results.push(format!(
        "statx={}",
        errno_text(fs::metadata(ws.join("file.txt")))
    ));
    results.push(format!(
        "lstat={}",
        errno_text(fs::symlink_metadata(ws.join("escape")))
    ));
    results.push(format!(
        "readdir={}",
        errno_text(fs::read_dir(ws.join("sub")).map(|d| d.count()))
    ));
    results.push(format!(
        "readlink={}",
        errno_text(fs::read_link(ws.join("escape")))
    ));
    let mut buf = [0u8; 16];
    // SAFETY: `buf` is writable for its length.
    let rc = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    results.push(format!("getrandom={}", last_errno(rc as libc::c_long)));
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    results.push(format!("sleep={}", t.elapsed() >= Duration::from_millis(2)));
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_BOOTTIME is not in the
    // vDSO fast path on every kernel, so this may be a real syscall.
    let rc = unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_BOOTTIME, &mut ts) };
    results.push(format!("clock_gettime={}", last_errno(rc)));
    let mut map = std::collections::HashMap::new();
    map.insert("k", 1);
    let big: Vec<u8> = vec![7; 8 * 1024 * 1024];
    let mut grown = big.clone();
    grown.resize(32 * 1024 * 1024, 1);
    results.push(format!("alloc={}", grown.len() + map.len()));
    // The walker sizes its pool with this: cgroup files are denied by
    // Landlock, std falls back to sched_getaffinity.
    results.push(format!(
        "parallelism={}",
        errno_text(std::thread::available_parallelism())
    ));
    results.join(" ")
}

/// Spawn git waiting on its stdin, kill it, reap it.
fn git_kill(ctx: &Ctx) -> String {
    let mut cmd = git_command(ctx, &["cat-file", "--batch"]);
    cmd.stdin(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return format!("spawn-error:{}", e.raw_os_error().unwrap_or(0)),
    };
    std::thread::sleep(Duration::from_millis(50));
    let killed = errno_text(child.kill());
    match child.wait() {
        Ok(status) => format!("kill={killed} status={}", status_text(status)),
        Err(e) => format!("kill={killed} wait={}", errno_text::<()>(Err(e))),
    }
}

/// Threads after confinement: the `ignore` parallel walker (as search does),
/// then named std threads kept alive while the parent reads their status.
fn threads(ctx: &Ctx, out: &mut UnixStream, input: &mut BufReader<UnixStream>) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, mpsc};

    let count = Arc::new(AtomicUsize::new(0));
    let walker = ignore::WalkBuilder::new(&ctx.workspace)
        .threads(4)
        .hidden(false)
        .build_parallel();
    walker.run(|| {
        let count = Arc::clone(&count);
        Box::new(move |entry| {
            if entry.is_ok() {
                count.fetch_add(1, Ordering::Relaxed);
            }
            ignore::WalkState::Continue
        })
    });
    let walked = count.load(Ordering::Relaxed);

    let mut senders = Vec::new();
    let mut handles = Vec::new();
    for i in 0..4 {
        let (tx, rx) = mpsc::channel::<()>();
        senders.push(tx);
        let spawned = std::thread::Builder::new()
            .name(format!("probe-{i}"))
            .spawn(move || {
                let _ = rx.recv();
                i
            });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => return format!("spawn-failed:{e}"),
        }
    }
    let _ = writeln!(out, "threads-up {}", handles.len());
    let mut line = String::new();
    let _ = input.read_line(&mut line);
    drop(senders);
    let joined: usize = handles.into_iter().filter_map(|h| h.join().ok()).count();
    format!("walked={walked} joined={joined}")
}

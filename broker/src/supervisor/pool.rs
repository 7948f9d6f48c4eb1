//! The pool of confined worker processes (Unix only; see the parent module).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{Notify, Semaphore};

use moat_protocol::frame::{self, HEADER_LEN, MAX_RESPONSE_FRAME_LEN};
use moat_protocol::limits::KILL_GRACE_MS;
use moat_protocol::request::{Request, RequestEnvelope, WorkerInit};
use moat_protocol::response::{Response, SandboxReport, WorkerHello};

use super::Outcome;
use crate::error::ToolFailure;

/// The nice value workers run at, above the broker's: tool work is
/// CPU-bound and can use every core, while the broker must keep reading,
/// answering control messages and probes, and draining answers. A worker's
/// threads (the walk's) are created after this is set and inherit it.
const WORKER_NICE: i32 = 5;

/// Make a new worker yield the CPU to the broker (best effort: a failure
/// leaves it at the broker's priority, which is only slower under load).
fn lower_priority(child: &std::process::Child) {
    let Ok(raw) = i32::try_from(child.id()) else {
        return;
    };
    if let Some(pid) = rustix::process::Pid::from_raw(raw) {
        let current = rustix::process::getpriority_process(None).unwrap_or(0);
        let _ = rustix::process::setpriority_process(Some(pid), current + WORKER_NICE);
    }
}

/// How long a new worker may take to confine itself and say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

struct Worker {
    child: std::process::Child,
    stream: UnixStream,
}

impl Worker {
    /// Whether the process has already exited (or cannot be waited for).
    fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

/// A worker lent to one call. Dropped with the worker still in it (the
/// call's future was dropped before the answer came), it kills the worker.
struct Held<'a> {
    pool: &'a Pool,
    worker: Option<Worker>,
}

impl Held<'_> {
    /// The worker, out of the guard (the call decides what becomes of it).
    fn take(&mut self) -> Option<Worker> {
        self.worker.take()
    }

    /// The call is done with a healthy worker: back to the pool.
    fn release(&mut self) {
        if let Some(w) = self.worker.take() {
            self.pool.release(w);
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            self.pool.abandon(w);
        }
    }
}

/// How to start workers.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// The broker's own binary.
    pub program: PathBuf,
    /// Workers kept ready.
    pub size: usize,
    /// The start-up frame every worker receives.
    pub init: WorkerInit,
    /// Whether workers' stderr reaches the broker's stderr.
    pub inherit_stderr: bool,
    /// Longest a request waits for an idle worker.
    pub queue_timeout: Duration,
}

/// The pool of confined workers.
pub struct Pool {
    idle: Mutex<Vec<Worker>>,
    ready: Semaphore,
    /// Workers alive or being started.
    live: AtomicUsize,
    size: usize,
    queue_timeout: Duration,
    spawn_tx: Mutex<Option<std::sync::mpsc::Sender<()>>>,
    last_error: Mutex<Option<String>>,
    last_report: Mutex<Option<SandboxReport>>,
    pids: Mutex<HashMap<u32, ()>>,
    shutting_down: AtomicBool,
    all_gone: Notify,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// Start the spawner thread and ask it for `size` workers. Must be called
    /// inside a tokio runtime.
    pub fn start(config: PoolConfig) -> std::io::Result<Arc<Pool>> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let pool = Arc::new(Pool {
            idle: Mutex::new(Vec::new()),
            ready: Semaphore::new(0),
            live: AtomicUsize::new(0),
            size: config.size.max(1),
            queue_timeout: config.queue_timeout,
            spawn_tx: Mutex::new(Some(tx)),
            last_error: Mutex::new(None),
            last_report: Mutex::new(None),
            pids: Mutex::new(HashMap::new()),
            shutting_down: AtomicBool::new(false),
            all_gone: Notify::new(),
        });
        let handle = tokio::runtime::Handle::current();
        let weak = Arc::downgrade(&pool);
        std::thread::Builder::new()
            .name("moat-spawner".into())
            .spawn(move || {
                let mut failures = 0u32;
                while rx.recv().is_ok() {
                    let Some(pool) = weak.upgrade() else { break };
                    if pool.shutting_down.load(Ordering::SeqCst) {
                        pool.count_gone();
                        continue;
                    }
                    match start_worker(&config) {
                        Ok((child, stream, hello)) => {
                            failures = 0;
                            lower_priority(&child);
                            let pool2 = Arc::clone(&pool);
                            handle.spawn(async move { pool2.adopt(child, stream, hello) });
                        }
                        Err(e) => {
                            failures = failures.saturating_add(1);
                            tracing::error!(error = %e, "worker.spawn_failed");
                            crate::metrics::worker(crate::metrics::WorkerEvent::SpawnFailed);
                            if let Ok(mut le) = pool.last_error.lock() {
                                *le = Some(e);
                            }
                            pool.count_gone();
                            // Waiters were woken by `all_gone`; back off, retry.
                            let backoff = Duration::from_millis(50u64 << failures.min(6));
                            drop(pool);
                            std::thread::sleep(backoff);
                            if let Some(pool) = weak.upgrade() {
                                pool.request_spawn();
                            }
                        }
                    }
                }
            })?;
        // A worker that dies while idle is reaped and replaced when the
        // kernel reports a child's exit, not whenever a request next picks
        // it (until then it would be a zombie and the pool one short).
        let mut sigchld = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())?;
        let weak = Arc::downgrade(&pool);
        tokio::spawn(async move {
            // As PID 1 (a container without an init), orphans are ours to
            // reap: the git of a worker killed mid-request would stay a
            // zombie. Checked on every SIGCHLD and every few seconds.
            let pid1 = rustix::process::getpid().is_init();
            let mut tick = tokio::time::interval(Duration::from_secs(5));
            loop {
                tokio::select! {
                    got = sigchld.recv() => {
                        if got.is_none() {
                            break;
                        }
                        let Some(pool) = weak.upgrade() else { break };
                        pool.reap_idle().await;
                    }
                    _ = tick.tick(), if pid1 => {}
                }
                if pid1 {
                    reap_orphans();
                }
            }
        });
        for _ in 0..pool.size {
            pool.request_spawn();
        }
        Ok(pool)
    }

    /// Reap and replace every idle worker that has exited.
    async fn reap_idle(&self) {
        let dead: Vec<Worker> = match self.idle.lock() {
            Ok(mut idle) => {
                let mut dead = Vec::new();
                let mut i = 0;
                while i < idle.len() {
                    if idle[i].has_exited() {
                        dead.push(idle.remove(i));
                    } else {
                        i += 1;
                    }
                }
                dead
            }
            Err(_) => return,
        };
        for worker in dead {
            // Each idle worker holds one `ready` permit. If a waiter took it
            // first, that waiter finds the idle list one shorter and waits.
            if let Ok(p) = self.ready.try_acquire() {
                p.forget();
            }
            let _ = self.discard(worker, "died while idle").await;
        }
    }

    fn request_spawn(&self) {
        if self.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        self.live.fetch_add(1, Ordering::SeqCst);
        let sent = self
            .spawn_tx
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|tx| tx.send(()).is_ok()));
        if sent != Some(true) {
            self.count_gone();
        }
    }

    fn adopt(
        &self,
        child: std::process::Child,
        stream: std::os::unix::net::UnixStream,
        hello: WorkerHello,
    ) {
        let stream = match stream
            .set_nonblocking(true)
            .and_then(|()| UnixStream::from_std(stream))
        {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "worker.adopt_failed");
                self.discard_blocking(child);
                return;
            }
        };
        if let Ok(mut r) = self.last_report.lock() {
            *r = Some(hello.sandbox);
        }
        if let Ok(mut le) = self.last_error.lock() {
            *le = None;
        }
        if let Ok(mut pids) = self.pids.lock() {
            pids.insert(child.id(), ());
        }
        if self.shutting_down.load(Ordering::SeqCst) {
            self.discard_blocking(child);
            return;
        }
        tracing::debug!(pid = child.id(), "worker.ready");
        crate::metrics::worker(crate::metrics::WorkerEvent::Started);
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(Worker { child, stream });
        }
        self.ready.add_permits(1);
    }

    pub(super) async fn run(
        &self,
        request: Request,
        budget: Duration,
        progress: Option<super::OnProgress>,
        on_work: Option<super::OnWork>,
    ) -> Outcome {
        let wait_until = Instant::now() + self.queue_timeout;
        let worker = loop {
            let mut worker = self.acquire(wait_until).await?;
            // A worker that died while idle (OOM killer, an operator's kill)
            // never saw this request: replace it and take another, rather
            // than fail a request the client did nothing wrong with.
            if worker.has_exited() {
                let _ = self.discard(worker, "died while idle").await;
                continue;
            }
            break worker;
        };
        // From here the worker belongs to this call: if the call is dropped
        // before its answer (the client cancelled it, or closed its
        // connection), the guard kills the worker, so nothing keeps working
        // for an answer no one will read, and a fresh worker takes its place.
        let mut held = Held {
            pool: self,
            worker: Some(worker),
        };
        let Some(worker) = held.worker.as_mut() else {
            return Err(ToolFailure::Unavailable);
        };
        // The budget is the call's own: it starts now that it has a worker.
        let remaining = budget;
        let envelope = RequestEnvelope {
            budget_ms: u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX),
            progress: progress.is_some(),
            request,
        };
        let bytes = match frame::encode(&envelope) {
            Ok(b) => b,
            Err(_) => {
                held.release();
                return Err(ToolFailure::WorkerFailed {
                    why: "could not be sent the request",
                });
            }
        };
        let grace = Duration::from_millis(KILL_GRACE_MS);
        let exchange = async {
            worker
                .stream
                .write_all(&bytes)
                .await
                .map_err(|_| "stopped unexpectedly")?;
            loop {
                match read_response(&mut worker.stream).await? {
                    Response::Progress { files } => {
                        if let Some(report) = &progress {
                            report(files);
                        }
                    }
                    done @ Response::Done(..) => break Ok::<Response, &'static str>(done),
                }
            }
        };
        let answer = tokio::time::timeout(remaining + grace, exchange).await;
        match answer {
            Ok(Ok(Response::Done(result, work))) => {
                held.release();
                if let Some(report) = &on_work {
                    report(work);
                }
                Ok(result)
            }
            Ok(Ok(Response::Progress { .. })) => {
                let why = match held.take() {
                    Some(w) => self.discard(w, "sent no answer").await,
                    None => "sent no answer",
                };
                Err(ToolFailure::WorkerFailed { why })
            }
            Ok(Err(why)) => {
                let why = match held.take() {
                    Some(w) => self.discard(w, why).await,
                    None => why,
                };
                Err(ToolFailure::WorkerFailed { why })
            }
            Err(_) => {
                tracing::warn!(budget_ms = budget.as_millis() as u64, "tool.hard_timeout");
                crate::metrics::worker(crate::metrics::WorkerEvent::TimedOut);
                if let Some(w) = held.take() {
                    let _ = self.discard(w, "timed out").await;
                }
                Err(ToolFailure::TimedOut { budget })
            }
        }
    }

    /// A call was dropped while its worker worked: kill the worker, reap
    /// it and start another. The reap waits on the runtime thread, briefly:
    /// the process group was just sent SIGKILL.
    fn abandon(&self, worker: Worker) {
        let Worker { mut child, stream } = worker;
        drop(stream);
        let pid = child.id();
        let _ = kill_group(pid);
        let _ = child.wait();
        self.forget_pid(pid);
        self.count_gone();
        if self.shutting_down.load(Ordering::SeqCst) {
            tracing::debug!(pid, "worker.stopped");
            crate::metrics::worker(crate::metrics::WorkerEvent::Stopped);
        } else {
            tracing::info!(pid, "worker.cancelled");
            crate::metrics::worker(crate::metrics::WorkerEvent::Replaced);
            self.request_spawn();
        }
    }

    /// No worker is alive and the last attempt to start one failed. A request
    /// then fails at once (`Unavailable`) instead of waiting out its deadline
    /// for a worker that keeps failing to start: with more than one worker
    /// configured, retries keep `live` above zero, so `live == 0` alone never
    /// says so. `/readyz` reports it. The spawner keeps retrying with
    /// back-off; the first worker that starts clears the error.
    #[must_use]
    pub fn failing_to_start(&self) -> bool {
        let failed = self.last_error.lock().is_ok_and(|e| e.is_some());
        failed && self.pids.lock().is_ok_and(|p| p.is_empty())
    }

    /// Wait for an idle worker until `until`; past it the request never
    /// ran (`NotStarted`).
    async fn acquire(&self, until: Instant) -> Result<Worker, ToolFailure> {
        let started = Instant::now();
        loop {
            if let Ok(permit) = self.ready.try_acquire() {
                permit.forget();
                match self.idle.lock().ok().and_then(|mut idle| idle.pop()) {
                    Some(w) => return Ok(w),
                    None => continue,
                }
            }
            if self.live.load(Ordering::SeqCst) == 0 || self.failing_to_start() {
                return Err(ToolFailure::Unavailable);
            }
            tokio::select! {
                acquired = self.ready.acquire() => match acquired {
                    Ok(p) => {
                        p.forget();
                        if let Some(w) = self.idle.lock().ok().and_then(|mut idle| idle.pop()) {
                            return Ok(w);
                        }
                    }
                    Err(_) => return Err(ToolFailure::Unavailable),
                },
                () = self.all_gone.notified() => {}
                () = tokio::time::sleep_until(until.into()) => {
                    return Err(if self.live.load(Ordering::SeqCst) == 0 {
                        ToolFailure::Unavailable
                    } else {
                        ToolFailure::NotStarted { waited: started.elapsed() }
                    });
                }
            }
        }
    }

    fn release(&self, worker: Worker) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(worker);
        }
        self.ready.add_permits(1);
    }

    /// Kill, reap, replace. Returns a fixed description of what happened.
    async fn discard(&self, worker: Worker, why: &'static str) -> &'static str {
        let pid = worker.child.id();
        let described = match self.kill_and_reap(worker).await {
            Some(st) => describe_exit(st, why),
            None => why,
        };
        if self.shutting_down.load(Ordering::SeqCst) {
            // Nothing is replaced at shutdown, and a worker ending then is
            // expected: the spawner thread's exit kills every worker still
            // alive (their parent-death signal), idle or finishing a call.
            tracing::debug!(pid, why = described, "worker.stopped");
            crate::metrics::worker(crate::metrics::WorkerEvent::Stopped);
        } else {
            tracing::warn!(pid, why = described, "worker.replaced");
            crate::metrics::worker(crate::metrics::WorkerEvent::Replaced);
            self.request_spawn();
        }
        described
    }

    /// Kill a worker's process group, reap it off the runtime, and count it
    /// gone. Its exit status, when it could be waited for.
    async fn kill_and_reap(&self, worker: Worker) -> Option<std::process::ExitStatus> {
        let Worker { mut child, stream } = worker;
        drop(stream);
        let _ = kill_group(child.id());
        let pid = child.id();
        let status = tokio::task::spawn_blocking(move || child.wait()).await;
        self.forget_pid(pid);
        self.count_gone();
        status.ok().and_then(Result::ok)
    }

    fn discard_blocking(&self, mut child: std::process::Child) {
        let _ = kill_group(child.id());
        let pid = child.id();
        // Reap before counting it gone: `shutdown` returns once `live` is 0,
        // and a reap left to a background task may never run before exit.
        // The child was just SIGKILLed, so this wait is short.
        let _ = child.wait();
        self.forget_pid(pid);
        self.count_gone();
    }

    /// One worker fewer (or one that will not be started after all): wake
    /// whoever waits on the count (`acquire`, `shutdown`).
    fn count_gone(&self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
        self.all_gone.notify_waiters();
    }

    fn forget_pid(&self, pid: u32) {
        if let Ok(mut pids) = self.pids.lock() {
            pids.remove(&pid);
        }
    }

    /// Every idle worker, taken out of the pool.
    fn take_idle(&self) -> Vec<Worker> {
        self.idle
            .lock()
            .map(|mut i| std::mem::take(&mut *i))
            .unwrap_or_default()
    }

    /// Kill every worker, reap them, and stop the spawner.
    pub async fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        // The idle workers are taken before the spawner thread is stopped:
        // its exit kills them (parent-death signal), and the reaper must
        // not find them dead in the idle list.
        let idle = self.take_idle();
        if let Ok(mut tx) = self.spawn_tx.lock() {
            tx.take();
        }
        for w in idle {
            self.kill_and_reap(w).await;
        }
        // Workers still starting or busy finish their own paths; wait briefly.
        let until = Instant::now() + Duration::from_secs(2);
        while self.live.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            let _ = tokio::time::timeout(Duration::from_millis(20), self.all_gone.notified()).await;
            for w in self.take_idle() {
                self.kill_and_reap(w).await;
            }
        }
    }

    /// The sandbox status reported by the most recent worker.
    #[must_use]
    pub fn sandbox_report(&self) -> Option<SandboxReport> {
        self.last_report.lock().ok().and_then(|r| r.clone())
    }

    /// The most recent spawn error, if the last attempt failed.
    #[must_use]
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }
}

/// Reap zombie children that are not workers (orphans re-parented to us when
/// we run as PID 1: a killed worker's git). Workers are reaped by their own
/// `Child`; they are told apart by their command name, which is ours.
fn reap_orphans() {
    let own = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for task in tasks.flatten() {
        let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // `pid (comm) state …`: comm may hold spaces and parentheses.
            let Some((head, rest)) = stat.rsplit_once(") ") else {
                continue;
            };
            let comm = head.split_once(" (").map_or("", |(_, c)| c);
            let zombie = rest.starts_with('Z');
            if zombie
                && comm != own.trim_end()
                && let Some(p) = rustix::process::Pid::from_raw(pid)
            {
                let _ = rustix::process::waitpid(Some(p), rustix::process::WaitOptions::NOHANG);
            }
        }
    }
}

async fn read_response(stream: &mut UnixStream) -> Result<Response, &'static str> {
    let mut header = [0u8; HEADER_LEN];
    stream
        .read_exact(&mut header)
        .await
        .map_err(|_| "stopped unexpectedly")?;
    let len = frame::parse_header(header, MAX_RESPONSE_FRAME_LEN)
        .map_err(|_| "sent an oversized answer")?;
    let mut payload = vec![0u8; len];
    stream
        .read_exact(&mut payload)
        .await
        .map_err(|_| "stopped in the middle of an answer")?;
    frame::decode_payload::<Response>(&payload).map_err(|_| "sent a malformed answer")
}

fn describe_exit(status: std::process::ExitStatus, fallback: &'static str) -> &'static str {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(31) => "made a forbidden system call and was stopped by the sandbox",
        Some(6) => "crashed (aborted)",
        Some(9) if fallback == "timed out" => "timed out",
        Some(9) => "was killed",
        _ => fallback,
    }
}

fn kill_group(pid: u32) -> std::io::Result<()> {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    match pid {
        Some(p) => rustix::process::kill_process_group(p, rustix::process::Signal::KILL)
            .map_err(Into::into),
        None => Ok(()),
    }
}

/// How long a worker that failed during start-up may take to exit on its own
/// before it is killed. Exiting takes well under a millisecond; the wait ends
/// as soon as it has.
const START_FAILURE_EXIT_WAIT: Duration = Duration::from_millis(500);

/// The child's exit status if it exits within `wait` (reaped), else `None`.
fn exited_within(
    child: &mut std::process::Child,
    wait: Duration,
) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + wait;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Start one worker and wait for its hello (runs on the spawner thread).
fn start_worker(
    config: &PoolConfig,
) -> Result<
    (
        std::process::Child,
        std::os::unix::net::UnixStream,
        WorkerHello,
    ),
    String,
> {
    use moat_sandbox::spawn::{SpawnSpec, spawn_worker};
    let args = [OsStr::new(super::WORKER_SUBCOMMAND)];
    // Built, not inherited. HOME points nowhere so nothing falls back to the
    // password database (glibc would try the nscd socket: SIGSYS).
    let env = [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("HOME", "/nonexistent"),
        ("LC_ALL", "C"),
        ("RUST_BACKTRACE", "0"),
        // glibc's allocator, fixed instead of adaptive: memory freed after a
        // request goes back to the kernel (a large buffer is unmapped, the
        // heap top is trimmed) instead of staying in the idle worker, and
        // the walker threads of a search share two arenas instead of one
        // each. Ignored by other C libraries; git does not inherit it.
        (
            "GLIBC_TUNABLES",
            "glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2",
        ),
    ];
    let spec = SpawnSpec {
        program: &config.program,
        args: &args,
        env: &env,
        inherit_stderr: config.inherit_stderr,
    };
    let (mut child, mut stream) =
        spawn_worker(&spec).map_err(|e| format!("could not start a worker: {e}"))?;
    // A worker that fails a sandbox step drops its socket just before it
    // exits with that step's code (70-79): let it finish exiting, so the code,
    // not our SIGKILL, says why. Only a worker still running then is killed.
    let fail = |child: &mut std::process::Child, msg: String| {
        let status = exited_within(child, START_FAILURE_EXIT_WAIT).or_else(|| {
            let _ = kill_group(child.id());
            child.wait().ok()
        });
        let code = status.and_then(|s| s.code());
        match code.and_then(moat_worker::describe_exit_code) {
            Some(reason) => format!("{msg}: {reason}"),
            None => match status {
                Some(s) => format!("{msg} ({s})"),
                None => msg,
            },
        }
    };
    if let Err(e) = frame::write(&mut stream, &config.init) {
        return Err(fail(
            &mut child,
            format!("could not configure a worker: {e}"),
        ));
    }
    let _ = stream.set_read_timeout(Some(HELLO_TIMEOUT));
    match frame::read::<_, WorkerHello>(&mut stream, MAX_RESPONSE_FRAME_LEN) {
        Ok(Some(hello)) => {
            let _ = stream.set_read_timeout(None);
            Ok((child, stream, hello))
        }
        Ok(None) | Err(_) => Err(fail(&mut child, "a worker failed to start".to_owned())),
    }
}

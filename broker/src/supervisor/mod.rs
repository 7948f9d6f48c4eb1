//! Running tool requests: in a pool of confined worker processes, or (the
//! fallback) on blocking threads inside the broker.
//!
//! # The pool
//!
//! * Workers are started by one long-lived *spawner* thread (the parent-death
//!   signal is tied to the thread that forks), each with a socketpair, a built
//!   environment and its own process group. A worker is ready once it has
//!   confined itself and sent its hello.
//! * One request per worker at a time. A request waits for an idle worker
//!   (at most `sandbox.queue_timeout_ms`; past it the call is answered
//!   `not_started`, having never run), then sends one frame and reads one
//!   frame back before `budget + grace`. The budget starts when the request
//!   gets its worker: time spent waiting for one is never charged to it.
//! * Past the deadline, or when the worker dies, sends a malformed or
//!   oversized frame, the broker kills the worker's process group, reaps it,
//!   answers the request with a tool error, and starts a replacement. A worker
//!   is never reused after anything unexpected.
//! * The exchange runs in its own task, so a client that goes away mid-call
//!   cannot leave a worker half-used.

pub mod admission;
#[cfg(unix)]
mod pool;
#[cfg(unix)]
pub use pool::{Pool, PoolConfig};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use moat_protocol::limits::KILL_GRACE_MS;
use moat_protocol::request::Request;
use moat_protocol::response::{Response, SandboxReport, ToolOutput};
use moat_protocol::wire_error::WireError;
use moat_worker::{Deadline, Workspace};

use crate::error::ToolFailure;

/// The hidden subcommand that turns the broker's own binary into a worker:
/// the pool starts workers with it, and the program's entry point obeys it
/// before anything else.
pub const WORKER_SUBCOMMAND: &str = "__moat_worker";

/// What a tool call produced.
pub type Outcome = Result<Result<ToolOutput, WireError>, ToolFailure>;

/// Where requests run.
#[derive(Debug, Clone)]
pub enum Executor {
    /// Confined worker processes.
    #[cfg(unix)]
    Pool(Arc<Pool>),
    /// The fallback: the worker library on blocking threads.
    InProcess(Arc<Workspace>),
}

/// Called with the files walked so far while a request runs (strictly
/// increasing, at most every 100 ms).
pub type OnProgress = Arc<dyn Fn(u64) + Send + Sync>;

/// Told the work a finished request did (see
/// [`moat_protocol::response::Work`]), for its audit event.
pub type OnWork = Arc<dyn Fn(moat_protocol::response::Work) + Send + Sync>;

/// Aborts a task when dropped (a finished task ignores it).
#[cfg(unix)]
struct AbortOnDrop(tokio::task::AbortHandle);

#[cfg(unix)]
impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Cancels an in-process request when dropped (a finished one ignores it).
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Executor {
    /// Run one request within `budget`.
    pub async fn run(
        &self,
        request: Request,
        budget: Duration,
        progress: Option<OnProgress>,
        on_work: Option<OnWork>,
    ) -> Outcome {
        match self {
            #[cfg(unix)]
            Executor::Pool(p) => {
                let pool = Arc::clone(p);
                // Run on a task of its own, aborted if this call is dropped
                // (cancelled, or its HTTP client gone): the pool then kills
                // the worker that was working for it and starts another.
                let task =
                    tokio::spawn(async move { pool.run(request, budget, progress, on_work).await });
                let _abort = AbortOnDrop(task.abort_handle());
                match task.await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(ToolFailure::WorkerFailed {
                        why: "could not be reached",
                    }),
                }
            }
            Executor::InProcess(ws) => {
                let ws = Arc::clone(ws);
                let progress = progress
                    .map(|report| moat_worker::Progress::new(Box::new(move |files| report(files))));
                // No process to kill here: a dropped call (cancelled, or
                // its HTTP client gone) sets the flag, and the work stops at
                // its next deadline check.
                let cancelled = Arc::new(AtomicBool::new(false));
                let _cancel = CancelOnDrop(Arc::clone(&cancelled));
                let deadline = Deadline::after(budget)
                    .with_progress(progress)
                    .with_cancel(cancelled);
                let task = tokio::task::spawn_blocking(move || {
                    moat_worker::handle_until(&ws, &request, &deadline)
                });
                let grace = Duration::from_millis(KILL_GRACE_MS);
                match tokio::time::timeout(budget + grace, task).await {
                    Ok(Ok(Response::Done(r, work))) => {
                        if let Some(report) = &on_work {
                            report(work);
                        }
                        Ok(r)
                    }
                    // Progress goes to the reporter; `handle` answers once.
                    Ok(Ok(Response::Progress { .. })) => {
                        Err(ToolFailure::WorkerFailed { why: "failed" })
                    }
                    Ok(Err(_)) => Err(ToolFailure::WorkerFailed { why: "failed" }),
                    // The blocking thread cannot be killed; it finishes on its
                    // own (every tool checks the deadline cooperatively).
                    Err(_) => Err(ToolFailure::TimedOut { budget }),
                }
            }
        }
    }

    /// Stop every worker and wait for it (no-op in-process).
    pub async fn shutdown(&self) {
        #[cfg(unix)]
        if let Executor::Pool(p) = self {
            p.shutdown().await;
        }
    }

    /// The sandbox status reported by the most recent worker, if any.
    #[must_use]
    pub fn sandbox_report(&self) -> Option<SandboxReport> {
        match self {
            #[cfg(unix)]
            Executor::Pool(p) => p.sandbox_report(),
            Executor::InProcess(_) => None,
        }
    }

    /// The most recent worker start-up failure, if the last attempt failed.
    #[must_use]
    pub fn last_error(&self) -> Option<String> {
        match self {
            #[cfg(unix)]
            Executor::Pool(p) => p.last_error(),
            Executor::InProcess(_) => None,
        }
    }

    /// No worker is alive and the last attempt to start one failed (see
    /// [`Pool::failing_to_start`]); never in-process.
    #[must_use]
    pub fn failing_to_start(&self) -> bool {
        match self {
            #[cfg(unix)]
            Executor::Pool(p) => p.failing_to_start(),
            Executor::InProcess(_) => false,
        }
    }

    /// Whether requests run in confined worker processes.
    #[must_use]
    pub fn is_confined(&self) -> bool {
        !matches!(self, Executor::InProcess(_))
    }
}

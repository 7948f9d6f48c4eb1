//! Progress of the request a worker process is serving: walks count the
//! files they yield (and the git tools the commits they walk), and while a reporter is installed the count is sent
//! at most every [`INTERVAL`] (none before the first interval has passed, so
//! a quick request sends none).
//!
//! A worker process serves one request at a time, so one reporter per
//! process is enough. In the in-process mode no reporter is installed and
//! counting is a single relaxed load.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Least time between two reports.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// The clock is read every this many files.
const CHECK_EVERY: u64 = 16;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static FILES: AtomicU64 = AtomicU64::new(0);
static REPORTER: Mutex<Option<Reporter>> = Mutex::new(None);

struct Reporter {
    emit: Box<dyn FnMut(u64) + Send>,
    last: Instant,
    sent: u64,
}

/// Install `emit` for the request about to be served: it is called with the
/// number of files walked so far, strictly increasing, from whichever
/// thread walks.
pub fn begin(emit: Box<dyn FnMut(u64) + Send>) {
    FILES.store(0, Ordering::Relaxed);
    if let Ok(mut r) = REPORTER.lock() {
        *r = Some(Reporter {
            emit,
            last: Instant::now(),
            sent: 0,
        });
    }
    ACTIVE.store(true, Ordering::Release);
}

/// The request is done: no report is sent after this returns.
pub fn end() {
    ACTIVE.store(false, Ordering::Release);
    if let Ok(mut r) = REPORTER.lock() {
        *r = None;
    }
}

/// One more file walked (or commit, in a history walk).
pub fn file_seen() {
    if !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    let files = FILES.fetch_add(1, Ordering::Relaxed) + 1;
    if !files.is_multiple_of(CHECK_EVERY) {
        return;
    }
    // A walker that finds the reporter busy leaves the report to it.
    let Ok(mut guard) = REPORTER.try_lock() else {
        return;
    };
    if let Some(r) = guard.as_mut()
        && r.last.elapsed() >= INTERVAL
        && files > r.sent
    {
        r.last = Instant::now();
        r.sent = files;
        (r.emit)(files);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reports_are_rate_limited_increasing_and_stop_at_end() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        begin(Box::new(move |n| sink.lock().unwrap().push(n)));
        for _ in 0..1000 {
            file_seen();
        }
        assert!(
            seen.lock().unwrap().is_empty(),
            "nothing before the first interval"
        );
        std::thread::sleep(INTERVAL);
        for _ in 0..CHECK_EVERY {
            file_seen();
        }
        for _ in 0..1000 {
            file_seen();
        }
        let reports = seen.lock().unwrap().clone();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(reports[0] > 1000);
        end();
        std::thread::sleep(INTERVAL);
        for _ in 0..100 {
            file_seen();
        }
        assert_eq!(seen.lock().unwrap().len(), 1, "nothing after end");
    }
}

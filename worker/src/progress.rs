//! Progress of one request: walks count the files they yield (and the git
//! tools the commits they walk), and while the request runs the count is
//! sent at most every [`INTERVAL`] (none before the first interval has
//! passed, so a quick request sends none).
//!
//! A [`Progress`] belongs to one request and travels with its
//! [`Deadline`](crate::deadline::Deadline) to every thread that works for
//! it, so concurrent requests in one process (the in-process mode) each
//! report their own count. A request that asked for none carries none and
//! counting costs nothing.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Least time between two reports.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// The clock is read every this many files.
const CHECK_EVERY: u64 = 16;

/// Where one request's progress goes.
pub type Emit = Box<dyn FnMut(u64) + Send>;

/// The progress of one request.
pub struct Progress {
    files: AtomicU64,
    reporter: Mutex<Reporter>,
}

struct Reporter {
    emit: Emit,
    last: Instant,
    sent: u64,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("files", &self.files.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// Progress reported to `emit`, called with the number of files walked
    /// so far, strictly increasing, from whichever thread walks.
    #[must_use]
    pub fn new(emit: Emit) -> Progress {
        Progress {
            files: AtomicU64::new(0),
            reporter: Mutex::new(Reporter {
                emit,
                last: Instant::now(),
                sent: 0,
            }),
        }
    }

    /// One more file walked (or commit, in a history walk).
    pub fn file_seen(&self) {
        let files = self.files.fetch_add(1, Ordering::Relaxed) + 1;
        if !files.is_multiple_of(CHECK_EVERY) {
            return;
        }
        // A walker that finds the reporter busy leaves the report to it.
        let Ok(mut r) = self.reporter.try_lock() else {
            return;
        };
        if r.last.elapsed() >= INTERVAL && files > r.sent {
            r.last = Instant::now();
            r.sent = files;
            (r.emit)(files);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reports_are_rate_limited_and_increasing() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let p = Progress::new(Box::new(move |n| sink.lock().unwrap().push(n)));
        for _ in 0..1000 {
            p.file_seen();
        }
        assert!(
            seen.lock().unwrap().is_empty(),
            "nothing before the first interval"
        );
        std::thread::sleep(INTERVAL);
        for _ in 0..CHECK_EVERY {
            p.file_seen();
        }
        for _ in 0..1000 {
            p.file_seen();
        }
        let reports = seen.lock().unwrap().clone();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(reports[0] > 1000);
    }

    #[test]
    fn two_requests_count_apart() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (a_sink, b_sink) = (Arc::clone(&seen), Arc::clone(&seen));
        let a = Progress::new(Box::new(move |n| a_sink.lock().unwrap().push(("a", n))));
        let b = Progress::new(Box::new(move |n| b_sink.lock().unwrap().push(("b", n))));
        std::thread::sleep(INTERVAL);
        for _ in 0..CHECK_EVERY {
            a.file_seen();
        }
        for _ in 0..CHECK_EVERY * 2 {
            b.file_seen();
        }
        let reports = seen.lock().unwrap().clone();
        assert_eq!(reports, [("a", CHECK_EVERY), ("b", CHECK_EVERY)]);
    }
}

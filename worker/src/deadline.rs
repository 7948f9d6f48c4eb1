//! The cooperative per-request deadline, and what goes wherever the
//! request's work goes with it: its progress and its work account.
//!
//! Long operations (walks, searches) check [`Deadline::expired`] between units
//! of work and return what they have, marked `timed_out`. This is the polite
//! half; the broker's kill of the whole worker at the same deadline (plus a
//! small grace) is the backstop that needs no cooperation.
//!
//! In the in-process mode there is no worker to kill, so a request can also
//! be cancelled ([`Deadline::with_cancel`]): from then on the deadline counts
//! as passed, and the work stops at its next check as it would at its end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::progress::Progress;
use crate::work::Account;

/// A point in time after which a request should stop, and where the
/// request reports its progress (if it asked for it): both go wherever the
/// request's work goes.
#[derive(Debug, Clone)]
pub struct Deadline {
    end: Instant,
    budget: Duration,
    progress: Option<Arc<Progress>>,
    /// Set when the request is cancelled.
    cancelled: Option<Arc<AtomicBool>>,
    /// The request's work, counted by every part of it.
    work: Arc<Account>,
}

impl Deadline {
    /// A deadline `budget` from now.
    #[must_use]
    pub fn after(budget: Duration) -> Deadline {
        let now = Instant::now();
        Deadline {
            end: now.checked_add(budget).unwrap_or(now),
            budget,
            progress: None,
            cancelled: None,
            work: Arc::new(Account::default()),
        }
    }

    /// This deadline, reporting progress to `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: Option<Progress>) -> Deadline {
        self.progress = progress.map(Arc::new);
        self
    }

    /// This deadline, also passed as soon as `cancelled` is set.
    #[must_use]
    pub fn with_cancel(mut self, cancelled: Arc<AtomicBool>) -> Deadline {
        self.cancelled = Some(cancelled);
        self
    }

    /// A deadline `budget` from now (or this one, if sooner) for part of the
    /// request, reporting to the same progress.
    #[must_use]
    pub fn within(&self, budget: Duration) -> Deadline {
        let mut part = Deadline::after(budget);
        if part.end > self.end {
            part.end = self.end;
        }
        part.progress.clone_from(&self.progress);
        part.cancelled.clone_from(&self.cancelled);
        part.work = Arc::clone(&self.work);
        part
    }

    /// One more file walked (or commit, in a history walk), for the
    /// request's progress.
    pub fn file_seen(&self) {
        if let Some(p) = &self.progress {
            p.file_seen();
        }
    }

    /// The account of the request's work.
    #[must_use]
    pub fn work(&self) -> &Account {
        &self.work
    }

    /// Whether the deadline has passed (or the request was cancelled).
    #[must_use]
    pub fn expired(&self) -> bool {
        self.is_cancelled() || Instant::now() >= self.end
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The budget in milliseconds, for `timed_out` answers.
    #[must_use]
    pub fn budget_ms(&self) -> u64 {
        u64::try_from(self.budget.as_millis()).unwrap_or(u64::MAX)
    }

    /// Time left (zero once expired or cancelled).
    #[must_use]
    pub fn remaining(&self) -> Duration {
        if self.is_cancelled() {
            return Duration::ZERO;
        }
        self.end.saturating_duration_since(Instant::now())
    }

    /// The instant the deadline falls.
    #[must_use]
    pub fn instant(&self) -> Instant {
        self.end
    }

    /// The whole budget, for messages.
    #[must_use]
    pub fn budget(&self) -> Duration {
        self.budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_budget_is_immediately_expired() {
        assert!(Deadline::after(Duration::ZERO).expired());
        let d = Deadline::after(Duration::from_secs(10));
        assert!(!d.expired());
        assert!(d.remaining() > Duration::from_secs(9));
    }

    #[test]
    fn a_cancelled_deadline_has_passed_for_every_part_of_the_request() {
        let flag = Arc::new(AtomicBool::new(false));
        let d = Deadline::after(Duration::from_secs(10)).with_cancel(Arc::clone(&flag));
        let part = d.within(Duration::from_secs(5));
        assert!(!d.expired() && !part.expired());
        flag.store(true, Ordering::Relaxed);
        assert!(d.expired() && part.expired());
        assert_eq!(part.remaining(), Duration::ZERO);
    }
}

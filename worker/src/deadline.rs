//! The cooperative per-request deadline.
//!
//! Long operations (walks, searches) check [`Deadline::expired`] between units
//! of work and return what they have, marked `timed_out`. This is the polite
//! half; the broker's kill of the whole worker at the same deadline (plus a
//! small grace) is the backstop that needs no cooperation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::progress::Progress;

/// A point in time after which a request should stop, and where the
/// request reports its progress (if it asked for it): both go wherever the
/// request's work goes.
#[derive(Debug, Clone)]
pub struct Deadline {
    end: Instant,
    budget: Duration,
    progress: Option<Arc<Progress>>,
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
        }
    }

    /// This deadline, reporting progress to `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: Option<Progress>) -> Deadline {
        self.progress = progress.map(Arc::new);
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
        part
    }

    /// One more file walked (or commit, in a history walk), for the
    /// request's progress.
    pub fn file_seen(&self) {
        if let Some(p) = &self.progress {
            p.file_seen();
        }
    }

    /// Whether the deadline has passed.
    #[must_use]
    pub fn expired(&self) -> bool {
        Instant::now() >= self.end
    }

    /// The budget in milliseconds, for `timed_out` answers.
    #[must_use]
    pub fn budget_ms(&self) -> u64 {
        u64::try_from(self.budget.as_millis()).unwrap_or(u64::MAX)
    }

    /// Time left (zero once expired).
    #[must_use]
    pub fn remaining(&self) -> Duration {
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
}

//! The cooperative per-request deadline.
//!
//! Long operations (walks, searches) check [`Deadline::expired`] between units
//! of work and return what they have, marked `timed_out`. This is the polite
//! half; the broker's kill of the whole worker at the same deadline (plus a
//! small grace) is the backstop that needs no cooperation.

use std::time::{Duration, Instant};

/// A point in time after which a request should stop.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    end: Instant,
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    #[must_use]
    pub fn after(budget: Duration) -> Deadline {
        let now = Instant::now();
        Deadline {
            end: now.checked_add(budget).unwrap_or(now),
            budget,
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

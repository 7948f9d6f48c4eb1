//! Admission of tool calls: how many may be in the broker at once.
//!
//! Only `tools/call` is admitted here; `initialize`, `ping`, `tools/list`,
//! `server/discover`, probes and notifications never wait for anything a
//! tool call holds. A call is admitted when there is room for it among the
//! running calls (one per worker) and the bounded wait queue
//! (`sandbox.max_queued_calls`); past that it is answered `busy` at once,
//! without waiting and without running. An admitted call then waits for a
//! worker for at most `sandbox.queue_timeout_ms` (the pool's own wait, not
//! part of the call's deadline); a call that never got one is answered
//! `not_started`, which says that it did not run.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The gate every tool call passes before it may wait for a worker.
#[derive(Debug)]
pub struct Admission {
    room: Arc<Semaphore>,
    capacity: usize,
}

/// A place among the admitted calls; freed when dropped.
#[derive(Debug)]
pub struct Ticket {
    _permit: OwnedSemaphorePermit,
}

impl Admission {
    /// Room for `capacity` calls (running or waiting for a worker); at least one.
    #[must_use]
    pub fn new(capacity: usize) -> Admission {
        let capacity = capacity.max(1);
        Admission {
            room: Arc::new(Semaphore::new(capacity)),
            capacity,
        }
    }

    /// A place for one call, or `None` at once when there is none.
    #[must_use]
    pub fn try_admit(&self) -> Option<Ticket> {
        Arc::clone(&self.room)
            .try_acquire_owned()
            .ok()
            .map(|p| Ticket { _permit: p })
    }

    /// Calls admitted now (running or waiting for a worker).
    #[must_use]
    pub fn admitted(&self) -> usize {
        self.capacity - self.room.available_permits().min(self.capacity)
    }

    /// Most calls admitted at once.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// No further call would be admitted now.
    #[must_use]
    pub fn saturated(&self) -> bool {
        self.room.available_permits() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beyond_capacity_is_refused_at_once_and_room_comes_back() {
        let a = Admission::new(2);
        let t1 = a.try_admit().unwrap();
        let _t2 = a.try_admit().unwrap();
        assert!(a.saturated());
        assert!(a.try_admit().is_none());
        assert_eq!(a.admitted(), 2);
        drop(t1);
        assert!(!a.saturated());
        assert!(a.try_admit().is_some());
    }
}

//! Connection slots, and which connection to shed when they are all taken.
//!
//! `http.max_connections` bounds the open connections. A connection that is
//! waiting for a request head (a new one, or a keep-alive one between
//! requests) costs a slot but does no work, and a client can hold one open
//! for the whole header timeout by sending nothing, or half a header: a few
//! hundred such connections would otherwise keep every real client waiting
//! in the kernel's backlog until the timeout frees a slot (slowloris).
//!
//! So when every slot is taken, the accept loop closes the connection that
//! has been waiting for a request head the longest, and admits the new one
//! in its place. A connection in the middle of a request is never shed; if
//! all of them are, the new connection waits for one to finish. A client
//! that sends its request promptly is waiting only for the moment it takes
//! to parse the head, so it is shed only if the slots turn over completely
//! in that moment.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// One connection's handle in the registry.
#[derive(Debug, Default)]
pub struct Slot {
    /// Position in the waiting order while waiting (0 while busy).
    key: AtomicU64,
    /// Told when this connection is shed.
    shed: Notify,
}

impl Slot {
    /// Resolves when the accept loop sheds this connection.
    pub async fn shed(&self) {
        self.shed.notified().await;
    }
}

/// Connections waiting for a request head, oldest first; before them, the
/// connections whose refused authentication is being held (see
/// `super::admit`), oldest first: those are shed before any other.
#[derive(Debug, Default)]
pub struct Waiting {
    next: AtomicU64,
    next_held: AtomicU64,
    order: Mutex<BTreeMap<u64, Arc<Slot>>>,
}

/// Keys of connections waiting for a head start here; the keys of held
/// ones, below it, sort first.
const WAITING_KEYS: u64 = 1 << 62;

impl Waiting {
    /// A new connection: it waits for its first request head.
    #[must_use]
    pub fn open(&self) -> Arc<Slot> {
        let slot = Arc::new(Slot::default());
        self.wait(&slot);
        slot
    }

    /// `slot` waits for a (next) request head: it becomes the newest.
    pub fn wait(&self, slot: &Arc<Slot>) {
        let key = WAITING_KEYS + self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.enter(slot, key);
    }

    /// `slot` is held before its refusal is answered: it does no work, so
    /// it is shed before every connection waiting for a head.
    pub fn hold(&self, slot: &Arc<Slot>) {
        let key = (self.next_held.fetch_add(1, Ordering::Relaxed) + 1) % WAITING_KEYS;
        self.enter(slot, key.max(1));
    }

    fn enter(&self, slot: &Arc<Slot>, key: u64) {
        if let Ok(mut order) = self.order.lock() {
            let old = slot.key.swap(key, Ordering::Relaxed);
            order.remove(&old);
            order.insert(key, Arc::clone(slot));
        }
    }

    /// `slot` is handling a request (or has closed): it cannot be shed.
    pub fn busy(&self, slot: &Slot) {
        if let Ok(mut order) = self.order.lock() {
            let old = slot.key.swap(0, Ordering::Relaxed);
            order.remove(&old);
        }
    }

    /// Shed the connection that has waited longest; `false` if none waits.
    pub fn shed_oldest(&self) -> bool {
        let oldest = self.order.lock().ok().and_then(|mut o| o.pop_first());
        match oldest {
            Some((_, slot)) => {
                slot.key.store(0, Ordering::Relaxed);
                slot.shed.notify_one();
                true
            }
            None => false,
        }
    }

    /// How many connections wait.
    #[cfg(test)]
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.lock().map(|o| o.len()).unwrap_or(0)
    }

    /// Whether no connection waits.
    #[cfg(test)]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_longest_waiting_connection_is_shed_and_busy_ones_never() {
        let w = Waiting::default();
        let a = w.open();
        let b = w.open();
        let c = w.open();
        w.busy(&a);
        // b now waits longest; a is mid-request.
        assert!(w.shed_oldest());
        tokio::time::timeout(std::time::Duration::from_secs(1), b.shed())
            .await
            .unwrap();
        // a finishes its request and waits again: now newer than c.
        w.wait(&a);
        assert!(w.shed_oldest());
        tokio::time::timeout(std::time::Duration::from_secs(1), c.shed())
            .await
            .unwrap();
        w.busy(&a);
        assert!(w.is_empty());
        assert!(!w.shed_oldest());
    }

    #[tokio::test]
    async fn a_held_connection_is_shed_before_every_waiting_one() {
        let w = Waiting::default();
        let idle = w.open();
        let held = w.open();
        w.busy(&held);
        w.hold(&held);
        assert!(w.shed_oldest());
        tokio::time::timeout(std::time::Duration::from_secs(1), held.shed())
            .await
            .unwrap();
        assert!(w.shed_oldest());
        tokio::time::timeout(std::time::Duration::from_secs(1), idle.shed())
            .await
            .unwrap();
        assert!(w.is_empty());
    }
}

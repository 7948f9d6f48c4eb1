//! Connection slots, and which connection to shed when they are all taken:
//! one admission for every listener (the MCP endpoint and the metrics
//! listener alike).
//!
//! A listener bounds its open connections. A connection costs a slot
//! whatever it does, and a client can hold one for a long time while doing
//! nothing useful: sending nothing, or half a header, for the whole header
//! timeout (slowloris); sending half a body for the whole body timeout;
//! waiting out a paced refusal. A few hundred such connections would keep
//! every real client, and the probes, waiting in the kernel's backlog.
//!
//! So when every slot is taken, the accept loop closes one connection and
//! admits the new one in its place. Which one is decided by what it costs
//! and who it is, oldest first within each class, the classes in this
//! order ([`Class`]):
//!
//! 1. **held**: a refused request whose answer is being paced
//!    (the HTTP transport's `admit`): it does no work for anyone;
//! 2. **idle, never authenticated**: waiting for a request head on a
//!    connection that has not yet carried an admitted request (a new
//!    connection, one whose requests were refused, a probe's);
//! 3. **reading a body**: a request whose body has not all arrived: it
//!    holds the connection (and the bytes it sent) for nothing until it
//!    has, so the oldest such is the most stalled;
//! 4. **idle, authenticated**: waiting for its next request head on a
//!    connection that has carried an admitted request.
//!
//! A connection whose request is being handled (parsed, authenticated, run)
//! is never shed; such work is bounded elsewhere (tool calls by
//! `http.max_in_flight` and the admission). If every connection is in that
//! state, the new one waits for one to finish. So unauthenticated or
//! stalled traffic can never keep out a caller whose credentials are good:
//! it is shed first, whatever its number.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// What a sheddable connection is doing, in the order connections are shed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A refusal being paced.
    Held = 1,
    /// Waiting for a request head, never authenticated.
    Idle = 2,
    /// Reading a request body.
    ReadingBody = 3,
    /// Waiting for a request head after an admitted request.
    Known = 4,
}

/// One connection's handle in the registry.
#[derive(Debug, Default)]
pub struct Slot {
    /// Position in the shedding order (0 while it cannot be shed).
    key: AtomicU64,
    /// Whether a request on this connection was admitted.
    authenticated: AtomicBool,
    /// When it entered its class, in milliseconds of [`now_ms`]'s clock.
    since_ms: AtomicU64,
    /// Told when this connection is shed.
    shed: Notify,
}

impl Slot {
    /// Resolves when the accept loop sheds this connection.
    pub async fn shed(&self) {
        self.shed.notified().await;
    }

    /// A request on this connection was admitted: from now on, while idle,
    /// it is shed after every connection that never was.
    pub fn authenticated(&self) {
        self.authenticated.store(true, Ordering::Relaxed);
    }
}

/// A listener's connection slots: at most `max` connections, and which to
/// shed for a new one.
#[derive(Debug)]
pub struct Slots {
    connections: Arc<Semaphore>,
    waiting: Arc<Waiting>,
}

impl Slots {
    /// Room for `max` connections.
    #[must_use]
    pub fn new(max: usize) -> Slots {
        Slots {
            connections: Arc::new(Semaphore::new(max.max(1))),
            waiting: Arc::new(Waiting::default()),
        }
    }

    /// The listener's sheddable connections.
    #[must_use]
    pub fn waiting(&self) -> &Arc<Waiting> {
        &self.waiting
    }

    /// A slot for a connection just accepted: at once if one is free;
    /// else one connection is shed ([`Waiting::shed_oldest`]) and the new
    /// one takes its place, or, if none can be shed, waits for one to
    /// close. The new connection waits for its first request head.
    pub async fn admit(&self) -> (OwnedSemaphorePermit, Arc<Slot>) {
        let permit = match Arc::clone(&self.connections).try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if self.waiting.shed_oldest() {
                    tracing::debug!("http.connection_shed");
                }
                match Arc::clone(&self.connections).acquire_owned().await {
                    Ok(p) => p,
                    // The semaphore is never closed.
                    Err(_) => std::future::pending().await,
                }
            }
        };
        (permit, self.waiting.open())
    }

    /// Serve `conn` until it ends or is shed, then free its slot.
    pub async fn serve<F: Future>(
        waiting: Arc<Waiting>,
        slot: Arc<Slot>,
        permit: OwnedSemaphorePermit,
        conn: F,
    ) {
        tokio::select! {
            _ = conn => {}
            () = slot.shed() => {}
        }
        waiting.busy(&slot);
        drop(permit);
    }
}

/// The sheddable connections of one listener, in shedding order.
#[derive(Debug, Default)]
pub struct Waiting {
    next: AtomicU64,
    order: Mutex<BTreeMap<u64, Arc<Slot>>>,
}

/// How long a new, never authenticated connection may stay idle before it
/// is shed ahead of the stalled bodies.
const IDLE_GRACE_MS: u64 = 2_000;

/// Milliseconds on a monotonic clock (for when a connection entered its
/// class).
fn now_ms() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    // An hour before the first call, so that 0 is always long past.
    let epoch = EPOCH.get_or_init(|| {
        let now = std::time::Instant::now();
        now.checked_sub(std::time::Duration::from_secs(3600))
            .unwrap_or(now)
    });
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Bits of a key below its class: the arrival order within the class.
const CLASS_SHIFT: u32 = 56;

impl Waiting {
    /// A new connection: it waits for its first request head.
    #[must_use]
    pub fn open(&self) -> Arc<Slot> {
        let slot = Arc::new(Slot::default());
        self.wait(&slot);
        slot
    }

    /// `slot` waits for a (next) request head: it becomes the newest of
    /// its class ([`Class::Known`] once a request on it was admitted, else
    /// [`Class::Idle`]).
    pub fn wait(&self, slot: &Arc<Slot>) {
        let class = if slot.authenticated.load(Ordering::Relaxed) {
            Class::Known
        } else {
            Class::Idle
        };
        self.enter(slot, class);
    }

    /// `slot` is held before its refusal is answered.
    pub fn hold(&self, slot: &Arc<Slot>) {
        self.enter(slot, Class::Held);
    }

    /// `slot` is reading a request body.
    pub fn reading_body(&self, slot: &Arc<Slot>) {
        self.enter(slot, Class::ReadingBody);
    }

    fn enter(&self, slot: &Arc<Slot>, class: Class) {
        slot.since_ms.store(now_ms(), Ordering::Relaxed);
        let seq = (self.next.fetch_add(1, Ordering::Relaxed) + 1) & ((1 << CLASS_SHIFT) - 1);
        let key = ((class as u64) << CLASS_SHIFT) | seq;
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

    /// Shed the first connection in shedding order; `false` if none can be.
    pub fn shed_oldest(&self) -> bool {
        self.shed_first(|_| true)
    }

    /// Shed the oldest connection of `class`; `false` if there is none.
    pub fn shed_oldest_of(&self, class: Class) -> bool {
        self.shed_first(|key| key >> CLASS_SHIFT == class as u64)
    }

    /// The first connection in shedding order that `which` accepts, except
    /// that a connection idle for less than [`IDLE_GRACE_MS`] without ever
    /// being authenticated comes after the stalled bodies: it has not had
    /// the time to send its request head (a probe, a caller that has just
    /// connected), and shedding it would let a client that keeps opening
    /// connections reset every newcomer.
    fn shed_first(&self, which: impl Fn(u64) -> bool) -> bool {
        let now = now_ms();
        let victim = self.order.lock().ok().and_then(|mut o| {
            // Order by class, a young idle connection between the stalled
            // bodies and the authenticated idle ones; oldest first within.
            let rank = |k: u64, slot: &Slot| {
                let class = k >> CLASS_SHIFT;
                let young = class == Class::Idle as u64
                    && now.saturating_sub(slot.since_ms.load(Ordering::Relaxed)) < IDLE_GRACE_MS;
                let place = if young {
                    2 * Class::ReadingBody as u64 + 1
                } else {
                    2 * class
                };
                (place, k)
            };
            let key = o
                .iter()
                .filter(|(k, _)| which(**k))
                .min_by_key(|(k, slot)| rank(**k, slot))
                .map(|(k, _)| *k)?;
            o.remove(&key)
        });
        match victim {
            Some(slot) => {
                slot.key.store(0, Ordering::Relaxed);
                slot.shed.notify_one();
                true
            }
            None => false,
        }
    }

    /// How many connections can be shed.
    #[cfg(test)]
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.lock().map(|o| o.len()).unwrap_or(0)
    }

    /// Whether no connection can be shed.
    #[cfg(test)]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn shed(slot: &Slot) {
        tokio::time::timeout(Duration::from_secs(1), slot.shed())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn the_longest_waiting_connection_is_shed_and_busy_ones_never() {
        let w = Waiting::default();
        let a = w.open();
        let b = w.open();
        let c = w.open();
        w.busy(&a);
        // b now waits longest; a is mid-request.
        assert!(w.shed_oldest());
        shed(&b).await;
        // a finishes its request and waits again: now newer than c.
        w.wait(&a);
        assert!(w.shed_oldest());
        shed(&c).await;
        w.busy(&a);
        assert!(w.is_empty());
        assert!(!w.shed_oldest());
    }

    #[tokio::test]
    async fn classes_are_shed_in_order_held_idle_body_young_then_authenticated() {
        let w = Waiting::default();
        let known = w.open();
        known.authenticated();
        w.wait(&known);
        let body = w.open();
        w.reading_body(&body);
        let idle = w.open();
        // Past its grace: an idle connection that sent nothing.
        idle.since_ms.store(0, Ordering::Relaxed);
        let young = w.open();
        let held = w.open();
        w.hold(&held);
        for expected in [&held, &idle, &body, &young, &known] {
            assert!(w.shed_oldest());
            shed(expected).await;
        }
        assert!(w.is_empty());
    }

    #[tokio::test]
    async fn only_the_class_asked_for_is_shed() {
        let w = Waiting::default();
        let idle = w.open();
        let body = w.open();
        w.reading_body(&body);
        assert!(w.shed_oldest_of(Class::ReadingBody));
        shed(&body).await;
        assert!(!w.shed_oldest_of(Class::ReadingBody));
        assert_eq!(w.len(), 1);
        drop(idle);
    }
}

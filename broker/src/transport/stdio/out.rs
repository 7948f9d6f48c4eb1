//! stdout: the thread that owns it, and the answer bytes held for it.
//!
//! Every line for stdout is counted, in bytes, from before it is encoded
//! until the thread has written it, against one budget
//! (`server.max_stdout_bytes`, never less than `server.max_answer_bytes`):
//!
//! * a tool call reserves `server.max_answer_bytes` before it runs
//!   ([`Stdout::reserve`]); once its answer is measured the reservation is
//!   cut (or grown) to the answer's size ([`Stdout::fit`]);
//! * a line the reader makes itself (a control message's answer, a
//!   refusal) takes its size before it is sent, waiting for room, from a
//!   part of the budget kept for such lines ([`CONTROL_ROOM`], a quarter of
//!   a smaller budget): calls' reservations never take it, so however many
//!   calls wait for a worker, a `ping` is still answered.
//!
//! So a client that stops reading stdout makes the broker hold at most the
//! budget: calls wait for room before they run, and the reader, waiting
//! for room for its next answer, stops reading (back-pressure). Progress
//! notifications are not counted: at most [`NOTES`] of a few hundred bytes
//! wait, and one that finds the queue full is dropped.

use std::io::Write as _;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Lines queued for the thread (each counted in the budget as well).
const QUEUED_LINES: usize = 16;
/// Progress notifications waiting for the thread at most.
pub const NOTES: usize = 16;
/// The part of the budget kept for the reader's own lines, in bytes.
pub const CONTROL_ROOM: u32 = 1 << 20;
/// Above this many bytes the thread's batch buffer is not kept.
const KEPT_BATCH: usize = 256 * 1024;

/// A line and the share of the budget it holds until it is written.
struct Out {
    line: Vec<u8>,
    held: Option<OwnedSemaphorePermit>,
}

/// The way to stdout.
#[derive(Clone)]
pub struct Stdout {
    tx: mpsc::Sender<Out>,
    notes: mpsc::Sender<Vec<u8>>,
    /// Calls' answers.
    budget: Arc<Semaphore>,
    /// The reader's own lines.
    control: Arc<Semaphore>,
    /// The calls' budget, and what a call reserves, in bytes.
    total: u32,
    reserve: u32,
    /// The reader's budget, in bytes.
    control_total: u32,
}

/// Bytes as a count of permits, within `cap`.
fn permits(n: u64, cap: u32) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX).min(cap)
}

/// The calls' part of a budget of `budget` bytes, what a call reserves of
/// it, and the reader's part.
fn parts(budget: u64, per_call: u64) -> (u32, u32, u32) {
    let reserve = permits(per_call, u32::MAX).max(1);
    let whole = permits(budget, u32::MAX);
    let control = CONTROL_ROOM.min(whole / 4).max(1);
    (whole.saturating_sub(control).max(reserve), reserve, control)
}

impl Stdout {
    /// Start the thread that owns stdout, with a budget of `budget` bytes
    /// of which each call reserves `per_call` and [`CONTROL_ROOM`] (a
    /// quarter of a smaller budget) is kept for the reader's lines (the
    /// calls' part is raised to one reservation).
    pub fn start(
        budget: u64,
        per_call: u64,
    ) -> std::io::Result<(Stdout, std::thread::JoinHandle<()>)> {
        let (tx, rx) = mpsc::channel::<Out>(QUEUED_LINES);
        let writer = start_writer(rx)?;
        let (total, reserve, control_total) = parts(budget, per_call);
        let (notes, mut notes_rx) = mpsc::channel::<Vec<u8>>(NOTES);
        let forward = tx.clone();
        tokio::spawn(async move {
            while let Some(line) = notes_rx.recv().await {
                if forward.send(Out { line, held: None }).await.is_err() {
                    return;
                }
            }
        });
        Ok((
            Stdout::new(tx, notes, (total, reserve, control_total)),
            writer,
        ))
    }

    /// A handle over `tx` and `notes` with the budget `parts` gives.
    fn new(
        tx: mpsc::Sender<Out>,
        notes: mpsc::Sender<Vec<u8>>,
        (total, reserve, control_total): (u32, u32, u32),
    ) -> Stdout {
        Stdout {
            tx,
            notes,
            budget: Arc::new(Semaphore::new(total as usize)),
            control: Arc::new(Semaphore::new(control_total as usize)),
            total,
            reserve,
            control_total,
        }
    }

    /// Where a call's progress notifications go.
    #[must_use]
    pub fn notes(&self) -> mpsc::Sender<Vec<u8>> {
        self.notes.clone()
    }

    /// Send a line of the reader's, counted first in the reader's part
    /// (waiting for room).
    pub async fn send(&self, line: Vec<u8>) {
        let n = permits(line.len() as u64, self.control_total);
        let Ok(held) = Arc::clone(&self.control).acquire_many_owned(n).await else {
            return;
        };
        let _ = self
            .tx
            .send(Out {
                line,
                held: Some(held),
            })
            .await;
    }

    /// Room for one call's answer, taken before the call runs.
    pub async fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.budget)
            .acquire_many_owned(self.reserve)
            .await
            .ok()
    }

    /// A call's reservation made `len` bytes: the rest given back, or more
    /// taken (waiting for it) for an answer larger than the reservation.
    pub async fn fit(&self, mut held: OwnedSemaphorePermit, len: u64) -> OwnedSemaphorePermit {
        let want = permits(len, self.total);
        let have = u32::try_from(held.num_permits()).unwrap_or(u32::MAX);
        if want < have {
            drop(held.split((have - want) as usize));
        } else if want > have
            && let Ok(more) = Arc::clone(&self.budget)
                .acquire_many_owned(want - have)
                .await
        {
            held.merge(more);
        }
        held
    }

    /// Send a line that holds `held` until it is written.
    pub async fn send_held(&self, line: Vec<u8>, held: OwnedSemaphorePermit) {
        let _ = self
            .tx
            .send(Out {
                line,
                held: Some(held),
            })
            .await;
    }

    /// Bytes held now (for the tests).
    #[cfg(test)]
    fn held(&self) -> u64 {
        u64::from(self.total) - self.budget.available_permits() as u64
    }
}

/// Start the thread that owns stdout: it writes each line with its newline,
/// and every line already waiting with it, then flushes once; the bytes
/// are given back to the budget once written.
fn start_writer(mut rx: mpsc::Receiver<Out>) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("moat-stdout".into())
        .spawn(move || {
            #[allow(
                clippy::disallowed_methods,
                reason = "this module is the only owner of stdout in `serve`"
            )]
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            let mut batch: Vec<u8> = Vec::new();
            let mut held: Vec<OwnedSemaphorePermit> = Vec::new();
            while let Some(first) = rx.blocking_recv() {
                batch.clear();
                let mut add = |o: Out| {
                    batch.extend_from_slice(&o.line);
                    batch.push(b'\n');
                    held.extend(o.held);
                };
                add(first);
                while let Ok(more) = rx.try_recv() {
                    add(more);
                }
                if out.write_all(&batch).is_err() || out.flush().is_err() {
                    return;
                }
                held.clear();
                if batch.capacity() > KEPT_BATCH {
                    batch = Vec::new();
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reservation_is_cut_to_the_answer_and_grown_when_it_must_be() {
        let budget = Arc::new(Semaphore::new(100));
        let (tx, _rx) = mpsc::channel(1);
        let (notes, _notes_rx) = mpsc::channel(1);
        let out = Stdout {
            tx,
            notes,
            budget,
            control: Arc::new(Semaphore::new(10)),
            total: 100,
            reserve: 40,
            control_total: 10,
        };
        let a = out.reserve().await.unwrap();
        let b = out.reserve().await.unwrap();
        assert_eq!(out.held(), 80);
        let a = out.fit(a, 10).await;
        assert_eq!(out.held(), 50);
        let b = out.fit(b, 60).await;
        assert_eq!(out.held(), 70);
        drop((a, b));
        assert_eq!(out.held(), 0);
        // More than the whole budget is held as the whole budget.
        let c = out.reserve().await.unwrap();
        let c = out.fit(c, 10_000).await;
        assert_eq!(out.held(), 100);
        drop(c);
    }

    #[tokio::test]
    async fn the_readers_lines_never_wait_for_calls_reservations() {
        // The defaults: 32 MiB, 8 MiB a call.
        let (total, reserve, control_total) = parts(32 << 20, 8 << 20);
        assert_eq!(control_total, CONTROL_ROOM);
        assert_eq!(u64::from(total) + u64::from(control_total), 32 << 20);
        assert_eq!(total / reserve, 3);
        // A budget of one answer still lets one call run.
        assert_eq!(parts(1 << 20, 8 << 20).0, 8 << 20);
        let (tx, mut rx) = mpsc::channel(4);
        let (notes, _notes_rx) = mpsc::channel(1);
        let out = Stdout::new(tx, notes, (total, reserve, control_total));
        let held: Vec<_> = [(); 3]
            .iter()
            .map(|()| out.budget.clone().try_acquire_many_owned(reserve).unwrap())
            .collect();
        assert!(out.budget.available_permits() < reserve as usize);
        // With every call's reservation taken, a ping's answer still goes out.
        tokio::time::timeout(std::time::Duration::from_secs(5), out.send(b"{}".to_vec()))
            .await
            .unwrap();
        assert_eq!(rx.recv().await.unwrap().line, b"{}");
        drop(held);
    }
}

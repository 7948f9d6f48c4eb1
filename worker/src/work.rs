//! The account of the work one request does: bytes read from the workspace,
//! texts judged by redaction, texts searched with the request's pattern.
//!
//! Counted where the work happens, on whichever thread does it, and sent
//! with the answer ([`moat_protocol::response::Work`]). What a request may
//! not learn (a denied file's contents, a value redaction replaces) must
//! not change this account, or the time the request takes would tell it:
//! the noninterference tests compare it between workspaces that differ only
//! in such things.

use std::sync::atomic::{AtomicU64, Ordering};

use moat_protocol::response::Work;

/// Counters of one request, shared by its threads.
#[derive(Debug, Default)]
pub struct Account {
    files_read: AtomicU64,
    bytes_read: AtomicU64,
    sources_redacted: AtomicU64,
    bytes_redacted: AtomicU64,
    searches: AtomicU64,
    bytes_searched: AtomicU64,
}

fn add(counter: &AtomicU64, n: usize) {
    counter.fetch_add(n as u64, Ordering::Relaxed);
}

impl Account {
    /// One file or blob of `bytes` read.
    pub fn read(&self, bytes: usize) {
        add(&self.files_read, 1);
        add(&self.bytes_read, bytes);
    }

    /// One text of `bytes` judged by redaction.
    pub fn redacted(&self, bytes: usize) {
        add(&self.sources_redacted, 1);
        add(&self.bytes_redacted, bytes);
    }

    /// One text of `bytes` searched with the request's pattern.
    pub fn searched(&self, bytes: usize) {
        add(&self.searches, 1);
        add(&self.bytes_searched, bytes);
    }

    /// What was counted so far.
    #[must_use]
    pub fn total(&self) -> Work {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Work {
            files_read: get(&self.files_read),
            bytes_read: get(&self.bytes_read),
            sources_redacted: get(&self.sources_redacted),
            bytes_redacted: get(&self.bytes_redacted),
            searches: get(&self.searches),
            bytes_searched: get(&self.bytes_searched),
        }
    }
}

//! The state of one stdio connection: the revision `initialize` chose, the
//! client it named, and the calls in flight, so a `notifications/cancelled`
//! can stop them.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::jsonrpc;

/// Per-connection state: the legacy version negotiated by `initialize` on
/// this stdio process, the client it named, and its calls in flight, by id,
/// so that its `notifications/cancelled` can stop them (HTTP keeps none: a
/// request there is cancelled by closing it).
#[derive(Debug, Default)]
pub struct Session {
    legacy: Mutex<Option<String>>,
    client: Mutex<Option<String>>,
    calls: Mutex<std::collections::HashMap<String, Arc<tokio::sync::Notify>>>,
}

/// The key of a request id among a session's calls: its JSON text, so `1`
/// and `"1"` are different requests, as JSON-RPC says.
fn call_key(id: &Value) -> String {
    id.to_string()
}

impl Session {
    /// Note a call in flight under `id`; the returned signal fires when the
    /// client cancels it (a cancel that comes before anyone waits on the
    /// signal is kept).
    pub fn begin_call(&self, id: &jsonrpc::Id) -> Arc<tokio::sync::Notify> {
        let signal = Arc::new(tokio::sync::Notify::new());
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(call_key(&id.to_value()), Arc::clone(&signal));
        }
        signal
    }

    /// The call under `id` is over (answered or cancelled).
    pub fn end_call(&self, id: &jsonrpc::Id) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.remove(&call_key(&id.to_value()));
        }
    }

    /// Cancel the call in flight under `id`, if there is one; a cancel for
    /// an unknown or finished id does nothing. Whether one was found.
    pub(super) fn cancel(&self, id: &Value) -> bool {
        let signal = self
            .calls
            .lock()
            .ok()
            .and_then(|calls| calls.get(&call_key(id)).cloned());
        signal.is_some_and(|s| {
            s.notify_one();
            true
        })
    }

    pub(super) fn legacy(&self) -> Option<String> {
        self.legacy.lock().ok().and_then(|g| g.clone())
    }

    pub(super) fn set_legacy(&self, v: &str) {
        if let Ok(mut g) = self.legacy.lock() {
            *g = Some(v.to_owned());
        }
    }

    pub(super) fn client(&self) -> Option<String> {
        self.client.lock().ok().and_then(|g| g.clone())
    }

    pub(super) fn set_client(&self, label: String) {
        if let Ok(mut g) = self.client.lock() {
            *g = Some(label);
        }
    }
}

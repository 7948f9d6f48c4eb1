//! Progress notifications: a request whose `_meta.progressToken` is valid,
//! on a transport that can send notifications while it runs (stdio), gets
//! one `notifications/progress` line per report of the worker.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::jsonrpc;

tokio::task_local! {
    /// Where a transport that can send notifications while a request runs
    /// (stdio: its output lines) takes them; absent, no progress is sent.
    pub static NOTIFY: tokio::sync::mpsc::Sender<Vec<u8>>;
}

/// Longest `progressToken` string accepted; a longer one, or one that is
/// neither a string nor an integer, asks for nothing.
const MAX_PROGRESS_TOKEN_CHARS: usize = 256;

/// The `_meta.progressToken` of a request, when it is a valid one.
fn progress_token(params: &Map<String, Value>) -> Option<Value> {
    let token = params.get("_meta")?.get("progressToken")?;
    match token {
        Value::String(s) if !s.is_empty() && s.chars().count() <= MAX_PROGRESS_TOKEN_CHARS => {
            Some(token.clone())
        }
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(token.clone()),
        _ => None,
    }
}

/// A progress reporter for a request that asked for progress on a
/// transport that can send it: each report becomes one
/// `notifications/progress` line (dropped if the client is not reading).
pub(super) fn progress_reporter(
    params: &Map<String, Value>,
) -> Option<crate::supervisor::OnProgress> {
    let token = progress_token(params)?;
    let tx = NOTIFY.try_with(Clone::clone).ok()?;
    Some(Arc::new(move |files: u64| {
        let note = json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": token,
                "progress": files,
                "message": format!("{files} files (or commits) examined"),
            },
        });
        let _ = tx.try_send(jsonrpc::encode(&note));
    }))
}

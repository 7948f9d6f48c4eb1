//! Streamable HTTP transport (not yet implemented in this build).

use std::sync::Arc;

use crate::mcp::Server;

/// Serve HTTP. Not yet available: reports and exits 2.
pub async fn serve(server: Arc<Server>) -> i32 {
    let _ = server;
    tracing::error!("the HTTP transport is not available in this build yet");
    2
}

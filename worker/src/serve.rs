//! The worker process: read the start-up frame, confine, then serve one request
//! at a time until the broker closes the socket.
//!
//! No thread exists before [`moat_sandbox::enter`] returns: Landlock and
//! seccomp apply to the calling thread and are inherited only by threads
//! created afterwards.

/// Exit codes of a worker, so the broker can say why one died.
pub mod exit {
    /// The broker closed the socket: normal end.
    #[cfg_attr(
        not(unix),
        allow(dead_code, reason = "the worker process runs on unix only")
    )]
    pub const OK: i32 = 0;
    /// The start-up frame was missing or malformed.
    pub const BAD_INIT: i32 = 64;
    /// A request frame was malformed.
    pub const BAD_REQUEST: i32 = 65;
    /// The workspace root could not be opened.
    pub const NO_WORKSPACE: i32 = 66;
    /// The socket failed.
    pub const SOCKET: i32 = 67;
}

/// Run the worker. Returns the process exit code.
#[cfg(unix)]
#[must_use]
pub fn run() -> i32 {
    use std::path::PathBuf;
    use std::time::Duration;

    use moat_protocol::frame::{self, MAX_REQUEST_FRAME_LEN};
    use moat_protocol::request::{RequestEnvelope, SandboxRequest, WorkerInit};
    use moat_protocol::response::WorkerHello;

    use crate::fs::Workspace;
    use crate::tools;

    let sock = std::sync::Arc::new(moat_sandbox::take_socket());
    // Reads and the answers go through `&UnixStream`; progress frames are
    // written from the walking threads through the same socket, never while
    // an answer is (the reporter is removed before the answer is written).
    let mut sock_ref: &std::os::unix::net::UnixStream = &sock;
    let sock_writer = std::sync::Arc::clone(&sock);
    let init: WorkerInit = match frame::read(&mut sock_ref, MAX_REQUEST_FRAME_LEN) {
        Ok(Some(init)) => init,
        _ => return exit::BAD_INIT,
    };
    let workspace_path = PathBuf::from(&init.workspace);
    let policy = moat_sandbox::Policy {
        workspace: &workspace_path,
        confine: init.sandbox == SandboxRequest::Confined,
        socket_fd: moat_sandbox::SOCKET_FD,
    };
    let report = match moat_sandbox::enter(&policy) {
        Ok(r) => r,
        Err(e) => return e.exit_code(),
    };
    let ws = match Workspace::open(&init) {
        Ok(ws) => ws,
        Err(_) => return exit::NO_WORKSPACE,
    };
    if frame::write(&mut sock_ref, &WorkerHello { sandbox: report }).is_err() {
        return exit::SOCKET;
    }
    loop {
        let envelope: RequestEnvelope = match frame::read(&mut sock_ref, MAX_REQUEST_FRAME_LEN) {
            Ok(Some(e)) => e,
            Ok(None) => return exit::OK,
            Err(_) => return exit::BAD_REQUEST,
        };
        let progress = envelope.progress.then(|| {
            let writer = std::sync::Arc::clone(&sock_writer);
            crate::progress::Progress::new(Box::new(move |files| {
                let mut w: &std::os::unix::net::UnixStream = &writer;
                let _ = frame::write(
                    &mut w,
                    &moat_protocol::response::Response::Progress { files },
                );
            }))
        });
        // The request's threads have all ended when `handle` returns, so
        // nothing reports after the answer is written.
        let response = tools::handle(
            &ws,
            &envelope.request,
            Duration::from_millis(envelope.budget_ms),
            progress,
        );
        if frame::write(&mut sock_ref, &response).is_err() {
            return exit::SOCKET;
        }
    }
}

/// Worker processes exist only on Unix (elsewhere requests run in-process).
#[cfg(not(unix))]
#[must_use]
pub fn run() -> i32 {
    exit::BAD_INIT
}

/// What a worker's exit code says about why it stopped, for operators.
#[must_use]
pub fn describe_exit_code(code: i32) -> Option<&'static str> {
    match code {
        exit::BAD_INIT => Some("the worker received no valid configuration"),
        exit::BAD_REQUEST => Some("the worker received a malformed request"),
        exit::NO_WORKSPACE => Some("the worker could not open the workspace"),
        exit::SOCKET => Some("the worker's socket failed"),
        other => moat_sandbox::describe_exit_code(other),
    }
}

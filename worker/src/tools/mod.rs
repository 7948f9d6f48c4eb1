//! The tools, one module each, and the one function that dispatches a request.

use std::time::Duration;

use moat_protocol::request::Request;
use moat_protocol::response::Response;

use crate::deadline::Deadline;
use crate::workspace::Workspace;

pub mod directory_tree;
pub mod file_outline;
pub mod find_files;
pub mod find_references;
pub mod git_blame;
pub mod git_diff;
pub mod git_log;
pub mod git_show;
pub mod git_status;
pub mod list_dir;
pub mod overview;
pub mod read_file;
mod read_large;
pub mod search;
mod search_large;
pub mod symbols;

/// Run one request to completion (or to its deadline) and answer it.
#[must_use]
pub fn handle(
    ws: &Workspace,
    request: &Request,
    budget: Duration,
    progress: Option<crate::progress::Progress>,
) -> Response {
    handle_until(
        ws,
        request,
        &Deadline::after(budget).with_progress(progress),
    )
}

/// [`handle`] within `deadline` (which may carry a cancel flag and a
/// progress reporter).
#[must_use]
pub fn handle_until(ws: &Workspace, request: &Request, deadline: &Deadline) -> Response {
    let deadline = deadline.clone();
    let result = match request {
        Request::ReadFile(a) => read_file::run(ws, a, &deadline),
        Request::ListDirectory(a) => list_dir::run(ws, a),
        Request::SearchCode(a) => search::run(ws, a, &deadline),
        Request::FindSymbol(a) => symbols::run(ws, a, &deadline),
        Request::ProjectOverview(a) => overview::run(ws, a, &deadline),
        Request::GitLog(a) => git_log::run(ws, a, &deadline),
        Request::GitDiff(a) => git_diff::run(ws, a, &deadline),
        Request::FindFiles(a) => find_files::run(ws, a, &deadline),
        Request::DirectoryTree(a) => directory_tree::run(ws, a, &deadline),
        Request::FileOutline(a) => file_outline::run(ws, a, &deadline),
        Request::FindReferences(a) => find_references::run(ws, a, &deadline),
        Request::GitShow(a) => git_show::run(ws, a, &deadline),
        Request::GitBlame(a) => git_blame::run(ws, a, &deadline),
        Request::GitStatus(a) => git_status::run(ws, a, &deadline),
    };
    Response::Done(result)
}

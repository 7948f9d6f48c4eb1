//! The tools, one module each named for the tool it serves (a tool too big
//! for one file keeps its parts in a folder of that name), and the one
//! function that dispatches a request.

use std::time::Duration;

use moat_protocol::request::Request;
use moat_protocol::response::Response;

use crate::deadline::Deadline;
use crate::fs::Workspace;

mod directory_tree;
mod file_outline;
mod find_files;
mod find_references;
mod find_symbol;
mod git_blame;
mod git_diff;
mod git_log;
mod git_show;
mod git_status;
mod list_directory;
mod project_overview;
// Its line rule is the crate's: `sources`' tests count lines with it.
pub(crate) mod read_file;
mod search_code;

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
    let result = match request {
        Request::ReadFile(a) => read_file::run(ws, a, deadline),
        Request::ListDirectory(a) => list_directory::run(ws, a),
        Request::SearchCode(a) => search_code::run(ws, a, deadline),
        Request::FindSymbol(a) => find_symbol::run(ws, a, deadline),
        Request::ProjectOverview(a) => project_overview::run(ws, a, deadline),
        Request::GitLog(a) => git_log::run(ws, a, deadline),
        Request::GitDiff(a) => git_diff::run(ws, a, deadline),
        Request::FindFiles(a) => find_files::run(ws, a, deadline),
        Request::DirectoryTree(a) => directory_tree::run(ws, a, deadline),
        Request::FileOutline(a) => file_outline::run(ws, a, deadline),
        Request::FindReferences(a) => find_references::run(ws, a, deadline),
        Request::GitShow(a) => git_show::run(ws, a, deadline),
        Request::GitBlame(a) => git_blame::run(ws, a, deadline),
        Request::GitStatus(a) => git_status::run(ws, a, deadline),
    };
    Response::Done(result, deadline.work().total())
}

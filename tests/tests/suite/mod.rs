// One file per control (see STYLE.md §4).
mod git; // git_log/git_diff, revision refusal, hostile .git/config, .git file, network
mod handshake; // both eras: initialize, discover, tools/list paging, serverInfo
mod overview; // project_overview: languages, manifests, tests, version control, file cap
mod search; // search_code: seed cases, order, .gitignore, special files, escapes, limits
mod symbols; // find_symbol: parsed and pattern definitions, kinds, paths
mod timeouts; // ReDoS corpus, compile limits, deadlines, file cap on a huge tree
mod tools_util; // helpers for the walking-tool files

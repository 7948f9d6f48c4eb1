// One file per control (see STYLE.md §4).
mod containment; // traversal shapes, absolute paths, NUL, percent-encoding, no leaks
mod denylist; // credential files at any depth and case, deny_extra, listings never name them
mod errors; // envelope errors and their ids, -32601, -32602 naming the field, no internal detail
mod git; // git_log/git_diff, revision refusal, hostile .git/config, .git file, network
mod handshake; // both eras: initialize, discover, tools/list paging and cursors, _meta order
mod hard_links; // a second name for an outside file is refused (hard_link)
mod limits; // stdio line cap and resync, file bytes, lines read, directory entries
mod list_directory; // order, hidden names, records, walked_by_search
mod output_schema; // results validate against their outputSchema; redaction on every result
mod overview; // project_overview: languages, manifests, tests, version control, file cap
mod read_file; // whole files, ranges, numbering, empty files, line rule, binary
mod search; // search_code: seed cases, order, .gitignore, special files, escapes, limits
mod special_files; // FIFOs, sockets, devices refused without blocking; counted in listings
mod stdout; // stdout carries only JSON-RPC lines; framing, pipelining, notifications
mod supervision; // crashed or hung workers: tool error, respawn, deadline, no zombies
mod symbols; // find_symbol: parsed and pattern definitions, kinds, paths
mod symlinks; // escaping and inside links, intermediate links, late links, swap races
mod timeouts; // ReDoS corpus, compile limits, deadlines, file cap on a huge tree
mod tools_util; // helpers for the walking-tool files
mod util; // shared assertions (not a control)

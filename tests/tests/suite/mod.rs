// One file per control (see STYLE.md §4).
mod handshake; // both eras: initialize, discover, tools/list paging, serverInfo
mod sandbox; // the worker sandbox from inside, via the probe: denials, SIGSYS, exit codes, threads, git

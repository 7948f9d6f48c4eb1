// One file per control (see STYLE.md §4).
mod handshake; // both eras: initialize, discover, tools/list paging, serverInfo

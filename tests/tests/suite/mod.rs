// One file per control (see STYLE.md §4).
mod containment; // traversal shapes, absolute paths, NUL, percent-encoding, no leaks
mod denylist; // credential files at any depth and case, deny_extra, listings never name them
mod errors; // envelope errors and their ids, -32601, -32602 naming the field, no internal detail
mod fencing; // fence shape, nonces, hostile content and names, empty results, scoring end to end
mod handshake; // both eras: initialize, discover, tools/list paging and cursors, _meta order
mod hard_links; // a second name for an outside file is refused (hard_link)
mod limits; // stdio line cap and resync, file bytes, lines read, directory entries
mod list_directory; // order, hidden names, records, walked_by_search
mod logs; // stderr: JSON lines, credentials in headers/methods/config redacted, bearer token never logged
mod output_schema; // results validate against their outputSchema; redaction on every result
mod read_file; // whole files, ranges, numbering, empty files, line rule, binary
mod redaction; // every rule over every tool and both halves, names, refusals, placeholders, seed cases
mod scanning; // INJ01-INJ10 end to end: line, excerpt, weights, noisy-OR, redacted excerpts
mod special_files; // FIFOs, sockets, devices refused without blocking; counted in listings
mod stdout; // stdout carries only JSON-RPC lines; framing, pipelining, notifications
mod supervision; // crashed or hung workers: tool error, respawn, deadline, no zombies
mod symlinks; // escaping and inside links, intermediate links, late links, swap races
mod util; // shared assertions (not a control)

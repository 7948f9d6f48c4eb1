// One file per control.
mod admission; // one admission for every listener: shed by class (paced refusal, idle unauthenticated, stalled body, idle admitted); stalled bodies with a valid token, slowloris heads and idle metrics connections never lock good callers, probes or the scraper out
mod audit; // one event per tools/call on stderr or in an owner-only, append-only, rotated file; no argument values or content; probes, ping and lists not audited
mod availability; // hostile load: non-reading clients, stalled bodies, busy slots, blank-line floods, unexaminable files
mod cancellation; // notifications/cancelled kills the worker of the call (by pid), no answer for it, the slot freed; waiting calls never run; unknown ids ignored
mod cli; // doctor, tools, call, --version/--help, exit codes 0/1/2; JSON or plain logs, level, argument names only
mod client_text; // client text in logs and the audit trail is data: ids, methods, labels and paths cut (one event bounded, earlier events never rotated away by one client), redacted (the audit rpc_id too), escaped so logfmt fields cannot be forged
mod completeness; // every cut answer names the limit that stopped it (stopped_by), never a false "not found", and says how to go on
mod config; // unknown keys named, precedence, env lists, bounds, production invariants (refused / warned)
mod containment; // traversal shapes, absolute paths, NUL, percent-encoding, no leaks
mod denylist; // credential files at any depth and case, deny_extra, listings never name them
mod differential; // generated pairs of workspaces that differ only in denied content and redacted values: every tool, resources and completion answer alike and do the same work
mod docs; // every example of moat's output and answers in README.md and docs/ checked against the binary (marked blocks, none unmarked), editor snippets started as the editor would, grace periods against the drain bound
mod errors; // envelope errors and their ids, -32601, -32602 naming the field, no internal detail
mod fencing; // fence shape, nonces, hostile content and names, empty results, scoring end to end
mod git; // git_log/git_diff, revision refusal, hostile .git/config, .git file, network
mod git_as_git; // git as git: totals and stat names equal git --numstat on every commit of a generated history (renames with edits, copies, mode and type changes, binaries), mode changes, staged renames alike in git_status and git_diff
mod git_attacks; // denied files in diffs, hard-linked work-tree files, linked control files, forged log entries, decompression bombs
mod git_blame; // git_blame: attribution checked against git blame (edits, a merge), the line and commit caps and their continuations, denied files, credentials, hostile revisions, paths and repositories
mod git_show; // git_show: a commit (message, stat, diff), a file at a revision, cuts and their continuations, denied files, credentials, hostile revisions and paths, unsafe repositories
mod git_status; // git_status: staged/unstaged/untracked against git status, upstream ahead/behind from local refs, detached HEAD, the entry cap and its continuation, denied paths counted, hard/symbolic links and FIFOs never read, unsafe repositories
mod handshake; // both eras: initialize, discover, tools/list paging and cursors, _meta order
mod hard_links; // a second name for an outside file is refused (hard_link)
mod healthcheck; // `moat healthcheck [--ready]` against a real HTTP server: 0 on 200, 1 otherwise (never 2)
mod http; // probes, both eras over POST, status mapping, header mirroring, 413, 405, stalls, 503, drain
mod http_auth; // Origin -> Host -> bearer, in that order; rebinding hosts; probes open; duplicated or unreadable gate headers and absolute-form targets fail closed (400)
mod http_oauth; // http.auth = oauth: JWT checks (every outcome), RFC 9728 metadata and challenges, the JWKS cache and its refresh under a down, slow or huge server
mod http_pacing; // beyond http.auth_failures_per_second a refusal is held for http.auth_failure_pause_ms on a connection shed first; good callers never held; 0 turns it off
mod injection; // INJ11 onwards end to end: families planted in everyday files, contexts, the warning line, benign near misses
mod injection_text; // text read as text: documentation quiet, wrapped payloads in every carrier found with the joined sentence, unseen kits, hidden and plain-spoken payloads
mod jsonrpc_exact; // ids answered byte for byte (numbers of any form), a null id is -32600, request methods sent as notifications never run, mirrored headers sent twice refused
mod limit_matrix; // one test per tool and limit: truncated, stopped_by, truthful wording, counts, the continuation and its structured twin, the next page and the last
mod limits; // stdio line cap and resync, file bytes, lines read, directory entries
mod list_directory; // order, hidden names, records, walked_by_search
mod logs; // stderr: JSON lines, credentials in headers/methods/config redacted, bearer token never logged
mod long_lines; // a line longer than an answer read in parts by column (read_file, git_show, git_blame), continuations that always move on, search and reference excerpts centred on the match with its column, never part of a redacted value; listings and messages within the budget
mod metrics; // Prometheus /metrics on its own listener: exact counts after a mixed run, bounded labels, token, auth failures by reason, production refuses an open listener
mod navigation; // find_files, directory_tree, file_outline, find_references: results, paging cursors, cuts, attacks
mod noninterference; // pairs of workspaces that differ only in what the model must not see answer alike: git objects by id, message searches, secret-shaped refs, denied-only changes, name filters and paths, search work; names scored as content
mod operator_logs; // a mixed run read as an operator: request and JSON-RPC ids pair calls with answers, client names, integer microseconds, one line per refusal, a quiet shutdown
mod output_schema; // results validate against their outputSchema; redaction on every result
mod overview; // project_overview: languages, manifests, tests, version control, file cap
mod paging; // search_code, find_symbol, list_directory, git_log: pages concatenate to the whole answer, one continuation line, cursors bound to their query and tool, garbled cursors refused
mod progress; // notifications/progress for long walks that carry a progressToken, increasing, before the answer; none without one or for quick calls
mod read_file; // whole files, ranges, numbering, empty files, line rule, binary
mod redaction; // every rule over every tool and both halves, names, refusals, placeholders, settings.py
mod redaction_shapes; // common credential shapes and multi-line forms, read whole through read_file
mod redaction_sources; // decided on whole raw sources: multi-line context outside an excerpt, line numbers, no search oracle, names in fences, non-UTF-8 names
mod resident_bytes; // answer bytes counted until no copy is left: non-reading HTTP clients and a stdio client that stops reading stdout pin at most the documented budget, every call still answered once
mod resources; // files as resources (list paged, template, read through read_file's controls, -32602 with data.uri for every refused URI), path completion without denied names
mod scanning; // INJ01-INJ10 end to end: line, excerpt, weights, noisy-OR, redacted excerpts
mod search; // search_code: matches and filters, order, .gitignore, special files, escapes, limits
mod special_files; // FIFOs, sockets, devices refused without blocking; counted in listings
mod stdout; // stdout carries only JSON-RPC lines; framing, pipelining, notifications
mod structure; // the code's shape: no sibling import cycles, files of at most 800 lines, unsafe only in the sandbox crate, no outside references, each tool's two files
mod supervision; // crashed or hung workers: tool error, respawn, deadline, no zombies
mod symbols; // find_symbol: parsed and pattern definitions, kinds, paths
mod symlinks; // escaping and inside links, intermediate links, late links, swap races
mod text_answers; // the text half carries the answer: qualified names, impl blocks with their methods, manifest declarations and workspace members, version control of a workspace below its repository's root
mod timeouts; // ReDoS corpus, compile limits, deadlines, file cap on a huge tree
mod tools_util; // helpers for the walking-tool files
mod util;
mod walks; // every entry accounted for: named generated trees walked, include_generated, .gitignore only inside a repository, reasons counted and said, the same subset at the file cap, names-only walks past it // shared assertions (not a control)

// Worker sandbox (Landlock + seccomp): Linux only.
#[cfg(target_os = "linux")]
mod kernel_only; // userland checks compiled out: Landlock alone refuses every escape; in-process leaks (the control); production refuses the build
#[cfg(target_os = "linux")]
mod pid1;
#[cfg(target_os = "linux")]
mod sandbox; // the worker sandbox from inside, via the probe: denials, SIGSYS per rule, exit codes, threads, panic, git
#[cfg(target_os = "linux")]
mod sandbox_worker; // the real `moat serve` workers: Seccomp 2 + NoNewPrivs 1 on every thread (also mid-search), fds, rlimits, doctor
#[cfg(target_os = "linux")]
mod supervision_sandbox; // fail closed: a worker that cannot confine exits 76/77/78, doctor and /readyz say why, calls get worker_failed at once // moat as PID 1 of a container: orphans (a killed worker's git) are reaped, never left as zombies

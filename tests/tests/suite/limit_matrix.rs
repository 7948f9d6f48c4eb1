//! One test per tool and limit, through the real binary: an answer a cap
//! stopped says `truncated: true`, names exactly that limit in `stopped_by`
//! and in words, counts what it examined, ends with the line that continues
//! it (with its twin in `structuredContent`), and following that line gives
//! the next part, neither repeated nor skipped, until a last page that says
//! it is complete.
//!
//! The time budget is not driven here: only a huge tree under a tiny
//! timeout reaches it, and then the answer may be a partial result or a
//! `timed_out` error, so `timeouts.rs` covers it without asserting which.

use moat_tests::{Fixture, Moat, Mode, text};
use serde_json::{Value, json};

use super::tools_util::{ok_result, start, start_with};
use super::util::git;

/// 30 modules calling `target_fn`, its definition in `zz.py`, and `sub/`
/// holding three more callers (a narrower path than the root).
fn modules() -> Fixture {
    let fx = Fixture::new();
    for i in 1..=30 {
        fx.file(
            &format!("m{i:02}.py"),
            format!("def f{i}():\n    return target_fn({i})\n"),
        );
    }
    fx.file("zz.py", "def target_fn(x):\n    return x\n");
    for i in 1..=3 {
        fx.file(
            &format!("sub/s{i}.py"),
            format!("def s{i}():\n    return target_fn({i})\n"),
        );
    }
    fx
}

fn stopped(r: &Value) -> Vec<String> {
    r["structuredContent"]["stopped_by"]
        .as_array()
        .unwrap_or_else(|| panic!("no stopped_by: {r}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Check `r` is cut by `limit` alone and return its summary.
#[track_caller]
fn cut(r: &Value, limit: &str) -> String {
    let s = &r["structuredContent"];
    assert_eq!(s["truncated"], true, "{r}");
    assert_eq!(stopped(r), [limit], "{r}");
    text(r, 0)
}

/// Check `r` is complete and says nothing of a limit or a continuation.
#[track_caller]
fn complete(r: &Value) {
    let s = &r["structuredContent"];
    assert_eq!(s["truncated"], false, "{r}");
    assert!(stopped(r).is_empty(), "{r}");
    for k in ["next_cursor", "next_start_line", "next_path", "next_call"] {
        assert!(s.get(k).is_none(), "{k} on a complete answer: {r}");
    }
    let t = text(r, 0);
    for w in ["… more:", "More:", "To continue", "ncomplete", "limit"] {
        assert!(!t.contains(w), "{w:?} in a complete answer: {t}");
    }
}

fn last_line(r: &Value) -> String {
    text(r, 0).lines().last().unwrap_or_default().to_owned()
}

/// The cursor of a cut page: `next_cursor`, and the summary's last line is
/// exactly the line that continues with it.
#[track_caller]
fn cursor_of(r: &Value, tool: &str) -> String {
    let c = r["structuredContent"]["next_cursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no next_cursor: {r}"))
        .to_owned();
    assert_eq!(
        last_line(r),
        format!("… more: call {tool} again with the same arguments and cursor=\"{c}\""),
        "{r}"
    );
    c
}

/// The JSON arguments of a git tool's last line `To continue, call TOOL
/// with {…}.`.
#[track_caller]
fn continue_args(r: &Value, tool: &str) -> Value {
    let line = last_line(r);
    let args = line
        .strip_prefix(&format!("To continue, call {tool} with "))
        .and_then(|l| l.strip_suffix('.'))
        .unwrap_or_else(|| panic!("no continuation with {tool}: {r}"));
    serde_json::from_str(args).unwrap_or_else(|e| panic!("{e}: {line}"))
}

fn items(r: &Value, list: &str) -> Vec<String> {
    r["structuredContent"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list}: {r}"))
        .iter()
        .map(Value::to_string)
        .collect()
}

/// Every page of `tool` with `args` on `m`, each cut page checked to be
/// stopped by `limit` alone (`check` sees it too) and continued by its
/// cursor, the last checked complete. Returns the items in order and the
/// number of pages.
#[track_caller]
fn pages(
    m: &mut Moat,
    tool: &str,
    args: &Value,
    list: &str,
    limit: &str,
    check: impl Fn(&Value, &str),
) -> (Vec<String>, usize) {
    let mut got = Vec::new();
    let mut args = args.clone();
    for n in 1..200 {
        let r = ok_result(m, tool, args.clone());
        let page = items(&r, list);
        got.extend(page.iter().cloned());
        if r["structuredContent"]["truncated"] == false {
            complete(&r);
            return (got, n);
        }
        let t = cut(&r, limit);
        assert!(!page.is_empty(), "a cut page with nothing on it: {r}");
        check(&r, &t);
        args["cursor"] = json!(cursor_of(&r, tool));
    }
    panic!("{tool}: the cursors never end");
}

/// The whole answer of `tool` with `args` from a server without the cap,
/// checked complete.
#[track_caller]
fn whole(m: &mut Moat, tool: &str, args: Value, list: &str) -> Vec<String> {
    let r = ok_result(m, tool, args);
    complete(&r);
    items(&r, list)
}

fn count(r: &Value, k: &str) -> u64 {
    r["structuredContent"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("no count {k}: {r}"))
}

fn len(r: &Value, list: &str) -> u64 {
    r["structuredContent"][list]
        .as_array()
        .map_or(0, |a| a.len() as u64)
}

// ---- search_code ----

#[test]
fn search_code_files() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")]);
        let r = ok_result(&mut m, "search_code", json!({"pattern": "target_fn"}));
        let t = cut(&r, "files");
        assert_eq!(count(&r, "files_scanned"), 10, "{mode:?}: {r}");
        assert_eq!(count(&r, "match_count"), len(&r, "matches"), "{r}");
        assert!(
            t.contains(
                "incomplete: the walk stopped at the file limit after 10 files, so files not reached may also have matches; narrow it with path"
            ),
            "{t}"
        );
        // An arbitrary part of the tree was seen: no cursor into it.
        assert!(r["structuredContent"].get("next_cursor").is_none(), "{r}");
        // The advice works: a narrower path is searched whole.
        let r = ok_result(
            &mut m,
            "search_code",
            json!({"pattern": "target_fn", "path": "sub"}),
        );
        complete(&r);
        assert_eq!(count(&r, "match_count"), 3, "{r}");
    }
}

#[test]
fn search_code_results() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let all = whole(
            &mut m,
            "search_code",
            json!({"pattern": "target_fn"}),
            "matches",
        );
        assert_eq!(all.len(), 34);
        let (got, n) = pages(
            &mut m,
            "search_code",
            &json!({"pattern": "target_fn", "max_results": 7}),
            "matches",
            "results",
            |r, t| {
                assert_eq!(count(r, "match_count"), 7, "{r}");
                assert_eq!(count(r, "files_scanned"), 34, "{r}");
                assert!(t.contains("more matches exist than the 7 shown"), "{t}");
            },
        );
        assert_eq!(got, all, "{mode:?}: pages neither repeat nor skip");
        assert_eq!(n, 5);
    }
}

#[test]
fn search_code_bytes() {
    let fx = modules();
    let args = json!({"pattern": "target_fn", "context_lines": 5});
    for mode in Mode::BOTH {
        let all = whole(
            &mut start(&fx.root, mode),
            "search_code",
            args.clone(),
            "matches",
        );
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_RESULT_BYTES", "1024")],
        );
        let (got, n) = pages(&mut m, "search_code", &args, "matches", "bytes", |r, t| {
            let shown = count(r, "match_count");
            assert_eq!(shown, len(r, "matches"), "{r}");
            assert!(
                t.contains(&format!(
                    "the answer's size limit stopped it after {shown} matches, and more may exist"
                )),
                "{t}"
            );
        });
        assert_eq!(got, all, "{mode:?}: pages neither repeat nor skip");
        assert!(n >= 2, "{n}");
    }
}

// ---- find_symbol ----

#[test]
fn find_symbol_files() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")]);
        let r = ok_result(
            &mut m,
            "find_symbol",
            json!({"symbol": "s1", "exact": true}),
        );
        let t = cut(&r, "files");
        assert_eq!(count(&r, "files_scanned"), 10, "{mode:?}: {r}");
        assert_eq!(count(&r, "definition_count"), len(&r, "definitions"), "{r}");
        assert!(
            t.contains("incomplete: the walk stopped at the file limit after 10 files, so files not reached may also have definitions; narrow it with path"),
            "{t}"
        );
        assert!(r["structuredContent"].get("next_cursor").is_none(), "{r}");
        let r = ok_result(
            &mut m,
            "find_symbol",
            json!({"symbol": "s1", "path": "sub"}),
        );
        complete(&r);
        assert_eq!(count(&r, "definition_count"), 1, "{r}");
    }
}

/// Files that are not source count towards the file limit too, and the
/// answer says how many files the walk examined, not how many were source.
#[test]
fn find_symbol_files_counts_every_file_the_walk_examined() {
    let fx = modules();
    for i in 1..=20 {
        fx.file(
            &format!("notes/n{i:02}.txt"),
            "target_fn is described here\n",
        );
    }
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")]);
        let r = ok_result(&mut m, "find_symbol", json!({"symbol": "target_fn"}));
        let t = cut(&r, "files");
        assert_eq!(count(&r, "files_scanned"), 10, "{mode:?}: {r}");
        assert!(
            t.contains("the walk stopped at the file limit after 10 files"),
            "{t}"
        );
        // Without the limit every file is counted, source or not.
        let r = ok_result(
            &mut start(&fx.root, mode),
            "find_symbol",
            json!({"symbol": "target_fn"}),
        );
        complete(&r);
        assert_eq!(count(&r, "files_scanned"), 54, "{r}");
        assert_eq!(count(&r, "definition_count"), 1, "{r}");
    }
}

#[test]
fn find_symbol_results() {
    let fx = modules();
    let args = json!({"symbol": "f", "exact": false});
    for mode in Mode::BOTH {
        let all = whole(
            &mut start(&fx.root, mode),
            "find_symbol",
            args.clone(),
            "definitions",
        );
        assert_eq!(all.len(), 31);
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "4")]);
        let (got, n) = pages(
            &mut m,
            "find_symbol",
            &args,
            "definitions",
            "results",
            |r, t| {
                assert_eq!(count(r, "definition_count"), 4, "{r}");
                assert_eq!(count(r, "files_scanned"), 34, "{r}");
                assert!(t.contains("more definitions exist than the 4 shown"), "{t}");
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert_eq!(n, 8);
    }
}

#[test]
fn find_symbol_bytes() {
    let fx = Fixture::new();
    let body: String = (0..300)
        .map(|i| {
            format!(
                "def generated_function_with_a_long_name_{i:03}(first, second, third):\n    pass\n"
            )
        })
        .collect();
    fx.file("many.py", body);
    let args = json!({"symbol": "generated_function", "exact": false});
    for mode in Mode::BOTH {
        let all = whole(
            &mut start_with(
                &fx.root,
                mode,
                &[("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000")],
            ),
            "find_symbol",
            args.clone(),
            "definitions",
        );
        assert_eq!(all.len(), 300);
        let mut m = start_with(
            &fx.root,
            mode,
            &[
                ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
                ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
            ],
        );
        let (got, n) = pages(
            &mut m,
            "find_symbol",
            &args,
            "definitions",
            "bytes",
            |r, t| {
                let shown = count(r, "definition_count");
                assert!(
                t.contains(&format!(
                    "the answer's size limit stopped it after {shown} definitions, and more may exist"
                )),
                "{t}"
            );
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert!(n >= 3, "{n}");
    }
}

// ---- project_overview ----

#[test]
fn project_overview_files() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")]);
        let r = ok_result(&mut m, "project_overview", json!({}));
        cut(&r, "files");
        assert_eq!(count(&r, "total_files"), 10, "{mode:?}: {r}");
        assert!(
            text(&r, 0).contains(
                "\nIncomplete: the walk stopped at the file limit after 10 files; every count is a lower bound.\n"
            ),
            "{r}"
        );
        assert_eq!(
            last_line(&r),
            "… more: the walk stopped at the file limit; call project_overview again with a narrower path",
            "{r}"
        );
        let r = ok_result(&mut m, "project_overview", json!({"path": "sub"}));
        complete(&r);
        assert_eq!(count(&r, "total_files"), 3, "{r}");
    }
}

// ---- find_files ----

#[test]
fn find_files_results() {
    let fx = modules();
    let args = json!({"glob": "*.py", "max_results": 4});
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let all = whole(&mut m, "find_files", json!({"glob": "*.py"}), "files");
        assert_eq!(all.len(), 34);
        let shown = std::cell::Cell::new(0u64);
        let (got, n) = pages(&mut m, "find_files", &args, "files", "results", |r, t| {
            assert_eq!(count(r, "total_matches"), 34, "{r}");
            let from = shown.get() + 1;
            shown.set(shown.get() + len(r, "files"));
            assert!(
                t.starts_with(&format!(
                    "34 files under proj/ matching glob '*.py'; showing {from}-{}.",
                    shown.get()
                )),
                "{t}"
            );
        });
        assert_eq!(got, all, "{mode:?}");
        assert_eq!(n, 9);
    }
}

#[test]
fn find_files_bytes() {
    let fx = Fixture::new();
    for i in 0..200 {
        fx.file(
            &format!("generated/a_rather_long_file_name_for_the_listing_{i:03}.txt"),
            "x\n",
        );
    }
    let args = json!({"glob": "*.txt", "max_results": 1000});
    for mode in Mode::BOTH {
        let all = whole(
            &mut start(&fx.root, mode),
            "find_files",
            json!({"glob": "*.txt"}),
            "files",
        );
        assert_eq!(all.len(), 200);
        let mut m = start_with(
            &fx.root,
            mode,
            &[
                ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
                ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
            ],
        );
        let (got, n) = pages(&mut m, "find_files", &args, "files", "bytes", |r, t| {
            assert_eq!(count(r, "total_matches"), 200, "{r}");
            assert!(
                t.starts_with("200 files under proj/ matching glob '*.txt'; showing "),
                "{t}"
            );
        });
        assert_eq!(got, all, "{mode:?}");
        assert!(n >= 3, "{n}");
    }
}

/// Names only: `find_files` opens no file, so the content searches' file
/// cap does not bound it; a tree far past that cap is listed whole (paged
/// by results, not cut by files).
#[test]
fn find_files_is_not_bound_by_the_content_file_cap() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")]);
        let r = ok_result(&mut m, "find_files", json!({"glob": "s*.py"}));
        complete(&r);
        assert_eq!(count(&r, "total_matches"), 3, "{r}");
        let r = ok_result(&mut m, "find_files", json!({"glob": "nothing-matches-*"}));
        complete(&r);
        assert_eq!(count(&r, "files_scanned"), 34, "{r}");
        // The content search of the same tree is cut at the cap.
        let r = ok_result(&mut m, "search_code", json!({"pattern": "target_fn"}));
        assert!(stopped(&r).contains(&"files".to_owned()), "{r}");
    }
}

// ---- find_references ----

#[test]
fn find_references_files() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")]);
        let r = ok_result(
            &mut m,
            "find_references",
            json!({"identifier": "target_fn"}),
        );
        let t = cut(&r, "files");
        assert_eq!(count(&r, "files_scanned"), 10, "{mode:?}: {r}");
        assert_eq!(count(&r, "reference_count"), len(&r, "references"), "{r}");
        assert!(t.contains("(10 files scanned"), "{t}");
        assert_eq!(
            last_line(&r),
            "… more: the walk stopped at the file limit; call find_references again with a narrower path",
            "{r}"
        );
        assert!(r["structuredContent"].get("next_cursor").is_none(), "{r}");
        let r = ok_result(
            &mut m,
            "find_references",
            json!({"identifier": "target_fn", "path": "sub"}),
        );
        complete(&r);
        assert_eq!(count(&r, "reference_count"), 3, "{r}");
    }
}

#[test]
fn find_references_results() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let all = whole(
            &mut m,
            "find_references",
            json!({"identifier": "target_fn"}),
            "references",
        );
        assert_eq!(all.len(), 34);
        let (got, n) = pages(
            &mut m,
            "find_references",
            &json!({"identifier": "target_fn", "max_results": 10}),
            "references",
            "results",
            |r, t| {
                assert_eq!(count(r, "total_references"), 34, "{r}");
                assert_eq!(count(r, "files_scanned"), 34, "{r}");
                assert!(
                    t.starts_with("34 references of 'target_fn' under proj/ (34 files scanned"),
                    "{t}"
                );
                assert!(t.contains("; showing "), "{t}");
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert_eq!(n, 4);
    }
}

#[test]
fn find_references_bytes() {
    let fx = Fixture::new();
    let body: String = (0..300)
        .map(|i| {
            format!("value_{i:03} = target_fn({i}) + a_long_enough_operand_to_fill_the_answer\n")
        })
        .collect();
    fx.file(
        "calls.py",
        format!("def target_fn(x):\n    return x\n\n{body}"),
    );
    let args = json!({"identifier": "target_fn", "max_results": 1000});
    for mode in Mode::BOTH {
        let all = whole(
            &mut start_with(
                &fx.root,
                mode,
                &[("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000")],
            ),
            "find_references",
            args.clone(),
            "references",
        );
        let mut m = start_with(
            &fx.root,
            mode,
            &[
                ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
                ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
            ],
        );
        let (got, n) = pages(
            &mut m,
            "find_references",
            &args,
            "references",
            "bytes",
            |r, _| {
                assert_eq!(count(r, "total_references"), all.len() as u64, "{r}");
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert!(n >= 3, "{n}");
    }
}

// ---- directory_tree ----

/// Names of a tree's entries as `depth:name`.
fn tree_names(r: &Value) -> Vec<String> {
    r["structuredContent"]["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|e| format!("{}:{}", e["depth"], e["name"].as_str().unwrap_or_default()))
        .collect()
}

#[test]
fn directory_tree_entries() {
    let fx = modules();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "directory_tree", json!({"max_entries": 5}));
        let t = cut(&r, "entries");
        assert_eq!(count(&r, "entry_count"), 5, "{mode:?}: {r}");
        assert_eq!(len(&r, "entries"), 5, "{r}");
        // The cut page goes on with a cursor, in words and in its twin.
        let c = r["structuredContent"]["next_cursor"]
            .as_str()
            .unwrap_or_else(|| panic!("no cursor: {r}"))
            .to_owned();
        assert_eq!(
            last_line(&r),
            format!("… more: call directory_tree again with the same arguments and cursor=\"{c}\""),
            "{t}"
        );
        let next = ok_result(
            &mut m,
            "directory_tree",
            json!({"max_entries": 5, "cursor": c}),
        );
        assert!(
            text(&next, 0).contains("entries 6-10 of the tree in breadth-first order"),
            "{next}"
        );
        // A larger max_entries gives the whole tree, the part shown in it.
        let part = tree_names(&r);
        let r = ok_result(&mut m, "directory_tree", json!({"max_entries": 1000}));
        complete(&r);
        let all = tree_names(&r);
        assert_eq!(all.len(), 35, "{r}");
        assert!(part.iter().all(|e| all.contains(e)), "{part:?} {all:?}");
    }
}

#[test]
fn directory_tree_depth() {
    let fx = modules();
    fx.file("sub/deeper/x.txt", "x\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "directory_tree", json!({"depth": 1}));
        let t = cut(&r, "depth");
        assert_eq!(count(&r, "entry_count"), 32, "{mode:?}: {r}");
        assert!(t.contains("  sub/  [not expanded: 4 entries]"), "{t}");
        assert_eq!(
            last_line(&r),
            "… more: directories marked [not expanded] hold more; call directory_tree again with path set to one of them, or with a depth above 1 (at most 10)",
            "{t}"
        );
        let r = ok_result(&mut m, "directory_tree", json!({"depth": 3}));
        complete(&r);
        assert_eq!(count(&r, "entry_count"), 37, "{r}");
        let r = ok_result(&mut m, "directory_tree", json!({"path": "sub", "depth": 1}));
        cut(&r, "depth");
        let r = ok_result(&mut m, "directory_tree", json!({"path": "sub", "depth": 2}));
        complete(&r);
        assert_eq!(count(&r, "entry_count"), 5, "{r}");
    }
}

// ---- list_directory ----

#[test]
fn list_directory_entries() {
    let fx = modules();
    for mode in Mode::BOTH {
        let all = whole(
            &mut start(&fx.root, mode),
            "list_directory",
            json!({}),
            "entries",
        );
        assert_eq!(all.len(), 32);
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_DIRECTORY_ENTRIES", "5")],
        );
        let shown = std::cell::Cell::new(0u64);
        let (got, n) = pages(
            &mut m,
            "list_directory",
            &json!({}),
            "entries",
            "entries",
            |r, t| {
                assert_eq!(count(r, "directories") + count(r, "files"), 32, "{r}");
                let from = shown.get() + 1;
                shown.set(shown.get() + 5);
                assert!(
                    t.contains(&format!(
                        "listing truncated at 5 entries (showing {from}-{} of 32)",
                        shown.get()
                    )),
                    "{t}"
                );
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert_eq!(n, 7);
    }
}

// ---- read_file ----

fn numbered(n: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i:04} {}\n", "x".repeat(60)))
        .collect()
}

/// Every window of `path` read from line 1 on, following
/// `next_start_line`, each cut one checked stopped by `limit`: the lines
/// read and the number of answers.
#[track_caller]
fn read_all(m: &mut Moat, path: &str, limit: &str) -> (Vec<String>, usize) {
    let mut got = Vec::new();
    let mut start = 1u64;
    for n in 1..200 {
        let r = ok_result(m, "read_file", json!({"path": path, "start_line": start}));
        let s = &r["structuredContent"];
        assert_eq!(s["start_line"], start, "{r}");
        let end = count(&r, "end_line");
        let body = super::util::fenced_body(&r);
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(lines.len() as u64, end + 1 - start, "{r}");
        got.extend(lines.iter().map(|l| (*l).to_owned()));
        if s["truncated"] == false {
            complete(&r);
            return (got, n);
        }
        let t = cut(&r, limit);
        assert_eq!(count(&r, "next_start_line"), end + 1, "{r}");
        assert!(
            t.contains(&format!(
                ": lines {start}-{end} of {} (truncated at the ",
                count(&r, "total_lines")
            )),
            "{t}"
        );
        assert!(
            t.ends_with(&format!("More: read_file with start_line={}.", end + 1)),
            "{t}"
        );
        start = end + 1;
    }
    panic!("read_file never ends");
}

#[test]
fn read_file_lines() {
    let fx = Fixture::new();
    fx.file("long.txt", numbered(35));
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_READ_LINES", "10")]);
        let (got, n) = read_all(&mut m, "long.txt", "lines");
        assert_eq!(n, 4, "{mode:?}");
        assert_eq!(got.len(), 35);
        for (i, l) in got.iter().enumerate() {
            assert!(l.contains(&format!("line {:04} ", i + 1)), "{l}");
        }
    }
}

#[test]
fn read_file_bytes() {
    let fx = Fixture::new();
    fx.file("long.txt", numbered(200));
    for mode in Mode::BOTH {
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
        );
        let (got, n) = read_all(&mut m, "long.txt", "bytes");
        assert!(n >= 3, "{mode:?}: {n}");
        assert_eq!(got.len(), 200);
        for (i, l) in got.iter().enumerate() {
            assert!(l.contains(&format!("line {:04} ", i + 1)), "{l}");
        }
    }
}

#[test]
fn read_file_names_the_limit_in_words() {
    let fx = Fixture::new();
    fx.file("long.txt", numbered(200));
    for mode in Mode::BOTH {
        for (env, words) in [
            (("MOAT_SANDBOX__MAX_READ_LINES", "10"), "line limit"),
            (("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"), "size limit"),
        ] {
            let mut m = start_with(&fx.root, mode, &[env]);
            let r = ok_result(&mut m, "read_file", json!({"path": "long.txt"}));
            let t = text(&r, 0);
            assert!(t.contains(words), "{mode:?} {env:?}: {t}");
        }
    }
}

// ---- file_outline ----

#[test]
fn file_outline_results() {
    let fx = Fixture::new();
    let body: String = (0..1005)
        .map(|i| format!("def g{i}():\n    pass\n"))
        .collect();
    fx.file("many.py", body);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "file_outline", json!({"path": "many.py"}));
        let t = cut(&r, "results");
        assert_eq!(count(&r, "item_count"), 1000, "{mode:?}: {r}");
        assert_eq!(len(&r, "items"), 1000, "{r}");
        assert!(t.starts_with("many.py: 1000 definitions"), "{t}");
        assert_eq!(
            last_line(&r),
            "… more: the outline stopped at 1000 definitions (max_items); use read_file with start_line after line 1999 for the rest",
            "{t}"
        );
        let items = &r["structuredContent"]["items"];
        assert_eq!(items[999]["name"], "g999", "{r}");
        assert_eq!(items[999]["line"], 1999, "{r}");
        // The rest, from where the line says.
        let r = ok_result(
            &mut m,
            "read_file",
            json!({"path": "many.py", "start_line": 2000}),
        );
        complete(&r);
        let body = super::util::fenced_body(&r);
        assert!(body.contains("\n2001  def g1000():\n"), "{body}");
        assert!(
            body.ends_with("\n2009  def g1004():\n2010      pass"),
            "{body}"
        );
    }
}

// ---- git ----

/// `modules()` under git: a first commit, then five commits changing
/// `a.txt`.
fn repo() -> Fixture {
    let fx = modules();
    fx.file("a.txt", "0\n");
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "c0"]);
    for i in 1..=5 {
        fx.file("a.txt", format!("{i}\n"));
        git(&fx.root, "Ann", &["commit", "-qam", &format!("c{i}")]);
    }
    fx
}

#[test]
fn git_log_results() {
    assert!(super::util::have_git());
    let fx = repo();
    for mode in Mode::BOTH {
        let all = whole(&mut start(&fx.root, mode), "git_log", json!({}), "commits");
        assert_eq!(all.len(), 6);
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_GIT_ENTRIES", "2")]);
        let (got, n) = pages(
            &mut m,
            "git_log",
            &json!({}),
            "commits",
            "results",
            |r, t| {
                assert_eq!(count(r, "commit_count"), 2, "{r}");
                assert!(
                    t.starts_with(
                        "2 commits. Older commits exist past the 2 shown (the commit limit)."
                    ),
                    "{t}"
                );
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert_eq!(n, 3);
    }
}

#[test]
fn git_log_bytes() {
    assert!(super::util::have_git());
    let fx = repo();
    for i in 0..60 {
        git(
            &fx.root,
            "Ann",
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("commit {i:02} with a subject long enough to fill the answer budget soon"),
            ],
        );
    }
    for mode in Mode::BOTH {
        let all = whole(
            &mut start(&fx.root, mode),
            "git_log",
            json!({"limit": 200}),
            "commits",
        );
        assert_eq!(all.len(), 66);
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
        );
        let (got, n) = pages(
            &mut m,
            "git_log",
            &json!({"limit": 200}),
            "commits",
            "bytes",
            |r, t| {
                let shown = count(r, "commit_count");
                assert_eq!(shown, len(r, "commits"), "{r}");
                assert!(
                    t.contains(&format!(
                        "The answer's size limit stopped it after {shown}."
                    )),
                    "{t}"
                );
            },
        );
        assert_eq!(got, all, "{mode:?}");
        assert!(n >= 2, "{n}");
    }
}

#[test]
fn git_status_entries() {
    assert!(super::util::have_git());
    let fx = repo();
    fx.file("m01.py", "changed\n");
    fx.file("new1.txt", "x\n");
    fx.file("new2.txt", "x\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_status", json!({"max_entries": 1}));
        let t = cut(&r, "entries");
        assert_eq!(count(&r, "unstaged_count"), 1, "{mode:?}: {r}");
        assert_eq!(count(&r, "untracked_count"), 2, "counts stay whole: {r}");
        assert!(
            t.contains("\nListed 1 of 3 paths (the entry limit).\n"),
            "{t}"
        );
        let next = continue_args(&r, "git_status");
        assert_eq!(next, json!({"max_entries": 3}), "{r}");
        let r = ok_result(&mut m, "git_status", next);
        complete(&r);
        assert_eq!(len(&r, "unstaged") + len(&r, "untracked"), 3, "{r}");
    }
}

#[test]
fn git_blame_lines() {
    assert!(super::util::have_git());
    let fx = repo();
    fx.file("big.txt", numbered(620));
    git(&fx.root, "Ann", &["add", "big.txt"]);
    git(&fx.root, "Ann", &["commit", "-qm", "rows"]);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_blame", json!({"path": "big.txt"}));
        let t = cut(&r, "lines");
        assert_eq!((count(&r, "start_line"), count(&r, "end_line")), (1, 500));
        assert_eq!(count(&r, "total_lines"), 620, "{r}");
        assert!(t.contains(": lines 1-500 of 620, "), "{mode:?}: {t}");
        assert!(t.contains(" Cut at the 500-line limit.\n"), "{t}");
        let next = continue_args(&r, "git_blame");
        assert_eq!(next["start_line"], 501, "{r}");
        let r = ok_result(&mut m, "git_blame", next);
        complete(&r);
        assert_eq!((count(&r, "start_line"), count(&r, "end_line")), (501, 620));
        let first = &r["structuredContent"]["groups"][0]["lines"][0];
        assert!(
            first.as_str().unwrap_or_default().starts_with("line 0501 "),
            "{r}"
        );
    }
}

#[test]
fn git_show_lines() {
    assert!(super::util::have_git());
    let fx = repo();
    fx.file("long.txt", numbered(25));
    git(&fx.root, "Ann", &["add", "long.txt"]);
    git(&fx.root, "Ann", &["commit", "-qm", "long"]);
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_READ_LINES", "10")]);
        let mut args = json!({"path": "long.txt"});
        let mut got = Vec::new();
        for n in 1.. {
            let r = ok_result(&mut m, "git_show", args.clone());
            let body = super::tools_util::fenced(&r, "git-show");
            got.extend(
                body.lines()
                    .filter(|l| l.contains(" line "))
                    .map(str::to_owned),
            );
            if n == 3 {
                complete(&r);
                break;
            }
            let t = cut(&r, "lines");
            let end = count(&r, "end_line");
            assert!(
                t.contains(&format!(": lines {}-{end} of 25, ", end - 9)),
                "{t}"
            );
            assert!(t.contains(" Cut at the 10-line limit.\n"), "{t}");
            args = continue_args(&r, "git_show");
            assert_eq!(args["start_line"], end + 1, "{r}");
        }
        assert_eq!(got.len(), 25, "{mode:?}: {got:?}");
        for (i, l) in got.iter().enumerate() {
            assert!(l.contains(&format!("line {:04} ", i + 1)), "{l}");
        }
    }
}

/// Two files each changed by about 3,000 characters of diff: together over
/// a 4,000-character answer, each alone within it.
fn two_changes() -> Fixture {
    let fx = repo();
    let block = |tag: &str| -> String {
        (0..60)
            .map(|i| format!("{tag} changed line {i:02} of some text\n"))
            .collect()
    };
    fx.file("p.txt", "start\n");
    fx.file("q.txt", "start\n");
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "base"]);
    fx.file("p.txt", format!("start\n{}", block("p")));
    fx.file("q.txt", format!("start\n{}", block("q")));
    fx
}

#[test]
fn git_diff_bytes() {
    assert!(super::util::have_git());
    let fx = two_changes();
    for mode in Mode::BOTH {
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
        );
        let r = ok_result(&mut m, "git_diff", json!({}));
        let t = cut(&r, "bytes");
        assert_eq!(count(&r, "files_changed"), 2, "{mode:?}: {r}");
        assert_eq!(count(&r, "lines_added"), 120, "{r}");
        let next = r["structuredContent"]["next_cursor"]
            .as_str()
            .unwrap_or_else(|| panic!("no next_cursor: {r}"))
            .to_owned();
        assert!(
            t.contains("Cut at the answer's size limit; the totals count every file."),
            "{t}"
        );
        assert!(text(&r, 1).contains("+p changed line 00"), "{r}");
        assert!(!text(&r, 1).contains("+q changed line 59"), "{r}");
        // The next page starts where this one stopped and ends the diff.
        let r = ok_result(&mut m, "git_diff", json!({"cursor": next}));
        complete(&r);
        assert_eq!(count(&r, "files_changed"), 2, "{r}");
        assert!(text(&r, 1).contains("+q changed line 59"), "{r}");
    }
}

#[test]
fn git_show_bytes() {
    assert!(super::util::have_git());
    let fx = two_changes();
    git(&fx.root, "Ann", &["commit", "-qam", "change both"]);
    for mode in Mode::BOTH {
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
        );
        let r = ok_result(&mut m, "git_show", json!({}));
        let t = cut(&r, "bytes");
        assert_eq!(count(&r, "files_changed"), 2, "{mode:?}: {r}");
        assert!(
            !t.contains("262144"),
            "the budget that cut it is 4000 characters: {t}"
        );
        assert!(t.contains("size limit"), "{t}");
    }
}

#[test]
fn git_show_bytes_continues() {
    assert!(super::util::have_git());
    let fx = two_changes();
    git(&fx.root, "Ann", &["commit", "-qam", "change both"]);
    for mode in Mode::BOTH {
        let mut m = start_with(
            &fx.root,
            mode,
            &[("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
        );
        let r = ok_result(&mut m, "git_show", json!({}));
        cut(&r, "bytes");
        assert_eq!(count(&r, "files_changed"), 2, "{mode:?}: {r}");
        assert_eq!(count(&r, "files_not_shown"), 1, "{r}");
        let next = continue_args(&r, "git_diff");
        assert_eq!(next["path"], "q.txt", "{r}");
        let r = ok_result(&mut m, "git_diff", next);
        complete(&r);
        assert!(text(&r, 1).contains("+q changed line 59"), "{r}");
    }
}

/// Every continuation line has its twin in `structuredContent`, so a client
/// reading only the structured answer can go on.
#[test]
fn continuations_have_a_structured_twin() {
    assert!(super::util::have_git());
    let fx = repo();
    let body: String = (0..1005)
        .map(|i| format!("def g{i}():\n    pass\n"))
        .collect();
    fx.file("many.py", body);
    git(&fx.root, "Ann", &["add", "many.py"]);
    git(&fx.root, "Ann", &["commit", "-qm", "many"]);
    fx.file("new.txt", "x\n");
    fx.file("m01.py", "changed\n");
    let mut m = start_with(
        &fx.root,
        Mode::InProcess,
        &[("MOAT_SANDBOX__MAX_READ_LINES", "10")],
    );
    for (tool, args) in [
        ("file_outline", json!({"path": "many.py"})),
        ("git_status", json!({"max_entries": 1})),
        ("git_blame", json!({"path": "many.py"})),
        ("git_show", json!({"path": "many.py"})),
    ] {
        let r = ok_result(&mut m, tool, args);
        assert_eq!(r["structuredContent"]["truncated"], true, "{tool}: {r}");
        let s = r["structuredContent"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(
            s.keys().any(|k| k.starts_with("next_")),
            "{tool}: no next_* member beside {:?}",
            last_line(&r)
        );
    }
}

/// A walk cut by the file cap ends, like every other cut answer, with a
/// last line saying how to go on.
#[test]
fn a_file_capped_walk_ends_with_how_to_go_on() {
    let fx = modules();
    let mut m = start_with(
        &fx.root,
        Mode::InProcess,
        &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")],
    );
    for (tool, args) in [
        ("search_code", json!({"pattern": "target_fn"})),
        ("find_symbol", json!({"symbol": "target_fn"})),
        ("project_overview", json!({})),
    ] {
        let r = ok_result(&mut m, tool, args);
        cut(&r, "files");
        assert_eq!(
            last_line(&r),
            format!(
                "… more: the walk stopped at the file limit; call {tool} again with a narrower path"
            ),
            "{r}"
        );
    }
}

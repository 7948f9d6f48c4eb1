//! Paging of the tools that answered in one page before cursors: search_code,
//! find_symbol, list_directory, directory_tree and git_log take the same
//! stateless, query-bound cursor as find_files. For each, in both sandbox
//! modes and both eras: the pages of a small page size concatenate to the
//! unpaged answer (nothing repeated, nothing skipped; a tree's pages follow
//! its breadth-first order, so they hold the same entries), each cut page
//! ends with the one line that continues it, and a cursor is refused with
//! other arguments, by another tool, or garbled (`invalid_arguments`, never a
//! panic).

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::util::{call_err, call_ok, git};

/// 30 small Python modules, five directories and a history of seven
/// commits touching `a.txt`.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    for i in 1..=30 {
        fx.file(
            &format!("m{i:02}.py"),
            format!("def f{i}():\n    return {i}\n\nclass F{i}:\n    pass\n"),
        );
    }
    for d in ["d1", "D2", "d3", "lib", "Zeta"] {
        fx.file(&format!("{d}/keep.txt"), "k\n");
    }
    fx.file("a.txt", "0\n");
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "c0"]);
    for i in 1..=6 {
        fx.file("a.txt", format!("{i}\n"));
        git(&fx.root, "Ann", &["commit", "-qam", &format!("c{i}")]);
    }
    fx
}

/// One call of each tool whose whole answer is several small pages, the
/// member holding its items, and an item's identity.
fn cases() -> [(&'static str, Value, &'static str); 5] {
    [
        (
            "search_code",
            json!({"pattern": "return|pass", "regex": true, "max_results": 4}),
            "matches",
        ),
        (
            "find_symbol",
            json!({"symbol": "f", "exact": false}),
            "definitions",
        ),
        ("list_directory", json!({}), "entries"),
        ("directory_tree", json!({"depth": 3}), "entries"),
        ("git_log", json!({"limit": 2}), "commits"),
    ]
}

fn key(tool: &str, item: &Value) -> String {
    match tool {
        "search_code" => format!("{}:{}", item["path"], item["line"]),
        "find_symbol" => format!("{}:{}:{}", item["path"], item["line"], item["name"]),
        "list_directory" => format!("{}", item["name"]),
        _ => format!("{}", item["commit"]),
    }
}

fn items(tool: &str, r: &Value, list: &str) -> Vec<String> {
    let all = r["structuredContent"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list}: {r}"));
    if tool == "directory_tree" {
        return tree_paths(all);
    }
    all.iter().map(|i| key(tool, i)).collect()
}

/// A tree page's entries as paths from the top: an entry is under the last
/// directory one level up, or, when it names one (`dir`), under that
/// directory given on an earlier page.
fn tree_paths(entries: &[Value]) -> Vec<String> {
    let mut at_depth: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for e in entries {
        let depth = e["depth"].as_u64().unwrap() as usize;
        let name = e["name"].as_str().unwrap();
        let parent = match e["dir"].as_str() {
            Some(d) => d.to_owned(),
            None if depth == 1 => String::new(),
            None => at_depth
                .get(depth - 2)
                .cloned()
                .unwrap_or_else(|| panic!("{name}: no directory above it: {entries:?}")),
        };
        let path = if parent.is_empty() {
            name.to_owned()
        } else {
            format!("{parent}/{name}")
        };
        at_depth.truncate(depth - 1);
        at_depth.push(path.clone());
        out.push(path);
    }
    out
}

/// Every page of `tool` with `args`, following `next_cursor`: the items in
/// order and how many pages there were.
fn all_pages(m: &mut Moat, tool: &str, args: &Value, list: &str) -> (Vec<String>, usize) {
    let mut got = Vec::new();
    let mut args = args.clone();
    for pages in 1..100 {
        let r = call_ok(m, tool, args.clone());
        got.extend(items(tool, &r, list));
        let s = &r["structuredContent"];
        let summary = text(&r, 0);
        match s["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(s["truncated"], true, "{tool}: {r}");
                let by = if matches!(tool, "list_directory" | "directory_tree") {
                    "entries"
                } else {
                    "results"
                };
                assert_eq!(s["stopped_by"], json!([by]), "{tool}: {r}");
                assert_eq!(
                    summary.lines().last(),
                    Some(
                        format!(
                            "… more: call {tool} again with the same arguments and cursor=\"{c}\""
                        )
                        .as_str()
                    ),
                    "{tool}: {r}"
                );
                args["cursor"] = json!(c);
            }
            None => {
                assert_eq!(s["truncated"], false, "{tool}: {r}");
                assert_eq!(s["stopped_by"], json!([]), "{tool}: {r}");
                assert!(!summary.contains("… more:"), "{tool}: {r}");
                return (got, pages);
            }
        }
    }
    panic!("{tool}: the cursors never end");
}

/// Small pages for the tools whose page size is the server's.
fn small_pages(mode: Mode) -> Options {
    Options::new(mode)
        .env("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "4")
        .env("MOAT_SANDBOX__MAX_DIRECTORY_ENTRIES", "4")
        .env("MOAT_SANDBOX__MAX_GIT_ENTRIES", "2")
}

#[test]
fn pages_of_the_older_tools_concatenate_to_the_whole_answer() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut whole = Moat::connect(&fx.root, &Options::new(mode), era);
            let mut paged = Moat::connect(&fx.root, &small_pages(mode), era);
            for (tool, args, list) in cases() {
                let mut unpaged = args.clone();
                for k in ["max_results", "limit"] {
                    if let Some(o) = unpaged.as_object_mut() {
                        o.remove(k);
                    }
                }
                let r = call_ok(&mut whole, tool, unpaged);
                assert_eq!(r["structuredContent"]["truncated"], false, "{tool}: {r}");
                let mut expected = items(tool, &r, list);
                let (mut got, pages) = all_pages(&mut paged, tool, &args, list);
                if tool == "directory_tree" {
                    // Each page is in pre-order, the pages in breadth-first
                    // order: the same entries, each once.
                    expected.sort();
                    got.sort();
                    assert!(expected.iter().any(|p| p == "d1/keep.txt"), "{expected:?}");
                }
                assert_eq!(got, expected, "{mode:?} {era:?} {tool}");
                assert!(pages >= 3, "{tool}: {pages} pages of {}", expected.len());
            }
        }
    }
}

#[test]
fn a_cursor_of_an_older_tool_is_refused_with_other_arguments_or_garbled() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &small_pages(mode), era);
            let others = [
                json!({"pattern": "return|pass", "regex": true, "path": "m01.py"}),
                json!({"symbol": "f", "exact": true}),
                json!({"include_hidden": true}),
                json!({"depth": 2}),
                json!({"limit": 2, "path": "a.txt"}),
            ];
            let mut cursors = Vec::new();
            for ((tool, args, _), other) in cases().into_iter().zip(others) {
                let r = call_ok(&mut m, tool, args.clone());
                let c = r["structuredContent"]["next_cursor"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{tool}: no cursor: {r}"))
                    .to_owned();
                // The same query goes on with it.
                let mut same = args.clone();
                same["cursor"] = json!(c);
                call_ok(&mut m, tool, same);
                // Another query of the same tool refuses it.
                let mut other = other;
                other["cursor"] = json!(c);
                let (code, r) = call_err(&mut m, tool, other);
                assert_eq!(code, "invalid_arguments", "{mode:?} {era:?} {tool}: {r}");
                assert!(text(&r, 0).contains("different query"), "{tool}: {r}");
                // Garbled, forged or truncated: refused, never a panic.
                for bad in [
                    format!("{c}x"),
                    c[..c.len() - 1].to_owned(),
                    "AAAAAAAAAAAAAAAAAAAAAAA".to_owned(),
                    "not a cursor!".to_owned(),
                ] {
                    let mut garbled = args.clone();
                    garbled["cursor"] = json!(bad);
                    let (code, r) = call_err(&mut m, tool, garbled);
                    assert_eq!(code, "invalid_arguments", "{tool} {bad}: {r}");
                }
                cursors.push((tool, c));
            }
            // A cursor is bound to its tool too.
            for (i, (tool, args, _)) in cases().into_iter().enumerate() {
                let (_, c) = &cursors[(i + 1) % cursors.len()];
                let mut args = args;
                args["cursor"] = json!(c);
                let (code, r) = call_err(&mut m, tool, args);
                assert_eq!(code, "invalid_arguments", "{tool}: {r}");
            }
        }
    }
    // The older revisions refuse a bad cursor as JSON-RPC invalid params.
    let mut m = Moat::connect_legacy(&fx.root, &Options::new(Mode::InProcess), "2025-06-18");
    for tool in [
        "search_code",
        "find_symbol",
        "list_directory",
        "directory_tree",
        "git_log",
    ] {
        let mut args = match tool {
            "search_code" => json!({"pattern": "x"}),
            "find_symbol" => json!({"symbol": "x"}),
            _ => json!({}),
        };
        args["cursor"] = json!("AAAA");
        let r = m.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(r["error"]["code"], -32602, "{tool}: {r}");
    }
}

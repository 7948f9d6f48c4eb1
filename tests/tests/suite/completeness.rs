//! Truthful completeness: an answer cut short by a limit says which limit
//! stopped it (`truncated`, `stopped_by`), never reports "not found" or zero
//! for a part of the workspace or history it did not examine, and says how
//! to go on; a complete answer says nothing of the kind.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::tools_util::answer_chars;
use super::util::{call_ok, git};

/// 30 small modules, then `zz.py` (last in path order) holding the one
/// definition of `target_fn`.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    for i in 1..=30 {
        fx.file(
            &format!("m{i:02}.py"),
            format!("def f{i}():\n    return {i}\n"),
        );
    }
    fx.file("zz.py", "def target_fn():\n    pass\n");
    fx
}

fn stopped_by(r: &Value) -> Vec<&str> {
    r["structuredContent"]["stopped_by"]
        .as_array()
        .unwrap_or_else(|| panic!("no stopped_by: {r}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

#[test]
fn a_search_cut_by_the_file_limit_never_claims_the_name_is_absent() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_SEARCH_FILES", "10");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        for (tool, args) in [
            ("search_code", json!({"pattern": "target_fn"})),
            ("find_symbol", json!({"symbol": "target_fn"})),
        ] {
            let r = call_ok(&mut m, tool, args);
            let s = &r["structuredContent"];
            assert_eq!(s["truncated"], true, "{mode:?} {tool}: {r}");
            assert_eq!(stopped_by(&r), ["files"], "{r}");
            assert_eq!(s["files_scanned"], 10, "{r}");
            let t = text(&r, 0);
            assert!(
                t.contains("incomplete: the walk stopped at the file limit after 10 files"),
                "{t}"
            );
            assert!(!t.contains("stopped at 0"), "{t}");
        }
        let r = call_ok(&mut m, "project_overview", json!({}));
        assert_eq!(r["structuredContent"]["truncated"], true, "{r}");
        assert_eq!(stopped_by(&r), ["files"], "{r}");
        assert!(text(&r, 0).contains("every count is a lower bound"), "{r}");

        // Without the limit the same calls are complete and say nothing of it.
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for (tool, args) in [
            ("search_code", json!({"pattern": "target_fn"})),
            ("find_symbol", json!({"symbol": "target_fn"})),
            ("project_overview", json!({})),
        ] {
            let r = call_ok(&mut m, tool, args);
            assert_eq!(r["structuredContent"]["truncated"], false, "{tool}: {r}");
            assert!(stopped_by(&r).is_empty(), "{r}");
            assert!(!text(&r, 0).to_lowercase().contains("incomplete"), "{r}");
        }
    }
}

#[test]
fn a_search_cut_by_the_match_or_byte_limit_names_that_limit() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "return", "max_results": 3}),
        );
        assert_eq!(stopped_by(&r), ["results"], "{mode:?}: {r}");
        assert_eq!(r["structuredContent"]["match_count"], 3, "{r}");
        assert!(
            text(&r, 0).contains("more matches exist than the 3 shown"),
            "{r}"
        );

        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_RESULT_BYTES", "1024");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "return", "context_lines": 5}),
        );
        assert_eq!(stopped_by(&r), ["bytes"], "{mode:?}: {r}");
        let shown = r["structuredContent"]["match_count"].as_u64().unwrap_or(0);
        assert!(shown > 0 && shown < 30, "{r}");
        assert!(
            text(&r, 0).contains(&format!(
                "the answer's size limit stopped it after {shown} matches"
            )),
            "{r}"
        );
    }
}

#[test]
fn a_log_clamped_by_the_commit_limit_says_so_and_pages_on_with_a_cursor() {
    let fx = Fixture::new();
    fx.file("a.txt", "0\n");
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "c0"]);
    for i in 1..=4 {
        fx.file("a.txt", format!("{i}\n"));
        git(&fx.root, "Ann", &["commit", "-qam", &format!("c{i}")]);
    }
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_GIT_ENTRIES", "2");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let mut subjects = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let args = match &cursor {
                Some(c) => json!({"limit": 50, "cursor": c}),
                None => json!({"limit": 50}),
            };
            let r = call_ok(&mut m, "git_log", args);
            let s = &r["structuredContent"];
            for c in s["commits"].as_array().expect("commits") {
                subjects.push(c["subject"].as_str().unwrap_or("").to_owned());
            }
            let t = text(&r, 0);
            if s["truncated"] == true {
                assert_eq!(stopped_by(&r), ["results"], "{mode:?}: {r}");
                let c = s["next_cursor"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no cursor: {r}"));
                assert!(t.contains(&format!("cursor=\"{c}\"")), "{t}");
                cursor = Some(c.to_owned());
            } else {
                assert!(stopped_by(&r).is_empty(), "{r}");
                assert!(!t.contains("More:"), "{t}");
                break;
            }
            assert!(subjects.len() <= 5, "{subjects:?}");
        }
        // A cursor is bound to its query.
        let first = call_ok(&mut m, "git_log", json!({"limit": 1}));
        let c = first["structuredContent"]["next_cursor"]
            .as_str()
            .expect("cursor")
            .to_owned();
        let (code, r) = super::util::call_err(
            &mut m,
            "git_log",
            json!({"limit": 1, "path": "a.txt", "cursor": c}),
        );
        assert_eq!(code, "invalid_arguments", "{r}");
        assert_eq!(subjects, ["c4", "c3", "c2", "c1", "c0"], "{mode:?}");
    }
}

#[test]
fn a_diff_cut_at_the_output_limit_counts_every_file_and_continues_by_cursor() {
    let fx = Fixture::new();
    let block = |tag: &str| -> String {
        (0..6000)
            .map(|i| format!("{tag} line {i:05} of generated text\n"))
            .collect()
    };
    for name in ["a.txt", "b.txt", "c.txt"] {
        fx.file(name, "start\n");
    }
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "base"]);
    for name in ["a.txt", "b.txt", "c.txt"] {
        fx.file(name, format!("start\n{}", block(name)));
    }
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(&mut m, "git_diff", json!({}));
        let s = &r["structuredContent"];
        assert_eq!(s["truncated"], true, "{mode:?}: {}", s);
        assert_eq!(stopped_by(&r), ["bytes"], "{s}");
        // The totals are the whole diff's, not the shown part's.
        assert_eq!(s["files_changed"], 3, "{s}");
        assert_eq!(s["lines_added"], 18_000, "{s}");
        // The continuation is a cursor that moves on: the next page starts
        // where this one stopped, and following them reaches every file.
        let mut r = r;
        let mut shown = text(&r, 1);
        for _ in 0..100 {
            let Some(c) = r["structuredContent"]["next_cursor"]
                .as_str()
                .map(str::to_owned)
            else {
                break;
            };
            assert!(
                text(&r, 0).contains(&format!(
                    "call git_diff again with the same arguments and cursor=\"{c}\""
                )),
                "{}",
                text(&r, 0)
            );
            r = call_ok(&mut m, "git_diff", json!({"cursor": c}));
            let page = text(&r, 1);
            assert!(!shown.ends_with(&page), "the page moved on");
            shown.push_str(&page);
        }
        for name in ["a.txt", "b.txt", "c.txt"] {
            assert!(shown.contains(&format!("+{name} line 05999")), "{name}");
        }
    }
}

#[test]
fn answers_are_written_for_the_model() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        // Nothing found: said in the summary, no empty fence after it.
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "no_such_text_here"}),
        );
        let content = r["content"].as_array().expect("content");
        assert_eq!(content.len(), 1, "{mode:?}: {r}");
        assert!(
            text(&r, 0).starts_with("0 matches for 'no_such_text_here'"),
            "{r}"
        );
        // One match: singular.
        let r = call_ok(&mut m, "search_code", json!({"pattern": "target_fn"}));
        assert!(text(&r, 0).starts_with("1 match for"), "{r}");
        // Context lines numbered and marked apart from the matching line.
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "return 7$", "regex": true, "context_lines": 1}),
        );
        let body = text(&r, 1);
        assert!(
            body.contains("\nm07.py:2:5:\n  1- def f7():\n  2:     return 7\n"),
            "{body}"
        );
        // The pattern is echoed as given, not with its backslashes doubled.
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "f7\\(\\)", "regex": true}),
        );
        assert!(text(&r, 0).contains("for 'f7\\(\\)' in"), "{}", text(&r, 0));
    }
}

#[test]
fn every_answer_fits_the_answer_budget_and_says_how_to_go_on() {
    let fx = Fixture::new();
    // ~300 KB of source: 4,000 long lines, each a match for "flags".
    let body: String = (0..4000)
        .map(|i| {
            format!("static int function_number_{i}(struct rq *rq, int flags) {{ return {i}; }}\n")
        })
        .collect();
    fx.file("core.c", &body);
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "one"]);
    fx.file("core.c", body.replace("flags", "mode"));
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        // The budget is declared to clients that read a size hint.
        let tools = m.request("tools/list", json!({}));
        for t in tools["result"]["tools"].as_array().expect("tools") {
            assert_eq!(t["_meta"]["anthropic/maxResultSizeChars"], 42_000, "{t}");
        }
        // A whole read comes in answers within the budget; following each
        // answer's next_start_line gives the whole file once.
        let mut next = Some(1u64);
        let mut lines = 0u64;
        while let Some(start) = next {
            let r = call_ok(
                &mut m,
                "read_file",
                json!({"path": "core.c", "start_line": start}),
            );
            assert!(
                answer_chars(&r) <= 42_000,
                "{mode:?} read from {start}: {}",
                answer_chars(&r)
            );
            let s = &r["structuredContent"];
            lines += s["end_line"].as_u64().unwrap_or(0) + 1 - start;
            next = s["next_start_line"].as_u64();
            assert!(lines <= 4000);
        }
        assert_eq!(lines, 4000, "{mode:?}");
        for (tool, args) in [
            (
                "search_code",
                json!({"pattern": "struct rq", "context_lines": 5, "max_results": 200}),
            ),
            (
                "find_symbol",
                json!({"symbol": "function_number", "exact": false}),
            ),
            ("git_diff", json!({})),
        ] {
            let r = call_ok(&mut m, tool, args);
            assert!(
                answer_chars(&r) <= 42_000,
                "{mode:?} {tool}: {} chars",
                answer_chars(&r)
            );
            assert_eq!(
                r["structuredContent"]["truncated"], true,
                "{tool}: {}",
                r["structuredContent"]
            );
            // find_symbol's 200 one-line definitions fit; it stops at its
            // result limit (a file holding more than the limit says so).
            let by = if tool == "find_symbol" {
                "results"
            } else {
                "bytes"
            };
            assert!(stopped_by(&r).contains(&by), "{tool}: {:?}", stopped_by(&r));
        }
        // A larger budget is honoured and declared.
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "100000");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let tools = m.request("tools/list", json!({}));
        assert_eq!(
            tools["result"]["tools"][0]["_meta"]["anthropic/maxResultSizeChars"],
            102_000
        );
        let r = call_ok(&mut m, "read_file", json!({"path": "core.c"}));
        let chars = answer_chars(&r);
        assert!(chars > 42_000 && chars <= 102_000, "{chars}");
    }
}

#[test]
fn search_pages_concatenate_to_the_whole_answer_and_cursors_are_bound_to_their_query() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let key = |r: &Value| -> Vec<(String, u64)> {
            r["structuredContent"]["matches"]
                .as_array()
                .expect("matches")
                .iter()
                .map(|h| {
                    (
                        h["path"].as_str().unwrap_or("").to_owned(),
                        h["line"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        };
        let whole = key(&call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "return|def", "regex": true}),
        ));
        assert_eq!(whole.len(), 61, "{mode:?}");
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..30 {
            let mut args = json!({"pattern": "return|def", "regex": true, "max_results": 7});
            if let Some(c) = &cursor {
                args["cursor"] = json!(c);
            }
            let r = call_ok(&mut m, "search_code", args);
            paged.extend(key(&r));
            match r["structuredContent"]["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert_eq!(paged, whole, "{mode:?}: pages neither repeat nor skip");
        // Replayed with another pattern, or garbled: refused, never a panic.
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "return", "max_results": 3}),
        );
        let c = r["structuredContent"]["next_cursor"]
            .as_str()
            .expect("cursor")
            .to_owned();
        for (pattern, cur) in [
            ("def", c.clone()),
            ("return", format!("{c}x")),
            ("return", "AAAA".into()),
        ] {
            let (code, r) = super::util::call_err(
                &mut m,
                "search_code",
                json!({"pattern": pattern, "cursor": cur}),
            );
            assert_eq!(code, "invalid_arguments", "{r}");
        }
    }
}

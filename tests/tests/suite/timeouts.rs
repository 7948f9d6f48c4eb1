//! ReDoS and deadlines: ten nested-quantifier patterns are accepted
//! and answered fast (the Rust engine is linear-time), compile-size limits
//! refuse what would exhaust memory, the per-request deadline cuts a long
//! walk short, and the file cap stops a walk early.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use moat_tests::{Fixture, Mode};

use serde_json::json;

use super::tools_util::{ok, start, start_with, timed, tree};

/// Nested-quantifier shapes that backtracking engines take exponential time
/// on, and whether each matches 50,000 `a`s followed by `!`.
const NESTED_QUANTIFIER_SHAPES: [(&str, bool); 10] = [
    (r"(a+)+b", false),
    (r"(a*)*c", false),
    (r"([a-z]+)*x", false),
    (r"(\d+)+", false),
    (r"(x+x+)+y", false),
    (r"(?:a+)+b", false),
    (r"(a{1,}){2,}", true),
    (r"(\w+\s?)*$", true),
    (r"(a|a)+", true),
    (r"(a|ab)*", true),
];

#[test]
fn nested_quantifier_patterns_are_accepted_and_fast() {
    let fx = Fixture::new();
    fx.file("a.txt", format!("{}!\n", "a".repeat(50_000)));
    // A few more lines, to be sure nothing is per-file only.
    fx.file("b.txt", format!("{}!\n", "a".repeat(50_000)).repeat(4));
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let started = Instant::now();
        for (p, matches) in NESTED_QUANTIFIER_SHAPES {
            for case_sensitive in [false, true] {
                let (r, took) = timed(
                    &mut m,
                    "search_code",
                    json!({"pattern": p, "regex": true, "case_sensitive": case_sensitive}),
                );
                assert_eq!(r["isError"], false, "{mode:?} {p}: {r}");
                let sc = &r["structuredContent"];
                assert_eq!(sc["timed_out"], false, "{p}");
                let want = if matches { 5 } else { 0 };
                assert_eq!(sc["match_count"], want, "{mode:?} {p}: {sc}");
                // A backtracking engine would not finish these in years;
                // the linear engine takes milliseconds. The bound is only
                // far below the one and far above the other.
                assert!(took < Duration::from_secs(10), "{mode:?} {p}: {took:?}");
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{mode:?}: all twenty took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn patterns_past_the_compile_limits_are_bad_patterns() {
    let fx = Fixture::new();
    fx.file("a.txt", "aaaa\n");
    let mut m = start(&fx.root, Mode::Confined);
    let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
    for p in [
        r"\w{1000}{1000}",
        r"(?:\w{500}){500}",
        r"[\p{L}\p{N}]{2000}{50}",
        &deep,
    ] {
        let (r, took) = timed(&mut m, "search_code", json!({"pattern": p, "regex": true}));
        assert_eq!(r["isError"], true, "{p}: {r}");
        assert_eq!(r["structuredContent"]["error"], "bad_pattern", "{p}: {r}");
        let remedy = r["structuredContent"]["remedy"].as_str().unwrap();
        assert!(remedy.contains("set regex to false"), "{remedy}");
        assert!(took < Duration::from_secs(5), "{p}: {took:?}");
    }
    // The worker survived (or was replaced): the next call is answered.
    let sc = ok(&mut m, "search_code", json!({"pattern": "aaaa"}));
    assert_eq!(sc["match_count"], 1);
    // Bounded repetitions well inside the limits are fine.
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": r"a{2}(a{1,2})", "regex": true}),
    );
    assert_eq!(sc["match_count"], 1);
}

/// A workspace of 100,000 one-line files, shared by the tests that run at
/// the same time and removed when the last of them is done (in memory,
/// under /dev/shm, where there is one: creating the files is most of these
/// tests' time).
struct BigTree {
    root: PathBuf,
}

static BIG_TREE: Mutex<(Option<(tempfile::TempDir, PathBuf)>, usize)> = Mutex::new((None, 0));

impl BigTree {
    fn get() -> BigTree {
        let mut g = BIG_TREE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if g.0.is_none() {
            let dir = tempfile::Builder::new()
                .prefix("moat-big-")
                .tempdir_in("/dev/shm")
                .or_else(|_| tempfile::Builder::new().prefix("moat-big-").tempdir())
                .unwrap();
            let root = dir.path().canonicalize().unwrap().join("ws");
            let took = tree(&root, "big", 100_000, "some text with a needle_big in it");
            eprintln!("built 100,000 files in {took:?} under {}", root.display());
            g.0 = Some((dir, root));
        }
        g.1 += 1;
        BigTree {
            root: g.0.as_ref().map(|(_, r)| r.clone()).unwrap_or_default(),
        }
    }
}

impl Drop for BigTree {
    fn drop(&mut self) {
        let mut g = BIG_TREE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.1 -= 1;
        if g.1 == 0 {
            g.0 = None;
        }
    }
}

#[test]
fn a_small_file_cap_stops_a_huge_walk_early() {
    let big = BigTree::get();
    let mut m = start_with(
        &big.root,
        Mode::Confined,
        &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "50")],
    );
    // Warm the pool (and the page cache for the first directories).
    let _ = m.call(
        "search_code",
        json!({"pattern": "warm", "path": "big/d0/e0/f0"}),
    );
    let (r, _) = timed(
        &mut m,
        "search_code",
        json!({"pattern": "nomatch-anywhere"}),
    );
    let sc = &r["structuredContent"];
    assert_eq!(r["isError"], false, "{r}");
    assert!(sc["files_scanned"].as_u64().unwrap() <= 50, "{sc}");
    assert_eq!(sc["truncated"], true, "{sc}");
    let (r, _) = timed(&mut m, "project_overview", json!({}));
    assert!(
        r["structuredContent"]["total_files"].as_u64().unwrap() <= 50,
        "{r}"
    );
    let (r, _) = timed(&mut m, "find_symbol", json!({"symbol": "needle_big"}));
    assert!(
        r["structuredContent"]["files_scanned"].as_u64().unwrap() <= 50,
        "{r}"
    );
}

#[test]
fn the_deadline_cuts_a_long_walk_short() {
    let big = BigTree::get();
    for mode in Mode::BOTH {
        let mut m = start_with(
            &big.root,
            mode,
            &[
                ("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "0.1"),
                ("MOAT_SANDBOX__MAX_SEARCH_FILES", "1000000"),
            ],
        );
        for (pattern, expect_matches) in [("needle_big", true), ("nomatch-anywhere", false)] {
            let (r, took) = timed(
                &mut m,
                "search_code",
                json!({"pattern": pattern, "max_results": 500}),
            );
            let sc = &r["structuredContent"];
            if r["isError"] == true {
                assert_eq!(sc["error"], "timed_out", "{mode:?} {pattern}: {r}");
                assert!(
                    sc["message"].as_str().unwrap().contains("0.1"),
                    "{mode:?}: {r}"
                );
            } else {
                assert!(
                    expect_matches,
                    "{mode:?}: finished a 100,000-file walk in {took:?}"
                );
                assert_eq!(sc["timed_out"], true, "{mode:?} {pattern}: {sc}");
                assert!(sc["match_count"].as_u64().unwrap() > 0);
            }
        }
        let (r, _) = timed(&mut m, "project_overview", json!({}));
        let ov = &r["structuredContent"];
        if r["isError"] == false {
            assert_eq!(ov["timed_out"], true, "{mode:?}: {ov}");
            assert!(ov["total_files"].as_u64().unwrap() < 100_000);
        } else {
            assert_eq!(ov["error"], "timed_out", "{mode:?}: {r}");
        }
        let (r, _) = timed(&mut m, "find_symbol", json!({"symbol": "needle_big"}));
        if r["isError"] == false {
            assert_eq!(r["structuredContent"]["timed_out"], true, "{mode:?}: {r}");
        } else {
            assert_eq!(
                r["structuredContent"]["error"], "timed_out",
                "{mode:?}: {r}"
            );
        }
    }
}

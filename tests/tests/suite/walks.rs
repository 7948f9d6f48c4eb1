//! Walks account for every entry: nothing is skipped unseen.
//!
//! * A path the request names is walked whatever it is called
//!   (`build/`, `vendor/`, `target/`) and whatever an ignore file says of
//!   it; `include_generated` walks generated trees everywhere.
//! * `.gitignore` applies inside a git repository only (a tarball's
//!   leftover `.gitignore` of `/*` hides nothing); every walking tool takes
//!   `respect_gitignore`.
//! * Every entry not walked is counted by its reason, in `skipped_reasons`
//!   and in the text, with the argument that walks it; an answer of 0 files
//!   says why.
//! * A walk cut at the file cap gives the same subset every time: the first
//!   files in path order. A names-only walk (`find_files`) is not bound by
//!   the content searches' file cap.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::git::NO_GIT_PATH;

fn opts(mode: Mode) -> Options {
    Options::new(mode).env("PATH", NO_GIT_PATH)
}

fn ok(result: &Value) -> &Value {
    assert_ne!(result["isError"], json!(true), "{result}");
    &result["structuredContent"]
}

fn paths(result: &Value, list: &str) -> Vec<String> {
    ok(result)[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {result}"))
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_owned())
        .collect()
}

/// A tree with source in directories named like generated trees.
fn generated_fixture() -> Fixture {
    let fx = Fixture::named("gen");
    fx.file("src/main.c", "int needle_main(void) { return 0; }\n");
    fx.file(
        "vendor/lib/util.c",
        "int needle_vendored(int x) {\n    return needle_main();\n}\n",
    );
    fx.file("build/pkg/mod.py", "def needle_built():\n    return 1\n");
    fx.file(
        "drivers/target/core.c",
        "int needle_deep(void) { return 2; }\n",
    );
    fx
}

#[test]
fn a_named_generated_tree_is_walked_and_include_generated_walks_them_all() {
    let fx = generated_fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(mode), Era::Modern);
        // Named: walked by every walking tool.
        let r = m.call(
            "search_code",
            json!({"pattern": "needle_", "path": "vendor"}),
        );
        assert_eq!(
            paths(&r, "matches"),
            ["vendor/lib/util.c", "vendor/lib/util.c"]
        );
        let r = m.call("find_files", json!({"path": "build"}));
        assert_eq!(paths(&r, "files"), ["build/pkg/mod.py"], "{r}");
        let r = m.call(
            "find_symbol",
            json!({"symbol": "needle_deep", "path": "drivers/target"}),
        );
        assert_eq!(paths(&r, "definitions"), ["drivers/target/core.c"], "{r}");
        let r = m.call(
            "find_symbol",
            json!({"symbol": "needle_vendored", "path": "vendor/lib"}),
        );
        assert_eq!(paths(&r, "definitions"), ["vendor/lib/util.c"], "{r}");
        let r = m.call(
            "find_references",
            json!({"identifier": "needle_main", "path": "vendor"}),
        );
        assert_eq!(paths(&r, "references"), ["vendor/lib/util.c"], "{r}");
        let r = m.call("project_overview", json!({"path": "build"}));
        assert_eq!(ok(&r)["total_files"], json!(1), "{r}");

        // At the root: pruned, counted, and the text says how to walk them.
        let r = m.call("search_code", json!({"pattern": "needle_"}));
        assert_eq!(paths(&r, "matches"), ["src/main.c"], "{r}");
        assert_eq!(ok(&r)["skipped_reasons"]["generated"], json!(3), "{r}");
        let t = text(&r, 0);
        assert!(
            t.contains("3 generated or vendored directories (include_generated: true walks them)"),
            "{t}"
        );
        for tool in [
            "find_symbol",
            "find_references",
            "project_overview",
            "find_files",
        ] {
            let args = match tool {
                "find_symbol" => json!({"symbol": "needle_built"}),
                "find_references" => json!({"identifier": "needle_main"}),
                _ => json!({}),
            };
            let r = m.call(tool, args.clone());
            assert_eq!(
                ok(&r)["skipped_reasons"]["generated"],
                json!(3),
                "{tool}: {r}"
            );
            let mut all = args;
            all["include_generated"] = json!(true);
            let r = m.call(tool, all);
            assert!(
                ok(&r)["skipped_reasons"].get("generated").is_none(),
                "{tool}: {r}"
            );
        }
        let r = m.call(
            "search_code",
            json!({"pattern": "needle_", "include_generated": true}),
        );
        assert_eq!(
            paths(&r, "matches"),
            [
                "build/pkg/mod.py",
                "drivers/target/core.c",
                "src/main.c",
                "vendor/lib/util.c",
                "vendor/lib/util.c"
            ],
            "{r}"
        );
        let r = m.call(
            "find_symbol",
            json!({"symbol": "needle_built", "include_generated": true}),
        );
        assert_eq!(paths(&r, "definitions"), ["build/pkg/mod.py"], "{r}");
    }
}

/// A source tree with a packaging `.gitignore` that ignores everything.
fn tarball_fixture() -> Fixture {
    let fx = Fixture::named("tarball");
    fx.file(".gitignore", "/*\n!/debian/\n");
    fx.file("lib/core.py", "def needle_fn():\n    return needle_fn\n");
    fx.file("debian/rules", "needle_rules\n");
    fx
}

#[test]
fn gitignore_applies_only_inside_a_git_repository() {
    let fx = tarball_fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(mode), Era::Modern);
        let r = m.call("search_code", json!({"pattern": "needle_"}));
        assert_eq!(
            paths(&r, "matches"),
            ["debian/rules", "lib/core.py", "lib/core.py"],
            "{r}"
        );
        let r = m.call("find_symbol", json!({"symbol": "needle_fn"}));
        assert_eq!(paths(&r, "definitions"), ["lib/core.py"], "{r}");
        let r = m.call("find_references", json!({"identifier": "needle_fn"}));
        assert_eq!(paths(&r, "references").len(), 2, "{r}");
        let r = m.call("project_overview", json!({}));
        assert_eq!(ok(&r)["total_files"], json!(3), "{r}");
    }
    // The same tree as a repository: the rules apply, every ignored entry
    // is counted, the text says which argument walks them, and every
    // walking tool takes that argument.
    fx.git(&["init", "--quiet"]);
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &opts(mode), Era::Modern);
        let r = m.call("search_code", json!({"pattern": "needle_"}));
        assert_eq!(paths(&r, "matches"), ["debian/rules"], "{r}");
        // lib/ and .gitignore; `.git` is never walked and not counted.
        assert_eq!(ok(&r)["skipped_reasons"]["ignored"], json!(2), "{r}");
        assert!(ok(&r)["skipped_reasons"].get("generated").is_none(), "{r}");
        let t = text(&r, 0);
        assert!(
            t.contains("ignored by .gitignore/.ignore (respect_gitignore: false walks them)"),
            "{t}"
        );
        let r = m.call("find_symbol", json!({"symbol": "needle_fn"}));
        assert_eq!(paths(&r, "definitions"), Vec::<String>::new(), "{r}");
        let t = text(&r, 0);
        assert!(t.contains("respect_gitignore: false walks them"), "{t}");
        let r = m.call(
            "find_symbol",
            json!({"symbol": "needle_fn", "respect_gitignore": false}),
        );
        assert_eq!(paths(&r, "definitions"), ["lib/core.py"], "{r}");
        let r = m.call(
            "find_references",
            json!({"identifier": "needle_fn", "respect_gitignore": false}),
        );
        assert_eq!(paths(&r, "references").len(), 2, "{r}");
        let r = m.call("project_overview", json!({"respect_gitignore": false}));
        assert_eq!(ok(&r)["total_files"], json!(3), "{r}");
        // A path the request names is walked even when ignored.
        let r = m.call("search_code", json!({"pattern": "needle_", "path": "lib"}));
        assert_eq!(paths(&r, "matches"), ["lib/core.py", "lib/core.py"], "{r}");
    }
}

#[test]
fn an_empty_answer_says_why_when_the_directory_has_entries() {
    let fx = Fixture::named("empty-why");
    fx.file("node_modules/pkg/index.js", "needle\n");
    fx.file(".env", "needle\n");
    let mut m = Moat::connect(&fx.root, &opts(Mode::InProcess), Era::Modern);
    let r = m.call("search_code", json!({"pattern": "needle"}));
    let s = ok(&r);
    assert_eq!(s["files_scanned"], json!(0), "{r}");
    assert_eq!(s["skipped_reasons"]["generated"], json!(1), "{r}");
    assert_eq!(s["skipped_reasons"]["denied"], json!(1), "{r}");
    let t = text(&r, 0);
    assert!(t.contains("2 entries not walked"), "{t}");
    assert!(t.contains("include_generated: true"), "{t}");
    assert!(t.contains("covered by the denylist"), "{t}");
    assert!(!t.contains(".env"), "a denied name is never named: {t}");
}

/// Every entry is accounted for, over generated trees: the files listed
/// plus the directories counted as generated (each once) cover the tree,
/// and `include_generated` lists every file.
#[test]
fn every_entry_is_listed_or_counted_over_generated_trees() {
    const NAMES: [&str; 8] = ["src", "build", "a", "vendor", "lib", "target", "x", "dist"];
    for seed in 1u64..=4 {
        let fx = Fixture::named(&format!("acc-{seed}"));
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut files = Vec::new();
        for i in 0..40 {
            let depth = 1 + next(3);
            let mut path = String::new();
            for _ in 0..depth {
                path.push_str(NAMES[next(NAMES.len() as u64) as usize]);
                path.push('/');
            }
            path.push_str(&format!("f{i}.txt"));
            fx.file(&path, "x\n");
            files.push(path);
        }
        files.sort();
        files.dedup();
        let generated = |p: &str| {
            let parts: Vec<&str> = p.split('/').collect();
            parts[..parts.len() - 1]
                .iter()
                .position(|d| ["build", "vendor", "target", "dist"].contains(d))
                .map(|i| parts[..=i].join("/"))
        };
        let visible: Vec<String> = files
            .iter()
            .filter(|p| generated(p).is_none())
            .cloned()
            .collect();
        let mut roots: Vec<String> = files.iter().filter_map(|p| generated(p)).collect();
        roots.sort();
        roots.dedup();
        let mut m = Moat::connect(&fx.root, &opts(Mode::InProcess), Era::Modern);
        let r = m.call("find_files", json!({"max_results": 500}));
        assert_eq!(paths(&r, "files"), visible, "seed {seed}: {r}");
        let counted = ok(&r)["skipped_reasons"]["generated"].as_u64().unwrap_or(0);
        assert_eq!(counted, roots.len() as u64, "seed {seed}: {roots:?} {r}");
        let r = m.call(
            "find_files",
            json!({"max_results": 500, "include_generated": true}),
        );
        assert_eq!(paths(&r, "files"), files, "seed {seed}: {r}");
    }
}

#[test]
fn a_walk_cut_at_the_file_cap_is_the_same_first_files_every_time() {
    let fx = Fixture::named("capped");
    let mut names = Vec::new();
    for d in 0..6 {
        for f in 0..10 {
            let p = format!("d{d}/f{f:02}.txt");
            fx.file(&p, "needle\n");
            names.push(p);
        }
    }
    names.sort();
    for mode in Mode::BOTH {
        let o = opts(mode).env("MOAT_SANDBOX__MAX_SEARCH_FILES", "7");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let first = m.call(
            "search_code",
            json!({"pattern": "needle", "max_results": 100}),
        );
        assert_eq!(paths(&first, "matches"), names[..7], "{first}");
        assert_eq!(ok(&first)["truncated"], json!(true), "{first}");
        for _ in 0..8 {
            let again = m.call(
                "search_code",
                json!({"pattern": "needle", "max_results": 100}),
            );
            assert_eq!(
                ok(&again)["matches"],
                ok(&first)["matches"],
                "the same call walks the same files"
            );
        }
        // Names only: not bound by the content searches' file cap.
        let r = m.call("find_files", json!({"max_results": 100}));
        assert_eq!(paths(&r, "files"), names, "{r}");
    }
}

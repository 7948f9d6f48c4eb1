//! `search_code` through the real binary, mostly in confined mode (the point
//! is that it works inside the sandbox): matches, filters, escapes and
//! resource bounds, deterministic order, `.gitignore`, special files, and
//! symlinked and hard-linked escapes.

use std::time::Duration;

use moat_tests::{Fixture, Mode, text};
use serde_json::{Value, json};

use super::tools_util::{
    fenced, match_paths, ok, ok_result, refused, schema_refused, start, start_2025_06_18,
    start_with, timed,
};

const SECRET: &str = "OUTSIDE-SECRET-7d1f";

#[test]
fn literal_match_at_core_line_6_in_both_modes() {
    let fx = Fixture::demo_project();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "search_code", json!({"pattern": "class Engine"}));
        let sc = &r["structuredContent"];
        assert_eq!(sc["match_count"], 1, "{mode:?}: {sc}");
        assert_eq!(sc["matches"][0]["path"], "src/demo/core.py");
        assert_eq!(sc["matches"][0]["line"], 6);
        assert_eq!(sc["matches"][0]["text"], "class Engine:");
        assert_eq!(sc["regex"], false);
        assert_eq!(sc["timed_out"], false);
        let body = fenced(&r, "search-results");
        assert!(
            body.contains("src/demo/core.py:6:1:\n  6: class Engine:"),
            "{body}"
        );
        assert!(
            text(&r, 0).starts_with("1 match for 'class Engine' in "),
            "{}",
            text(&r, 0)
        );
    }
}

#[test]
fn metacharacters_are_literal_unless_regex() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "build_engine(config)"}),
    );
    assert_eq!(sc["match_count"], 1, "{sc}");
    assert_eq!(sc["matches"][0]["line"], 17);
    // `.` and `*` are literal: "build_.*" occurs nowhere as text, while the
    // regex matches.
    let sc = ok(&mut m, "search_code", json!({"pattern": "build_.*"}));
    assert_eq!(sc["match_count"], 0, "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "build_.*", "regex": true}),
    );
    assert!(sc["match_count"].as_u64().unwrap() >= 1, "{sc}");
    // Parentheses and brackets: literal text that is not a valid regex.
    let sc = ok(&mut m, "search_code", json!({"pattern": "(config)"}));
    let lines: Vec<u64> = sc["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [17, 18], "{sc}");
}

#[test]
fn regex_with_a_glob() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": r"^\s*(async\s+)?def \w+\(", "regex": true, "file_glob": ["*.py"]}),
    );
    assert_eq!(sc["regex"], true);
    let paths = match_paths(&sc);
    assert!(paths.iter().all(|p| p.ends_with(".py")), "{paths:?}");
    let core: Vec<u64> = sc["matches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["path"] == "src/demo/core.py")
        .map(|x| x["line"].as_u64().unwrap())
        .collect();
    assert_eq!(core, [7, 10, 13, 17], "{sc}");
    assert!(
        paths.contains(&"tests/test_core.py".to_owned()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"src/demo/broken.py".to_owned()),
        "{paths:?}"
    );
}

#[test]
fn invalid_regex_is_bad_pattern_with_a_remedy() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    for p in ["Engine.(", "(unclosed", "[z-a]", "a{2,1}"] {
        let (code, r) = refused(&mut m, "search_code", json!({"pattern": p, "regex": true}));
        assert_eq!(code, "bad_pattern", "{p}: {r}");
        let remedy = r["structuredContent"]["remedy"].as_str().unwrap();
        assert!(remedy.contains("set regex to false"), "{remedy}");
        // The same text, literally, is fine.
        ok(&mut m, "search_code", json!({"pattern": p}));
    }
}

#[test]
fn over_long_patterns_are_refused_by_the_schema() {
    let fx = Fixture::demo_project();
    // A tool error the model can correct (SEP-1303), and -32602 for a
    // 2025-06-18 client.
    for (mut m, tool_error) in [
        (start(&fx.root, Mode::Confined), true),
        (start_2025_06_18(&fx.root, Mode::Confined), false),
    ] {
        for (len, regex) in [(513, false), (513, true), (5_000, false)] {
            let msg = schema_refused(
                &mut m,
                "search_code",
                json!({"pattern": "a".repeat(len), "regex": regex}),
                tool_error,
            );
            assert!(msg.contains("pattern"), "{len}: {msg}");
        }
        // 512 characters is the limit, not over it.
        let sc = ok(&mut m, "search_code", json!({"pattern": "é".repeat(512)}));
        assert_eq!(sc["match_count"], 0);
    }
}

#[test]
fn case_insensitive_unless_asked() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(&mut m, "search_code", json!({"pattern": "CLASS ENGINE"}));
    assert_eq!(sc["match_count"], 1, "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "CLASS ENGINE", "case_sensitive": true}),
    );
    assert_eq!(sc["match_count"], 0, "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "class engine", "case_sensitive": true, "regex": true}),
    );
    assert_eq!(sc["match_count"], 0, "{sc}");
}

#[test]
fn a_glob_restricts_the_files() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let all = ok(&mut m, "search_code", json!({"pattern": "widget"}));
    let paths = match_paths(&all);
    assert!(
        paths.contains(&"src/demo/widget.ts".to_owned()),
        "{paths:?}"
    );
    let ts = ok(
        &mut m,
        "search_code",
        json!({"pattern": "widget", "file_glob": ["*.ts"]}),
    );
    let ts_paths = match_paths(&ts);
    assert!(!ts_paths.is_empty());
    assert!(
        ts_paths.iter().all(|p| p == "src/demo/widget.ts"),
        "{ts_paths:?}"
    );
    // Against the relative path too.
    let rel = ok(
        &mut m,
        "search_code",
        json!({"pattern": "widget", "file_glob": ["src/**/*.ts"]}),
    );
    assert_eq!(rel["match_count"], ts["match_count"]);
    let none = ok(
        &mut m,
        "search_code",
        json!({"pattern": "widget", "file_glob": ["*.py", "*.md"]}),
    );
    assert!(
        match_paths(&none).iter().all(|p| !p.ends_with(".ts")),
        "{none}"
    );
}

#[test]
fn context_lines_surround_the_match() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(
        &mut m,
        "search_code",
        json!({"pattern": "class Engine", "context_lines": 2}),
    );
    let hit = &r["structuredContent"]["matches"][0];
    assert_eq!(hit["before"], json!(["", ""]), "{hit}");
    assert_eq!(
        hit["after"],
        json!([
            "    def __init__(self, config):",
            "        self.config = config"
        ])
    );
    let body = fenced(&r, "search-results");
    assert!(
        body.contains(
            "src/demo/core.py:6:1:\n  4-\n  5-\n  6: class Engine:\n  7-     def __init__"
        ),
        "{body}"
    );
    // Context stops at the file's edges.
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "The demo engine", "context_lines": 5}),
    );
    assert_eq!(sc["matches"][0]["before"], json!([]));
    assert_eq!(sc["matches"][0]["after"].as_array().unwrap().len(), 5);
}

#[test]
fn generated_trees_are_skipped() {
    let fx = Fixture::demo_project();
    fx.file("target/debug/build.rs", "leftpad\n");
    fx.file("src/__pycache__/core.pyc.txt", "leftpad\n");
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(&mut m, "search_code", json!({"pattern": "leftpad"}));
    assert_eq!(sc["match_count"], 0, "{sc}");
    // Searched directly, a skipped tree is allowed (skipped, not denied).
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "leftpad", "path": "node_modules/leftpad/index.js"}),
    );
    assert_eq!(sc["match_count"], 1, "{sc}");
}

#[test]
fn denied_files_are_never_searched() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    // (Whether the key itself is redacted is the redaction suite's
    // business; here: which files are searched. The key's name, not the key:
    // a match on a redacted value is no match.)
    let r = ok_result(
        &mut m,
        "search_code",
        json!({"pattern": "AWS_ACCESS_KEY_ID"}),
    );
    let sc = &r["structuredContent"];
    let paths = match_paths(sc);
    assert_eq!(paths, ["src/demo/settings.py"], "{sc}");
    let all = r.to_string();
    for p in [".env", "deploy.pem", ".ssh/config"] {
        assert!(!all.contains(&format!("\"{p}\"")), "{p} searched: {all}");
    }
    // The `.env` line, and only it, has no spaces around `=`.
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "AWS_ACCESS_KEY_ID=AKIA"}),
    );
    assert_eq!(sc["match_count"], 0, "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "AWS_ACCESS_KEY_ID=AKIA", "respect_gitignore": false}),
    );
    assert_eq!(sc["match_count"], 0, "{sc}");
    let sc = ok(&mut m, "search_code", json!({"pattern": "PRIVATE KEY"}));
    assert_eq!(sc["match_count"], 0, "{sc}");
    let sc = ok(&mut m, "search_code", json!({"pattern": "User deploy"}));
    assert_eq!(sc["match_count"], 0, "{sc}");
    let (code, _) = refused(
        &mut m,
        "search_code",
        json!({"pattern": "AKIA", "path": ".env"}),
    );
    assert_eq!(code, "denied_path");
}

#[test]
fn a_binary_file_is_counted_as_skipped() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(&mut m, "search_code", json!({"pattern": "Engine"}));
    let sc = &r["structuredContent"];
    assert!(sc["files_skipped"].as_u64().unwrap() >= 1, "{sc}");
    assert!(
        text(&r, 0).contains("skipped as binary or oversized"),
        "{}",
        text(&r, 0)
    );
    // The byte 'A' (0x41) is in logo.bin, never reported.
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "ABC", "case_sensitive": true}),
    );
    assert!(!match_paths(&sc).contains(&"logo.bin".to_owned()), "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "ABC", "path": "logo.bin"}),
    );
    assert_eq!(sc["match_count"], 0);
    assert_eq!(sc["files_skipped"], 1, "{sc}");
}

#[test]
fn max_results_three_gives_three_and_truncated() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(
        &mut m,
        "search_code",
        json!({"pattern": "e", "max_results": 3}),
    );
    let sc = &r["structuredContent"];
    assert_eq!(sc["match_count"], 3, "{sc}");
    assert_eq!(sc["matches"].as_array().unwrap().len(), 3);
    assert_eq!(sc["truncated"], true);
    assert!(
        text(&r, 0).contains("more matches exist than the 3 shown"),
        "{}",
        text(&r, 0)
    );
    // Asking for more than the server cap gives the cap.
    let mut m = start_with(
        &fx.root,
        Mode::Confined,
        &[("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "2")],
    );
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "e", "max_results": 500}),
    );
    assert_eq!(sc["match_count"], 2, "{sc}");
    assert_eq!(sc["truncated"], true);
}

#[test]
fn the_first_matches_are_kept_when_truncating() {
    // Truncation keeps the first matches in (path, line) order, whichever
    // thread found them first.
    let fx = Fixture::new();
    for i in 0..60 {
        fx.file(
            &format!("d{}/f{:02}.txt", i % 7, i),
            "needle one\nhay\nneedle two\n",
        );
    }
    let mut m = start(&fx.root, Mode::Confined);
    let full = ok(
        &mut m,
        "search_code",
        json!({"pattern": "needle", "max_results": 500}),
    );
    assert_eq!(full["match_count"], 120);
    assert_eq!(full["truncated"], false);
    for k in [1, 5, 13] {
        let part = ok(
            &mut m,
            "search_code",
            json!({"pattern": "needle", "max_results": k}),
        );
        assert_eq!(part["match_count"], k);
        assert_eq!(
            part["matches"].as_array().unwrap()[..],
            full["matches"].as_array().unwrap()[..k],
            "max_results {k}"
        );
    }
}

#[test]
fn a_single_file_target_is_searched_alone() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "def ", "path": "src/demo/core.py"}),
    );
    let paths = match_paths(&sc);
    assert_eq!(paths.len(), 4, "{sc}");
    assert!(paths.iter().all(|p| p == "src/demo/core.py"), "{paths:?}");
    assert_eq!(sc["files_scanned"], 1);
    // A directory target limits the walk to it.
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "def ", "path": "tests"}),
    );
    assert_eq!(match_paths(&sc), ["tests/test_core.py"], "{sc}");
}

#[test]
fn a_missing_path_is_not_found_and_dotdot_is_outside() {
    let fx = Fixture::demo_project();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let (code, r) = refused(
            &mut m,
            "search_code",
            json!({"pattern": "x", "path": "no/such/dir"}),
        );
        assert_eq!(code, "not_found", "{mode:?}: {r}");
        assert!(
            r["structuredContent"]["remedy"]
                .as_str()
                .unwrap()
                .contains("list_directory"),
            "{r}"
        );
        for p in ["../..", "..", "../outside", "src/../../outside"] {
            let (code, r) = refused(&mut m, "search_code", json!({"pattern": "x", "path": p}));
            assert_eq!(code, "outside_workspace", "{mode:?} {p}: {r}");
        }
        let (code, _) = refused(
            &mut m,
            "search_code",
            json!({"pattern": "SECRET", "path": fx.outside.to_str().unwrap()}),
        );
        assert_eq!(code, "outside_workspace");
    }
}

#[test]
fn results_are_identical_in_order_across_twenty_runs() {
    let fx = Fixture::new();
    // Many matching files across directories, so that the parallel walk's
    // threads interleave differently from run to run.
    for i in 0..400 {
        let body: String = (0..(i % 5 + 1))
            .map(|j| format!("line {j}\nmarker {i}-{j}\n"))
            .collect();
        fx.file(&format!("p{}/q{}/r{i:03}.txt", i % 13, i % 4), body);
    }
    let mut m = start_with(
        &fx.root,
        Mode::Confined,
        &[("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "500")],
    );
    let first = ok(
        &mut m,
        "search_code",
        json!({"pattern": "marker", "max_results": 500}),
    );
    let n = first["match_count"].as_u64().unwrap();
    assert_eq!(n, 500, "{}", first["match_count"]);
    let keys: Vec<(String, u64)> = first["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["path"].as_str().unwrap().to_owned(),
                x["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "matches are not in (path, line) order");
    for run in 1..20 {
        let again = ok(
            &mut m,
            "search_code",
            json!({"pattern": "marker", "max_results": 500}),
        );
        assert_eq!(again["matches"], first["matches"], "run {run} differs");
        assert_eq!(again["files_scanned"], first["files_scanned"]);
    }
}

#[test]
fn gitignored_files_are_skipped_unless_asked() {
    let fx = Fixture::demo_project();
    fx.file(".gitignore", "generated/\n*.log\n!keep.log\n");
    fx.file("generated/out.py", "needle_gi = 1\n");
    fx.file("run.log", "needle_gi in a log\n");
    fx.file("keep.log", "needle_gi kept\n");
    fx.file("src/.ignore", "local.txt\n");
    fx.file("src/local.txt", "needle_gi local\n");
    // `.gitignore` applies inside a repository (`.ignore` anywhere).
    fx.git(&["init", "--quiet"]);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let sc = ok(&mut m, "search_code", json!({"pattern": "needle_gi"}));
        assert_eq!(match_paths(&sc), ["keep.log"], "{mode:?}: {sc}");
        let sc = ok(
            &mut m,
            "search_code",
            json!({"pattern": "needle_gi", "respect_gitignore": false}),
        );
        assert_eq!(
            match_paths(&sc),
            ["generated/out.py", "keep.log", "run.log", "src/local.txt"],
            "{mode:?}: {sc}"
        );
        // A search of a path the caller names is walked even when an ignore
        // file excludes it: the caller asked for it.
        let sc = ok(
            &mut m,
            "search_code",
            json!({"pattern": "needle_gi", "path": "generated"}),
        );
        assert_eq!(match_paths(&sc), ["generated/out.py"], "{mode:?}: {sc}");
    }
}

#[test]
fn an_ignore_file_cannot_unhide_denied_or_skipped_trees() {
    let fx = Fixture::demo_project();
    fx.file(".gitignore", "!.env\n!node_modules/\n");
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "AWS_ACCESS_KEY_ID|leftpad", "regex": true, "respect_gitignore": false}),
    );
    assert_eq!(match_paths(&sc), ["src/demo/settings.py"], "{sc}");
}

#[test]
fn a_fifo_and_a_socket_do_not_stall_a_search() {
    let fx = Fixture::demo_project();
    fx.fifo("src/demo/pipe.py");
    let _sock = fx.socket("src/demo/sock.py");
    fx.fifo("zz-pipe.txt");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let (r, took) = timed(&mut m, "search_code", json!({"pattern": "Engine"}));
        assert_eq!(r["isError"], false, "{mode:?}: {r}");
        // Opening a FIFO would block until the 15 s deadline.
        assert!(took < Duration::from_secs(8), "{mode:?}: took {took:?}");
        let paths = match_paths(&r["structuredContent"]);
        assert!(paths.contains(&"src/demo/core.py".to_owned()), "{paths:?}");
        // Named directly: refused without opening it (which would block).
        let (r, took) = timed(
            &mut m,
            "search_code",
            json!({"pattern": "x", "path": "zz-pipe.txt"}),
        );
        assert_eq!(r["isError"], true, "{mode:?}: {r}");
        assert_eq!(r["structuredContent"]["error"], "special_file", "{r}");
        assert!(took < Duration::from_secs(8), "{mode:?}: took {took:?}");
    }
}

#[test]
fn a_symlinked_directory_is_not_descended() {
    let fx = Fixture::demo_project();
    std::fs::write(fx.outside.join("db.txt"), "DATABASE_PASSWORD = hunter2\n").unwrap();
    fx.symlink("linked-out", &fx.outside);
    fx.symlink("linked-src", fx.root.join("src"));
    fx.symlink("secret.txt", fx.outside.join("secret.txt"));
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let sc = ok(&mut m, "search_code", json!({"pattern": "hunter2"}));
        // settings.py holds a hunter2 URL; nothing comes from outside.
        let paths = match_paths(&sc);
        assert!(
            paths.iter().all(|p| p == "src/demo/settings.py"),
            "{mode:?}: {paths:?}"
        );
        let sc = ok(
            &mut m,
            "search_code",
            json!({"pattern": "DATABASE_PASSWORD"}),
        );
        assert_eq!(sc["match_count"], 0, "{mode:?}: {sc}");
        let sc = ok(&mut m, "search_code", json!({"pattern": SECRET}));
        assert_eq!(sc["match_count"], 0, "{mode:?}: {sc}");
        // The inside link is not walked either (no duplicate of core.py).
        let sc = ok(&mut m, "search_code", json!({"pattern": "class Engine"}));
        assert_eq!(match_paths(&sc), ["src/demo/core.py"], "{mode:?}");
        // Named directly, the link is refused.
        for p in ["linked-out", "linked-out/db.txt", "secret.txt"] {
            let (code, r) = refused(&mut m, "search_code", json!({"pattern": "x", "path": p}));
            assert!(
                ["denied_path", "outside_workspace"].contains(&code.as_str()),
                "{mode:?} {p}: {r}"
            );
            assert!(!r.to_string().contains(SECRET));
        }
    }
}

#[test]
fn a_hard_link_to_an_outside_secret_is_never_searched() {
    let fx = Fixture::demo_project();
    fx.hardlink("src/demo/notes.txt", &fx.outside.join("secret.txt"));
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "search_code", json!({"pattern": "OUTSIDE-SECRET"}));
        assert_eq!(r["structuredContent"]["match_count"], 0, "{mode:?}: {r}");
        assert!(!r.to_string().contains(SECRET));
        let r = m.call(
            "search_code",
            json!({"pattern": "OUTSIDE", "path": "src/demo/notes.txt"}),
        );
        assert!(!r.to_string().contains(SECRET), "{mode:?}: {r}");
        if r["isError"] == true {
            assert_eq!(r["structuredContent"]["error"], "hard_link", "{r}");
        } else {
            assert_eq!(r["structuredContent"]["match_count"], 0, "{r}");
            assert_eq!(r["structuredContent"]["files_skipped"], 1, "{r}");
        }
    }
}

#[test]
fn files_of_any_size_are_searched() {
    let fx = Fixture::new();
    // 600 KB: searched whole with the default 1 MiB max_file_bytes.
    fx.file("large.txt", "needle_big\n".repeat(55_000));
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "needle_big", "max_results": 1}),
    );
    assert_eq!(match_paths(&sc), ["large.txt"], "{sc}");
    assert_eq!(sc["files_skipped"], 0, "{sc}");
    drop(m);

    // With a smaller max_file_bytes: a file of exactly that size is searched
    // whole, one byte more is streamed in pages, and both answer for every
    // line.
    let mut big = "needle_big\n".repeat(46_600);
    big.truncate(262_145);
    fx.file("big.txt", &big);
    let mut edge = "needle_big\n".repeat(23_000);
    edge.push_str(&"x".repeat(262_144 - edge.len()));
    assert_eq!(edge.len(), 262_144);
    fx.file("edge.txt", &edge);
    std::fs::remove_file(fx.root.join("large.txt")).expect("remove");
    let mut m = start_with(
        &fx.root,
        Mode::Confined,
        &[("MOAT_SANDBOX__MAX_FILE_BYTES", "262144")],
    );
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "needle_big", "max_results": 1}),
    );
    assert_eq!(sc["files_skipped"], 0, "{sc}");
    assert_eq!(match_paths(&sc), ["big.txt"], "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "needle_big", "path": "big.txt", "max_results": 1}),
    );
    assert_eq!(sc["files_skipped"], 0, "{sc}");
    assert_eq!(sc["matches"][0]["line"], 1, "{sc}");
    assert_eq!(sc["stopped_by"], json!(["results"]), "{sc}");
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "^need$", "regex": true, "path": "big.txt"}),
    );
    // The cut last line, 23,832nd of the file.
    assert_eq!(sc["matches"][0]["line"], 262_144 / 11 + 1, "{sc}");
}

#[test]
fn wide_matches_are_cut_by_the_result_byte_cap() {
    let fx = Fixture::new();
    let line = format!("needle {}\n", "w".repeat(300));
    fx.file("wide.txt", line.repeat(1_000));
    let mut m = start_with(
        &fx.root,
        Mode::Confined,
        &[
            ("MOAT_SANDBOX__MAX_RESULT_BYTES", "4096"),
            ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
        ],
    );
    let r = ok_result(
        &mut m,
        "search_code",
        json!({"pattern": "needle", "max_results": 500}),
    );
    let sc = &r["structuredContent"];
    assert_eq!(sc["truncated"], true, "{sc}");
    let n = sc["match_count"].as_u64().unwrap();
    assert!((1..=13).contains(&n), "{n}");
    let body = fenced(&r, "search-results");
    assert!(body.len() < 20_000, "{}", body.len());
    // Each line is cut to 400 characters, and the word the cut ran through
    // is dropped (it could be the start of a credential no rule recognises
    // once cut); an ellipsis marks the cut side.
    let fx2 = Fixture::new();
    fx2.file(
        "one.txt",
        format!("needle {} {}\n", "y".repeat(300), "z".repeat(5_000)),
    );
    let mut m = start(&fx2.root, Mode::Confined);
    let sc = ok(&mut m, "search_code", json!({"pattern": "needle"}));
    let text = sc["matches"][0]["text"].as_str().unwrap();
    assert_eq!(text, format!("needle {} …", "y".repeat(300)), "{sc}");
}

#[test]
fn overlong_and_oddly_encoded_lines_are_handled() {
    let fx = Fixture::new();
    // Latin-1 bytes (not UTF-8, no NUL) and CRLF line ends.
    fx.file("latin1.txt", b"caf\xe9 needle\r\nsecond needle\r\n");
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(&mut m, "search_code", json!({"pattern": "needle"}));
    let texts: Vec<&str> = sc["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 2, "{sc}");
    assert_eq!(texts[1], "second needle");
    assert!(texts.iter().all(|t| !t.ends_with('\r')), "{texts:?}");
}

#[test]
fn the_search_result_schema_is_stable() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let sc = ok(&mut m, "search_code", json!({"pattern": "Engine"}));
    let mut keys: Vec<&str> = sc.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "content_assessment",
            "files_scanned",
            "files_skipped",
            "match_count",
            "matches",
            "path",
            "pattern",
            "redaction",
            "regex",
            "skipped_reasons",
            "stopped_by",
            "timed_out",
            "truncated",
            "untrusted_content"
        ]
    );
    let _: &Value = &sc["matches"][0];
}

#[test]
fn a_full_page_answers_the_same_and_reports_only_the_files_it_shows() {
    // Many files match; the page holds the first three matches. Files
    // sorting after the page cannot change the answer, so they are passed
    // over without being redacted: the matches, `truncated` and the counts
    // are those of a search of everything, and the redaction report counts
    // only the files whose matches are on the page (or before it), never a
    // secret in a file the answer does not show.
    let fx = Fixture::new();
    let token = ["Zq8wLk2m", "Px7nRt4v", "Yb3cD9"].concat();
    for i in 0..40 {
        fx.file(&format!("src/m{i:02}.txt"), "needle one\nneedle two\n");
    }
    fx.file(
        "src/z_last.txt",
        format!("needle here\napi_token = \"{token}\" # needle\n"),
    );
    // Over `max_file_bytes`, so searched page by page: the same holds.
    fx.file(
        "src/zz_large.txt",
        format!(
            "{}api_token = \"{token}\" # needle\n",
            "needle and filler text\n".repeat(200)
        ),
    );
    let mut m = start_with(
        &fx.root,
        Mode::Confined,
        &[("MOAT_SANDBOX__MAX_FILE_BYTES", "1024")],
    );
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "needle", "max_results": 3}),
    );
    assert_eq!(
        match_paths(&sc),
        ["src/m00.txt", "src/m00.txt", "src/m01.txt"],
        "{sc}"
    );
    assert_eq!(sc["truncated"], true, "{sc}");
    assert_eq!(sc["files_scanned"], 42, "{sc}");
    assert_eq!(sc["redaction"]["applied"], false, "{sc}");
    assert!(!sc.to_string().contains(&token), "{sc}");
    // The page that shows the file with the secret reports its redaction,
    // and the line holding the secret shows the placeholder.
    let sc = ok(
        &mut m,
        "search_code",
        json!({"pattern": "needle", "path": "src", "file_glob": ["z_*"]}),
    );
    assert_eq!(
        match_paths(&sc),
        ["src/z_last.txt", "src/z_last.txt"],
        "{sc}"
    );
    assert!(sc.to_string().contains("[redacted:"), "{sc}");
    assert_eq!(sc["redaction"]["applied"], true, "{sc}");
    assert!(!sc.to_string().contains(&token), "{sc}");
}

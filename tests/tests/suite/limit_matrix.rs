//! exploration (temporary)

use moat_tests::{Fixture, Mode, text};
use serde_json::{Value, json};

use super::tools_util::start_with;
use super::util::git;

fn fixture() -> Fixture {
    let fx = Fixture::new();
    for i in 1..=30 {
        fx.file(
            &format!("m{i:02}.py"),
            format!("def f{i}():\n    return target_fn({i})\n"),
        );
    }
    fx.file("zz.py", "def target_fn(x):\n    return x\n");
    for d in ["d1", "d2", "d3"] {
        fx.file(&format!("{d}/sub/deep.txt"), "k\n");
    }
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "c0"]);
    for i in 1..=4 {
        fx.file("a.txt", format!("{i}\n"));
        git(&fx.root, "Ann", &["add", "."]);
        git(&fx.root, "Ann", &["commit", "-qm", &format!("c{i}")]);
    }
    fx.file("b.txt", "untracked\n");
    fx.file("m01.py", "def f1():\n    return 0\n");
    fx
}

fn dump(label: &str, r: &Value) {
    let mut s = r["structuredContent"].clone();
    for k in [
        "matches",
        "definitions",
        "entries",
        "files",
        "references",
        "commits",
        "groups",
        "items",
    ] {
        if let Some(a) = s.get_mut(k) {
            if let Some(arr) = a.as_array() {
                *a = json!(format!("[{} items]", arr.len()));
            }
        }
    }
    eprintln!("===== {label}\n--- text0:\n{}\n--- sc: {}\n", text(r, 0), s);
}

#[test]
fn explore() {
    let fx = fixture();
    let mode = Mode::InProcess;
    let cases: Vec<(&str, Vec<(&str, &str)>, &str, Value)> = vec![
        (
            "sc files",
            vec![("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")],
            "search_code",
            json!({"pattern": "target_fn"}),
        ),
        (
            "sc results",
            vec![],
            "search_code",
            json!({"pattern": "target_fn", "max_results": 3}),
        ),
        (
            "sc bytes",
            vec![("MOAT_SANDBOX__MAX_RESULT_BYTES", "1024")],
            "search_code",
            json!({"pattern": "target_fn", "context_lines": 5}),
        ),
        (
            "fs files",
            vec![("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")],
            "find_symbol",
            json!({"symbol": "target_fn"}),
        ),
        (
            "fs results",
            vec![("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "3")],
            "find_symbol",
            json!({"symbol": "f", "exact": false}),
        ),
        (
            "ov files",
            vec![("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")],
            "project_overview",
            json!({}),
        ),
        (
            "ff files",
            vec![("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")],
            "find_files",
            json!({"glob": "zz*"}),
        ),
        (
            "ff results",
            vec![],
            "find_files",
            json!({"glob": "*.py", "max_results": 3}),
        ),
        (
            "fr files",
            vec![("MOAT_SANDBOX__MAX_SEARCH_FILES", "10")],
            "find_references",
            json!({"identifier": "target_fn"}),
        ),
        (
            "fr results",
            vec![],
            "find_references",
            json!({"identifier": "target_fn", "max_results": 3}),
        ),
        (
            "dt entries",
            vec![],
            "directory_tree",
            json!({"max_entries": 5}),
        ),
        ("dt depth", vec![], "directory_tree", json!({"depth": 1})),
        (
            "ld entries",
            vec![("MOAT_SANDBOX__MAX_DIRECTORY_ENTRIES", "5")],
            "list_directory",
            json!({}),
        ),
        (
            "gl results",
            vec![("MOAT_SANDBOX__MAX_GIT_ENTRIES", "2")],
            "git_log",
            json!({}),
        ),
        (
            "gs entries",
            vec![],
            "git_status",
            json!({"max_entries": 1}),
        ),
    ];
    for (label, env, tool, args) in cases {
        let mut m = start_with(&fx.root, mode, &env);
        let r = m.call(tool, args);
        dump(label, &r);
    }
}

#[test]
fn explore2() {
    let fx = fixture();
    let long: String = (0..400)
        .map(|i| format!("line {i:04} {}\n", "x".repeat(60)))
        .collect();
    fx.file("long.txt", &long);
    let many: String = (0..1005)
        .map(|i| format!("def g{i}():\n    pass\n"))
        .collect();
    fx.file("many.py", &many);
    git(&fx.root, "Ann", &["add", "long.txt", "many.py"]);
    git(&fx.root, "Ann", &["commit", "-qm", "long"]);
    let long2: String = long.replace('x', "y");
    fx.file("long.txt", &long2);
    let mode = Mode::InProcess;
    let cases: Vec<(&str, Vec<(&str, &str)>, &str, Value)> = vec![
        (
            "rf lines",
            vec![("MOAT_SANDBOX__MAX_READ_LINES", "10")],
            "read_file",
            json!({"path": "long.txt"}),
        ),
        (
            "rf bytes",
            vec![("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
            "read_file",
            json!({"path": "long.txt"}),
        ),
        ("fo", vec![], "file_outline", json!({"path": "many.py"})),
        (
            "fs bytes",
            vec![
                ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
                ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
            ],
            "find_symbol",
            json!({"symbol": "g", "exact": false}),
        ),
        (
            "ff bytes",
            vec![
                ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
                ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
            ],
            "find_files",
            json!({"glob": "*", "max_results": 1000}),
        ),
        (
            "fr bytes",
            vec![
                ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
                ("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "1000"),
            ],
            "find_references",
            json!({"identifier": "target_fn", "max_results": 1000}),
        ),
        (
            "gl bytes",
            vec![("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
            "git_log",
            json!({"limit": 1000}),
        ),
        (
            "gd bytes",
            vec![("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
            "git_diff",
            json!({}),
        ),
        (
            "gsh lines",
            vec![("MOAT_SANDBOX__MAX_READ_LINES", "10")],
            "git_show",
            json!({"path": "long.txt"}),
        ),
        (
            "gsh bytes",
            vec![("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000")],
            "git_show",
            json!({}),
        ),
        ("gb lines", vec![], "git_blame", json!({"path": "many.py"})),
        (
            "sc time",
            vec![("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "0.1")],
            "search_code",
            json!({"pattern": "zzz"}),
        ),
    ];
    for (label, env, tool, args) in cases {
        let mut m = start_with(&fx.root, mode, &env);
        let r = m.call(tool, args);
        dump(label, &r);
    }
}

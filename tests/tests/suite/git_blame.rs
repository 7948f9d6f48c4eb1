//! `git_blame` through the real binary, in both modes with no git on the
//! server's `PATH`: attribution checked line by line against a plain
//! `git blame` (edits, insertions, a merge), the line cap and the walk's
//! commit cap with the calls that continue them; and attacks: a denied file
//! committed in history, credentials in a file and in a commit message,
//! hostile revisions and paths, an unsafe repository.

use std::io::Write;
use std::process::{Command, Stdio};

use moat_tests::{Fixture, Mode, git_as, have_git, text};
use serde_json::{Value, json};

use super::git::start;
use super::git_attacks::plain_git;
use super::git_show::continuation;
use super::tools_util::{fenced, ok, ok_result, refused, schema_refused};
use super::util::{SECRET, example_aws_key, example_github_token};

fn repo() -> Fixture {
    assert!(have_git());
    let fx = Fixture::demo_project();
    fx.demo_git();
    fx
}

/// The commit of each blamed line, in order, from a `git_blame` result.
fn per_line(gb: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for g in gb["groups"].as_array().unwrap() {
        let n = g["end_line"].as_u64().unwrap() - g["start_line"].as_u64().unwrap() + 1;
        assert_eq!(g["lines"].as_array().unwrap().len() as u64, n, "{g}");
        for _ in 0..n {
            out.push(g["commit"].as_str().unwrap().to_owned());
        }
    }
    out
}

/// The commit of each line as a plain `git blame` says (the control).
fn git_blame(fx: &Fixture, path: &str) -> Vec<String> {
    let (ok, out) = plain_git(&fx.root, &["blame", "--root", "-l", "-s", path]);
    assert!(ok, "{out}");
    out.lines()
        .map(|l| {
            l.split(' ')
                .next()
                .unwrap()
                .trim_start_matches('^')
                .to_owned()
        })
        .collect()
}

#[test]
fn git_blame_attributes_lines_as_git_does_in_both_modes() {
    let fx = repo();
    let at = |author: &str, date: &str, args: &[&str]| {
        git_as(&fx.root, author, date, args);
    };
    let v1: String = (1..=8).map(|i| format!("line {i}\n")).collect();
    fx.file("notes.txt", &v1);
    at("Ann", "2026-02-01T00:00:00Z", &["add", "notes.txt"]);
    at(
        "Ann",
        "2026-02-01T00:00:00Z",
        &["commit", "-q", "-m", "Add notes"],
    );
    fx.file("notes.txt", v1.replace("line 3\n", "line three\nline 3b\n"));
    at(
        "Bob",
        "2026-02-02T00:00:00Z",
        &["commit", "-q", "-am", "Reword line 3"],
    );
    // A side branch edits the end; main edits the start; then a merge.
    at(
        "Bob",
        "2026-02-03T00:00:00Z",
        &["checkout", "-q", "-b", "side"],
    );
    let side = std::fs::read_to_string(fx.root.join("notes.txt"))
        .unwrap()
        .replace("line 8\n", "line eight\n");
    fx.file("notes.txt", &side);
    at(
        "Cy",
        "2026-02-03T00:00:00Z",
        &["commit", "-q", "-am", "Side edit"],
    );
    at("Cy", "2026-02-04T00:00:00Z", &["checkout", "-q", "main"]);
    let main = std::fs::read_to_string(fx.root.join("notes.txt"))
        .unwrap()
        .replace("line 1\n", "line one\n");
    fx.file("notes.txt", &main);
    at(
        "Dee",
        "2026-02-04T00:00:00Z",
        &["commit", "-q", "-am", "Main edit"],
    );
    at(
        "Dee",
        "2026-02-05T00:00:00Z",
        &["merge", "-q", "--no-edit", "side"],
    );
    let want = git_blame(&fx, "notes.txt");
    assert_eq!(want.len(), 9);
    let distinct: std::collections::BTreeSet<&String> = want.iter().collect();
    assert_eq!(
        distinct.len(),
        4,
        "control: four commits own lines: {want:?}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_blame", json!({"path": "notes.txt"}));
        let gb = &r["structuredContent"];
        assert_eq!(per_line(gb), want, "{mode:?}: {gb}");
        assert_eq!(gb["total_lines"], 9);
        assert_eq!(gb["truncated"], false);
        assert_eq!(gb["stopped_by"], serde_json::json!([]));
        assert_eq!(gb["untrusted_content"], true);
        let groups = gb["groups"].as_array().unwrap();
        assert!(groups.iter().all(|g| g["boundary"] == false), "{gb}");
        assert_eq!(groups[0]["author"], "Dee", "{gb}");
        assert_eq!(groups[0]["subject"], "Main edit", "{gb}");
        assert_eq!(groups[0]["lines"], json!(["line one"]), "{gb}");
        let body = fenced(&r, "blame");
        assert!(
            body.contains(" Dee lines 1-1: Main edit\n1  line one\n"),
            "{body}"
        );
        assert!(body.contains("  line eight"), "{body}");
        // A range, and an older revision.
        let gb = ok(
            &mut m,
            "git_blame",
            json!({"path": "notes.txt", "start_line": 3, "end_line": 4}),
        );
        assert_eq!(per_line(&gb), want[2..4].to_vec(), "{mode:?}: {gb}");
        let gb = ok(
            &mut m,
            "git_blame",
            json!({"path": "notes.txt", "revision": "HEAD~1"}),
        );
        assert_eq!(gb["groups"][0]["author"], "Dee", "{gb}");
        assert_eq!(gb["total_lines"], 9);
        let gb = ok(
            &mut m,
            "git_blame",
            json!({"path": "notes.txt", "revision": "side"}),
        );
        assert!(
            gb["groups"]
                .as_array()
                .unwrap()
                .iter()
                .all(|g| g["author"] != "Dee"),
            "{gb}"
        );
        for (args, want) in [
            (json!({"path": "logo.bin"}), "git_failed"),
            (json!({"path": "src"}), "git_failed"),
            (
                json!({"path": "notes.txt", "start_line": 10}),
                "unsupported",
            ),
            (
                json!({"path": "notes.txt", "start_line": 3, "end_line": 2}),
                "unsupported",
            ),
            (
                json!({"path": "notes.txt", "revision": "nope"}),
                "git_failed",
            ),
        ] {
            let (code, r) = refused(&mut m, "git_blame", args.clone());
            assert_eq!(code, want, "{mode:?} {args}: {r}");
        }
    }
    // A binary file committed is refused as binary.
    fx.git(&["add", "logo.bin"]);
    fx.git(&["commit", "-q", "-m", "Add the logo"]);
    let mut m = start(&fx.root, Mode::Confined);
    let (code, r) = refused(&mut m, "git_blame", json!({"path": "logo.bin"}));
    assert_eq!(code, "binary_file", "{r}");
}

#[test]
fn git_blame_is_cut_at_500_lines_and_says_how_to_continue() {
    let fx = repo();
    let body: String = (1..=620).map(|i| format!("row {i}\n")).collect();
    fx.file("big.txt", &body);
    fx.git(&["add", "big.txt"]);
    fx.git(&["commit", "-q", "-m", "Add rows"]);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_blame", json!({"path": "big.txt"}));
        let gb = &r["structuredContent"];
        assert_eq!(
            (gb["start_line"].clone(), gb["end_line"].clone()),
            (json!(1), json!(500)),
            "{mode:?}: {gb}"
        );
        assert_eq!(gb["truncated"], true);
        assert_eq!(gb["stopped_by"], serde_json::json!(["lines"]));
        let next = continuation(&r, "git_blame");
        assert_eq!(next["start_line"], 501, "{r}");
        let gb = ok(&mut m, "git_blame", next);
        assert_eq!(
            (gb["start_line"].clone(), gb["end_line"].clone()),
            (json!(501), json!(620)),
            "{gb}"
        );
        assert_eq!(gb["truncated"], false, "{gb}");
        assert_eq!(gb["groups"][0]["lines"][0], "row 501", "{gb}");
        let msg = schema_refused(
            &mut m,
            "git_blame",
            json!({"path": "big.txt", "start_line": 0}),
            true,
        );
        assert!(msg.contains("start_line"), "{msg}");
    }
}

/// A history of `n` commits after the one that adds `f.txt`, none touching
/// it, made with `git fast-import`.
fn long_history(fx: &Fixture, n: usize) {
    fx.git(&["init", "--quiet", "--initial-branch=main"]);
    let mut script = String::new();
    script.push_str("blob\nmark :1\ndata 12\nold line 1\n\n");
    script.push_str("commit refs/heads/main\nmark :2\ncommitter Root <r@example.invalid> 1700000000 +0000\ndata 4\nroot\nM 100644 :1 f.txt\n\n");
    for i in 1..=n {
        script.push_str(&format!(
            "commit refs/heads/main\ncommitter Busy <b@example.invalid> {} +0000\ndata 2\nc\n\n",
            1_700_000_000 + i
        ));
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(&fx.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_walk_stopped_by_its_commit_limit_marks_boundary_lines_and_says_how_to_continue() {
    assert!(have_git());
    let fx = Fixture::new();
    long_history(&fx, 20_005);
    let root = fx
        .git(&["rev-list", "--max-parents=0", "HEAD"])
        .trim()
        .to_owned();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_blame", json!({"path": "f.txt"}));
        let gb = &r["structuredContent"];
        assert_eq!(gb["truncated"], true, "{mode:?}: {gb}");
        assert_eq!(gb["stopped_by"], serde_json::json!(["commits"]), "{gb}");
        assert_eq!(gb["commits_walked"], 20_000, "{gb}");
        let g = &gb["groups"][0];
        assert_eq!(g["boundary"], true, "{gb}");
        assert_ne!(g["commit"], root.as_str(), "{gb}");
        assert!(fenced(&r, "blame").contains("(boundary)"), "{r}");
        assert!(text(&r, 0).contains("20000-commit limit"), "{r}");
        // Continuing from the boundary commit reaches the root.
        let next = continuation(&r, "git_blame");
        assert_eq!(next["revision"], g["commit"], "{r}");
        let gb = ok(&mut m, "git_blame", next);
        assert_eq!(gb["truncated"], false, "{gb}");
        assert_eq!(gb["groups"][0]["commit"], root.as_str(), "{gb}");
        assert_eq!(gb["groups"][0]["boundary"], false, "{gb}");
    }
}

#[test]
fn denied_files_are_refused_by_git_blame() {
    let fx = repo();
    fx.file(".env", "TOKEN=DENIED-BLAME-5e1a\n");
    fx.file(".ssh/id_rsa", "DENIED-BLAME-KEY-2f9c\n");
    fx.file("id_rsa", "DENIED-BLAME-KEY-2f9c\n");
    fx.git(&["add", "-f", ".env", ".ssh/id_rsa", "id_rsa"]);
    fx.git(&["commit", "-q", "-m", "Commit secrets"]);
    let (_, control) = plain_git(&fx.root, &["blame", ".env"]);
    assert!(control.contains("DENIED-BLAME-5e1a"), "control: {control}");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for path in [".env", ".ssh/id_rsa", "id_rsa", "src/../.env"] {
            for args in [
                json!({"path": path}),
                json!({"path": path, "revision": "HEAD"}),
            ] {
                let (code, r) = refused(&mut m, "git_blame", args.clone());
                assert_eq!(code, "denied_path", "{mode:?} {args}: {r}");
                assert!(!r.to_string().contains("DENIED-BLAME"), "{r}");
            }
        }
    }
}

#[test]
fn credentials_in_a_file_and_a_commit_message_are_redacted_in_git_blame() {
    let fx = repo();
    let aws = example_aws_key();
    let gh = example_github_token();
    fx.file("app.py", format!("name = 1\nKEY = \"{aws}\"\n"));
    fx.git(&["add", "app.py"]);
    fx.git(&["commit", "-q", "-m", &format!("Use token {gh} here")]);
    let (_, control) = plain_git(&fx.root, &["blame", "app.py"]);
    assert!(control.contains(&aws), "control: {control}");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({"path": "app.py"}),
            json!({"path": "app.py", "start_line": 2, "end_line": 2}),
        ] {
            let r = ok_result(&mut m, "git_blame", args.clone());
            let all = r.to_string();
            assert!(
                !all.contains(&aws) && !all.contains("IOSFODNN7"),
                "{mode:?} {args}: {r}"
            );
            assert!(!all.contains(&gh), "{mode:?} {args}: {r}");
            assert_eq!(r["structuredContent"]["redaction"]["applied"], true, "{r}");
            let g = &r["structuredContent"]["groups"][0];
            assert!(g["subject"].as_str().unwrap().contains("[redacted:"), "{g}");
        }
    }
}

#[test]
fn hostile_revisions_paths_and_repositories_are_refused_by_git_blame() {
    let fx = repo();
    let sentinel = fx.outside.join("should-never-exist");
    std::fs::write(fx.outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for rev in [
            format!("--output={}", sentinel.display()),
            "-p".to_owned(),
            "--since=1.year".to_owned(),
            "HEAD|id".to_owned(),
        ] {
            let msg = schema_refused(
                &mut m,
                "git_blame",
                json!({"path": "README.md", "revision": rev}),
                true,
            );
            assert!(msg.contains("revision"), "{mode:?} {rev:?}: {msg}");
        }
        let outside = fx.outside.join("secret.txt").display().to_string();
        for path in [
            "../secret.txt",
            "../../etc/passwd",
            "/etc/passwd",
            outside.as_str(),
        ] {
            let (code, r) = refused(&mut m, "git_blame", json!({"path": path}));
            assert_eq!(code, "outside_workspace", "{mode:?} {path}: {r}");
            assert!(!r.to_string().contains(SECRET), "{r}");
        }
        let msg = schema_refused(&mut m, "git_blame", json!({}), true);
        assert!(msg.contains("path"), "{msg}");
    }
    assert!(!sentinel.exists());
    // `.git` a symbolic link to a repository elsewhere.
    let fx = Fixture::demo_project();
    let elsewhere = fx.outside.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let g = |args: &[&str]| super::util::git(&elsewhere, "Outsider", args);
    g(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(elsewhere.join("README.md"), format!("{SECRET}\n")).unwrap();
    g(&["add", "README.md"]);
    g(&["commit", "--quiet", "-m", "OUTSIDE-REPO-MARKER"]);
    std::os::unix::fs::symlink(elsewhere.join(".git"), fx.root.join(".git")).unwrap();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let (code, r) = refused(&mut m, "git_blame", json!({"path": "README.md"}));
        assert_eq!(code, "unsafe_repository", "{mode:?}: {r}");
        assert!(!r.to_string().contains(SECRET), "{r}");
    }
}

#[test]
fn a_blame_says_when_the_commit_created_the_file_and_where_a_rename_came_from() {
    assert!(have_git());
    let fx = Fixture::new();
    let lines: String = (1..=40)
        .map(|i| format!("fn step_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    fx.file("src/old_name.rs", &lines);
    let at = |author: &str, date: &str, args: &[&str]| {
        git_as(&fx.root, author, date, args);
    };
    at("Ann", "2025-01-01T00:00:00Z", &["init", "-q", "-b", "main"]);
    at("Ann", "2025-01-01T00:00:00Z", &["add", "."]);
    at(
        "Ann",
        "2025-01-01T00:00:00Z",
        &["commit", "-qm", "Write the steps"],
    );
    let first = fx.git(&["rev-parse", "HEAD"]).trim().to_owned();
    // Bob renames the file and edits one line: git pairs the two by
    // similarity, blame by path gives Bob every line.
    fx.git(&["mv", "src/old_name.rs", "src/new_name.rs"]);
    fx.file(
        "src/new_name.rs",
        lines.replace("step_7() -> u32 { 7 }", "step_7() -> u32 { 70 }"),
    );
    fx.file("src/fresh.rs", "pub fn fresh() {}\n");
    at("Bob", "2025-02-01T00:00:00Z", &["add", "-A"]);
    at(
        "Bob",
        "2025-02-01T00:00:00Z",
        &["commit", "-qm", "Reorganise"],
    );
    let second = fx.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let mut m = start(&fx.root, Mode::Confined);
    {
        let r = ok_result(&mut m, "git_blame", json!({"path": "src/new_name.rs"}));
        let gb = &r["structuredContent"];
        let groups = gb["groups"].as_array().unwrap();
        assert!(!groups.is_empty());
        for g in groups {
            assert_eq!(g["commit"], second.as_str(), "{g}");
            assert_eq!(g["created_file"], true, "{g}");
            assert_eq!(
                g["renamed_from"],
                json!({"path": "src/old_name.rs", "revision": first}),
                "{g}"
            );
        }
        // The text says it too, with the call that follows the lines on.
        let summary = text(&r, 0);
        assert!(
            summary.contains("created the file")
                && summary.contains("renamed it from src/old_name.rs"),
            "{summary}"
        );
        assert!(
            summary.contains(&format!(
                "call git_blame with {{\"path\":\"src/old_name.rs\",\"revision\":\"{first}\"}}"
            )),
            "{summary}"
        );
        let body = fenced(&r, "blame");
        assert!(
            body.contains("(created the file: renamed from src/old_name.rs): Reorganise"),
            "{body}"
        );
        // Followed, the lines go to Ann's commit.
        let old = ok(
            &mut m,
            "git_blame",
            json!({"path": "src/old_name.rs", "revision": first}),
        );
        assert_eq!(per_line(&old), vec![first.clone(); 40], "{old}");
        // A file the commit added fresh is created, from nowhere.
        let gb = ok(&mut m, "git_blame", json!({"path": "src/fresh.rs"}));
        assert_eq!(gb["groups"][0]["created_file"], true, "{gb}");
        assert!(gb["groups"][0].get("renamed_from").is_none(), "{gb}");
    }
    // Lines an ordinary edit changed are that commit's own: the groups of a
    // file the commit did not create say so.
    fx.file(
        "src/new_name.rs",
        lines.replace("step_1() -> u32 { 1 }", "step_1() -> u32 { 100 }"),
    );
    at(
        "Cy",
        "2025-03-01T00:00:00Z",
        &["commit", "-qam", "Tune step one"],
    );
    let mut m = start(&fx.root, Mode::InProcess);
    let gb = ok(
        &mut m,
        "git_blame",
        json!({"path": "src/new_name.rs", "end_line": 1}),
    );
    assert_eq!(gb["groups"][0]["created_file"], false, "{gb}");
    assert!(gb["groups"][0].get("renamed_from").is_none(), "{gb}");
}

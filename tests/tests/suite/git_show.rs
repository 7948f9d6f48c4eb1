//! `git_show` through the real binary, in both modes with no git on the
//! server's `PATH`: a commit (fields, whole message, stat, diff against its
//! first parent), a file at a revision (ranges, the line cap, binary and
//! missing files), the output cap and the call that continues a cut answer;
//! and attacks: denied files committed in history, credentials in a file and
//! in a message, hostile revisions and paths, an unsafe repository.

use moat_tests::{Fixture, Mode, have_git, text};
use serde_json::{Value, json};

use super::git::start;
use super::git_attacks::plain_git;
use super::tools_util::{fenced, ok, ok_result, refused, schema_refused, start_with};
use super::util::{SECRET, example_aws_key, example_github_token};

fn repo() -> Fixture {
    assert!(have_git());
    let fx = Fixture::demo_project();
    fx.demo_git();
    fx
}

/// The last line of the summary (content block 0).
pub fn last_line(r: &Value) -> String {
    text(r, 0).lines().last().unwrap_or_default().to_owned()
}

/// The arguments of the "To continue, call TOOL with ARGS." line.
#[track_caller]
pub fn continuation(r: &Value, tool: &str) -> Value {
    let line = last_line(r);
    let prefix = format!("To continue, call {tool} with ");
    let args = line
        .strip_prefix(&prefix)
        .and_then(|l| l.strip_suffix('.'))
        .unwrap_or_else(|| panic!("no continuation with {tool}: {r}"));
    serde_json::from_str(args).unwrap_or_else(|e| panic!("{e}: {line}"))
}

#[test]
fn git_show_shows_a_commit_in_both_modes() {
    let fx = repo();
    let head = fx.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let parent = fx.git(&["rev-parse", "HEAD~1"]).trim().to_owned();
    fx.git(&["tag", "-a", "-m", "release", "v1", "HEAD~1"]);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_show", json!({}));
        let gs = &r["structuredContent"];
        assert_eq!(gs["kind"], "commit", "{mode:?}: {gs}");
        assert_eq!(gs["commit"], head.as_str());
        assert_eq!(gs["parents"], json!([parent]));
        assert_eq!(gs["subject"], "Add the demo package");
        assert_eq!(gs["message"], "Add the demo package\n");
        assert_eq!(gs["author"], "Fixture");
        assert_eq!(gs["files_changed"], 6, "{gs}");
        assert_eq!(gs["truncated"], false);
        assert_eq!(gs["stopped_by"], serde_json::json!([]));
        assert_eq!(gs["untrusted_content"], true);
        let body = fenced(&r, "git-show");
        assert!(body.contains(&format!("commit {head}\n")), "{body}");
        assert!(body.contains("\nAuthor: Fixture\n"), "{body}");
        assert!(body.contains("\n    Add the demo package\n"), "{body}");
        assert!(
            body.lines()
                .any(|l| l.starts_with(" src/demo/core.py ") && l.contains(" | 18 +")),
            "{body}"
        );
        assert!(body.contains(" 6 files changed"), "{body}");
        assert!(
            body.contains("diff --git a/src/demo/core.py b/src/demo/core.py"),
            "{body}"
        );
        assert!(body.contains("\n+class Engine:"), "{body}");
        // The demo package carries an injection comment: a warning line
        // follows the summary.
        assert_eq!(
            text(&r, 0).lines().next().unwrap_or_default(),
            format!(
                "Commit {}: 6 files changed, +{} -0.",
                &gs["short"].as_str().unwrap(),
                gs["lines_added"]
            ),
        );
        // stat_only: the message and the stat, no diff.
        let r = ok_result(&mut m, "git_show", json!({"stat_only": true}));
        let body = fenced(&r, "git-show");
        assert!(body.contains(" 6 files changed"), "{body}");
        assert!(!body.contains("diff --git"), "{body}");
        assert_eq!(r["structuredContent"]["stat_only"], true);
        // The root commit: against the empty tree.
        let gs = ok(&mut m, "git_show", json!({"revision": "HEAD~1"}));
        assert_eq!(gs["parents"], json!([]), "{gs}");
        assert_eq!(gs["subject"], "Add the project skeleton");
        assert_eq!(gs["files_changed"], 2, "{gs}");
        // A tag names its commit.
        let gs = ok(&mut m, "git_show", json!({"revision": "v1"}));
        assert_eq!(gs["subject"], "Add the project skeleton", "{gs}");
        let (code, r) = refused(&mut m, "git_show", json!({"revision": "no-such"}));
        assert_eq!(code, "git_failed", "{r}");
        let (code, r) = refused(&mut m, "git_show", json!({"revision": "HEAD~1..HEAD"}));
        assert_eq!(code, "git_failed", "{r}");
    }
}

#[test]
fn git_show_shows_a_file_at_a_revision() {
    let fx = repo();
    fx.file("README.md", "# Demo\n\nRewritten.\nAnd longer.\n");
    fx.git(&["commit", "--quiet", "-am", "Rewrite the readme"]);
    fx.git(&["add", "logo.bin"]);
    fx.git(&["commit", "--quiet", "-m", "Add the logo"]);
    // The work tree differs again: git_show reads the revision, never it.
    fx.file("README.md", "WORK-TREE-ONLY\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(
            &mut m,
            "git_show",
            json!({"revision": "HEAD~2", "path": "README.md"}),
        );
        let gs = &r["structuredContent"];
        assert_eq!(gs["kind"], "file", "{mode:?}: {gs}");
        assert_eq!(gs["path"], "README.md");
        assert_eq!(gs["total_lines"], 3);
        assert_eq!(
            (gs["start_line"].clone(), gs["end_line"].clone()),
            (json!(1), json!(3))
        );
        assert_eq!(gs["truncated"], false);
        assert_eq!(gs["subject"], "Add the demo package");
        assert!(gs.get("message").is_none(), "{gs}");
        let body = fenced(&r, "git-show");
        assert!(body.contains("\n3  A fixture project.\n"), "{body}");
        assert!(!r.to_string().contains("WORK-TREE-ONLY"), "{r}");
        let short = gs["short"].as_str().unwrap();
        // The demo package carries an injection comment: a warning line
        // follows the summary.
        assert_eq!(
            text(&r, 0).lines().next().unwrap_or_default(),
            format!("README.md at {short}: lines 1-3 of 3, 27 bytes.")
        );
        // Default HEAD, and a range.
        let r = ok_result(
            &mut m,
            "git_show",
            json!({"path": "README.md", "start_line": 3, "end_line": 4}),
        );
        let body = fenced(&r, "git-show");
        assert!(body.contains("\n3  Rewritten.\n4  And longer.\n"), "{body}");
        assert!(!body.contains("# Demo"), "{body}");
        for (args, want) in [
            (json!({"path": "logo.bin"}), "binary_file"),
            (json!({"path": "src"}), "not_a_file"),
            (json!({"path": "no/such.txt"}), "git_failed"),
            (json!({"path": "README.md", "start_line": 9}), "unsupported"),
            (
                json!({"path": "README.md", "start_line": 3, "end_line": 2}),
                "unsupported",
            ),
        ] {
            let (code, r) = refused(&mut m, "git_show", args.clone());
            assert_eq!(code, want, "{mode:?} {args}: {r}");
        }
    }
}

#[test]
fn a_file_cut_at_the_line_limit_says_how_to_continue() {
    let fx = repo();
    let lines: String = (1..=25).map(|i| format!("line {i}\n")).collect();
    fx.file("long.txt", &lines);
    fx.git(&["add", "long.txt"]);
    fx.git(&["commit", "--quiet", "-m", "Add a long file"]);
    for mode in Mode::BOTH {
        let mut m = start_with(
            &fx.root,
            mode,
            &[
                ("PATH", super::git::NO_GIT_PATH),
                ("MOAT_SANDBOX__MAX_READ_LINES", "10"),
            ],
        );
        let r = ok_result(&mut m, "git_show", json!({"path": "long.txt"}));
        let gs = &r["structuredContent"];
        assert_eq!(gs["end_line"], 10, "{mode:?}: {gs}");
        assert_eq!(gs["truncated"], true);
        assert_eq!(gs["stopped_by"], serde_json::json!(["lines"]));
        let next = continuation(&r, "git_show");
        assert_eq!(next["start_line"], 11, "{r}");
        assert_eq!(next["path"], "long.txt");
        let r = ok_result(&mut m, "git_show", next);
        let body = fenced(&r, "git-show");
        assert!(body.contains("\n11  line 11\n"), "{body}");
        assert!(body.contains("\n20  line 20\n"), "{body}");
        let next = continuation(&r, "git_show");
        let r = ok_result(&mut m, "git_show", next);
        let gs = &r["structuredContent"];
        assert_eq!(
            (gs["start_line"].clone(), gs["end_line"].clone()),
            (json!(21), json!(25))
        );
        assert_eq!(gs["truncated"], false, "{gs}");
        assert!(!last_line(&r).starts_with("To continue"), "{r}");
        // A range the caller chose is not a cut.
        let gs = ok(
            &mut m,
            "git_show",
            json!({"path": "long.txt", "end_line": 4}),
        );
        assert_eq!(gs["truncated"], false, "{gs}");
    }
}

#[test]
fn a_commit_cut_at_the_output_limit_says_how_to_continue() {
    let fx = repo();
    // 40 files of 10 KB: a diff well over the 256 KiB cap.
    let body: String = (0..400).map(|i| format!("{i:024}\n")).collect();
    for i in 0..40 {
        fx.file(&format!("big/f{i:02}.txt"), &body);
    }
    fx.git(&["add", "big"]);
    fx.git(&["commit", "--quiet", "-m", "Add big files"]);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_show", json!({}));
        let gs = &r["structuredContent"];
        assert_eq!(gs["truncated"], true, "{mode:?}: {gs}");
        assert_eq!(gs["stopped_by"], serde_json::json!(["bytes"]));
        assert_eq!(gs["files_changed"], 40, "the stat covers every file: {gs}");
        let not_shown = gs["files_not_shown"].as_u64().unwrap();
        assert!((1..40).contains(&not_shown), "{gs}");
        let stat = fenced(&r, "git-show");
        assert!(stat.contains(" big/f39.txt "), "{stat}");
        assert!(stat.contains(" 40 files changed"), "{stat}");
        // The last line names the call that shows the first file left out.
        let next = continuation(&r, "git_diff");
        let first = 40 - not_shown;
        assert_eq!(next["path"], format!("big/f{first:02}.txt"), "{r}");
        let gd = ok(&mut m, "git_diff", next);
        assert_eq!(gd["files_changed"], 1, "{gd}");
        assert_eq!(gd["lines_added"], 400, "{gd}");
        // stat_only fits.
        let gs = ok(&mut m, "git_show", json!({"stat_only": true}));
        assert_eq!(gs["truncated"], false, "{gs}");
    }
}

const ENV_MARKER: &str = "DENIED-ENV-CONTENT-3c1d";
const KEY_MARKER: &str = "DENIED-KEY-CONTENT-8e2b";

#[test]
fn committed_denied_files_never_appear_in_git_show() {
    let fx = repo();
    fx.file(".env", format!("TOKEN={ENV_MARKER}\n"));
    fx.file(".ssh/id_rsa", format!("{KEY_MARKER}\n"));
    fx.file("credentials.json", format!("{{\"k\": \"{ENV_MARKER}\"}}\n"));
    fx.file("notes.txt", "visible\n");
    fx.git(&[
        "add",
        "-f",
        ".env",
        ".ssh/id_rsa",
        "credentials.json",
        "notes.txt",
    ]);
    fx.git(&["commit", "--quiet", "-m", "Commit secrets"]);
    // Control: plain git shows the denied names and content.
    let (_, shown) = plain_git(&fx.root, &["show", "--stat", "-p", "HEAD"]);
    assert!(
        shown.contains(ENV_MARKER) && shown.contains(KEY_MARKER) && shown.contains("id_rsa"),
        "control: {shown}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({}),
            json!({"stat_only": true}),
            json!({"context_lines": 0}),
        ] {
            let r = ok_result(&mut m, "git_show", args.clone());
            let all = r.to_string();
            for leak in [
                ENV_MARKER,
                KEY_MARKER,
                ".env",
                "id_rsa",
                ".ssh",
                "credentials",
            ] {
                assert!(!all.contains(leak), "{mode:?} {args}: {leak} leaked: {r}");
            }
            let gs = &r["structuredContent"];
            assert_eq!(gs["withheld_by_denylist"], 3, "{mode:?} {args}: {gs}");
            assert_eq!(gs["files_changed"], 1, "{mode:?} {args}: {gs}");
            assert!(
                text(&r, 0).contains("3 files withheld: the denylist covers them."),
                "{r}"
            );
            assert!(fenced(&r, "git-show").contains("notes.txt"), "{r}");
        }
        for path in [
            ".env",
            ".ssh/id_rsa",
            "credentials.json",
            "sub/../.env",
            "./.ssh/id_rsa",
        ] {
            let (code, r) = refused(&mut m, "git_show", json!({"path": path}));
            assert_eq!(code, "denied_path", "{mode:?} {path}: {r}");
            assert!(!r.to_string().contains(ENV_MARKER), "{r}");
            let (code, _) = refused(
                &mut m,
                "git_show",
                json!({"path": path, "revision": "HEAD"}),
            );
            assert_eq!(code, "denied_path", "{mode:?} {path}");
        }
    }
}

#[test]
fn credentials_in_a_committed_file_and_its_message_are_redacted_in_git_show() {
    let fx = repo();
    let aws = example_aws_key();
    let gh = example_github_token();
    fx.file("config/app.py", format!("KEY = \"{aws}\"\nname = 1\n"));
    fx.git(&["add", "config/app.py"]);
    fx.git(&[
        "commit",
        "--quiet",
        "-m",
        &format!("Add config\n\nThe deploy token is {gh} for now."),
    ]);
    // Control: plain git shows both.
    let (_, shown) = plain_git(&fx.root, &["show", "HEAD"]);
    assert!(
        shown.contains(&aws) && shown.contains(&gh),
        "control: {shown}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({}),
            json!({"stat_only": true}),
            json!({"path": "config/app.py"}),
            json!({"path": "config/app.py", "start_line": 1, "end_line": 1}),
        ] {
            let r = ok_result(&mut m, "git_show", args.clone());
            let all = r.to_string();
            assert!(!all.contains(&aws), "{mode:?} {args}: {r}");
            assert!(!all.contains(&gh), "{mode:?} {args}: {r}");
            assert!(!all.contains("IOSFODNN7"), "{mode:?} {args}: {r}");
            let red = &r["structuredContent"]["redaction"];
            assert_eq!(red["applied"], true, "{mode:?} {args}: {r}");
            assert!(all.contains("[redacted:"), "{mode:?} {args}: {r}");
        }
        let gs = ok(&mut m, "git_show", json!({}));
        assert!(
            gs["message"]
                .as_str()
                .unwrap()
                .starts_with("Add config\n\nThe deploy token is [redacted:"),
            "{gs}"
        );
    }
}

#[test]
fn hostile_revisions_and_paths_are_refused_by_git_show() {
    let fx = repo();
    let sentinel = fx.outside.join("should-never-exist");
    std::fs::write(fx.outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for rev in [
            format!("--output={}", sentinel.display()),
            "-p".to_owned(),
            "--all".to_owned(),
            "HEAD; cat /etc/passwd".to_owned(),
            "$(id)".to_owned(),
            "x".repeat(201),
        ] {
            let msg = schema_refused(&mut m, "git_show", json!({"revision": rev}), true);
            assert!(msg.contains("revision"), "{mode:?} {rev:?}: {msg}");
        }
        let outside = fx.outside.join("secret.txt");
        for path in [
            "../secret.txt".to_owned(),
            "../../etc/passwd".to_owned(),
            outside.display().to_string(),
            "/etc/passwd".to_owned(),
        ] {
            let (code, r) = refused(&mut m, "git_show", json!({"path": path}));
            assert_eq!(code, "outside_workspace", "{mode:?} {path}: {r}");
            assert!(!r.to_string().contains(SECRET), "{r}");
        }
        // A path that looks like an option is only a path.
        let (code, _) = refused(&mut m, "git_show", json!({"path": "-p"}));
        assert_eq!(code, "git_failed", "{mode:?}");
    }
    assert!(!sentinel.exists());
}

#[test]
fn an_unsafe_repository_is_refused_by_git_show() {
    let fx = Fixture::demo_project();
    assert!(have_git());
    // A repository outside the workspace, reached by a `.git` symbolic link.
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
        for args in [
            json!({}),
            json!({"path": "README.md"}),
            json!({"stat_only": true}),
        ] {
            let (code, r) = refused(&mut m, "git_show", args.clone());
            assert_eq!(code, "unsafe_repository", "{mode:?} {args}: {r}");
            let all = r.to_string();
            assert!(
                !all.contains(SECRET) && !all.contains("OUTSIDE-REPO"),
                "{r}"
            );
        }
    }
}

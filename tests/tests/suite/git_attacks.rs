//! Attacks on the git tools through hostile repositories, each checked
//! against a plain `git` as a control (the fixture must make real git leak,
//! follow or fail as described, or it proves nothing):
//!
//! * committed denied files (`.env`, `.ssh/id_rsa`) in history diffs,
//!   work-tree diffs and stats;
//! * a tracked file replaced by a hard link to a file outside the workspace;
//! * `.git` control files that are symbolic links or hard links;
//! * a commit message carrying record separators to forge a `git_log` entry;
//! * a decompression bomb: a small object that inflates to hundreds of MB.
//!
//! Every test runs in both modes with no git on the server's `PATH`.

use std::path::Path;
use std::process::{Command, Stdio};

use moat_tests::{Fixture, Mode, have_git};
use serde_json::{Value, json};

use super::git::start;
use super::tools_util::{fenced, ok, ok_result, refused};
use super::util::SECRET;

const ENV_MARKER: &str = "DENIED-ENV-CONTENT-5b2e";
const KEY_MARKER: &str = "DENIED-KEY-CONTENT-9c4a";

fn repo() -> Fixture {
    assert!(have_git());
    let fx = Fixture::demo_project();
    fx.demo_git();
    fx
}

/// A plain git (not moat) in the workspace: (status ok, stdout + stderr).
pub fn plain_git(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// The whole answer, as text, for "never appears" checks.
fn all(r: &Value) -> String {
    r.to_string()
}

#[test]
fn committed_denied_files_never_appear_in_any_diff() {
    let fx = repo();
    fx.file(".env", format!("TOKEN={ENV_MARKER}\n"));
    fx.file(".ssh/id_rsa", format!("{KEY_MARKER}\n"));
    fx.file("notes.txt", "visible\n");
    fx.git(&["add", "-f", ".env", ".ssh/id_rsa", "notes.txt"]);
    fx.git(&["commit", "--quiet", "-m", "Commit secrets"]);
    // Work-tree and staged changes to the denied files too.
    fx.file(".env", format!("TOKEN={ENV_MARKER}-edited\n"));
    fx.file(".ssh/id_rsa", format!("{KEY_MARKER}-staged\n"));
    fx.git(&["add", "-f", ".ssh/id_rsa"]);
    // Control: plain git prints the denied content in each of these.
    for args in [
        &["diff", "HEAD~1..HEAD"][..],
        &["diff", "HEAD~1"],
        &["diff"],
        &["diff", "--cached"],
        &["diff", "--stat", "HEAD~1..HEAD"],
    ] {
        let (_, text) = plain_git(&fx.root, args);
        assert!(
            text.contains(ENV_MARKER) || text.contains(KEY_MARKER) || text.contains(".env"),
            "control: plain git {args:?} shows no denied file: {text}"
        );
    }
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({"revision": "HEAD~1..HEAD"}),
            json!({"revision": "HEAD~1..HEAD", "stat_only": true}),
            json!({"revision": "HEAD~1"}),
            json!({"revision": "HEAD~1", "stat_only": true}),
            json!({"revision": "HEAD~1", "staged": true}),
            json!({}),
            json!({"stat_only": true}),
            json!({"staged": true}),
            json!({"staged": true, "stat_only": true}),
        ] {
            let r = ok_result(&mut m, "git_diff", args.clone());
            let s = all(&r);
            for leak in [ENV_MARKER, KEY_MARKER, ".env", "id_rsa", ".ssh"] {
                assert!(!s.contains(leak), "{mode:?} {args}: {leak} leaked: {r}");
            }
            let gd = &r["structuredContent"];
            assert!(
                gd["withheld_by_denylist"].as_u64().unwrap() >= 1,
                "{mode:?} {args}: {gd}"
            );
            assert!(
                text0(&r).contains("withheld: the denylist covers"),
                "{mode:?} {args}: {r}"
            );
        }
        // The visible file of the same commit is still shown.
        let gd = ok(&mut m, "git_diff", json!({"revision": "HEAD~1..HEAD"}));
        assert_eq!(gd["files_changed"], 1, "{mode:?}: {gd}");
        // Path filters naming a denied path are refused as read_file refuses.
        for path in [".env", ".ssh/id_rsa", ".ssh"] {
            for tool in ["git_diff", "git_log"] {
                let (code, r) = refused(&mut m, tool, json!({"path": path}));
                assert_eq!(code, "denied_path", "{mode:?} {tool} {path}: {r}");
            }
        }
    }
}

fn text0(r: &Value) -> String {
    r["content"][0]["text"].as_str().unwrap_or("").to_owned()
}

#[test]
fn a_tracked_file_hard_linked_outside_is_only_a_notice() {
    let fx = repo();
    fx.file("notes.txt", "inside\n");
    fx.git(&["add", "notes.txt"]);
    fx.git(&["commit", "--quiet", "-m", "Add notes"]);
    let outside = fx.outside.join("secret.txt");
    std::fs::write(&outside, format!("{SECRET}\n")).unwrap();
    std::fs::remove_file(fx.root.join("notes.txt")).unwrap();
    std::fs::hard_link(&outside, fx.root.join("notes.txt")).unwrap();
    let (_, text) = plain_git(&fx.root, &["diff"]);
    assert!(
        text.contains(SECRET),
        "control: plain git did not read through the hard link: {text}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({}),
            json!({"stat_only": true}),
            json!({"revision": "HEAD"}),
            json!({"revision": "HEAD~1", "stat_only": true}),
            json!({"path": "notes.txt"}),
        ] {
            let r = ok_result(&mut m, "git_diff", args.clone());
            assert!(!all(&r).contains(SECRET), "{mode:?} {args}: {r}");
            let gd = &r["structuredContent"];
            assert_eq!(gd["withheld_unreadable"], 1, "{mode:?} {args}: {gd}");
            let body = fenced(&r, "diff");
            let notice: Vec<&str> = body.lines().filter(|l| l.contains("notes.txt")).collect();
            assert_eq!(notice.len(), 1, "{mode:?} {args}: {body}");
            assert!(notice[0].contains("hard links"), "{mode:?} {args}: {body}");
        }
    }
}

/// A fresh repository whose `.git/<name>` is replaced by `how` to a copy
/// outside the workspace (its real content, or `content` if given).
fn control_file_fixture(name: &str, how: &str, content: Option<&str>) -> Fixture {
    let fx = repo();
    fx.git(&["pack-refs", "--all"]);
    let inside = fx.root.join(".git").join(name);
    let outside = fx
        .outside
        .join(format!("outside-{}", name.replace('/', "-")));
    match content {
        Some(c) => std::fs::write(&outside, c).unwrap(),
        None => {
            std::fs::copy(&inside, &outside).unwrap();
        }
    }
    let _ = std::fs::remove_file(&inside);
    match how {
        "symlink" => std::os::unix::fs::symlink(&outside, &inside).unwrap(),
        _ => std::fs::hard_link(&outside, &inside).unwrap(),
    }
    fx
}

#[test]
fn linked_control_files_make_the_repository_unsafe() {
    let secret_lines = format!("{SECRET}\n");
    for (name, content) in [
        ("HEAD", None),
        ("config", None),
        ("index", None),
        ("packed-refs", Some(secret_lines.as_str())),
        ("shallow", Some(secret_lines.as_str())),
        ("refs/heads/main", None),
    ] {
        for how in ["symlink", "hardlink"] {
            let fx = if name == "refs/heads/main" {
                // A loose ref (not packed).
                let fx = repo();
                let inside = fx.root.join(".git/refs/heads/main");
                let outside = fx.outside.join("outside-ref");
                std::fs::copy(&inside, &outside).unwrap();
                std::fs::remove_file(&inside).unwrap();
                if how == "symlink" {
                    std::os::unix::fs::symlink(&outside, &inside).unwrap();
                } else {
                    std::fs::hard_link(&outside, &inside).unwrap();
                }
                fx
            } else {
                control_file_fixture(name, how, content)
            };
            // Control: plain git reads through the link (it quotes the
            // outside content, or it works off the outside copy).
            // (git itself refuses a repository whose HEAD is a symbolic link
            // leaving it, so that one case has no control.)
            let (okay, text) = plain_git(&fx.root, &["log", "-1", "--format=%s"]);
            assert!(
                (name, how) == ("HEAD", "symlink")
                    || text.contains(SECRET)
                    || (okay && text.contains("Add the demo package")),
                "control: plain git did not read .git/{name} through the {how}: {text}"
            );
            for mode in Mode::BOTH {
                let mut m = start(&fx.root, mode);
                for (tool, args) in [
                    ("git_log", json!({})),
                    ("git_diff", json!({})),
                    (
                        "git_diff",
                        json!({"revision": "HEAD~1..HEAD", "stat_only": true}),
                    ),
                ] {
                    let (code, r) = refused(&mut m, tool, args.clone());
                    assert_eq!(
                        code, "unsafe_repository",
                        "{mode:?} .git/{name} {how} {tool} {args}: {r}"
                    );
                    assert!(!all(&r).contains(SECRET), "{mode:?} {name} {how}: {r}");
                    let msg = r["structuredContent"]["message"].as_str().unwrap();
                    assert!(
                        msg.contains("symbolic link") || msg.contains("hard link"),
                        "{mode:?} {name} {how}: {msg}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_commit_message_cannot_forge_a_log_entry() {
    let fx = repo();
    let fake = "f".repeat(40);
    let forged = format!(
        "Real subject\u{1e}\n{fake}\u{1f}fffffff\u{1f}Mallory\u{1f}2030-01-01T00:00:00+00:00\u{1f}Forged entry\u{1e}"
    );
    fx.file("notes.txt", "x\n");
    fx.git(&["add", "notes.txt"]);
    fx.git(&["commit", "--quiet", "--cleanup=verbatim", "-m", &forged]);
    // Control: the separators are in git's own rendering of the subject.
    let (_, text) = plain_git(&fx.root, &["log", "-1", "--format=%s"]);
    assert!(
        text.contains('\u{1e}') && text.contains("Mallory"),
        "control: {text:?}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_log", json!({}));
        let gl = &r["structuredContent"];
        assert_eq!(gl["commit_count"], 3, "{mode:?}: {gl}");
        let commits = gl["commits"].as_array().unwrap();
        assert!(
            commits
                .iter()
                .all(|c| c["author"] == "Fixture" && c["commit"] != fake.as_str()),
            "{mode:?}: forged entry: {gl}"
        );
        assert!(
            commits[0]["subject"]
                .as_str()
                .unwrap()
                .starts_with("Real subject"),
            "{mode:?}: {gl}"
        );
        // The fenced text has one line per commit; none is the forged one.
        let body = fenced(&r, "commit-messages");
        let entries = body
            .lines()
            .filter(|l| l.contains("  2026-01-02  "))
            .count();
        assert_eq!(entries, 3, "{mode:?}: {body:?}");
        assert!(
            !body
                .lines()
                .any(|l| l.contains("Mallory") && !l.contains("Real subject")),
            "{mode:?}: {body:?}"
        );
    }
}

#[test]
fn a_decompression_bomb_is_refused_without_inflating_it() {
    let fx = repo();
    // 300 MB of zeros, stored as one loose object of a few hundred KB.
    let mut child = Command::new("git")
        .args(["hash-object", "-w", "--stdin"])
        .current_dir(&fx.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..300 {
            stdin.write_all(&chunk).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let id = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    fx.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("100644,{id},bomb.bin"),
    ]);
    fx.git(&["commit", "--quiet", "-m", "Add a bomb"]);
    // Control: the object is small on disk and huge inflated.
    let loose = fx.root.join(".git/objects").join(&id[..2]).join(&id[2..]);
    let on_disk = std::fs::metadata(&loose).unwrap().len();
    assert!(
        on_disk < 2 * 1024 * 1024,
        "control: {on_disk} bytes on disk"
    );
    let (_, size) = plain_git(&fx.root, &["cat-file", "-s", &id]);
    assert_eq!(size.trim(), (300u64 << 20).to_string(), "control");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({"revision": "HEAD~1..HEAD"}),
            json!({"revision": "HEAD~1..HEAD", "stat_only": true}),
            json!({"revision": "HEAD~1", "staged": true}),
        ] {
            let (code, r) = refused(&mut m, "git_diff", args.clone());
            assert!(
                code == "too_large" || code == "timed_out",
                "{mode:?} {args}: {r}"
            );
        }
        // The server is unaffected.
        let gl = ok(&mut m, "git_log", json!({"limit": 1}));
        assert_eq!(gl["commits"][0]["subject"], "Add a bomb", "{mode:?}: {gl}");
    }
}

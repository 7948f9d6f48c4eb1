//! `git_status` through the real binary, in both modes with no git on the
//! server's `PATH`: staged, unstaged and untracked paths checked against a
//! plain `git status`, the upstream's ahead/behind from local refs, a
//! detached HEAD, the entry cap and the call that continues it; and attacks:
//! denied paths (tracked and untracked) counted and never named, work-tree
//! files that are hard links or symbolic links to outside files, FIFOs, an
//! unsafe repository.

use std::collections::BTreeSet;

use moat_tests::{Fixture, Mode, have_git, text};
use serde_json::{Value, json};

use super::git::start;
use super::git_attacks::plain_git;
use super::git_show::continuation;
use super::tools_util::{ok, ok_result, refused, schema_refused};
use super::util::SECRET;

fn repo() -> Fixture {
    assert!(have_git());
    let fx = Fixture::demo_project();
    fx.demo_git();
    fx
}

/// `(list, status, path)` for every entry of a `git_status` result.
fn entries(gs: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for list in ["staged", "unstaged", "untracked"] {
        for e in gs[list].as_array().unwrap() {
            out.insert((
                list.to_owned(),
                e["status"].as_str().unwrap().to_owned(),
                e["path"].as_str().unwrap().to_owned(),
            ));
        }
    }
    out
}

/// The same from a plain `git status --porcelain`, leaving out `skip`.
fn git_entries(fx: &Fixture, skip: &[&str]) -> BTreeSet<(String, String, String)> {
    let (ok, out) = plain_git(
        &fx.root,
        &["status", "--porcelain=v1", "--untracked-files=normal"],
    );
    assert!(ok, "{out}");
    let mut set = BTreeSet::new();
    for line in out.lines() {
        let (xy, path) = line.split_at(3);
        let (x, y) = (&xy[0..1], &xy[1..2]);
        if skip.contains(&path) {
            continue;
        }
        if x == "?" {
            set.insert(("untracked".into(), "?".into(), path.into()));
            continue;
        }
        if x != " " {
            set.insert(("staged".into(), x.into(), path.into()));
        }
        if y != " " {
            set.insert(("unstaged".into(), y.into(), path.into()));
        }
    }
    set
}

/// The denied paths of the demo project, as git names them.
const DENIED: [&str; 3] = [".env", "deploy.pem", ".ssh/"];

#[test]
fn git_status_lists_changes_as_git_does_in_both_modes() {
    let fx = repo();
    fx.file(".gitignore", "*.log\nbuild/\n");
    fx.file("x.log", "ignored\n");
    fx.file("build/out.txt", "ignored\n");
    fx.file("src/demo/keep.log", "ignored\n");
    fx.file("README.md", "# Demo\n\nEdited.\n");
    std::fs::remove_file(fx.root.join("src/demo/broken.py")).unwrap();
    fx.file("added.txt", "new\n");
    fx.git(&["add", "added.txt"]);
    fx.file("pyproject.toml", "[project]\nname = \"changed\"\n");
    fx.git(&["add", "pyproject.toml"]);
    fx.file("pyproject.toml", "[project]\nname = \"changed again\"\n");
    fx.file("src/demo/new.py", "x = 1\n");
    let want = git_entries(&fx, &DENIED);
    assert!(want.len() >= 8, "control: {want:?}");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_status", json!({}));
        let gs = &r["structuredContent"];
        assert_eq!(entries(gs), want, "{mode:?}: {gs}");
        assert_eq!(gs["branch"], "main");
        assert_eq!(gs["detached"], false);
        assert_eq!(gs["upstream"], "");
        assert!(gs.get("ahead").is_none(), "{gs}");
        assert_eq!(gs["truncated"], false);
        assert_eq!(gs["stopped_by"], serde_json::json!([]));
        assert_eq!(gs["staged_count"], 2, "{gs}");
        assert_eq!(gs["withheld_by_denylist"], 3, "{gs}");
        let t = text(&r, 0);
        assert!(
            t.starts_with("On branch main.\nStaged (2):\n  A  added.txt\n  M  pyproject.toml\n"),
            "{t}"
        );
        assert!(t.contains("\n  D  src/demo/broken.py"), "{t}");
        assert!(
            t.contains("\n3 paths withheld: the denylist covers them."),
            "{t}"
        );
        for leak in [".env", "deploy.pem", ".ssh"] {
            assert!(!r.to_string().contains(leak), "{mode:?}: {leak}: {r}");
        }
        // Untracked paths left out on request.
        let gs = ok(&mut m, "git_status", json!({"untracked": false}));
        assert_eq!(gs["untracked"], json!([]), "{gs}");
        assert_eq!(gs["untracked_count"], 0, "{gs}");
    }
}

#[test]
fn git_status_reports_the_upstream_from_local_refs_and_a_detached_head() {
    let fx = repo();
    let first = fx.git(&["rev-parse", "HEAD~1"]).trim().to_owned();
    for (k, v) in [
        ("remote.origin.url", "/nonexistent/origin.git"),
        ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
        ("branch.main.remote", "origin"),
        ("branch.main.merge", "refs/heads/main"),
    ] {
        fx.git(&["config", k, v]);
    }
    fx.git(&["update-ref", "refs/remotes/origin/main", &first]);
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(&mut m, "git_status", json!({}));
    let gs = &r["structuredContent"];
    assert_eq!(gs["upstream"], "origin/main", "{gs}");
    assert_eq!(
        (gs["ahead"].clone(), gs["behind"].clone()),
        (json!(1), json!(0)),
        "{gs}"
    );
    assert!(
        text(&r, 0).starts_with("On branch main. Upstream origin/main: ahead 1, behind 0."),
        "{r}"
    );
    // The upstream moves on elsewhere: one commit on each side.
    fx.git(&["checkout", "-q", "-b", "other", &first]);
    fx.file("other.txt", "x\n");
    fx.git(&["add", "other.txt"]);
    fx.git(&["commit", "-q", "-m", "Elsewhere"]);
    let other = fx.git(&["rev-parse", "HEAD"]).trim().to_owned();
    fx.git(&["checkout", "-q", "main"]);
    fx.git(&["update-ref", "refs/remotes/origin/main", &other]);
    let (_, control) = plain_git(&fx.root, &["status", "-sb"]);
    assert!(
        control.contains("[ahead 1, behind 1]"),
        "control: {control}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let gs = ok(&mut m, "git_status", json!({}));
        assert_eq!(
            (gs["ahead"].clone(), gs["behind"].clone()),
            (json!(1), json!(1)),
            "{mode:?}: {gs}"
        );
    }
    // A configured upstream whose ref does not exist locally: not counted.
    fx.git(&["update-ref", "-d", "refs/remotes/origin/main"]);
    let gs = ok(
        &mut start(&fx.root, Mode::Confined),
        "git_status",
        json!({}),
    );
    assert_eq!(gs["upstream"], "origin/main", "{gs}");
    assert!(gs.get("ahead").is_none(), "{gs}");
    // Detached.
    fx.git(&["checkout", "-q", "--detach", "HEAD~1"]);
    let r = ok_result(
        &mut start(&fx.root, Mode::InProcess),
        "git_status",
        json!({}),
    );
    let gs = &r["structuredContent"];
    assert_eq!(gs["detached"], true, "{gs}");
    assert_eq!(gs["branch"], "");
    assert_eq!(gs["head"], first.as_str());
    assert!(
        text(&r, 0).starts_with(&format!("HEAD detached at {}.", &first[..12])),
        "{r}"
    );
}

#[test]
fn git_status_is_cut_at_max_entries_and_says_how_to_continue() {
    let fx = repo();
    for i in 0..5 {
        fx.file(&format!("new{i}.txt"), "x\n");
    }
    fx.file("README.md", "changed\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let all = ok(&mut m, "git_status", json!({}));
        let total = all["staged_count"].as_u64().unwrap()
            + all["unstaged_count"].as_u64().unwrap()
            + all["untracked_count"].as_u64().unwrap();
        assert!(total >= 6, "{all}");
        let r = ok_result(&mut m, "git_status", json!({"max_entries": 2}));
        let gs = &r["structuredContent"];
        assert_eq!(gs["truncated"], true, "{mode:?}: {gs}");
        assert_eq!(gs["stopped_by"], serde_json::json!(["entries"]));
        assert_eq!(entries(gs).len(), 2, "{gs}");
        assert_eq!(
            gs["untracked_count"], all["untracked_count"],
            "counts stay complete"
        );
        let next = continuation(&r, "git_status");
        assert_eq!(next["max_entries"], total, "{r}");
        let gs = ok(&mut m, "git_status", next);
        assert_eq!(gs["truncated"], false, "{gs}");
        assert_eq!(entries(&gs), entries(&all));
        for bad in [json!({"max_entries": 0}), json!({"max_entries": 1001})] {
            let msg = schema_refused(&mut m, "git_status", bad, true);
            assert!(msg.contains("max_entries"), "{msg}");
        }
    }
}

#[test]
fn git_status_never_reads_through_links_and_never_names_denied_paths() {
    let fx = repo();
    fx.file(".env", "TOKEN=DENIED-STATUS-7a1c\n");
    fx.file("notes.txt", "inside\n");
    fx.file("linked.txt", "inside\n");
    fx.file("piped.txt", "inside\n");
    fx.git(&["add", "-f", ".env", "notes.txt", "linked.txt", "piped.txt"]);
    fx.git(&["commit", "-q", "-m", "Track more"]);
    // Denied paths: a tracked one modified, untracked ones added.
    fx.file(".env", "TOKEN=DENIED-STATUS-7a1c-edited\n");
    fx.file("id_rsa", "DENIED-STATUS-KEY\n");
    fx.file(".aws/credentials", "DENIED-STATUS-KEY\n");
    // A tracked file replaced by a hard link to an outside file, another by
    // a symbolic link to one, a third by a FIFO; an untracked link to an
    // outside directory; an untracked FIFO.
    let outside = fx.outside.join("secret.txt");
    std::fs::write(&outside, format!("{SECRET}\n")).unwrap();
    std::fs::create_dir_all(fx.outside.join("dir")).unwrap();
    std::fs::write(fx.outside.join("dir/inner.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::remove_file(fx.root.join("notes.txt")).unwrap();
    std::fs::hard_link(&outside, fx.root.join("notes.txt")).unwrap();
    std::fs::remove_file(fx.root.join("linked.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, fx.root.join("linked.txt")).unwrap();
    std::fs::remove_file(fx.root.join("piped.txt")).unwrap();
    fx.fifo("piped.txt");
    fx.symlink("outdir", fx.outside.join("dir"));
    fx.fifo("pipe");
    // Control: plain git reads through the hard link (it sees a change and
    // diffs the outside content) and lists the denied files by name.
    let (_, status) = plain_git(&fx.root, &["status", "--porcelain"]);
    assert!(
        status.contains(" M notes.txt") && status.contains(".env"),
        "control: {status}"
    );
    let (_, diff) = plain_git(&fx.root, &["diff", "notes.txt"]);
    assert!(diff.contains(SECRET), "control: {diff}");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_status", json!({}));
        let all = r.to_string();
        assert!(!all.contains(SECRET), "{mode:?}: {r}");
        for leak in [
            ".env",
            "id_rsa",
            ".aws",
            "credentials",
            "DENIED-STATUS",
            "inner.txt",
        ] {
            assert!(!all.contains(leak), "{mode:?}: {leak} leaked: {r}");
        }
        let gs = &r["structuredContent"];
        // .env (tracked), id_rsa, .aws/ and the demo's deploy.pem and .ssh/.
        assert_eq!(gs["withheld_by_denylist"], 5, "{mode:?}: {gs}");
        let got = entries(gs);
        for want in [
            ("unstaged", "X", "notes.txt"),
            ("unstaged", "T", "linked.txt"),
            ("unstaged", "T", "piped.txt"),
            ("untracked", "?", "outdir"),
        ] {
            let want = (want.0.to_owned(), want.1.to_owned(), want.2.to_owned());
            assert!(got.contains(&want), "{mode:?}: {want:?} in {gs}");
        }
        assert!(
            !got.iter()
                .any(|(_, _, p)| p == "pipe" || p.starts_with("outdir/")),
            "{gs}"
        );
        // The server is unaffected.
        let gl = ok(&mut m, "git_log", json!({"limit": 1}));
        assert_eq!(gl["commits"][0]["subject"], "Track more", "{mode:?}");
    }
}

#[test]
fn an_unsafe_repository_is_refused_by_git_status() {
    let fx = Fixture::demo_project();
    assert!(have_git());
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
        let (code, r) = refused(&mut m, "git_status", json!({}));
        assert_eq!(code, "unsafe_repository", "{mode:?}: {r}");
        assert!(!r.to_string().contains(SECRET), "{r}");
    }
    // No repository at all.
    let fx = Fixture::new();
    let (code, _) = refused(
        &mut start(&fx.root, Mode::Confined),
        "git_status",
        json!({}),
    );
    assert_eq!(code, "not_a_repository");
}

/// A clean checkout answers as git does: nothing. A tracked file over the
/// size limit whose stat is what the index recorded is unchanged (it is
/// never read, and nothing of its content is shown), an untracked directory
/// that holds only ignored files is not listed, while one holding a file
/// that is not ignored at any depth is. A change hidden behind an equal
/// modification time and size (restored with `touch`) is still found,
/// because the stat compared includes the status-change time, and so is a
/// change made in the same second the index was written (racily clean).
#[test]
fn git_status_agrees_with_git_on_a_clean_tree_and_sees_changes_behind_an_equal_stat() {
    let fx = repo();
    fx.file(".gitignore", "*.o\n");
    let big = "x".repeat(1024 * 1024 + 4096);
    fx.file("assets/big.txt", &big);
    fx.git(&["add", ".gitignore", "assets/big.txt"]);
    fx.git(&["commit", "-q", "-m", "big"]);
    fx.file("gen/out.o", "ignored\n");
    fx.file("gen/deeper/more.o", "ignored\n");
    fx.file("fresh/deeper/new.txt", "new\n");
    let want = git_entries(&fx, &DENIED);
    let untracked = |p: &str| ("untracked".to_owned(), "?".to_owned(), p.to_owned());
    assert!(want.contains(&untracked("fresh/")), "control: {want:?}");
    assert!(!want.contains(&untracked("gen/")), "control: {want:?}");
    assert!(
        want.iter().all(|(list, _, _)| list == "untracked"),
        "control: {want:?}"
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let gs = ok(&mut m, "git_status", json!({}));
        assert_eq!(entries(&gs), want, "{mode:?}: {gs}");
        assert!(!gs.to_string().contains("gen"), "{gs}");
    }
    // Same size, same modification time, different content.
    let path = fx.root.join("README.md");
    let before = std::fs::read_to_string(&path).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let swapped: String = before
        .chars()
        .map(|c| if c == 'e' { 'E' } else { c })
        .collect();
    assert_ne!(swapped, before, "control: the README has an e");
    std::fs::write(&path, &swapped).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    // And a file changed right after the index was written.
    fx.file("src/demo/fast.py", "a = 1\n");
    fx.git(&["add", "src/demo/fast.py"]);
    fx.file("src/demo/fast.py", "b = 2\n");
    let want = git_entries(&fx, &DENIED);
    for path in ["README.md", "src/demo/fast.py"] {
        assert!(
            want.contains(&("unstaged".into(), "M".into(), path.into())),
            "control: git sees {path}: {want:?}"
        );
    }
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let gs = ok(&mut m, "git_status", json!({}));
        assert_eq!(entries(&gs), want, "{mode:?}: {gs}");
    }
    // The large file changed: not read, named as not compared.
    fx.file("assets/big.txt", format!("{big}y"));
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let gs = ok(&mut m, "git_status", json!({}));
        let got = entries(&gs);
        assert!(
            got.contains(&("unstaged".into(), "X".into(), "assets/big.txt".into())),
            "{mode:?}: {gs}"
        );
        assert!(!gs.to_string().contains("xxxx"), "{gs}");
    }
}

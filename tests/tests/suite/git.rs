//! Git hardening and the two git tools through the real binary: history,
//! diffs, hostile revisions and git's own failures, plus hostile
//! repositories: a `.git/config` that names programs for every hook git has,
//! a `.git` file or alternates pointing outside the workspace, and a promisor
//! remote that would make git fetch.
//!
//! Hostile-configuration tests run in both modes: in confined mode the
//! sandbox also stops git from executing anything but itself, so only the
//! in-process run proves moat's own overrides. Each such test ends with a
//! control: the same hostile repository under a plain `git`, which must run
//! the planted programs (otherwise the fixture proves nothing).

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use moat_tests::{Fixture, Mode, have_git, text};
use serde_json::{Value, json};

use super::tools_util::{fenced, ok, ok_result, refused, schema_refused, start_2025_06_18};

/// `PATH` for the server in every git test: a directory with no programs, so
/// the tests prove git is read in-process with no git installed (the
/// fixtures themselves are built with the test host's git).
pub const NO_GIT_PATH: &str = "/nonexistent-moat-no-git";

/// Start a server on `root` in `mode` with no git on its `PATH`.
pub fn start(root: &Path, mode: Mode) -> moat_tests::Moat {
    super::tools_util::start_with(root, mode, &[("PATH", NO_GIT_PATH)])
}

/// The demo project with its two-commit history, or `None` (test skipped) without git.
fn repo() -> Option<Fixture> {
    if !have_git() {
        eprintln!("skipped: no git on PATH");
        return None;
    }
    let fx = Fixture::demo_project();
    fx.demo_git();
    Some(fx)
}

fn subjects(gl: &Value) -> Vec<String> {
    gl["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap().to_owned())
        .collect()
}

const SKELETON: &str = "Add the project skeleton";
const PACKAGE: &str = "Add the demo package";

#[test]
fn not_a_repository_without_dot_git() {
    if !have_git() {
        return;
    }
    let fx = Fixture::demo_project();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for tool in ["git_log", "git_diff"] {
            let (code, r) = refused(&mut m, tool, json!({}));
            assert_eq!(code, "not_a_repository", "{mode:?} {tool}: {r}");
        }
    }
}

#[test]
fn git_log_lists_commits_newest_first_in_both_modes() {
    let Some(fx) = repo() else { return };
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_log", json!({}));
        let gl = &r["structuredContent"];
        assert_eq!(subjects(gl), [PACKAGE, SKELETON], "{mode:?}: {gl}");
        assert_eq!(gl["commit_count"], 2);
        assert_eq!(gl["path"], "");
        assert_eq!(gl["truncated"], false);
        for c in gl["commits"].as_array().unwrap() {
            assert_eq!(c["author"], "Fixture");
            assert_eq!(c["commit"].as_str().unwrap().len(), 40, "{c}");
            assert!(
                c["commit"]
                    .as_str()
                    .unwrap()
                    .starts_with(c["short"].as_str().unwrap())
            );
            assert!(
                c["authored_at"]
                    .as_str()
                    .unwrap()
                    .starts_with("2026-01-02T03:04:05"),
                "{c}"
            );
        }
        // Untrusted: fenced as commit messages and flagged.
        assert_eq!(gl["untrusted_content"], true);
        let body = fenced(&r, "commit-messages");
        assert!(
            body.contains("  2026-01-02  Fixture  Add the demo package"),
            "{body}"
        );
        assert_eq!(text(&r, 0), "2 commits.");
    }
}

#[test]
fn git_log_path_filter_and_limit() {
    let Some(fx) = repo() else { return };
    let mut m = start(&fx.root, Mode::Confined);
    let gl = ok(&mut m, "git_log", json!({"path": "src"}));
    assert_eq!(subjects(&gl), [PACKAGE], "{gl}");
    assert_eq!(gl["path"], "src");
    let gl = ok(&mut m, "git_log", json!({"path": "README.md"}));
    assert_eq!(subjects(&gl), [SKELETON], "{gl}");
    let gl = ok(&mut m, "git_log", json!({"path": "."}));
    assert_eq!(gl["commit_count"], 2);
    assert_eq!(gl["path"], ".");
    let gl = ok(&mut m, "git_log", json!({"limit": 1}));
    assert_eq!(subjects(&gl), [PACKAGE], "{gl}");
    let (code, _) = refused(&mut m, "git_log", json!({"path": "../outside"}));
    assert_eq!(code, "outside_workspace");
    let (code, _) = refused(&mut m, "git_log", json!({"path": ".env"}));
    assert_eq!(code, "denied_path");
    let msg = schema_refused(&mut m, "git_log", json!({"limit": 1001}), true);
    assert!(msg.contains("limit"), "{msg}");
}

#[test]
fn git_diff_clean_then_edited() {
    let Some(fx) = repo() else { return };
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_diff", json!({}));
        assert_eq!(text(&r, 0), "No changes.", "{mode:?}: {r}");
        assert_eq!(r["structuredContent"]["files_changed"], 0);
    }
    fx.file(
        "README.md",
        "# Demo\n\nA fixture project.\nA new line.\nAnother.\n",
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "git_diff", json!({}));
        let gd = &r["structuredContent"];
        assert_eq!(gd["files_changed"], 1, "{mode:?}: {gd}");
        assert_eq!(gd["lines_added"], 2);
        assert_eq!(gd["lines_removed"], 0);
        assert_eq!(gd["staged"], false);
        assert_eq!(gd["untrusted_content"], true);
        let body = fenced(&r, "diff");
        assert!(
            body.contains("diff --git a/README.md b/README.md"),
            "{body}"
        );
        assert!(body.contains("+A new line."), "{body}");
        assert_eq!(text(&r, 0), "1 file changed: +2 -0.");
        // Nothing is staged.
        let r = ok_result(&mut m, "git_diff", json!({"staged": true}));
        assert_eq!(text(&r, 0), "No changes.", "{r}");
        // Context lines.
        let r = ok_result(&mut m, "git_diff", json!({"context_lines": 0}));
        assert!(!fenced(&r, "diff").contains("\n # Demo"), "{r}");
    }
}

#[test]
fn stat_only_omits_the_body_and_counts_files() {
    let Some(fx) = repo() else { return };
    fx.file("README.md", "# Demo\n\nChanged.\n");
    fx.file("src/demo/core.py", "TIMEOUT = 1\n");
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(&mut m, "git_diff", json!({"stat_only": true}));
    let gd = &r["structuredContent"];
    // `--stat` output is still parsed for its counts when the body is left out.
    assert_eq!(gd["files_changed"], 2, "{gd}");
    assert!(gd["lines_removed"].as_u64().unwrap() >= 18, "{gd}");
    assert_eq!(gd["stat_only"], true);
    let body = fenced(&r, "diff");
    assert!(!body.contains("diff --git"), "{body}");
    assert!(!body.contains("@@"), "{body}");
    assert!(
        body.lines()
            .any(|l| l.starts_with(" README.md ") && l.contains(" | ")),
        "{body}"
    );
    assert!(body.contains("2 files changed"), "{body}");
}

#[test]
fn git_diff_against_a_revision_and_for_a_path() {
    let Some(fx) = repo() else { return };
    fx.file("README.md", "# Demo\n\nEdited.\n");
    let mut m = start(&fx.root, Mode::Confined);
    let gd = ok(&mut m, "git_diff", json!({"revision": "HEAD~1"}));
    // src/demo/{__init__,core,settings,vendored,broken}.py, widget.ts, README.
    assert_eq!(gd["files_changed"], 7, "{gd}");
    let r = ok_result(
        &mut m,
        "git_diff",
        json!({"revision": "HEAD~1", "path": "src/demo/core.py"}),
    );
    let gd = &r["structuredContent"];
    assert_eq!(gd["files_changed"], 1, "{gd}");
    assert_eq!(gd["lines_added"], 18);
    assert_eq!(gd["path"], "src/demo/core.py");
    assert_eq!(text(&r, 0), "1 file changed for src/demo/core.py: +18 -0.");
    let r = ok_result(&mut m, "git_diff", json!({"path": "src"}));
    assert_eq!(text(&r, 0), "No changes for src.", "{r}");
    let gd = ok(
        &mut m,
        "git_diff",
        json!({"revision": "HEAD~1..HEAD", "stat_only": true}),
    );
    assert_eq!(gd["files_changed"], 6, "{gd}");
    let (code, r) = refused(&mut m, "git_diff", json!({"revision": "no-such-branch"}));
    assert_eq!(code, "git_failed", "{r}");
    // git's message is passed on, without absolute paths.
    let msg = r["structuredContent"]["message"].as_str().unwrap();
    assert!(msg.starts_with("git diff failed: "), "{msg}");
    assert!(!msg.contains(fx.root.to_str().unwrap()), "{msg}");
}

/// Eight hostile revisions: option injection (`--upload-pack`, `-c`,
/// `--output`) and shell metacharacters that only a shell would act on.
fn hostile_revisions(sentinel: &Path) -> Vec<String> {
    let s = sentinel.display();
    vec![
        format!("--upload-pack=touch {s}"),
        "-c core.pager=sh".to_owned(),
        format!("--output={s}"),
        "HEAD; rm -rf /".to_owned(),
        "HEAD && whoami".to_owned(),
        "$(whoami)".to_owned(),
        "`whoami`".to_owned(),
        format!("HEAD|tee {s}"),
    ]
}

#[test]
fn hostile_revisions_are_refused_by_the_schema() {
    let Some(fx) = repo() else { return };
    let sentinel = fx.outside.join("should-never-exist");
    let mut revs = hostile_revisions(&sentinel);
    revs.extend(["--all", "-p", "-", "--", "", " HEAD", "a b", "HEAD\n"].map(String::from));
    revs.push("x".repeat(201));
    // A tool error `invalid_arguments` from 2025-11-25 on (SEP-1303); a
    // JSON-RPC -32602 for a 2025-06-18 client. Both modes.
    for mode in Mode::BOTH {
        for (mut m, tool_error) in [
            (start(&fx.root, mode), true),
            (start_2025_06_18(&fx.root, mode), false),
        ] {
            for rev in &revs {
                for tool in ["git_log", "git_diff"] {
                    let msg = schema_refused(&mut m, tool, json!({"revision": rev}), tool_error);
                    assert!(msg.contains("revision"), "{mode:?} {tool} {rev:?}: {msg}");
                }
            }
        }
    }
    assert!(!sentinel.exists());
    // Every value the schema lets through is one the worker's own check
    // (worker/src/git/mod.rs `validate_revision`, unit-tested there) accepts:
    // the schema pattern forbids whitespace, so the handler's trim cannot
    // change a value, and both refuse a leading '-' and the same characters.
    // The handler's refusals are therefore unreachable from a client; they
    // are the second layer if the schema is ever loosened.
}

#[test]
fn legitimate_revisions_are_accepted() {
    let Some(fx) = repo() else { return };
    fx.git(&["checkout", "--quiet", "-b", "feature"]);
    fx.git(&["checkout", "--quiet", "main"]);
    fx.git(&["tag", "v1.0", "HEAD~1"]);
    let mut m = start(&fx.root, Mode::Confined);
    for (rev, want) in [
        ("HEAD", vec![PACKAGE, SKELETON]),
        ("HEAD~1", vec![SKELETON]),
        ("main", vec![PACKAGE, SKELETON]),
        ("@{-1}", vec![PACKAGE, SKELETON]),
        ("@{0}", vec![PACKAGE, SKELETON]),
        ("main..HEAD", vec![]),
        ("HEAD~1..HEAD", vec![PACKAGE]),
        ("v1.0", vec![SKELETON]),
        ("HEAD^{commit}", vec![PACKAGE, SKELETON]),
        ("feature", vec![PACKAGE, SKELETON]),
    ] {
        let gl = ok(&mut m, "git_log", json!({"revision": rev}));
        assert_eq!(subjects(&gl), want, "{rev}: {gl}");
    }
    // `HEAD@{-1}` passes both of moat's checks and reaches git, which is
    // what refuses it (`@{-N}` takes no ref name).
    let (code, r) = refused(&mut m, "git_log", json!({"revision": "HEAD@{-1}"}));
    assert_eq!(code, "git_failed");
    let msg = r["structuredContent"]["message"].as_str().unwrap();
    assert!(msg.starts_with("git log failed: "), "{msg}");
}

#[test]
fn a_dash_path_after_double_dash_is_only_a_path() {
    let Some(fx) = repo() else { return };
    let target =
        std::env::temp_dir().join(format!("moat-should-never-exist-{}", std::process::id()));
    let _ = std::fs::remove_file(&target);
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for p in [
            format!("--output={}", target.display()),
            "-p".to_owned(),
            "--all".to_owned(),
        ] {
            let gl = ok(&mut m, "git_log", json!({"path": p}));
            assert_eq!(gl["commit_count"], 0, "{mode:?} {p}: {gl}");
            let gd = ok(&mut m, "git_diff", json!({"path": p}));
            assert_eq!(gd["files_changed"], 0, "{mode:?} {p}: {gd}");
        }
    }
    assert!(!target.exists(), "{} was created", target.display());
}

/// Plant a program named `name` outside the workspace that records it ran
/// (a file `name` in `sentinels/`) and passes stdin through. Returns its path.
fn hook(fx: &Fixture, name: &str) -> PathBuf {
    let dir = fx.outside.join("hooks");
    let sentinels = fx.outside.join("sentinels");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&sentinels).unwrap();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n: > '{}/{name}'\nexec /bin/cat\n",
            sentinels.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn sentinels(fx: &Fixture) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fx.outside.join("sentinels"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The repository's own configuration names a program for every hook git
/// has that `log` or `diff` could reach.
fn plant_hostile_config(fx: &Fixture) {
    let h = |n: &str| hook(fx, n).display().to_string();
    let hooks_dir = fx.outside.join("hooks-dir");
    std::fs::create_dir_all(&hooks_dir).unwrap();
    for name in [
        "post-index-change",
        "reference-transaction",
        "pre-commit",
        "post-checkout",
        "fsmonitor-watchman",
    ] {
        let p = hook(fx, &format!("hookspath-{name}"));
        std::fs::copy(&p, hooks_dir.join(name)).unwrap();
        std::fs::set_permissions(hooks_dir.join(name), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    // Hooks in the repository's own hooks directory too.
    for name in ["post-index-change", "reference-transaction"] {
        let p = fx.root.join(".git/hooks").join(name);
        std::fs::copy(hook(fx, &format!("dotgit-{name}")), &p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let worktree = fx.outside.join("worktree");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::write(worktree.join("README.md"), "OUTSIDE-WORKTREE-MARKER\n").unwrap();
    let config = format!(
        "[core]\n\
         \trepositoryformatversion = 0\n\
         \tfilemode = true\n\
         \tbare = false\n\
         \tpager = {pager}\n\
         \tfsmonitor = {fsmonitor}\n\
         \thooksPath = {hooks}\n\
         \tsshCommand = {ssh}\n\
         \teditor = {editor}\n\
         \taskPass = {askpass}\n\
         \tworktree = {worktree}\n\
         \tattributesFile = {attributes}\n\
         [pager]\n\
         \tlog = {pager_log}\n\
         \tdiff = {pager_diff}\n\
         [diff]\n\
         \texternal = {external}\n\
         [diff \"evil\"]\n\
         \ttextconv = {textconv}\n\
         \tcommand = {command}\n\
         [filter \"evil\"]\n\
         \tclean = {clean}\n\
         \tsmudge = {smudge}\n\
         [alias]\n\
         \tl = !{alias}\n\
         \tlg = !{alias}\n\
         [log]\n\
         \tshowSignature = true\n\
         [gpg]\n\
         \tprogram = {gpg}\n\
         [credential]\n\
         \thelper = !{credential}\n\
         [core]\n\
         \tgitProxy = {proxy}\n",
        pager = h("core-pager"),
        fsmonitor = h("core-fsmonitor"),
        hooks = hooks_dir.display(),
        ssh = h("core-sshCommand"),
        editor = h("core-editor"),
        askpass = h("core-askPass"),
        worktree = worktree.display(),
        attributes = fx.outside.join("attributes").display(),
        pager_log = h("pager-log"),
        pager_diff = h("pager-diff"),
        external = h("diff-external"),
        textconv = h("diff-textconv"),
        command = h("diff-driver-command"),
        clean = h("filter-clean"),
        smudge = h("filter-smudge"),
        alias = h("alias"),
        gpg = h("gpg-program"),
        credential = h("credential-helper"),
        proxy = h("core-gitProxy"),
    );
    std::fs::write(fx.root.join(".git/config"), config).unwrap();
    // Attributes assigning the textconv/diff driver, from the work tree and
    // from the (outside) attributes file.
    fx.file(".gitattributes", "* diff=evil\n");
    std::fs::write(fx.outside.join("attributes"), "* diff=evil\n").unwrap();
}

/// The last commit, re-made with a `gpgsig` header, so that
/// `log.showSignature` would run `gpg.program`.
fn sign_head(fx: &Fixture) {
    let raw = fx.git(&["cat-file", "commit", "HEAD"]);
    let (headers, message) = raw.split_once("\n\n").unwrap();
    let signed = format!(
        "{headers}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n =AAAA\n -----END PGP SIGNATURE-----\n\n{message}"
    );
    let file = fx.outside.join("signed-commit");
    std::fs::write(&file, signed).unwrap();
    let id = fx.git(&["hash-object", "-t", "commit", "-w", file.to_str().unwrap()]);
    fx.git(&["update-ref", "refs/heads/main", id.trim()]);
}

/// Run a plain git (not moat) in the workspace, ignoring the outcome.
fn plain_git(fx: &Fixture, args: &[&str]) {
    let _ = Command::new("git")
        .args(args)
        .current_dir(&fx.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &fx.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null())
        .output();
}

#[test]
fn a_hostile_git_config_runs_nothing_in_either_mode() {
    let Some(fx) = repo() else { return };
    sign_head(&fx);
    // A tracked file modified in the work tree (the diff must read it).
    fx.file("README.md", "# Demo\n\nEdited under a hostile config.\n");
    fx.file("src/demo/core.py", "TIMEOUT = 99\n");
    plant_hostile_config(&fx);
    let calls = [
        ("git_log", json!({})),
        ("git_log", json!({"limit": 1, "path": "README.md"})),
        ("git_log", json!({"revision": "HEAD~1..HEAD"})),
        ("git_diff", json!({})),
        ("git_diff", json!({"stat_only": true})),
        ("git_diff", json!({"revision": "HEAD~1"})),
        ("git_diff", json!({"revision": "HEAD~1", "stat_only": true})),
        ("git_diff", json!({"staged": true})),
        ("git_diff", json!({"path": "README.md", "context_lines": 0})),
    ];
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for (tool, args) in &calls {
            let r = m.call(tool, args.clone());
            assert_eq!(r["isError"], false, "{mode:?} {tool} {args}: {r}");
            assert!(
                !r.to_string().contains("OUTSIDE-WORKTREE-MARKER"),
                "{mode:?} {tool}: the outside work tree was read: {r}"
            );
            assert_eq!(
                sentinels(&fx),
                Vec::<String>::new(),
                "{mode:?} {tool} {args}"
            );
        }
        // The work tree is the workspace, not core.worktree.
        let gd = ok(&mut m, "git_diff", json!({"path": "README.md"}));
        assert_eq!(gd["files_changed"], 1, "{mode:?}: {gd}");
    }
    // Control: a plain git runs the planted programs.
    plain_git(&fx, &["log", "-1"]);
    plain_git(&fx, &["diff"]);
    plain_git(&fx, &["diff", "--no-ext-diff"]);
    plain_git(&fx, &["l"]);
    // diff.external, with no attributes naming a driver.
    std::fs::remove_file(fx.root.join(".gitattributes")).unwrap();
    plain_git(&fx, &["-c", "core.attributesFile=/dev/null", "diff"]);
    let ran = sentinels(&fx);
    for want in [
        "gpg-program",
        "diff-external",
        "diff-driver-command",
        "diff-textconv",
        "core-fsmonitor",
        "alias",
    ] {
        assert!(
            ran.contains(&want.to_owned()),
            "control: plain git did not run {want} (ran {ran:?}); the fixture proves nothing"
        );
    }
}

#[test]
fn a_clean_filter_in_gitattributes_is_not_run() {
    let Some(fx) = repo() else { return };
    let clean = hook(&fx, "filter-clean");
    let process = hook(&fx, "filter-process");
    let mut config = std::fs::read_to_string(fx.root.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[filter \"evil\"]\n\tclean = {}\n\tsmudge = {}\n[filter \"evilproc\"]\n\tprocess = {}\n",
        clean.display(),
        clean.display(),
        process.display()
    ));
    std::fs::write(fx.root.join(".git/config"), config).unwrap();
    fx.file(".gitattributes", "*.md filter=evil\n*.py filter=evilproc\n");
    fx.file("README.md", "# Demo\n\nEdited under a hostile filter.\n");
    fx.file("src/demo/core.py", "TIMEOUT = 99\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({}),
            json!({"stat_only": true}),
            json!({"revision": "HEAD"}),
            json!({"revision": "HEAD~1", "stat_only": true}),
        ] {
            let r = m.call("git_diff", args.clone());
            assert_eq!(r["isError"], false, "{mode:?} {args}: {r}");
            assert_eq!(
                sentinels(&fx),
                Vec::<String>::new(),
                "{mode:?} git_diff {args}"
            );
        }
    }
    plain_git(&fx, &["diff"]);
    let ran = sentinels(&fx);
    assert!(
        ran.contains(&"filter-clean".to_owned()),
        "control: plain git did not run the clean filter ({ran:?})"
    );
}

#[test]
fn a_git_file_pointing_outside_is_not_followed() {
    if !have_git() {
        return;
    }
    // A repository outside the workspace whose only commit is a marker.
    let fx = Fixture::demo_project();
    let outside_repo = fx.outside.join("elsewhere");
    std::fs::create_dir_all(&outside_repo).unwrap();
    let run = |dir: &Path, args: &[&str]| {
        super::util::git(dir, "Outsider", args);
    };
    run(&outside_repo, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(outside_repo.join("README.md"), "OUTSIDE-REPO-CONTENT\n").unwrap();
    run(&outside_repo, &["add", "README.md"]);
    run(
        &outside_repo,
        &["commit", "--quiet", "-m", "OUTSIDE-REPO-MARKER"],
    );
    fx.file(
        ".git",
        format!("gitdir: {}\n", outside_repo.join(".git").display()),
    );
    assert_refused_without(&fx, "OUTSIDE-REPO");
}

/// In both modes, `git_log` and `git_diff` are refused as an
/// `unsafe_repository` and nothing in the answers contains `marker`.
fn assert_refused_without(fx: &Fixture, marker: &str) {
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for (tool, args) in [
            ("git_log", json!({})),
            ("git_diff", json!({})),
            ("git_diff", json!({"revision": "HEAD"})),
            (
                "git_diff",
                json!({"revision": "HEAD~1..HEAD", "stat_only": true}),
            ),
        ] {
            let r = m.call(tool, args.clone());
            assert!(
                !r.to_string().contains(marker),
                "{mode:?} {tool} {args}: {r}"
            );
            assert_eq!(r["isError"], true, "{mode:?} {tool} {args}: {r}");
            assert_eq!(
                r["structuredContent"]["error"], "unsafe_repository",
                "{mode:?} {tool}: {r}"
            );
        }
    }
}

#[test]
fn alternates_outside_the_workspace_are_not_read() {
    let Some(fx) = repo() else { return };
    // Move every object out of the workspace and point alternates at it.
    let store = fx.outside.join("objects");
    std::fs::rename(fx.root.join(".git/objects"), &store).unwrap();
    std::fs::create_dir_all(fx.root.join(".git/objects/info")).unwrap();
    std::fs::create_dir_all(fx.root.join(".git/objects/pack")).unwrap();
    std::fs::write(
        fx.root.join(".git/objects/info/alternates"),
        format!("{}\n", store.display()),
    )
    .unwrap();
    assert_refused_without(&fx, PACKAGE);
}

#[test]
fn a_commondir_outside_the_workspace_is_not_read() {
    let Some(fx) = repo() else { return };
    // The workspace's .git keeps HEAD; refs and objects come from a common
    // directory elsewhere (as in a linked work tree).
    let common = fx.outside.join("common.git");
    std::fs::rename(fx.root.join(".git"), &common).unwrap();
    std::fs::create_dir_all(fx.root.join(".git")).unwrap();
    std::fs::copy(common.join("HEAD"), fx.root.join(".git/HEAD")).unwrap();
    std::fs::write(
        fx.root.join(".git/commondir"),
        format!("{}\n", common.display()),
    )
    .unwrap();
    // Control: a plain git follows it.
    let out = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(&fx.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(PACKAGE),
        "control: plain git did not use the commondir: {out:?}"
    );
    assert_refused_without(&fx, PACKAGE);
}

#[test]
fn a_dirty_submodule_runs_nothing() {
    let Some(fx) = repo() else { return };
    // An embedded repository with its own filter driver and attributes,
    // committed as a gitlink, then made dirty.
    let sub = fx.root.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let sub_fx = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&sub)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &sub)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Fixture")
            .env("GIT_AUTHOR_EMAIL", "f@example.invalid")
            .env("GIT_COMMITTER_NAME", "Fixture")
            .env("GIT_COMMITTER_EMAIL", "f@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    sub_fx(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(sub.join("lib.md"), "sub\n").unwrap();
    sub_fx(&["add", "lib.md"]);
    sub_fx(&["commit", "--quiet", "-m", "sub"]);
    fx.git(&["add", "sub"]);
    fx.git(&["commit", "--quiet", "-m", "Add a submodule"]);
    let clean = hook(&fx, "sub-filter-clean");
    let mut config = std::fs::read_to_string(sub.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[filter \"subevil\"]\n\tclean = {}\n[core]\n\tfsmonitor = {}\n",
        clean.display(),
        hook(&fx, "sub-fsmonitor").display()
    ));
    std::fs::write(sub.join(".git/config"), config).unwrap();
    std::fs::write(sub.join(".gitattributes"), "* filter=subevil\n").unwrap();
    // Same size: only the content (through the filter) tells it changed.
    std::fs::write(sub.join("lib.md"), "SUB\n").unwrap();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for args in [
            json!({}),
            json!({"stat_only": true}),
            json!({"revision": "HEAD"}),
        ] {
            let r = m.call("git_diff", args.clone());
            assert_eq!(r["isError"], false, "{mode:?} {args}: {r}");
            assert_eq!(
                sentinels(&fx),
                Vec::<String>::new(),
                "{mode:?} git_diff {args}"
            );
        }
    }
    plain_git(&fx, &["diff"]);
    let ran = sentinels(&fx);
    assert_eq!(
        ran,
        ["sub-filter-clean", "sub-fsmonitor"],
        "control: plain git did not run the submodule's programs"
    );
}

#[test]
fn git_cannot_reach_the_network() {
    let Some(fx) = repo() else { return };
    // A promisor (partial-clone) repository missing a blob: reading it makes
    // a plain git fetch it from the remote, here a listener of ours.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let blob = fx.git(&["rev-parse", "HEAD:src/demo/core.py"]);
    let blob = blob.trim();
    let loose = fx
        .root
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    std::fs::remove_file(&loose).unwrap();
    let mut config = std::fs::read_to_string(fx.root.join(".git/config")).unwrap();
    config = config.replace("repositoryformatversion = 0", "repositoryformatversion = 1");
    config.push_str(&format!(
        "[extensions]\n\tpartialClone = origin\n[remote \"origin\"]\n\turl = http://127.0.0.1:{port}/repo.git\n\tpromisor = true\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    ));
    std::fs::write(fx.root.join(".git/config"), config).unwrap();
    let accepted = |l: &TcpListener| {
        let mut n = 0;
        while l.accept().is_ok() {
            n += 1;
        }
        n
    };
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = m.call(
            "git_diff",
            json!({"revision": "HEAD~1..HEAD", "path": "src/demo/core.py"}),
        );
        assert_eq!(r["isError"], true, "{mode:?}: {r}");
        assert_eq!(
            r["structuredContent"]["error"], "git_failed",
            "{mode:?}: {r}"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(accepted(&listener), 0, "{mode:?}: git connected out");
    }
    // Control: a plain git does try to fetch the blob (each connection is
    // closed at once, so it fails fast).
    let mut child = Command::new("git")
        .args(["diff", "HEAD~1..HEAD", "--", "src/demo/core.py"])
        .current_dir(&fx.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &fx.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(10);
    let mut connections = 0;
    while std::time::Instant::now() < until {
        connections += accepted(&listener);
        if connections > 0 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        connections > 0,
        "control: plain git did not connect; the fixture proves nothing"
    );
}

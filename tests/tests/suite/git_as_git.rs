//! git as git: the git tools agree with a plain `git` on what changed.
//!
//! * A differential check on a generated history (renames with and without
//!   edits, renames below the similarity threshold, copies, deletions, mode
//!   and type changes, binary files, CRLF text, a merge): `git_show`'s and
//!   `git_diff`'s totals and stat names equal `git show --numstat` and
//!   `git diff --numstat` on every non-merge commit and on ranges.
//! * Mode changes (`chmod +x`) and type changes in `git_status` and
//!   `git_diff`, staged and not.
//! * A staged rename with edits is one renamed entry in `git_status` and in
//!   `git_diff --staged`, as git shows it.
//!
//! Every server runs with no git on its `PATH`; the fixtures and the
//! reference answers come from the test host's git.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use moat_tests::{Fixture, Mode, git_as, have_git};
use serde_json::{Value, json};

use super::git::start;
use super::git_attacks::plain_git;
use super::tools_util::{ok, ok_result};

/// Every text item of a result's content, joined.
fn text(r: &Value, _: usize) -> String {
    r["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A small deterministic generator (xorshift), so the history is the same on
/// every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn lines(rng: &mut Rng, n: usize) -> Vec<String> {
    const WORDS: [&str; 12] = [
        "alpha", "beta", "gamma", "delta", "fn", "let", "return", "match", "{", "}", "value",
        "self",
    ];
    (0..n)
        .map(|_| {
            let k = 1 + rng.below(6) as usize;
            let mut l: Vec<String> = (0..k)
                .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize].to_owned())
                .collect();
            l.push(rng.below(1000).to_string());
            l.join(" ")
        })
        .collect()
}

fn write_lines(root: &Path, rel: &str, l: &[String], crlf: bool) {
    let end = if crlf { "\r\n" } else { "\n" };
    let mut s = l.join(end);
    s.push_str(end);
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

fn read_lines(root: &Path, rel: &str) -> Vec<String> {
    std::fs::read_to_string(root.join(rel))
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches('\r').to_owned())
        .collect()
}

/// Edit `l` in place: change, insert or delete about `share` of its lines.
fn edit(rng: &mut Rng, l: &mut Vec<String>, share: u64) {
    let n = (l.len() as u64 * share / 100).max(1);
    for _ in 0..n {
        let at = rng.below(l.len() as u64 + 1) as usize;
        match rng.below(3) {
            0 if at < l.len() => l[at] = lines(rng, 1).remove(0),
            1 if at < l.len() && l.len() > 2 => {
                l.remove(at);
            }
            _ => l.insert(at.min(l.len()), lines(rng, 1).remove(0)),
        }
    }
}

/// Build a history of `commits` generated commits (and one merge) in
/// `fx.root`.
fn generated_history(fx: &Fixture, commits: usize) {
    let root = &fx.root;
    let git = |args: &[&str], n: usize| {
        git_as(
            root,
            "Fixture",
            &format!("2026-01-02T03:{:02}:{:02}Z", n / 60, n % 60),
            args,
        )
    };
    git(&["init", "--quiet", "--initial-branch=main"], 0);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut files: Vec<String> = Vec::new();
    for i in 0..8 {
        let rel = format!("{}/file{i}.txt", ["src", "lib", "docs"][i % 3]);
        let n = 10 + rng.below(60) as usize;
        write_lines(root, &rel, &lines(&mut rng, n), i == 5);
        files.push(rel);
    }
    std::fs::write(root.join("blob.bin"), [0u8, 1, 2, 3, 0, 9]).unwrap();
    git(&["add", "-A"], 1);
    git(&["commit", "--quiet", "-m", "start"], 1);
    let mut fresh = 100;
    for c in 0..commits {
        let ops = 1 + rng.below(3);
        for _ in 0..ops {
            if files.len() < 3 {
                let rel = format!("new/file{fresh}.txt");
                fresh += 1;
                let n = 5 + rng.below(30) as usize;
                write_lines(root, &rel, &lines(&mut rng, n), false);
                files.push(rel);
                continue;
            }
            let k = rng.below(files.len() as u64) as usize;
            let rel = files[k].clone();
            let crlf = std::fs::read(root.join(&rel))
                .map(|b| b.windows(2).any(|w| w == b"\r\n"))
                .unwrap_or(false);
            match rng.below(10) {
                // Edit in place.
                0 | 1 => {
                    let mut l = read_lines(root, &rel);
                    let share = 10 + rng.below(30);
                    edit(&mut rng, &mut l, share);
                    write_lines(root, &rel, &l, crlf);
                }
                // Rename, with small edits, large edits, or none.
                2..=4 => {
                    let to = format!("{}/moved{fresh}.txt", ["src", "lib", "other/deep"][k % 3]);
                    fresh += 1;
                    std::fs::create_dir_all(root.join(&to).parent().unwrap()).unwrap();
                    git(&["mv", &rel, &to], c + 2);
                    let share = [0, 5, 20, 40, 90][rng.below(5) as usize];
                    if share > 0 {
                        let mut l = read_lines(root, &to);
                        edit(&mut rng, &mut l, share);
                        write_lines(root, &to, &l, crlf);
                    }
                    files[k] = to;
                }
                // Copy with an edit (a new file, as git's default shows it).
                5 => {
                    let to = format!("copies/copy{fresh}.txt");
                    fresh += 1;
                    let mut l = read_lines(root, &rel);
                    edit(&mut rng, &mut l, 10);
                    write_lines(root, &to, &l, false);
                    files.push(to);
                }
                // Delete.
                6 => {
                    git(&["rm", "-f", "--quiet", &rel], c + 2);
                    files.remove(k);
                }
                // Mode change, sometimes with an edit.
                7 => {
                    let p = root.join(&rel);
                    let mode = std::fs::metadata(&p).unwrap().permissions().mode();
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode ^ 0o111))
                        .unwrap();
                    if rng.below(2) == 0 {
                        let mut l = read_lines(root, &rel);
                        edit(&mut rng, &mut l, 10);
                        write_lines(root, &rel, &l, crlf);
                    }
                }
                // Binary change.
                8 => {
                    let bytes: Vec<u8> = (0..(20 + rng.below(200)))
                        .map(|_| rng.next() as u8)
                        .collect();
                    let mut b = vec![0u8];
                    b.extend(bytes);
                    std::fs::write(root.join("blob.bin"), b).unwrap();
                }
                // A file becomes a symbolic link.
                _ => {
                    std::fs::remove_file(root.join(&rel)).unwrap();
                    std::os::unix::fs::symlink("target/elsewhere", root.join(&rel)).unwrap();
                    files.remove(k);
                }
            }
        }
        git(&["add", "-A"], c + 2);
        git(
            &[
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                &format!("change {c}"),
            ],
            c + 2,
        );
    }
    // A merge, which the comparison skips (git shows merges differently).
    let n = commits + 3;
    git(&["checkout", "--quiet", "-b", "side", "HEAD~2"], n);
    write_lines(root, "side.txt", &lines(&mut rng, 5), false);
    git(&["add", "-A"], n);
    git(&["commit", "--quiet", "-m", "side"], n);
    git(&["checkout", "--quiet", "main"], n);
    git(&["merge", "--quiet", "--no-edit", "side"], n + 1);
}

/// git's `--numstat` of `args`: (files, insertions, deletions, names).
fn numstat(root: &Path, args: &[&str]) -> (u64, u64, u64, Vec<String>) {
    let (ok, out) = plain_git(root, args);
    assert!(ok, "{out}");
    let (mut files, mut ins, mut del, mut names) = (0, 0, 0, Vec::new());
    for line in out.lines().filter(|l| !l.is_empty()) {
        let mut parts = line.splitn(3, '\t');
        let (a, d, name) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        files += 1;
        ins += a.parse::<u64>().unwrap_or(0);
        del += d.parse::<u64>().unwrap_or(0);
        names.push(name.to_owned());
    }
    names.sort();
    (files, ins, del, names)
}

/// The names of the rows of a `--stat` block in an answer's text.
fn stat_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with(' ') && l.contains(" | "))
        .map(|l| l.rsplit_once(" | ").unwrap().0.trim().to_owned())
        .collect();
    names.sort();
    names
}

/// Every non-merge commit of `root`, oldest first.
fn commits(root: &Path) -> Vec<String> {
    let (ok, out) = plain_git(root, &["rev-list", "--no-merges", "--reverse", "HEAD"]);
    assert!(ok, "{out}");
    out.lines().map(str::to_owned).collect()
}

#[test]
fn git_show_and_git_diff_totals_equal_gits_on_every_commit() {
    assert!(have_git());
    let fx = Fixture::new();
    generated_history(&fx, 40);
    let mut m = start(&fx.root, Mode::Confined);
    let list = commits(&fx.root);
    assert!(list.len() > 40, "{}", list.len());
    let mut renamed = 0;
    for id in &list {
        let want = numstat(&fx.root, &["show", "--numstat", "--format=", id]);
        renamed += want.3.iter().filter(|n| n.contains(" => ")).count();
        let r = ok_result(
            &mut m,
            "git_show",
            json!({"revision": id, "stat_only": true}),
        );
        let got = &r["structuredContent"];
        let have = (
            got["files_changed"].as_u64().unwrap(),
            got["lines_added"].as_u64().unwrap(),
            got["lines_removed"].as_u64().unwrap(),
            stat_names(&text(&r, 0)),
        );
        assert_eq!(have, want, "git_show {id}: {}", text(&r, 0));
    }
    assert!(renamed >= 5, "the history has renames: {renamed}");
    // Ranges, and the full diff's counts equal the stat's.
    let n = list.len();
    for (from, to) in [(0, n - 1), (n / 3, n / 2), (n - 5, n - 1)] {
        let range = format!("{}..{}", list[from], list[to]);
        let want = numstat(&fx.root, &["diff", "--numstat", &range]);
        let r = ok_result(
            &mut m,
            "git_diff",
            json!({"revision": range, "stat_only": true}),
        );
        let got = &r["structuredContent"];
        let have = (
            got["files_changed"].as_u64().unwrap(),
            got["lines_added"].as_u64().unwrap(),
            got["lines_removed"].as_u64().unwrap(),
            stat_names(&text(&r, 0)),
        );
        assert_eq!(have, want, "git_diff {range}: {}", text(&r, 0));
        let full = ok(&mut m, "git_diff", json!({"revision": range}));
        assert_eq!(
            (full["lines_added"].as_u64(), full["lines_removed"].as_u64()),
            (Some(want.1), Some(want.2)),
            "{range}"
        );
    }
}

/// git's porcelain status as (list, letter, path) triples, renames as
/// `old -> new`.
fn git_status(root: &Path) -> Vec<(String, String, String)> {
    let (ok, out) = plain_git(root, &["status", "--porcelain=v1", "--untracked-files=no"]);
    assert!(ok, "{out}");
    let mut v = Vec::new();
    for line in out.lines() {
        let (xy, path) = line.split_at(3);
        let (x, y) = (&xy[0..1], &xy[1..2]);
        if x != " " {
            v.push(("staged".to_owned(), x.to_owned(), path.to_owned()));
        }
        if y != " " {
            v.push(("unstaged".to_owned(), y.to_owned(), path.to_owned()));
        }
    }
    v.sort();
    v
}

fn moat_status(gs: &Value) -> Vec<(String, String, String)> {
    let mut v = Vec::new();
    for list in ["staged", "unstaged"] {
        for e in gs[list].as_array().unwrap() {
            let path = match e["from"].as_str() {
                Some(from) => format!("{from} -> {}", e["path"].as_str().unwrap()),
                None => e["path"].as_str().unwrap().to_owned(),
            };
            v.push((
                list.to_owned(),
                e["status"].as_str().unwrap().to_owned(),
                path,
            ));
        }
    }
    v.sort();
    v
}

fn small_repo() -> Fixture {
    assert!(have_git());
    let fx = Fixture::new();
    let body: String = (1..=40)
        .map(|i| format!("line {i} of the file\n"))
        .collect();
    fx.file("run.sh", "echo hi\n");
    fx.file("a.txt", &body);
    fx.file("keep.txt", "keep\n");
    fx.file("link.txt", "becomes a link\n");
    fx.git(&["init", "--quiet", "--initial-branch=main"]);
    fx.git(&["add", "-A"]);
    fx.git(&["commit", "--quiet", "-m", "start"]);
    fx
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn mode_and_type_changes_show_as_git_shows_them() {
    let fx = small_repo();
    // Unstaged: an executable bit, a file that became a link.
    chmod(&fx.root.join("run.sh"), 0o755);
    std::fs::remove_file(fx.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("keep.txt", fx.root.join("link.txt")).unwrap();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let gs = ok(&mut m, "git_status", json!({"untracked": false}));
        assert_eq!(moat_status(&gs), git_status(&fx.root), "{mode:?}: {gs}");
        let r = ok_result(&mut m, "git_diff", json!({}));
        let t = text(&r, 0);
        assert!(
            t.contains("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"),
            "{mode:?}: {t}"
        );
        let want = numstat(&fx.root, &["diff", "--numstat"]);
        let d = &r["structuredContent"];
        assert_eq!(
            (
                d["files_changed"].as_u64().unwrap(),
                d["lines_added"].as_u64().unwrap(),
                d["lines_removed"].as_u64().unwrap()
            ),
            (want.0, want.1, want.2),
            "{mode:?}: {t}"
        );
    }
    // Staged: the same changes committed to the index.
    fx.git(&["add", "-A"]);
    let (_, plain) = plain_git(&fx.root, &["diff", "--cached"]);
    let mut m = start(&fx.root, Mode::Confined);
    let gs = ok(&mut m, "git_status", json!({"untracked": false}));
    assert_eq!(moat_status(&gs), git_status(&fx.root), "{gs}");
    let r = ok_result(&mut m, "git_diff", json!({"staged": true}));
    let t = text(&r, 0);
    // The type change is a deletion and a creation, as git prints it.
    assert!(plain.contains("deleted file mode 100644") && plain.contains("new file mode 120000"));
    assert!(
        t.contains("diff --git a/link.txt b/link.txt\ndeleted file mode 100644\n")
            && t.contains("diff --git a/link.txt b/link.txt\nnew file mode 120000\n"),
        "{t}"
    );
    assert!(t.contains("old mode 100644\nnew mode 100755\n"), "{t}");
    // core.fileMode = false: the executable bit is not a change (git's rule).
    fx.git(&["reset", "--quiet"]);
    fx.git(&["config", "core.fileMode", "false"]);
    let gs = ok(&mut m, "git_status", json!({"untracked": false}));
    assert_eq!(moat_status(&gs), git_status(&fx.root), "{gs}");
}

#[test]
fn a_staged_rename_with_edits_is_one_entry_in_every_tool() {
    let fx = small_repo();
    fx.git(&["mv", "a.txt", "b.txt"]);
    let edited = std::fs::read_to_string(fx.root.join("b.txt"))
        .unwrap()
        .replace("line 7 of", "line seven of");
    std::fs::write(fx.root.join("b.txt"), edited).unwrap();
    fx.git(&["add", "-A"]);
    let mut m = start(&fx.root, Mode::Confined);
    let gs = ok(&mut m, "git_status", json!({"untracked": false}));
    assert_eq!(moat_status(&gs), git_status(&fx.root), "{gs}");
    assert_eq!(gs["staged"][0]["status"], "R", "{gs}");
    let r = ok_result(
        &mut m,
        "git_diff",
        json!({"staged": true, "stat_only": true}),
    );
    let want = numstat(&fx.root, &["diff", "--cached", "--numstat"]);
    let d = &r["structuredContent"];
    assert_eq!(
        (
            d["files_changed"].as_u64().unwrap(),
            d["lines_added"].as_u64().unwrap(),
            d["lines_removed"].as_u64().unwrap(),
            stat_names(&text(&r, 0))
        ),
        want
    );
    let r = ok_result(&mut m, "git_diff", json!({"staged": true}));
    let (_, plain) = plain_git(&fx.root, &["diff", "--cached"]);
    let header = |t: &str| -> String {
        t.lines()
            .filter(|l| l.starts_with("similarity") || l.starts_with("rename "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(header(&text(&r, 0)), header(&plain), "{}", text(&r, 0));
    assert!(header(&plain).contains("similarity index 97%"), "{plain}");
    // Committed, git_show agrees too.
    fx.git(&["commit", "--quiet", "-m", "move"]);
    let r = ok_result(&mut m, "git_show", json!({"stat_only": true}));
    assert_eq!(stat_names(&text(&r, 0)), vec!["a.txt => b.txt".to_owned()]);
}

/// A repository with packed history at `fx.root`.
fn packed_repo() -> Fixture {
    let fx = small_repo();
    fx.file("a.txt", "changed\n");
    fx.git(&["commit", "--quiet", "-am", "second"]);
    fx.git(&["gc", "--quiet"]);
    fx
}

/// Every git tool answers on `root`.
fn every_git_tool_answers(root: &Path, what: &str) {
    let mut m = start(root, Mode::Confined);
    for (tool, args) in [
        ("git_log", json!({})),
        ("git_show", json!({})),
        ("git_diff", json!({"revision": "HEAD~1..HEAD"})),
        ("git_diff", json!({})),
        ("git_status", json!({})),
        ("git_blame", json!({"path": "keep.txt"})),
    ] {
        ok(&mut m, tool, args.clone());
    }
    let r = ok(&mut m, "git_log", json!({}));
    assert_eq!(r["commits"].as_array().unwrap().len(), 2, "{what}: {r}");
}

/// `moat doctor`'s `repository` line for `root`.
fn doctor_repository(root: &Path) -> String {
    let run = moat_tests::run_moat(["doctor", "--workspace", root.to_str().unwrap()], &[]);
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix("repository"))
        .map(|l| l.trim().to_owned())
        .unwrap_or_else(|| panic!("no repository line: {run}"))
}

#[test]
fn a_local_clone_a_worktree_and_the_original_are_readable() {
    let fx = packed_repo();
    // `git clone DIR NEW` hard-links every object file into the clone: the
    // original's packs now have two links as well.
    fx.git(&["clone", "--quiet", ".", "clone"]);
    fx.git(&["worktree", "add", "--quiet", "wt"]);
    let pack = std::fs::read_dir(fx.root.join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "pack"))
        .unwrap();
    assert!(
        std::os::unix::fs::MetadataExt::nlink(&std::fs::metadata(&pack).unwrap()) > 1,
        "the fixture hard-links the packs"
    );
    every_git_tool_answers(&fx.root, "the original");
    every_git_tool_answers(&fx.root.join("clone"), "the clone");
    assert_eq!(doctor_repository(&fx.root), "readable by the git tools");
    // The linked worktree served alone: its git directory is outside it;
    // the refusal and doctor say what to do.
    let mut m = start(&fx.root.join("wt"), Mode::Confined);
    let (code, r) = super::tools_util::refused(&mut m, "git_log", json!({}));
    assert_eq!(code, "unsafe_repository", "{r}");
    assert!(
        r.to_string()
            .contains("serve the directory that holds the main repository"),
        "{r}"
    );
    assert!(doctor_repository(&fx.root.join("wt")).contains("serve the directory"));
}

#[test]
fn hard_linked_control_files_stay_refused_and_linked_store_files_leak_nothing() {
    let outside = Fixture::new();
    let marker = "OUTSIDE-SECRET-7f3a";
    let secret = outside.file("secret.txt", format!("{marker}\n"));
    // A control file that is another file's second name: refused, with the
    // remedy.
    let fx = packed_repo();
    std::fs::remove_file(fx.root.join(".git/config")).unwrap();
    std::fs::copy(&secret, outside.root.join("config")).unwrap();
    std::fs::write(
        outside.root.join("config"),
        "[core]\n\trepositoryformatversion = 0\n",
    )
    .unwrap();
    std::fs::hard_link(outside.root.join("config"), fx.root.join(".git/config")).unwrap();
    let mut m = start(&fx.root, Mode::Confined);
    let (code, r) = super::tools_util::refused(&mut m, "git_log", json!({}));
    assert_eq!(code, "unsafe_repository", "{r}");
    assert!(r.to_string().contains("git clone --no-hardlinks"), "{r}");
    assert!(doctor_repository(&fx.root).contains("git clone --no-hardlinks"));
    // An object-store file replaced by a second name of an outside file:
    // it parses as no pack, and nothing of it is ever shown.
    let fx = packed_repo();
    for e in std::fs::read_dir(fx.root.join(".git/objects/pack")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|e| e == "pack") {
            std::fs::remove_file(&p).unwrap();
            std::fs::hard_link(&secret, &p).unwrap();
        }
    }
    let mut m = start(&fx.root, Mode::Confined);
    for (tool, args) in [
        ("git_log", json!({})),
        ("git_show", json!({})),
        ("git_blame", json!({"path": "keep.txt"})),
    ] {
        let r = m.call(tool, args);
        assert!(!r.to_string().contains(marker), "{tool}: {r}");
    }
}

/// The fenced body of an answer's last text item (what the worker sent).
fn fenced_body(r: &Value) -> String {
    let t = r["content"].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let open = t.find('\n').unwrap() + 1;
    let close = t.rfind("\n</untrusted-").unwrap();
    t[open..close].to_owned()
}

#[test]
fn git_diff_pages_always_move_on_and_concatenate_to_the_whole() {
    let fx = small_repo();
    let mut small = super::tools_util::start_with(
        &fx.root,
        Mode::Confined,
        &[
            ("PATH", super::git::NO_GIT_PATH),
            ("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000"),
        ],
    );
    let mut whole = start(&fx.root, Mode::Confined);
    let mut rng = Rng(0x51_7cc1_b727_220a);
    for case in 0..6u64 {
        // Generated changes: many small files, one file larger than a page,
        // and a single line (with multi-byte characters) longer than a page.
        for i in 0..(1 + rng.below(6)) {
            let n = 1 + rng.below(120) as usize;
            write_lines(
                &fx.root,
                &format!("gen/c{case}_{i}.txt"),
                &lines(&mut rng, n),
                false,
            );
        }
        let long: String = (0..(3000 + rng.below(9000)))
            .map(|k| if k % 7 == 0 { 'é' } else { 'x' })
            .collect();
        std::fs::write(
            fx.root.join(format!("gen/long{case}.txt")),
            format!("{long}\n"),
        )
        .unwrap();
        fx.git(&["add", "-A"]);
        let args = json!({"staged": true});
        let want = fenced_body(&ok_result(&mut whole, "git_diff", args.clone()));
        let mut got = String::new();
        let mut next: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut a = args.clone();
            if let Some(c) = &next {
                a["cursor"] = json!(c);
            }
            let r = ok_result(&mut small, "git_diff", a);
            let body = fenced_body(&r);
            // No page exceeds the budget (its continuation line is in the
            // summary, outside the fenced text).
            assert!(
                body.len() <= 4000,
                "case {case} page {pages}: {} bytes",
                body.len()
            );
            assert!(!body.is_empty(), "case {case} page {pages} moved on");
            got.push_str(&body);
            pages += 1;
            assert!(pages < 500, "case {case}: no end");
            match r["structuredContent"]["next_cursor"].as_str() {
                Some(c) => {
                    assert!(text(&r, 0).contains(&format!("cursor=\"{c}\"")), "{r}");
                    next = Some(c.to_owned());
                }
                None => break,
            }
        }
        assert!(pages >= 2, "case {case}: paged ({pages})");
        assert_eq!(
            got, want,
            "case {case}: the pages concatenate to the whole diff"
        );
        fx.git(&["commit", "--quiet", "-m", &format!("case {case}")]);
    }
}

#[test]
fn git_blame_cuts_at_the_answer_budget_and_continues() {
    let fx = small_repo();
    let doc: Vec<String> = (1..=148)
        .map(|i| {
            format!(
                "Line {i}: {}",
                "prose of a long markdown paragraph ".repeat(8)
            )
        })
        .collect();
    write_lines(&fx.root, "doc.md", &doc, false);
    fx.git(&["add", "-A"]);
    fx.git(&["commit", "--quiet", "-m", "doc"]);
    let mut m = start(&fx.root, Mode::Confined);
    let mut args = json!({"path": "doc.md"});
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..20 {
        let r = ok_result(&mut m, "git_blame", args.clone());
        let t = text(&r, 0);
        let s = &r["structuredContent"];
        assert!(t.len() <= 40_000 + 400, "{} characters", t.len());
        for g in s["groups"].as_array().unwrap() {
            for l in g["lines"].as_array().unwrap() {
                seen.push(l.as_str().unwrap().to_owned());
            }
        }
        if s["truncated"] == json!(false) {
            break;
        }
        args = super::git_show::continuation(&r, "git_blame");
    }
    assert_eq!(seen, doc, "the pages hold every line once, in order");
}

//! The noninterference property on generated workspaces: pairs of
//! workspaces that differ only in what the model must not see get the same
//! answer to every request of a broad corpus, and the same work is done for
//! each.
//!
//! A seed generates one pair: files in a few directories whose contents and
//! names carry credential-shaped values (a different value on each side, of
//! the same shape and length), denied files and a denied directory whose
//! contents (and number of files) differ freely between the sides, and a
//! git history over them: commits whose messages carry values, denied files
//! that change in one side's commits and not the other's, a branch named
//! after a value, a tag, a stash, a staged change, a work-tree edit and an
//! untracked file.
//!
//! The corpus covers every tool, `resources/*` and completion: each file
//! read, outlined, blamed and shown at a revision; every listing; searches,
//! name filters, globs, identifiers and revisions built from prefixes of
//! *both* sides' values (what an attacker who guessed part of one would
//! try); commits and objects named by abbreviated id (trees, blobs of
//! denied and of redacted files, stashes, the index); cursors of the pages
//! of a cut answer. Answers are compared after object ids are replaced by
//! labels (`moat_tests::pair::canonical`); the audit trail's `work` of each
//! call is compared as it is.
//!
//! `MOAT_DIFFERENTIAL_SEEDS` (comma-separated numbers) chooses which pairs
//! are generated; CI runs the default ones.

use std::path::Path;
use std::time::{Duration, SystemTime};

use moat_tests::pair::{Pair, git};
use moat_tests::{Fixture, Mode, Options};
use serde_json::{Value, json};

use super::git::NO_GIT_PATH;

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn text(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.below(alphabet.len())]))
            .collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
const UPPER: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ234567";

/// A credential shape redaction replaces whatever its body: a prefix and a
/// random body of fixed length. Built by concatenation so secret scanners
/// reading this repository stay quiet.
fn secret(rng: &mut Rng, shape: usize) -> String {
    match shape % 4 {
        0 => ["gh", "p_", &rng.text(ALNUM, 36)].concat(),
        1 => ["sk_", "live_", &rng.text(ALNUM, 24)].concat(),
        2 => ["AK", "IA", &rng.text(UPPER, 16)].concat(),
        _ => ["glp", "at-", &rng.text(ALNUM, 20)].concat(),
    }
}

const WORDS: &[&str] = &[
    "alpha", "render", "client", "parse", "token", "config", "value", "build", "index", "cache",
    "report", "handle", "session",
];
const DIRS: &[&str] = &["src", "lib", "docs", "keys", "config"];

/// What one seed generates, before it is written as two workspaces.
struct Spec {
    /// Per slot, side a's and side b's value.
    values: Vec<(String, String)>,
    /// (path, content); `{N}` stands for slot N's value.
    files: Vec<(String, String)>,
    /// Commits after the first: (files changed with their new contents,
    /// message); `{N}` as above.
    commits: Vec<(Vec<(String, String)>, String)>,
    /// Slot the branch is named after.
    branch: usize,
    seed: u64,
}

fn code_line(rng: &mut Rng, slots: usize) -> String {
    let w = rng.pick(WORDS);
    let v = rng.pick(WORDS);
    match rng.below(8) {
        0 => format!("def {w}_{v}(x):\n    return x"),
        1 => format!("{w}_{v} = \"{{{}}}\"", rng.below(slots)),
        2 => format!("# {w} the {v} before use"),
        3 => format!("class {}{}:\n    pass", w.to_uppercase(), rng.below(9)),
        4 => format!("password = \"{{{}}}\"", rng.below(slots)),
        _ => format!("{w} = {v}({})", rng.below(100)),
    }
}

impl Spec {
    fn generate(seed: u64) -> Spec {
        let mut rng = Rng(seed);
        let slots = 3 + rng.below(3);
        let values = (0..slots)
            .map(|i| {
                (
                    secret(&mut rng, i + seed as usize),
                    secret(&mut rng, i + seed as usize),
                )
            })
            .collect();
        let mut files = Vec::new();
        for i in 0..(5 + rng.below(4)) {
            let dir = rng.pick(DIRS);
            let name = if rng.chance(25) {
                format!("{}-{{{}}}.py", rng.pick(WORDS), rng.below(slots))
            } else {
                format!("{}_{i}.py", rng.pick(WORDS))
            };
            let lines: Vec<String> = (0..(3 + rng.below(8)))
                .map(|_| code_line(&mut rng, slots))
                .collect();
            files.push((format!("{dir}/{name}"), lines.join("\n") + "\n"));
        }
        files.push((
            "README.md".into(),
            format!("# Project\n\nKey {{{}}}.\n", rng.below(slots)),
        ));
        let mut commits = Vec::new();
        for _ in 0..(1 + rng.below(3)) {
            let mut changed = Vec::new();
            for _ in 0..(1 + rng.below(2)) {
                let (path, old) = files[rng.below(files.len())].clone();
                let new = format!("{old}{}\n", code_line(&mut rng, slots));
                changed.push((path, new));
            }
            let message = format!(
                "{} the {} with {{{}}}",
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.below(slots)
            );
            commits.push((changed, message));
        }
        Spec {
            values,
            files,
            commits,
            branch: rng.below(slots),
            seed,
        }
    }

    /// `text` with every `{N}` replaced by side `b`'s (or a's) value.
    fn fill(&self, text: &str, b: bool) -> String {
        let mut out = text.to_owned();
        for (i, (va, vb)) in self.values.iter().enumerate() {
            out = out.replace(&format!("{{{i}}}"), if b { vb } else { va });
        }
        out
    }

    /// Write one side. Denied content is drawn from a generator of the
    /// side's own, so it differs freely (in size and in when it changes).
    fn write(&self, b: bool) -> Fixture {
        let fx = Fixture::named("differential");
        let root = fx.root.clone();
        let mut own = Rng(self.seed ^ if b { 0xB0B } else { 0xA11CE });
        let denied = |own: &mut Rng, fx: &Fixture| {
            let n = 4 + own.below(30);
            fx.file(".env", format!("PIN={}\n", own.text(ALNUM, n)));
            let n = own.below(50);
            fx.file("config/.env", format!("TOKEN={}\n", own.text(ALNUM, n)));
            for k in 0..(1 + own.below(3)) {
                let n = 10 + own.below(90);
                fx.file(&format!(".ssh/key{k}"), own.text(ALNUM, n));
            }
        };
        for (path, content) in &self.files {
            fx.file(&self.fill(path, b), self.fill(content, b));
        }
        denied(&mut own, &fx);
        git(&root, &["init", "--quiet", "--initial-branch=main"]);
        git(&root, &["add", "-A", "-f"]);
        git(&root, &["commit", "--quiet", "-m", "Start"]);
        for (changed, message) in &self.commits {
            for (path, content) in changed {
                fx.file(&self.fill(path, b), self.fill(content, b));
            }
            if own.chance(50) {
                denied(&mut own, &fx);
            }
            git(&root, &["add", "-A", "-f"]);
            git(
                &root,
                &[
                    "commit",
                    "--quiet",
                    "--allow-empty",
                    "-m",
                    &self.fill(message, b),
                ],
            );
        }
        let (va, vb) = &self.values[self.branch];
        git(&root, &["branch", if b { vb } else { va }]);
        git(&root, &["tag", "v1", "HEAD~1"]);
        // A stash holding an edit to a file and to a denied one.
        let (first, content) = &self.files[0];
        fx.file(
            &self.fill(first, b),
            self.fill(&format!("{content}stashed = 1\n"), b),
        );
        denied(&mut own, &fx);
        git(&root, &["stash", "--quiet"]);
        // A staged edit, a work-tree edit, an untracked file.
        let (second, content) = &self.files[self.files.len() / 2];
        fx.file(
            &self.fill(second, b),
            self.fill(&format!("{content}staged = 2\n"), b),
        );
        git(&root, &["add", &self.fill(second, b)]);
        fx.file("README.md", self.fill("# Project\n\nEdited {0}.\n", b));
        fx.file("notes/untracked.txt", "new\n");
        denied(&mut own, &fx);
        settle(&root);
        fx
    }
}

/// Give every work-tree file one old modification time and refresh the
/// index, so that which files git's stat check reads again depends on what
/// changed, not on when the fixture was written.
fn settle(root: &Path) {
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&p) {
                let _ = f.set_modified(when);
            }
        }
    }
    let _ = std::process::Command::new("git")
        .args(["update-index", "-q", "--refresh"])
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output();
}

/// One request of the corpus, and whether its work is compared (a page
/// cut by its result count may stop early where threads race).
struct Probe {
    method: &'static str,
    params: Value,
    work: bool,
}

fn call(tool: &str, args: Value) -> Probe {
    Probe {
        method: "tools/call",
        params: json!({"name": tool, "arguments": args}),
        work: true,
    }
}

fn corpus(spec: &Spec) -> Vec<Probe> {
    let mut out = Vec::new();
    let files: Vec<String> = spec.files.iter().map(|(p, _)| p.clone()).collect();
    // Paths as the client knows them: side a's spelling (side b's file of
    // the same slot is then addressed by a's raw name, and must answer as
    // a's does: not found, since both are shown redacted).
    for path in &files {
        let path = spec.fill(path, false);
        for (tool, args) in [
            ("read_file", json!({"path": path})),
            (
                "read_file",
                json!({"path": path, "start_line": 2, "end_line": 3}),
            ),
            ("file_outline", json!({"path": path})),
            ("git_blame", json!({"path": path})),
            ("git_log", json!({"path": path})),
            ("git_show", json!({"path": path, "revision": "HEAD"})),
            ("git_diff", json!({"path": path, "revision": "HEAD~1"})),
        ] {
            out.push(call(tool, args));
        }
    }
    for dir in DIRS.iter().chain(&[".", "notes"]) {
        out.push(call("list_directory", json!({"path": dir})));
        out.push(call(
            "list_directory",
            json!({"path": dir, "include_hidden": true}),
        ));
        out.push(call("find_files", json!({"path": dir})));
    }
    for (tool, args) in [
        ("directory_tree", json!({})),
        ("directory_tree", json!({"include_hidden": true})),
        ("find_files", json!({})),
        ("project_overview", json!({})),
        ("git_status", json!({})),
        ("git_status", json!({"untracked": false})),
        ("git_log", json!({})),
        ("git_log", json!({"path": "config"})),
        ("git_log", json!({"path": "src"})),
        ("git_log", json!({"revision": "stash@{0}"})),
        ("git_log", json!({"revision": "v1..main"})),
        ("git_diff", json!({})),
        ("git_diff", json!({"staged": true})),
        ("git_diff", json!({"revision": "HEAD~1..HEAD"})),
        (
            "git_diff",
            json!({"revision": "HEAD~1..HEAD", "stat_only": true}),
        ),
        ("git_diff", json!({"revision": "stash@{0}^..stash@{0}"})),
        ("git_diff", json!({"revision": "main...stash@{0}"})),
        ("git_show", json!({})),
        ("git_show", json!({"revision": "stash@{0}"})),
        ("git_show", json!({"revision": "stash@{0}^2"})),
        ("git_show", json!({"revision": "v1"})),
        ("search_code", json!({"pattern": "def"})),
        (
            "search_code",
            json!({"pattern": "return", "context_lines": 2}),
        ),
        (
            "search_code",
            json!({"pattern": "[a-z]+_[a-z]+ =", "regex": true}),
        ),
        (
            "search_code",
            json!({"pattern": "password", "case_sensitive": true}),
        ),
        ("find_symbol", json!({"symbol": "render", "exact": false})),
        ("find_references", json!({"identifier": "password"})),
    ] {
        out.push(call(tool, args));
    }
    for word in WORDS {
        out.push(call("find_references", json!({"identifier": word})));
        out.push(call("find_symbol", json!({"symbol": word, "exact": false})));
    }
    // Commits, and objects of every other kind, by abbreviated id.
    for n in 0..=spec.commits.len() {
        for len in [7, 12, 40] {
            let rev = format!("{{commit:{n}:{len}}}");
            out.push(call("git_log", json!({"revision": rev, "limit": 2})));
            out.push(call(
                "git_show",
                json!({"revision": rev, "stat_only": true}),
            ));
        }
    }
    for object in [
        "HEAD:.env",
        "HEAD:.ssh",
        "HEAD:config",
        "HEAD:config/.env",
        "HEAD^{tree}",
        "HEAD~1:.ssh",
        "stash@{0}:.env",
        "stash@{0}^{tree}",
        ":README.md",
        "v1",
        "stash@{0}",
    ] {
        for len in [5, 8, 12] {
            let rev = format!("{{object:{object}:{len}}}");
            for tool in ["git_log", "git_show", "git_diff"] {
                out.push(call(tool, json!({"revision": rev})));
            }
            out.push(call(
                "git_diff",
                json!({"revision": format!("{rev}..HEAD")}),
            ));
            out.push(call(
                "git_blame",
                json!({"path": "README.md", "revision": rev}),
            ));
        }
    }
    for hex in ["0000000", "deadbeef", "1234567", "abcdef0"] {
        out.push(call("git_show", json!({"revision": hex})));
    }
    // Probes built from both sides' values.
    for (va, vb) in &spec.values {
        for v in [va, vb] {
            for n in [4, 6, 9, v.len()] {
                let p = &v[..n];
                out.push(call("search_code", json!({"pattern": p})));
                out.push(call(
                    "search_code",
                    json!({"pattern": format!("{p}[A-Za-z0-9]"), "regex": true}),
                ));
                out.push(call(
                    "search_code",
                    json!({"pattern": "def", "file_glob": [format!("*{p}*")]}),
                ));
                out.push(call("find_files", json!({"name": p})));
                out.push(call("find_files", json!({"glob": format!("**/*{p}*")})));
                out.push(call("find_symbol", json!({"symbol": p, "exact": false})));
                if p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    out.push(call("find_references", json!({"identifier": p})));
                }
                for tool in ["git_log", "git_show"] {
                    out.push(call(tool, json!({"revision": format!("HEAD^{{/{p}}}")})));
                }
            }
            out.push(call("git_log", json!({"revision": v})));
            out.push(call(
                "read_file",
                json!({"path": format!("keys/alpha-{v}.py")}),
            ));
            out.push(Probe {
                method: "completion/complete",
                params: json!({"ref": {"type": "ref/resource", "uri": "moat://workspace/{+path}"},
                               "argument": {"name": "path", "value": format!("keys/{}", &v[..3])}}),
                work: false,
            });
        }
    }
    out.push(Probe {
        method: "resources/list",
        params: json!({}),
        work: false,
    });
    for dir in DIRS {
        out.push(Probe {
            method: "completion/complete",
            params: json!({"ref": {"type": "ref/resource", "uri": "moat://workspace/{+path}"},
                           "argument": {"name": "path", "value": format!("{dir}/")}}),
            work: false,
        });
    }
    out
}

fn seeds() -> Vec<u64> {
    std::env::var("MOAT_DIFFERENTIAL_SEEDS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 3])
}

/// Paging: the pages of a cut search, each continued with the cursor the
/// previous page gave (the same on both sides when the answers are).
fn pages(p: &mut Pair, tool: &str, args: Value) {
    let mut args = args;
    for _ in 0..4 {
        let answer = p.same_call(tool, &args);
        let v: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        let Some(next) = v["structuredContent"]["next_cursor"].as_str() else {
            return;
        };
        args["cursor"] = json!(next);
    }
}

#[test]
fn generated_pairs_answer_alike_and_do_the_same_work() {
    for seed in seeds() {
        let spec = Spec::generate(seed);
        let mode = if seed % 2 == 0 {
            Mode::InProcess
        } else {
            Mode::Confined
        };
        let opts = Options::new(mode).env("PATH", NO_GIT_PATH);
        let mut p = Pair::start(spec.write(false), spec.write(true), &opts);
        let probes = corpus(&spec);
        let mut compared: Vec<usize> = Vec::new();
        let mut calls = 0usize;
        for probe in &probes {
            p.same(probe.method, &probe.params);
            if probe.method == "tools/call" {
                if probe.work {
                    compared.push(calls);
                }
                calls += 1;
            }
        }
        for (tool, args) in [
            ("search_code", json!({"pattern": "=", "max_results": 2})),
            ("find_files", json!({"max_results": 2})),
            (
                "find_references",
                json!({"identifier": "password", "max_results": 1}),
            ),
            ("git_log", json!({"limit": 1})),
            ("list_directory", json!({"path": "src"})),
        ] {
            pages(&mut p, tool, args);
        }
        let (wa, wb) = p.work();
        assert!(
            wa.len() >= calls,
            "seed {seed}: {} audit events for {calls} calls",
            wa.len()
        );
        for i in compared {
            assert!(wa[i].is_object() || wa[i].is_null(), "{}", wa[i]);
            assert_eq!(
                wa[i],
                wb[i],
                "seed {seed} {mode:?}: call {i} ({}) did different work",
                probes
                    .iter()
                    .filter(|p| p.method == "tools/call")
                    .nth(i)
                    .map_or(String::new(), |p| p.params.to_string())
            );
        }
        eprintln!(
            "seed {seed} ({mode:?}): {} requests answered alike",
            probes.len()
        );
    }
}

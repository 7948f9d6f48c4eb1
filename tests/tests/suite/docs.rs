//! Docs that stay true: every example of what moat prints or answers in
//! `README.md` and `docs/` is checked against the real binary, run on a
//! fixture workspace; editor snippets are started the way the editor starts
//! them; the deployment files keep the timing rules the docs state.
//!
//! The convention (an HTML comment on the line before a fenced block, so it
//! is invisible when the Markdown is rendered):
//!
//! - `<!-- checked: output -->`: a transcript. Each `$ [VAR=value …] moat ARGS`
//!   line is run and the lines up to the next `$` line are what it prints
//!   (stdout, then stderr). A `# …` comment on a `--config FILE` command is
//!   the file's contents (`[table] key = value`).
//! - `<!-- checked: moat ARGS -->`: the whole block is what that command prints.
//! - `<!-- checked: http -->`: an HTTP exchange with a running `moat serve
//!   --transport http`: the request (`METHOD /path HTTP/1.1`, headers, blank
//!   line, JSON body), then the answer (`HTTP/1.1 STATUS …`, blank line, JSON).
//! - `<!-- checked: editor -->`: an editor's configuration. JSON must parse,
//!   every server in it is started with its `command`'s arguments and `env`
//!   and must answer `initialize`; a shell line runs the `moat serve …` after
//!   `--`.
//!
//! In output, `…` stands for any text within a line, and a line that is only
//! `…` for any number of lines; in JSON, the string `"…"` stands for any value
//! and a member `"…": "…"` for any further members. Paths the docs use for
//! "your project" (`/path/to/project`, `/srv/workspace`, `/workspace`, …) are
//! the fixture workspace.
//!
//! A fenced block that looks like moat's output or answers (a `$ moat` line,
//! doctor's lines, JSON-RPC, an HTTP status line, an editor's server list) and
//! has no marker fails the suite, so no new example escapes the check.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc::channel;
use std::time::Duration;

use moat_tests::http::{HttpMoat, Req};
use moat_tests::{Fixture, Mode, Options, moat_bin, moat_command};
use serde_json::Value;

/// The wildcard of the convention.
const ANY: &str = "…";

/// Paths the docs use for the reader's project; they stand for the fixture.
const PROJECT_PATHS: [&str; 8] = [
    "/path/to/your/project",
    "/path/to/project",
    "/srv/workspace",
    "/workspace",
    "~/src/project",
    "\"$PWD\"",
    "$PWD",
    "${workspaceFolder}",
];

/// One fenced block of a Markdown file.
#[derive(Debug)]
struct Block {
    /// `file:line` of the opening fence.
    at: String,
    /// The marker's text after `checked`, if the block has one.
    marker: Option<String>,
    /// The lines between the fences, the fence's indentation removed.
    lines: Vec<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository holds tests/")
        .to_path_buf()
}

/// README.md and every Markdown file under docs/.
fn doc_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut out);
    out
}

fn parse_blocks(name: &str, text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut last_nonblank: Option<&str> = None;
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        if !trimmed.starts_with("```") {
            if !trimmed.is_empty() {
                last_nonblank = Some(trimmed);
            }
            continue;
        }
        let indent = line.len() - trimmed.len();
        let marker = last_nonblank.and_then(|l| {
            let inner = l.strip_prefix("<!--")?.strip_suffix("-->")?.trim();
            let rest = inner.strip_prefix("checked")?;
            Some(rest.trim_start_matches(':').trim().to_owned())
        });
        let mut body = Vec::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            let cut = l.len() - l.trim_start().len();
            body.push(l[cut.min(indent)..].trim_end().to_owned());
        }
        blocks.push(Block {
            at: format!("{name}:{}", n + 1),
            marker,
            lines: body,
        });
        last_nonblank = None;
    }
    blocks
}

fn all_blocks() -> Vec<Block> {
    let root = repo_root();
    let mut out = Vec::new();
    for path in doc_files(&root) {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        out.extend(parse_blocks(&name, &text));
    }
    out
}

/// Why an unmarked block looks like moat's output or answers, if it does.
fn looks_like_moat_output(lines: &[String]) -> Option<&'static str> {
    const DOCTOR_LABELS: [&str; 6] = [
        "sandbox mode ",
        "landlock abi ",
        "seccomp ",
        "no_new_privs ",
        "worker ",
        "protocol ",
    ];
    for l in lines {
        if l.starts_with("$ ") && l.contains("moat") {
            return Some("a `$ moat` command line");
        }
        if DOCTOR_LABELS
            .iter()
            .any(|p| l.starts_with(p) && l[p.len()..].starts_with("  "))
        {
            return Some("a line of `moat doctor`");
        }
        if l.contains("\"jsonrpc\"") {
            return Some("a JSON-RPC message");
        }
        if l.starts_with("HTTP/1.1 ") {
            return Some("an HTTP answer");
        }
        if l.starts_with("error: ") || l.starts_with("Usage: moat") {
            return Some("a message moat prints");
        }
        if ["\"mcpServers\"", "\"servers\"", "\"context_servers\""]
            .iter()
            .any(|k| l.contains(k))
        {
            return Some("an editor's server list");
        }
        if l.contains("\"protocol_versions\"") || l.contains("\"workers_ready\"") {
            return Some("a /readyz answer");
        }
    }
    None
}

// ---------------------------------------------------------------- matching

/// `actual` matches `expected`, where `…` stands for any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split(ANY).collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    if !actual.ends_with(last) {
        return false;
    }
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// `actual` lines match `expected` lines, a line `…` standing for any lines.
fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == ANY => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, arest)| line_matches(e, a) && lines_match(rest, arest)),
    }
}

/// `actual` matches `expected`: `"…"` is any value, `"…": "…"` any further
/// members, a string with `…` in it a line pattern.
fn json_matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(e), _) if e == ANY => true,
        (Value::String(e), Value::String(a)) => line_matches(e, a),
        (Value::Object(e), Value::Object(a)) => {
            let open = e.get(ANY).is_some_and(|v| v == ANY);
            e.iter()
                .filter(|(k, _)| k.as_str() != ANY)
                .all(|(k, v)| a.get(k).is_some_and(|av| json_matches(v, av)))
                && (open || a.keys().all(|k| e.contains_key(k)))
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.last().is_some_and(|v| v == ANY) {
                let head = &e[..e.len() - 1];
                a.len() >= head.len() && head.iter().zip(a).all(|(x, y)| json_matches(x, y))
            } else {
                e.len() == a.len() && e.iter().zip(a).all(|(x, y)| json_matches(x, y))
            }
        }
        _ => expected == actual,
    }
}

// ---------------------------------------------------------------- running

/// The workspace every example runs in, with the config files it names.
struct World {
    fx: Fixture,
}

impl World {
    fn new() -> World {
        let fx = Fixture::new();
        fx.file("README.md", "# demo\n");
        fx.file("src/lib.rs", "pub fn demo() -> u32 {\n    7\n}\n");
        World { fx }
    }

    fn root(&self) -> String {
        self.fx.root.display().to_string()
    }
}

/// A command line of the docs, split into the environment, the arguments
/// after `moat`, and a trailing `# comment`.
#[derive(Debug)]
struct CommandLine {
    env: Vec<(String, String)>,
    args: Vec<String>,
    comment: Option<String>,
}

fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn parse_command(at: &str, line: &str) -> CommandLine {
    let (cmd, comment) = match line.find(" #") {
        Some(i) => (&line[..i], Some(line[i + 2..].trim().to_owned())),
        None => (line, None),
    };
    let words = split_words(cmd);
    let moat = words
        .iter()
        .position(|w| w == "moat")
        .unwrap_or_else(|| panic!("{at}: `{line}` does not run moat"));
    let env = words[..moat]
        .iter()
        .map(|w| {
            let (k, v) = w
                .split_once('=')
                .unwrap_or_else(|| panic!("{at}: `{w}` before moat is not VAR=value"));
            (k.to_owned(), v.to_owned())
        })
        .collect();
    CommandLine {
        env,
        args: words[moat + 1..].to_vec(),
        comment,
    }
}

/// Run a documented command in the fixture; what it printed (stdout, then
/// stderr), with the fixture's paths written back as the docs wrote them.
fn run_documented(world: &World, at: &str, cmd: &CommandLine) -> Vec<String> {
    let root = world.root();
    let mut back: Vec<(String, String)> = Vec::new();
    let mut subst = |v: &str| -> String {
        if PROJECT_PATHS.contains(&v) {
            back.push((root.clone(), v.to_owned()));
            root.clone()
        } else {
            v.to_owned()
        }
    };
    let mut args: Vec<String> = cmd.args.iter().map(|a| subst(a)).collect();
    let env: Vec<(String, String)> = cmd.env.iter().map(|(k, v)| (k.clone(), subst(v))).collect();
    if let Some(i) = args.iter().position(|a| a == "--config") {
        let shown = args
            .get(i + 1)
            .cloned()
            .unwrap_or_else(|| panic!("{at}: --config without a file"));
        let contents = cmd
            .comment
            .as_deref()
            .unwrap_or_else(|| panic!("{at}: `--config {shown}` needs `# [table] key = value`"))
            .replacen("] ", "]\n", 1);
        let file = world.fx.outside.join("documented.toml");
        std::fs::write(&file, format!("{contents}\n")).unwrap();
        back.push((file.display().to_string(), shown));
        args[i + 1] = file.display().to_string();
    }
    let mut command = moat_command(&moat_bin());
    command
        .args(&args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&world.fx.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = command.output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    for (from, to) in back {
        text = text.replace(&from, &to);
    }
    text.lines().map(|l| l.trim_end().to_owned()).collect()
}

fn check_output(world: &World, b: &Block, expected: &[String], cmd: &str) -> Option<String> {
    let parsed = parse_command(&b.at, cmd);
    let actual = run_documented(world, &b.at, &parsed);
    let expected: Vec<String> = expected.to_vec();
    if lines_match(&expected, &actual) {
        None
    } else {
        Some(format!(
            "{}: `moat {}` prints\n{}\nbut the docs show\n{}",
            b.at,
            parsed.args.join(" "),
            actual.join("\n"),
            expected.join("\n")
        ))
    }
}

fn check_transcript(world: &World, b: &Block) -> Vec<String> {
    let mut failures = Vec::new();
    let mut i = 0;
    assert!(
        b.lines.first().is_some_and(|l| l.starts_with("$ ")),
        "{}: a `checked: output` block starts with a `$ moat …` line",
        b.at
    );
    while i < b.lines.len() {
        let cmd = b.lines[i].trim_start_matches("$ ").to_owned();
        let end = b.lines[i + 1..]
            .iter()
            .position(|l| l.starts_with("$ "))
            .map_or(b.lines.len(), |p| p + i + 1);
        failures.extend(check_output(world, b, &b.lines[i + 1..end], &cmd));
        i = end;
    }
    failures
}

/// An HTTP exchange written as request and answer.
fn check_http(server: &HttpMoat, b: &Block) -> Option<String> {
    let answer_at = b
        .lines
        .iter()
        .position(|l| l.starts_with("HTTP/1.1 "))
        .unwrap_or_else(|| panic!("{}: an http block shows an `HTTP/1.1 …` answer", b.at));
    let (request, answer) = b.lines.split_at(answer_at);
    let first: Vec<&str> = request
        .first()
        .unwrap_or_else(|| panic!("{}: an http block starts with its request", b.at))
        .split_whitespace()
        .collect();
    assert!(first.len() == 3, "{}: `METHOD /path HTTP/1.1`", b.at);
    let mut req = Req::new(first[0], first[1]);
    let blank = request
        .iter()
        .position(String::is_empty)
        .unwrap_or(request.len());
    for h in &request[1..blank] {
        let (k, v) = h
            .split_once(':')
            .unwrap_or_else(|| panic!("{}: header `{h}`", b.at));
        req = req.header(k.trim(), v.trim());
    }
    let body = request[blank.min(request.len())..].join("\n");
    if !body.trim().is_empty() {
        let v: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{}: the request body is not JSON: {e}", b.at));
        req = req.json(&v);
    }
    let status: u16 = answer[0]
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}: `HTTP/1.1 STATUS`", b.at));
    let resp = server.send(&req);
    let expected_body = answer[1..].join("\n");
    let mut wrong = Vec::new();
    if resp.status != status {
        wrong.push(format!("status {} (docs: {status})", resp.status));
    }
    if !expected_body.trim().is_empty() {
        let expected: Value = serde_json::from_str(&expected_body)
            .unwrap_or_else(|e| panic!("{}: the answer shown is not JSON: {e}", b.at));
        let actual: Value = serde_json::from_str(&resp.text()).unwrap_or(Value::Null);
        if !json_matches(&expected, &actual) {
            wrong.push(format!("body {actual} (docs: {expected})"));
        }
    }
    (!wrong.is_empty()).then(|| format!("{}: {} answers {}", b.at, first[1], wrong.join("; ")))
}

/// Start `moat ARGS` with `env` as an editor would and ask `initialize`.
fn initialize_with(
    world: &World,
    at: &str,
    args: &[String],
    env: &[(String, String)],
) -> Option<String> {
    let root = world.root();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if PROJECT_PATHS.contains(&a.as_str()) {
                root.clone()
            } else {
                a.clone()
            }
        })
        .collect();
    let mut cmd = moat_command(&moat_bin());
    cmd.args(&args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&world.fx.outside)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"editor","version":"1"}}}"#;
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{init}").unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
    drop(stdin);
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
    if answer["result"]["serverInfo"]["name"] == "moat" {
        None
    } else {
        Some(format!(
            "{at}: `moat {}` does not answer initialize: {line}\nstderr: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn check_editor(world: &World, b: &Block) -> Vec<String> {
    let text = b.lines.join("\n");
    let Ok(config) = serde_json::from_str::<Value>(&text) else {
        // A shell line: the command after `--`.
        let line = b
            .lines
            .iter()
            .find(|l| l.contains(" -- "))
            .unwrap_or_else(|| {
                panic!(
                    "{}: an editor block is JSON or a `… -- moat serve` line",
                    b.at
                )
            });
        let cmd = line.split_once(" -- ").unwrap().1;
        let words = split_words(cmd);
        assert!(
            words.first().is_some_and(|w| w.ends_with("moat")),
            "{}: `{cmd}` starts moat",
            b.at
        );
        return initialize_with(world, &b.at, &words[1..], &[])
            .into_iter()
            .collect();
    };
    let mut failures = Vec::new();
    let lists: Vec<(&str, &Value)> = ["mcpServers", "servers", "context_servers"]
        .iter()
        .filter_map(|k| config.get(*k).map(|v| (*k, v)))
        .collect();
    if lists.is_empty() {
        failures.push(format!(
            "{}: no mcpServers, servers or context_servers",
            b.at
        ));
    }
    for (key, list) in lists {
        for (name, server) in list.as_object().into_iter().flatten() {
            let at = format!("{} ({key}.{name})", b.at);
            let Some(command) = server["command"].as_str() else {
                failures.push(format!(
                    "{at}: `command` is not a string (the current form is command/args/env)"
                ));
                continue;
            };
            if !command.ends_with("moat") {
                failures.push(format!("{at}: `command` {command} is not moat"));
            }
            if key == "servers" && server["type"] != "stdio" {
                failures.push(format!("{at}: VS Code needs \"type\": \"stdio\""));
            }
            let args: Vec<String> = server["args"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let env: Vec<(String, String)> = server["env"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect();
            failures.extend(initialize_with(world, &at, &args, &env));
        }
    }
    failures
}

#[test]
fn every_output_example_is_marked() {
    let mut unmarked = Vec::new();
    for b in all_blocks() {
        if b.marker.is_none()
            && let Some(why) = looks_like_moat_output(&b.lines)
        {
            unmarked.push(format!(
                "{}: {why}, but no `<!-- checked: … -->` marker",
                b.at
            ));
        }
    }
    assert!(unmarked.is_empty(), "{}", unmarked.join("\n"));
}

#[test]
fn every_marked_example_is_what_the_binary_prints() {
    let world = World::new();
    let blocks = all_blocks();
    let mut server: Option<HttpMoat> = None;
    let mut failures = Vec::new();
    let mut checked = 0;
    for b in blocks.iter().filter(|b| b.marker.is_some()) {
        let marker = b.marker.as_deref().unwrap_or_default();
        checked += 1;
        match marker {
            "output" => failures.extend(check_transcript(&world, b)),
            "http" => {
                let s = server.get_or_insert_with(|| {
                    let s = HttpMoat::start(&world.fx.root, &Options::new(Mode::Confined));
                    // `/readyz` reports the sandbox as the first confined
                    // worker reported it: wait for that worker, as the
                    // documented answer is that of a server that has one.
                    let _ready = s.wait_events("worker.ready", 1);
                    s
                });
                failures.extend(check_http(s, b));
            }
            "editor" => failures.extend(check_editor(&world, b)),
            m if split_words(m).iter().any(|w| w == "moat") => {
                failures.extend(check_output(&world, b, &b.lines, m));
            }
            other => failures.push(format!("{}: unknown marker `checked: {other}`", b.at)),
        }
    }
    assert!(checked >= 10, "only {checked} marked examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---------------------------------------------------------------- deployment

/// The value after `key:` on the first line of `text` that has it.
fn yaml_scalar(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let l = l.trim_start().trim_start_matches("- ");
        let v = l.strip_prefix(key)?.strip_prefix(':')?;
        let v = v.split(" #").next().unwrap_or_default().trim();
        Some(v.trim_matches('"').to_owned())
    })
}

fn seconds(v: &str) -> u64 {
    v.trim_end_matches('s')
        .parse()
        .unwrap_or_else(|_| panic!("`{v}` is not seconds"))
}

/// The drain bound the docs state, and the rule they give orchestrators:
/// the grace period before SIGKILL exceeds any pause before SIGTERM plus the
/// drain bound (which itself exceeds the tool timeout), in every shipped file.
#[test]
fn grace_periods_cover_the_drain_the_docs_state() {
    let root = repo_root();
    let operations = std::fs::read_to_string(root.join("docs/operations.md")).unwrap();
    assert!(
        operations.contains("drain is bounded at 30 s"),
        "docs/operations.md states the drain bound this test assumes"
    );
    let drain = 30;
    // The tool timeout shown by doctor is below the drain bound, so a call
    // in flight at SIGTERM ends within the drain.
    let world = World::new();
    let doctor = run_documented(&world, "doctor", &parse_command("doctor", "moat doctor"));
    let timeout_ms: u64 = doctor
        .iter()
        .find_map(|l| l.strip_prefix("tool timeout"))
        .and_then(|v| v.trim().trim_end_matches(" ms").parse().ok())
        .unwrap_or_else(|| panic!("doctor shows the tool timeout: {doctor:?}"));
    assert!(
        timeout_ms < drain * 1000,
        "tool timeout {timeout_ms} ms ≥ the drain bound"
    );

    let compose = std::fs::read_to_string(root.join("docker-compose.yml")).unwrap();
    let grace = seconds(&yaml_scalar(&compose, "stop_grace_period").expect("stop_grace_period"));
    assert!(
        grace > drain,
        "docker-compose.yml: stop_grace_period {grace} s ≤ the {drain} s drain"
    );

    for file in [
        "docs/deploy/kubernetes.yaml",
        "docs/deploy/kubernetes-oauth.yaml",
    ] {
        let k8s = std::fs::read_to_string(root.join(file)).unwrap();
        let grace = seconds(&yaml_scalar(&k8s, "terminationGracePeriodSeconds").expect("grace"));
        let pause = k8s
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("preStop:"))
            .find_map(|l| yaml_scalar(l, "seconds"))
            .map_or(0, |v| seconds(&v));
        assert!(
            grace > pause + drain,
            "{file}: terminationGracePeriodSeconds {grace} ≤ preStop {pause} s + drain {drain} s"
        );
        // The comment above the setting names the rule the file keeps.
        assert!(
            k8s.contains(&format!("preStop pause ({pause} s)"))
                && k8s.contains(&format!("drain bound ({drain} s)")),
            "{file}: the comment on terminationGracePeriodSeconds states the rule it keeps"
        );
    }
    // Every grace period the docs quote keeps the same rule.
    for path in doc_files(&root) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for key in ["terminationGracePeriodSeconds: ", "stop_grace_period: "] {
                let Some(i) = line.find(key) else { continue };
                let v: String = line[i + key.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(g) = v.parse::<u64>() {
                    let pause = if key.starts_with("termination") { 5 } else { 0 };
                    assert!(
                        g > pause + drain,
                        "{}:{}: {key}{g} ≤ {pause} s pause + the {drain} s drain",
                        path.display(),
                        n + 1
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------- the checker itself

#[test]
fn the_matcher_accepts_wildcards_and_refuses_drift() {
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    assert!(lines_match(
        &s(&["a  …", "…", "z"]),
        &s(&["a  1", "b", "c", "z"])
    ));
    assert!(lines_match(&s(&["a  …", "…", "z"]), &s(&["a  ", "z"])));
    assert!(!lines_match(&s(&["a  4"]), &s(&["a  2"])));
    assert!(!lines_match(&s(&["a"]), &s(&["a", "extra"])));
    assert!(line_matches("x … y … z", "x 1 y 2 z"));
    assert!(!line_matches("x … y", "x 1 z"));
    let j = |t: &str| serde_json::from_str::<Value>(t).unwrap();
    assert!(json_matches(
        &j(r#"{"a":"…","…":"…"}"#),
        &j(r#"{"a":3,"b":4}"#)
    ));
    assert!(!json_matches(&j(r#"{"a":"…"}"#), &j(r#"{"a":3,"b":4}"#)));
    assert!(!json_matches(
        &j(r#"{"data":{"header":"…","meta":"…"}}"#),
        &j(r#"{"data":{"header":"x","body":"y"}}"#)
    ));
    assert!(json_matches(&j(r#"[1,"…"]"#), &j("[1,2,3]")));
    let b = parse_blocks(
        "t.md",
        "<!-- checked: moat doctor -->\n  ```text\n  a\n  ```\n```\n$ moat x\n```\n",
    );
    assert_eq!(b[0].marker.as_deref(), Some("moat doctor"));
    assert_eq!(b[0].lines, s(&["a"]));
    assert!(b[1].marker.is_none() && looks_like_moat_output(&b[1].lines).is_some());
}

//! `peer-bench`: moat against the reference MCP servers, side by side, in one
//! run, with the same client. Started by `bench/peers.sh`, which installs the
//! peers and builds the binaries; see bench/README.md, "Peers".
//!
//! ```text
//! peer-bench --cache DIR --source FILE.rs... --moat BIN --null BIN
//!            --node NODE --fs-server SCRIPT --git-server BIN
//!            [--rounds 5] [--batch-secs 1] [--cold 15] [--http-secs 3]
//!            [--connections 64] [--moat-env KEY=VALUE]...
//! ```
//!
//! Every figure is a median over `--rounds` rounds (cold start: over `--cold`
//! starts), shown with its smallest and largest value; in each round the
//! servers take turns in a rotating order, so a noisy moment hurts all of
//! them alike. Results go to stdout.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_macros,
    reason = "a benchmark program: its report is its output"
)]

mod fixture;
mod http;
mod procfs;
mod report;
mod stats;
mod stdio;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::report::{Cold, Mem, Report};
use crate::stats::{Batch, Series, Spread};
use crate::stdio::{Peer, Spec, Template};

/// Requests kept outstanding in the pipelined mode.
const IN_FLIGHT: usize = 8;

#[derive(Debug)]
struct Args {
    cache: PathBuf,
    sources: Vec<PathBuf>,
    moat: String,
    null: String,
    node: String,
    fs_server: String,
    git_server: String,
    rounds: usize,
    batch: Duration,
    cold: usize,
    http: Duration,
    connections: usize,
    moat_env: Vec<(String, String)>,
    /// Sections to run (`cold`, `stdio`, `http`); all when empty.
    only: Vec<String>,
    /// Other moat binaries measured alongside (`NAME=BIN`), e.g. a build of
    /// the previous commit: before/after in one run (stdio and cold start).
    alts: Vec<(String, String)>,
}

impl Args {
    fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        cache: PathBuf::new(),
        sources: Vec::new(),
        moat: String::new(),
        null: String::new(),
        node: "node".into(),
        fs_server: String::new(),
        git_server: String::new(),
        rounds: 5,
        batch: Duration::from_secs(1),
        cold: 15,
        http: Duration::from_secs(3),
        connections: 64,
        moat_env: Vec::new(),
        only: Vec::new(),
        alts: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let num = |v: String| v.parse::<f64>().map_err(|e| format!("{v}: {e}"));
        match flag.as_str() {
            "--cache" => a.cache = val()?.into(),
            "--source" => a.sources.push(val()?.into()),
            "--moat" => a.moat = val()?,
            "--null" => a.null = val()?,
            "--node" => a.node = val()?,
            "--fs-server" => a.fs_server = val()?,
            "--git-server" => a.git_server = val()?,
            "--rounds" => a.rounds = num(val()?)?.max(1.0) as usize,
            "--batch-secs" => a.batch = Duration::from_secs_f64(num(val()?)?),
            "--cold" => a.cold = num(val()?)?.max(1.0) as usize,
            "--http-secs" => a.http = Duration::from_secs_f64(num(val()?)?),
            "--connections" => a.connections = num(val()?)?.max(1.0) as usize,
            "--moat-alt" => {
                let kv = val()?;
                let (k, v) = kv.split_once('=').ok_or("--moat-alt needs NAME=BIN")?;
                a.alts.push((format!("moat@{k}"), v.into()));
            }
            "--only" => a.only = val()?.split(',').map(str::to_owned).collect(),
            "--moat-env" => {
                let kv = val()?;
                let (k, v) = kv.split_once('=').ok_or("--moat-env needs KEY=VALUE")?;
                a.moat_env.push((k.into(), v.into()));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    for (name, v) in [
        ("--cache", a.cache.as_os_str().is_empty()),
        ("--moat", a.moat.is_empty()),
        ("--null", a.null.is_empty()),
        ("--fs-server", a.fs_server.is_empty()),
        ("--git-server", a.git_server.is_empty()),
        ("--source", a.sources.is_empty()),
    ] {
        if v {
            return Err(format!("{name} is required"));
        }
    }
    Ok(a)
}

fn base_env() -> Vec<(String, String)> {
    let mut env = vec![("LC_ALL".to_owned(), "C".to_owned())];
    for k in ["PATH", "HOME"] {
        if let Ok(v) = std::env::var(k) {
            env.push((k.to_owned(), v));
        }
    }
    env
}

/// The four stdio servers.
struct Servers {
    moat: Spec,
    fs: Spec,
    git: Spec,
    null: Spec,
    /// `--moat-alt` builds, configured like `moat`.
    alts: Vec<Spec>,
}

fn servers(a: &Args, ws: &Path) -> Servers {
    let ws_s = ws.to_string_lossy().into_owned();
    let mut moat_env = base_env();
    // The peers answer a 50 KB read whole; moat's default answer budget
    // (40,000 characters) would cut it, so the budget is raised to compare
    // the same work. `--moat-alt` builds get the same settings, so the
    // comparison is of the same work (every build that `--moat-alt` is meant
    // for knows this variable; one that does not refuses to start and says so).
    moat_env.push((
        "MOAT_SANDBOX__MAX_ANSWER_CHARS".to_owned(),
        "200000".to_owned(),
    ));
    moat_env.extend(a.moat_env.iter().cloned());
    let alts = a
        .alts
        .iter()
        .map(|(name, bin)| Spec {
            name: name.clone(),
            argv: vec![
                bin.clone(),
                "serve".into(),
                "--workspace".into(),
                ws_s.clone(),
            ],
            env: moat_env.clone(),
        })
        .collect();
    Servers {
        moat: Spec {
            name: "moat".into(),
            argv: vec![
                a.moat.clone(),
                "serve".into(),
                "--workspace".into(),
                ws_s.clone(),
            ],
            env: moat_env,
        },
        fs: Spec {
            name: "server-filesystem".into(),
            argv: vec![a.node.clone(), a.fs_server.clone(), ws_s.clone()],
            env: base_env(),
        },
        git: Spec {
            name: "mcp-server-git".into(),
            argv: vec![a.git_server.clone(), "--repository".into(), ws_s],
            env: base_env(),
        },
        null: Spec {
            name: "null (floor)".into(),
            argv: vec![a.null.clone()],
            env: base_env(),
        },
        alts,
    }
}

/// One measured comparison: a tool on several servers, each with its request.
struct Scenario {
    key: &'static str,
    title: &'static str,
    /// (server index into the started peers, request)
    requests: Vec<(usize, Template)>,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn settle() {
    std::thread::sleep(Duration::from_millis(1000));
}

fn run() -> Result<(), String> {
    let a = parse_args()?;
    let ws = fixture::ensure(&a.cache.join("fixture"), &a.sources)
        .map_err(|e| format!("fixture: {e}"))?;
    let sv = servers(&a, &ws);
    let mut report = Report::new(&a.rounds, a.batch, a.cold, a.http, a.connections);
    eprintln!("workspace {}", ws.display());

    if a.runs("cold") {
        cold_starts(&a, &sv, &ws, &mut report)?;
    }
    if a.runs("stdio") {
        stdio_rounds(&a, &sv, &ws, &mut report)?;
    }
    if a.runs("http") {
        http_rounds(&a, &ws, &mut report)?;
    }
    report.print();
    Ok(())
}

fn cold_starts(a: &Args, sv: &Servers, ws: &Path, report: &mut Report) -> Result<(), String> {
    let ws_abs = |rel: &str| ws.join(rel).to_string_lossy().into_owned();
    eprintln!("cold start: {} starts per server", a.cold);
    let moat_first = Template::call("read_file", &json!({"path": fixture::SMALL}));
    let mut cold_specs: Vec<(&Spec, Template)> = vec![
        (&sv.moat, moat_first.clone()),
        (
            &sv.fs,
            Template::call("read_text_file", &json!({"path": ws_abs(fixture::SMALL)})),
        ),
        (
            &sv.git,
            Template::call("git_status", &json!({"repo_path": ws.to_string_lossy()})),
        ),
        (&sv.null, Template::call("read_file", &json!({}))),
    ];
    for alt in &sv.alts {
        cold_specs.push((alt, moat_first.clone()));
    }
    let mut cold: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); cold_specs.len()];
    for i in 0..a.cold {
        for k in 0..cold_specs.len() {
            let j = (i + k) % cold_specs.len();
            let (spec, call) = &cold_specs[j];
            let (list, first) = stdio::cold_start(spec, call).map_err(|e| e.to_string())?;
            cold[j].0.push(list);
            cold[j].1.push(first);
        }
    }
    for ((spec, _), (list, first)) in cold_specs.iter().zip(&cold) {
        report.cold.push(Cold {
            server: spec.name.clone(),
            list: Spread::of(list),
            first: Spread::of(first),
        });
    }
    Ok(())
}

fn stdio_rounds(a: &Args, sv: &Servers, ws: &Path, report: &mut Report) -> Result<(), String> {
    let ws_abs = |rel: &str| ws.join(rel).to_string_lossy().into_owned();
    // --- long-lived servers -------------------------------------------------
    let mut specs = vec![&sv.moat, &sv.fs, &sv.git, &sv.null];
    specs.extend(&sv.alts);
    let alts: Vec<usize> = (4..specs.len()).collect();
    let mut peers = Vec::new();
    for spec in specs {
        let mut p = Peer::spawn(spec).map_err(|e| format!("{}: {e}", spec.name))?;
        p.initialize().map_err(|e| e.to_string())?;
        p.call(&Template::new("tools/list", &json!({})))
            .map_err(|e| e.to_string())?;
        peers.push(p);
    }
    settle();
    let idle_fresh: Vec<procfs::Memory> = peers.iter().map(|p| procfs::memory(p.pid())).collect();
    const MOAT: usize = 0;
    const FS: usize = 1;
    const GIT: usize = 2;
    const NULL: usize = 3;

    let read_moat = Template::call("read_file", &json!({"path": fixture::BIG}));
    let list_moat = Template::call("list_directory", &json!({"path": fixture::DIR100}));
    let git_moat = Template::call("git_log", &json!({"limit": 20}));
    // Check every request once, parsed in full, and size the null answers.
    let mut sizes = Vec::new();
    for t in [&read_moat, &list_moat, &git_moat] {
        let v = peers[MOAT].call_checked(t).map_err(|e| e.to_string())?;
        sizes.push(v.to_string().len());
    }
    let text_of = |v: &Value| -> String {
        v["result"]["content"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    };
    let null_req = |size: usize| Template::call("read_file", &json!({"reply_bytes": size}));
    let scenarios = vec![
        Scenario {
            key: "read",
            title: "read_file, 50 KB source file",
            requests: vec![
                (MOAT, read_moat.clone()),
                (
                    FS,
                    Template::call("read_text_file", &json!({"path": ws_abs(fixture::BIG)})),
                ),
                (NULL, null_req(sizes[0])),
            ]
            .into_iter()
            .chain(alts.iter().map(|i| (*i, read_moat.clone())))
            .collect(),
        },
        Scenario {
            key: "list",
            title: "list_directory, 100 entries",
            requests: vec![
                (MOAT, list_moat.clone()),
                (
                    FS,
                    Template::call("list_directory", &json!({"path": ws_abs(fixture::DIR100)})),
                ),
                (NULL, null_req(sizes[1])),
            ]
            .into_iter()
            .chain(alts.iter().map(|i| (*i, list_moat.clone())))
            .collect(),
        },
        Scenario {
            key: "git",
            title: "git_log, 20 of 1,000 commits",
            requests: vec![
                (MOAT, git_moat.clone()),
                (
                    GIT,
                    Template::call(
                        "git_log",
                        &json!({"repo_path": ws.to_string_lossy(), "max_count": 20}),
                    ),
                ),
                (NULL, null_req(sizes[2])),
            ]
            .into_iter()
            .chain(alts.iter().map(|i| (*i, git_moat.clone())))
            .collect(),
        },
    ];
    for sc in &scenarios {
        for (i, t) in &sc.requests {
            let v = peers[*i].call_checked(t).map_err(|e| e.to_string())?;
            let text = text_of(&v);
            let ok = match (sc.key, *i) {
                (_, NULL) => true,
                ("read", _) => text.contains("fn ") && text.len() > 40_000,
                ("list", MOAT) => v["result"]["structuredContent"]["entries"]
                    .as_array()
                    .is_some_and(|e| e.len() == 100),
                ("list", _) => text.lines().count() >= 100,
                ("git", _) => text.contains("Release 999"),
                _ => true,
            };
            if !ok {
                let shown: String = text.chars().take(300).collect();
                return Err(format!(
                    "{}: unexpected answer to {}: {shown}",
                    peers[*i].name, sc.title
                ));
            }
            let wire = v.to_string().len();
            eprintln!(
                "checked {:<18} {:<32} answer {:>7} bytes",
                peers[*i].name, sc.title, wire
            );
            if *i != NULL {
                let structured = &v["result"]["structuredContent"];
                report.sizes.push(report::Size {
                    title: sc.title,
                    server: peers[*i].name.to_string(),
                    wire,
                    text: text.len(),
                    structured: if structured.is_null() {
                        0
                    } else {
                        structured.to_string().len()
                    },
                });
            }
        }
    }

    // --- throughput and latency, rounds -------------------------------------
    let modes = [(1usize, "sequential"), (IN_FLIGHT, "8 in flight")];
    eprintln!("warm-up");
    for sc in &scenarios {
        for (i, t) in &sc.requests {
            for (k, _) in modes {
                peers[*i]
                    .batch(t, k, 100_000, Duration::from_millis(300))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    // results[scenario][mode][request index] = rounds
    let mut results: Vec<Vec<Vec<Vec<Batch>>>> = scenarios
        .iter()
        .map(|sc| vec![vec![Vec::new(); sc.requests.len()]; modes.len()])
        .collect();
    for round in 0..a.rounds {
        eprintln!("round {}/{}", round + 1, a.rounds);
        for (s, sc) in scenarios.iter().enumerate() {
            for (m, (k, _)) in modes.iter().enumerate() {
                let n = sc.requests.len();
                for off in 0..n {
                    let r = (round + off) % n;
                    let (i, t) = &sc.requests[r];
                    let b = peers[*i]
                        .batch(t, *k, 1_000_000, a.batch)
                        .map_err(|e| e.to_string())?;
                    results[s][m][r].push(b);
                }
            }
        }
    }
    for (s, sc) in scenarios.iter().enumerate() {
        for (m, (_, mode)) in modes.iter().enumerate() {
            for (r, (i, _)) in sc.requests.iter().enumerate() {
                report.add_series(
                    sc.key,
                    sc.title,
                    mode,
                    &peers[*i].name,
                    Series::of(&results[s][m][r]),
                );
            }
        }
    }

    settle();
    for (p, fresh) in peers.iter().zip(&idle_fresh) {
        let after = procfs::memory(p.pid());
        report.mem.push(Mem {
            server: p.name.clone(),
            fresh: *fresh,
            after,
        });
    }
    for p in peers {
        p.close(Duration::from_secs(3));
    }
    Ok(())
}

/// Start a server whose stderr names its address; keep draining stderr.
fn start_http(
    mut cmd: Command,
    marker: &'static str,
    parse: fn(&str) -> Option<SocketAddr>,
) -> Result<(std::process::Child, SocketAddr), String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let err = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if !sent
                && line.contains(marker)
                && let Some(addr) = parse(&line)
            {
                let _ = tx.send(addr);
                sent = true;
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(addr) => Ok((child, addr)),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("no '{marker}' line from the HTTP server"))
        }
    }
}

fn parse_moat_addr(line: &str) -> Option<SocketAddr> {
    let at = line.find("\"addr\":\"")? + 8;
    line[at..].split('"').next()?.parse().ok()
}

/// `moat serve --transport http` on an ephemeral port, at the connection limit.
fn moat_command(a: &Args, bin: &str, ws: &Path, token: &str) -> Command {
    let mut moat = Command::new(bin);
    moat.args(["serve", "--transport", "http", "--workspace"])
        .arg(ws)
        .env_clear()
        .envs(base_env())
        .envs(a.moat_env.iter().cloned())
        .env("MOAT_HTTP__PORT", "0")
        .env("MOAT_HTTP__BEARER_TOKEN", token)
        .env("MOAT_HTTP__MAX_CONNECTIONS", a.connections.to_string())
        .env("MOAT_HTTP__MAX_IN_FLIGHT", a.connections.to_string());
    moat
}

fn http_rounds(a: &Args, ws: &Path, report: &mut Report) -> Result<(), String> {
    let token = format!(
        "bench-{:x}",
        std::process::id() as u64 * 0x9e37_79b9_7f4a_7c15
    );
    let moat = moat_command(a, &a.moat, ws, &token);
    let (moat_child, moat_addr) = start_http(moat, "http.listening", parse_moat_addr)?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "read_file", "arguments": {"path": fixture::SMALL},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": {"name": "moat-bench", "version": "0"}}}})
    .to_string();
    let auth = format!("Bearer {token}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "read_file"),
    ];
    let moat_req = http::post(moat_addr, "/mcp", &headers, &body);
    let probe = http::load(
        moat_addr,
        moat_req.clone(),
        1,
        Duration::ZERO,
        Duration::from_millis(200),
    )
    .map_err(|e| e.to_string())?;
    if probe.errors > 0 || probe.batch.n == 0 {
        return Err("moat over HTTP: the probe request failed".into());
    }
    let mut null = Command::new(&a.null);
    null.args(["--http", "127.0.0.1:0", "--reply-bytes", "2600"]);
    let (null_child, null_addr) = start_http(null, "listening", |l| {
        l.split_whitespace().nth(1)?.parse().ok()
    })?;
    let null_req = http::post(null_addr, "/mcp", &headers, &body);
    let mut targets = vec![
        ("moat".to_owned(), moat_addr, moat_req),
        ("null (floor)".to_owned(), null_addr, null_req),
    ];
    let mut children = vec![moat_child, null_child];
    for (name, bin) in &a.alts {
        let (child, addr) = start_http(
            moat_command(a, bin, ws, &token),
            "http.listening",
            parse_moat_addr,
        )?;
        children.push(child);
        targets.push((
            name.clone(),
            addr,
            http::post(addr, "/mcp", &headers, &body),
        ));
    }
    let mut rounds: Vec<Vec<Batch>> = vec![Vec::new(); targets.len()];
    let mut errors = vec![0usize; targets.len()];
    eprintln!(
        "HTTP: {} connections, {} rounds of {:.1} s",
        a.connections,
        a.rounds,
        a.http.as_secs_f64()
    );
    for round in 0..a.rounds {
        for off in 0..targets.len() {
            let t = (round + off) % targets.len();
            let (_, addr, req) = &targets[t];
            let r = http::load(
                *addr,
                req.clone(),
                a.connections,
                Duration::from_millis(500),
                a.http,
            )
            .map_err(|e| e.to_string())?;
            rounds[t].push(r.batch);
            errors[t] += r.errors;
        }
    }
    for (t, (name, _, _)) in targets.iter().enumerate() {
        let name = name.as_str();
        report.add_http(name, Series::of(&rounds[t]), errors[t]);
    }
    // SIGTERM: moat drains, reaps its workers and exits 0.
    for c in &mut children {
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        let _ = c.wait();
    }
    Ok(())
}

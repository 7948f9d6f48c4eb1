//! `probe bench-moat N MOAT`: cold-start timings of the real `moat` binary.
//!
//! For each of N runs and each mode (`confined`, then `in-process` for
//! comparison) it spawns `moat serve` over stdio on a small temporary
//! workspace, writes a `tools/list` and a `tools/call read_file` at once, and
//! records when each answer arrives, counted from just before spawn:
//!
//! * `list`: spawn → first `tools/list` answer (the broker alone: cold start);
//! * `call`: spawn → first `read_file` answer, which in confined mode needs
//!   a worker that was spawned, confined itself (rlimits, Landlock, seccomp)
//!   and said hello: the time to the first confined worker ready, plus one
//!   request.
//!
//! Then it runs `moat doctor` N times (config, one worker started and
//! confined, report printed) and records its wall time.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::Res;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"probe-bench","version":"0"}}"#;

pub(crate) fn bench_moat_main(args: &[String]) -> Res<ExitCode> {
    let usage = "bench-moat N PATH-TO-MOAT";
    let n: usize = args.first().ok_or(usage)?.parse()?;
    let moat = PathBuf::from(args.get(1).ok_or(usage)?);
    if n == 0 {
        return Err(usage.into());
    }
    let ws = tempfile::Builder::new().prefix("moat-bench-").tempdir()?;
    std::fs::write(ws.path().join("a.txt"), "alpha\n")?;

    for mode in ["confined", "in-process"] {
        let mut list = Vec::with_capacity(n);
        let mut call = Vec::with_capacity(n);
        for _ in 0..n {
            let (l, c) = one_serve(&moat, ws.path(), mode)?;
            list.push(l);
            call.push(c);
        }
        println!(
            "moat serve mode={mode} n={n} spawn_to_tools_list_median_ms={:.3} \
             spawn_to_first_read_file_median_ms={:.3} (p10={:.3} p90={:.3})",
            median(&mut list),
            median(&mut call),
            quantile(&call, 0.1),
            quantile(&call, 0.9)
        );
    }

    let mut doctor = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let out = base_command(&moat, "confined")
            .arg("doctor")
            .arg("--workspace")
            .arg(ws.path())
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()?;
        doctor.push(started.elapsed());
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !text.contains("started and confined") {
            return Err(format!("moat doctor failed:\n{text}").into());
        }
    }
    println!(
        "moat doctor (one confined worker) n={n} wall_median_ms={:.3} (p10={:.3} p90={:.3})",
        median(&mut doctor),
        quantile(&doctor, 0.1),
        quantile(&doctor, 0.9)
    );
    Ok(ExitCode::SUCCESS)
}

fn base_command(moat: &Path, mode: &str) -> Command {
    let mut cmd = Command::new(moat);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent")
        .env("MOAT_SANDBOX__MODE", mode)
        .env("MOAT_OBSERVABILITY__LOG_LEVEL", "error");
    cmd
}

/// One cold `moat serve`: `(spawn → tools/list answer, spawn → read_file
/// answer)`.
fn one_serve(moat: &Path, ws: &Path, mode: &str) -> Res<(Duration, Duration)> {
    let requests = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{{META}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"read_file\",\
         \"arguments\":{{\"path\":\"a.txt\"}},{META}}}}}\n"
    );
    let started = Instant::now();
    let mut child = base_command(moat, mode)
        .arg("serve")
        .arg("--workspace")
        .arg(ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    stdin.write_all(requests.as_bytes())?;
    stdin.flush()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let (mut list, mut call) = (None, None);
    while list.is_none() || call.is_none() {
        let line = lines.next().ok_or("moat closed stdout early")??;
        let at = started.elapsed();
        if line.contains("\"id\":1") {
            list = Some(at);
        } else if line.contains("\"id\":2") {
            if !line.contains("alpha") {
                return Err(format!("read_file failed: {line}").into());
            }
            call = Some(at);
        }
    }
    drop(stdin);
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("moat serve exited with {status}").into());
    }
    Ok((list.ok_or("no list")?, call.ok_or("no call")?))
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn quantile(v: &[Duration], q: f64) -> f64 {
    let mut sorted = v.to_vec();
    sorted.sort();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let i = ((sorted.len() - 1) as f64 * q) as usize;
    sorted[i].as_secs_f64() * 1000.0
}

//! The command line: `serve`, `doctor`, `tools`, `call`, `healthcheck`,
//! `--version` (exit codes: [`super::exit`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

use super::executor::executor;
use super::exit::{EXIT_FAILED, EXIT_USAGE};
use super::output::{print_stdout, startup_redactor};
use crate::config::{self, Config, SandboxMode, Sources, Transport};
use crate::mcp::{Server, Session, TransportInfo, jsonrpc, meta};
use crate::supervisor::WORKER_SUBCOMMAND;

#[derive(Debug, Parser)]
#[command(
    name = "moat",
    version,
    about = "Serve one code workspace, read-only, to a language model over MCP — with every tool request confined by the kernel.",
    long_about = "moat serves one directory (a code workspace) read-only over the Model Context Protocol. \
Every tool request runs in a worker process confined by Landlock and seccomp (Linux), so a request cannot \
leave the workspace even if moat's own checks had a bug.\n\nConfiguration: defaults < --config FILE (TOML) < \
MOAT_<SECTION>__<FIELD> environment variables < flags. See docs/configuration.md.",
    after_help = "Exit codes: 0 ok; 1 a tool/protocol error (call) or a failed check (doctor); 2 bad configuration or usage."
)]
struct Cli {
    /// Directory to serve (default: MOAT_SANDBOX__WORKSPACE, else the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// TOML configuration file.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdio (for an editor) or Streamable HTTP (for a container).
    Serve {
        /// Transport to serve.
        #[arg(long, value_enum, ignore_case = true, default_value_t = TransportArg::Stdio)]
        transport: TransportArg,
    },
    /// Check what would be served: configuration, limits, sandbox status, warnings.
    Doctor {
        /// Check the configuration for this transport.
        #[arg(long, value_enum, ignore_case = true, default_value_t = TransportArg::Stdio)]
        transport: TransportArg,
        /// Print the report as one JSON object (`checks`, `warnings`, `ready`, `status`).
        #[arg(long)]
        json: bool,
    },
    /// List the tools and their arguments.
    Tools {
        /// Print the full declarations as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Probe a running `serve --transport http` on this machine (GET /healthz, or /readyz with
    /// --ready) at the configured http.host:http.port; exit 0 on 200, else 1. For container health
    /// checks: the image has no curl.
    Healthcheck {
        /// Ask /readyz (workspace present, a confined worker can start) instead of /healthz.
        #[arg(long)]
        ready: bool,
    },
    /// Call one tool through the same broker and sandboxed worker path as `serve`.
    Call {
        /// Tool name, e.g. read_file.
        tool: String,
        /// Arguments as a JSON object, e.g. '{"path": "README.md"}'.
        #[arg(default_value = "{}")]
        args: String,
        /// Print the whole JSON-RPC response.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script, e.g. `moat completions bash > /etc/bash_completion.d/moat`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum, ignore_case = true)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TransportArg {
    Stdio,
    Http,
}

impl From<TransportArg> for Transport {
    fn from(t: TransportArg) -> Transport {
        match t {
            TransportArg::Stdio => Transport::Stdio,
            TransportArg::Http => Transport::Http,
        }
    }
}

/// The whole program.
#[must_use]
pub fn main() -> ExitCode {
    super::hardening::apply();
    let mut args = std::env::args_os();
    let _ = args.next();
    if args.next().as_deref() == Some(std::ffi::OsStr::new(WORKER_SUBCOMMAND)) {
        // No thread exists yet; the worker confines itself before creating any.
        let code = moat_worker::serve();
        return ExitCode::from(u8::try_from(code).unwrap_or(EXIT_FAILED));
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(EXIT_USAGE),
            };
        }
    };
    let sources = Sources {
        file: cli.config.clone(),
        env: std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
        workspace_flag: cli.workspace.clone(),
        cwd: std::env::current_dir().ok(),
    };
    match cli.command {
        Command::Serve { transport } => serve(&sources, transport.into()),
        Command::Doctor { transport, json } => super::doctor::run(&sources, transport.into(), json),
        Command::Completions { shell } => completions(shell),
        Command::Tools { json } => tools(json),
        Command::Healthcheck { ready } => super::healthcheck::run(&sources, ready),
        Command::Call { tool, args, json } => call(&sources, &tool, &args, json),
    }
}

fn load(sources: &Sources, transport: Transport) -> Result<Config, ExitCode> {
    config::load(sources, transport, super::doctor::landlock_available()).map_err(|e| {
        eprintln!("error: {}", startup_redactor(sources).text(&e.to_string()));
        ExitCode::from(EXIT_USAGE)
    })
}

/// The async runtime for `transport`.
///
/// stdio serves one client, and the tool work itself runs in the worker processes, so the
/// broker's share (framing, rendering, the content controls) runs on one
/// thread: no request's state crosses threads, and no wake-up goes through
/// another thread's futex (measured: about a quarter less CPU per request
/// than two worker threads, bench/peers.sh). HTTP serves many connections
/// at once and keeps two worker threads.
fn runtime(transport: Transport) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match transport {
        Transport::Stdio => tokio::runtime::Builder::new_current_thread(),
        Transport::Http => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }
    };
    builder
        .max_blocking_threads(16)
        .thread_name("moat")
        .enable_all()
        .build()
}

fn serve(sources: &Sources, transport: Transport) -> ExitCode {
    let config = match load(sources, transport) {
        Ok(c) => Arc::new(c),
        Err(code) => return code,
    };
    let secrets = [
        config.http.bearer_token.as_str(),
        config.observability.metrics_token.as_str(),
    ];
    // The audit trail first: a file that cannot be opened refuses start-up
    // before any log line is written.
    let redactor = crate::logging::LogRedactor::new(&secrets);
    if let Err(e) = crate::audit::init(&config.observability, redactor.clone()) {
        eprintln!("error: {}", redactor.text(&e.to_string()));
        return ExitCode::from(EXIT_USAGE);
    }
    crate::logging::init(&config.observability, redactor);
    for v in &config.violations {
        tracing::warn!(problem = %v, "config.warning");
    }
    if config.sandbox.mode == SandboxMode::InProcess {
        tracing::warn!(
            automatic = config.sandbox.mode_automatic,
            "sandbox.in_process: tool requests are NOT confined by the kernel on this host; only moat's own checks apply"
        );
    }
    let rt = match runtime(transport) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let code = rt.block_on(async {
        let executor = match executor(&config, true) {
            Ok(e) => e,
            Err(e) => {
                tracing::error!(error = %e, "serve.failed");
                return i32::from(EXIT_FAILED);
            }
        };
        let server = match Server::new(Arc::clone(&config), executor) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                tracing::error!(error = %e, "serve.failed");
                return i32::from(EXIT_FAILED);
            }
        };
        if let Some(addr) = config.observability.metrics_addr
            && let Err(e) = crate::metrics::start(addr, &config.observability.metrics_token).await
        {
            tracing::error!(error = %e, "serve.failed");
            return i32::from(EXIT_FAILED);
        }
        match transport {
            Transport::Stdio => crate::transport::stdio::serve(server).await,
            Transport::Http => crate::transport::http::serve(server).await,
        }
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    ExitCode::from(u8::try_from(code).unwrap_or(EXIT_FAILED))
}

fn out(text: &str) {
    print_stdout(text);
    print_stdout("\n");
}

/// A completion script for `shell`, generated from the same definition as
/// `--help`, on stdout.
fn completions(shell: clap_complete::Shell) -> ExitCode {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "moat", &mut script);
    print_stdout(&String::from_utf8_lossy(&script));
    ExitCode::SUCCESS
}

fn tools(as_json: bool) -> ExitCode {
    let registry = match crate::tool::Registry::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if as_json {
        let all: Vec<&Value> = registry.declarations().collect();
        out(&serde_json::to_string_pretty(&all).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    let mut text = String::new();
    for d in registry.declarations() {
        text.push_str(d["name"].as_str().unwrap_or(""));
        text.push_str("\n  ");
        text.push_str(d["title"].as_str().unwrap_or(""));
        text.push('\n');
        let schema = &d["inputSchema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = schema["properties"].as_object() {
            let mut names: Vec<&String> = props.keys().collect();
            names.sort();
            for name in names {
                let ty = props[name]["type"].as_str().unwrap_or("any");
                let mark = if required.contains(&name.as_str()) {
                    "*"
                } else {
                    " "
                };
                text.push_str(&format!("    {mark} {name}: {ty}\n"));
            }
        }
        text.push('\n');
    }
    out(text.trim_end());
    ExitCode::SUCCESS
}

fn call(sources: &Sources, tool: &str, args: &str, as_json: bool) -> ExitCode {
    let arguments: Value = match serde_json::from_str(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: arguments is not valid JSON: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if !arguments.is_object() {
        eprintln!("error: arguments must be a JSON object");
        return ExitCode::from(EXIT_USAGE);
    }
    let config = match load(sources, Transport::Stdio) {
        Ok(c) => Arc::new(c),
        Err(code) => return code,
    };
    let rt = match runtime(Transport::Stdio) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let response = rt.block_on(async {
        let executor = executor(&config, false).map_err(|e| e.to_string())?;
        let server = Server::new(Arc::clone(&config), executor).map_err(|e| e.to_string())?;
        let request = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": tool, "arguments": arguments,
                "_meta": {
                    meta::KEY_VERSION: meta::MODERN_VERSION,
                    meta::KEY_CAPABILITIES: {},
                    meta::KEY_CLIENT_INFO: {"name": "moat-cli", "version": env!("CARGO_PKG_VERSION")}
                }
            }
        });
        let msg = jsonrpc::validate(request).map_err(|e| e.message)?;
        let reply = server.handle(msg, &Session::default(), TransportInfo::default()).await;
        server.executor().shutdown().await;
        reply
            .map(crate::mcp::jsonrpc::Reply::into_body)
            .ok_or_else(|| "no response".to_owned())
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    let response = match response {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if let Some(err) = response.get("error") {
        eprintln!(
            "{}",
            serde_json::to_string_pretty(&response).unwrap_or_default()
        );
        let _ = err;
        return ExitCode::from(EXIT_FAILED);
    }
    let result = &response["result"];
    if as_json {
        out(&serde_json::to_string_pretty(&response).unwrap_or_default());
    } else if let Some(blocks) = result["content"].as_array() {
        for b in blocks {
            if let Some(t) = b["text"].as_str() {
                out(t);
            }
        }
    }
    if result["isError"] == Value::Bool(true) {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

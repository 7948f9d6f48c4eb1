//! The only place git runs.
//!
//! git is a child of the (confined) worker, so it inherits Landlock, seccomp
//! and the rlimits: it can read only the workspace (and its own binary and
//! libraries), cannot execute anything but itself, cannot open a network
//! socket. On top of that, every way a hostile repository could make git run a
//! program or read elsewhere is switched off by code:
//!
//! * the binary is the absolute path the broker resolved at start-up, never
//!   found through the client, the workspace or `PATH` at call time;
//! * only `log` and `diff`, chosen here, never by an argument;
//! * the environment is built from nothing: `HOME` is the workspace, no system
//!   or global configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`),
//!   no pager, no askpass, no terminal prompt, `LC_ALL=C`, no lazy fetch,
//!   literal pathspecs, and `GIT_CEILING_DIRECTORIES` so git never uses a
//!   repository *above* the workspace;
//! * fixed options override what the repository's `.git/config` may set:
//!   `core.pager`, `core.fsmonitor`, `core.hooksPath`, `diff.external`
//!   (`--no-ext-diff`), textconv drivers (`--no-textconv`),
//!   `log.showSignature` (gpg), `protocol.ext.allow`; no optional locks;
//! * filter drivers (`filter.<name>.clean`/`smudge`/`process`, which `diff`
//!   runs on work-tree files a `.gitattributes` assigns them to) cannot be
//!   switched off by one option: the names the repository configures are
//!   listed first (`git config`, which runs nothing) and each is overridden
//!   with empty commands, the way the other overrides are; `diff` neither
//!   looks into submodules' work trees (which would run `git status` there,
//!   under the submodule's own configuration) nor formats their logs;
//! * only a plain repository is used: `.git` must be a directory, without
//!   `commondir` or `objects/info/alternates` (each makes git read a
//!   repository elsewhere; the `gitdir:` file of a linked work tree or
//!   submodule too). The sandbox would stop those reads; the in-process
//!   fallback has only this check;
//! * revisions are validated ([`validate_revision`]) and passed after
//!   `--end-of-options`; paths always after `--`, in their contained relative
//!   form;
//! * output is capped at [`GIT_OUTPUT_BYTES`]; git is killed at the request's
//!   deadline; its stderr is reduced to one scrubbed line.

use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use moat_protocol::limits::{GIT_OUTPUT_BYTES, GIT_STDERR_CHARS, MAX_REVISION_CHARS};
use moat_protocol::wire_error::{GitFailure, WireError};

use crate::deadline::Deadline;
use crate::fs::symlinks;
use crate::workspace::Workspace;

/// The two subcommands moat runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sub {
    /// `git log`.
    Log,
    /// `git diff`.
    Diff,
}

impl Sub {
    fn as_str(self) -> &'static str {
        match self {
            Sub::Log => "log",
            Sub::Diff => "diff",
        }
    }
}

/// What git printed.
#[derive(Debug)]
pub struct Output {
    /// stdout, at most [`GIT_OUTPUT_BYTES`].
    pub stdout: Vec<u8>,
    /// stdout was cut at the cap.
    pub truncated: bool,
}

/// Check a revision (the handler's layer; the published schema is the first).
pub fn validate_revision(rev: &str) -> Result<&str, WireError> {
    let r = rev.trim();
    if r.is_empty() {
        return Err(WireError::GitFailed(GitFailure::EmptyRevision));
    }
    if r.starts_with('-') {
        return Err(WireError::GitFailed(GitFailure::LeadingDash));
    }
    let ok = r.chars().count() <= MAX_REVISION_CHARS
        && r.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/@^~{}-".contains(c));
    if !ok {
        return Err(WireError::GitFailed(GitFailure::BadCharacters));
    }
    Ok(r)
}

/// What a git tool targets: a validated revision and a contained path.
#[derive(Debug)]
pub struct Target<'a> {
    revision: Option<&'a str>,
    path: Option<crate::fs::ContainedPath>,
}

impl<'a> Target<'a> {
    /// Validate `revision` (handler layer) and resolve `path` (containment),
    /// in that order.
    pub fn new(
        ws: &Workspace,
        revision: Option<&'a str>,
        path: Option<&str>,
    ) -> Result<Target<'a>, WireError> {
        let revision = revision.map(validate_revision).transpose()?;
        let path = path
            .map(|p| crate::fs::containment::resolve(ws, p))
            .transpose()?;
        Ok(Target { revision, path })
    }

    /// Append `--end-of-options [revision] -- [path]` to `argv`: nothing the
    /// client sent can be read as an option.
    pub fn push_args(&self, argv: &mut Vec<OsString>) {
        argv.push("--end-of-options".into());
        if let Some(r) = self.revision {
            argv.push(r.into());
        }
        argv.push("--".into());
        if let Some(p) = &self.path {
            argv.push(p.display().into());
        }
    }

    /// The path as the result reports it (`""` when none).
    #[must_use]
    pub fn shown_path(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_owned())
    }
}

/// Whether the workspace root holds a plain repository: a `.git` directory
/// (not a `gitdir:` file or a link) that does not send git to another
/// repository's files through `commondir` or `objects/info/alternates`.
#[must_use]
pub fn is_repository(ws: &Workspace) -> bool {
    let is_dir = symlinks::stat_rel(ws, ".git").is_ok_and(|m| m.kind == symlinks::Kind::Directory);
    let absent = |rel: &str| symlinks::stat_rel(ws, rel).is_err();
    is_dir && absent(".git/commondir") && absent(".git/objects/info/alternates")
}

/// Most filter drivers overridden; a configuration naming more is refused.
const MAX_FILTER_DRIVERS: usize = 256;

/// Run `git <sub> <args…>` in the workspace and collect its output.
pub fn run(
    ws: &Workspace,
    sub: Sub,
    args: &[OsString],
    deadline: &Deadline,
) -> Result<Output, WireError> {
    let Some(setup) = ws.git() else {
        return Err(WireError::GitFailed(GitFailure::NoGit));
    };
    if !is_repository(ws) {
        return Err(WireError::NotARepository);
    }
    let filters = match sub {
        Sub::Diff => filter_drivers(ws, setup, deadline)?,
        Sub::Log => Vec::new(),
    };
    let mut cmd = command(ws, setup);
    // Empty commands switch a driver off (git treats "" as no filter), and
    // `required = false` keeps a switched-off driver from failing the diff.
    // Same precedence as `-c`, without `-c`'s `=` splitting of the name.
    let mut n = 0usize;
    for name in &filters {
        for (key, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            cmd.env(
                format!("GIT_CONFIG_KEY_{n}"),
                format!("filter.{name}.{key}"),
            )
            .env(format!("GIT_CONFIG_VALUE_{n}"), value);
            n += 1;
        }
    }
    cmd.env("GIT_CONFIG_COUNT", n.to_string());
    cmd.args(["--no-pager", "--no-optional-locks", sub.as_str()]);
    if sub == Sub::Diff {
        cmd.args(["--ignore-submodules=dirty", "--submodule=short"]);
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (out, truncated, status, stderr_bytes) = collect(cmd, sub, GIT_OUTPUT_BYTES, deadline)?;
    if !truncated && !status.success() {
        return Err(WireError::GitFailed(GitFailure::Exit {
            subcommand: sub.as_str().into(),
            code: status.code(),
            stderr: first_line(&stderr_bytes, ws),
        }));
    }
    Ok(Output {
        stdout: out,
        truncated,
    })
}

/// The names of the filter drivers the repository's configuration defines
/// (system and global configuration are never read).
fn filter_drivers(
    ws: &Workspace,
    setup: &moat_protocol::request::GitSetup,
    deadline: &Deadline,
) -> Result<Vec<String>, WireError> {
    let mut cmd = command(ws, setup);
    cmd.args([
        "--no-pager",
        "config",
        "--null",
        "--name-only",
        "--get-regexp",
        r"^filter\.",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let (out, truncated, status, stderr) = collect(cmd, Sub::Diff, 64 * 1024, deadline)?;
    // Exit 1: no such key. Anything else unexpected: refuse rather than run
    // `diff` with drivers left on.
    let failed = || {
        WireError::GitFailed(GitFailure::Exit {
            subcommand: Sub::Diff.as_str().into(),
            code: status.code(),
            stderr: first_line(&stderr, ws),
        })
    };
    if status.code() == Some(1) && out.is_empty() {
        return Ok(Vec::new());
    }
    if truncated || !status.success() {
        return Err(failed());
    }
    let names = driver_names(&out);
    if names.len() > MAX_FILTER_DRIVERS {
        return Err(failed());
    }
    Ok(names)
}

/// The distinct `<name>`s of `git config --null --name-only` output of
/// `filter.<name>.<key>` entries (a name may contain dots; its case is kept,
/// as git compares subsection names case-sensitively).
fn driver_names(out: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for key in out.split(|b| *b == 0).filter(|k| !k.is_empty()) {
        let key = String::from_utf8_lossy(key);
        let name = key
            .trim_end_matches('\n')
            .strip_prefix("filter.")
            .and_then(|rest| rest.rsplit_once('.'))
            .map(|(name, _)| name.to_owned());
        if let Some(name) = name
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// git with the built environment and the fixed overrides, before the
/// subcommand.
fn command(ws: &Workspace, setup: &moat_protocol::request::GitSetup) -> Command {
    let root = ws.root();
    let git_dir = std::path::Path::new(&setup.binary)
        .parent()
        .map(|p| p.as_os_str().to_owned())
        .unwrap_or_default();
    let ceiling = root
        .parent()
        .map(|p| p.as_os_str().to_owned())
        .unwrap_or_default();
    let mut cmd = Command::new(&setup.binary);
    cmd.current_dir(root)
        .env_clear()
        .env("PATH", git_dir)
        .env("HOME", root)
        .env("USERPROFILE", root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .env("GIT_DIR", root.join(".git"))
        .env("GIT_WORK_TREE", root)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "")
        .env("SSH_ASKPASS", "")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("LC_ALL", "C")
        .args([
            "-c",
            "protocol.ext.allow=never",
            "-c",
            "protocol.allow=never",
            "-c",
            "core.pager=cat",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.untrackedCache=false",
            "-c",
            "core.packedGitLimit=512m",
            "-c",
            "core.packedGitWindowSize=32m",
            "-c",
            "log.showSignature=false",
            "-c",
            "diff.external=",
            "-c",
            "color.ui=false",
        ])
        // The worker may run as another user than the repository's owner;
        // what git's ownership check guards against (running configured
        // programs) is switched off above and by the sandbox.
        .arg("-c")
        .arg(format!("safe.directory={}", root.display()));
    cmd
}

/// Run `cmd` (for `sub`), keeping at most `cap` bytes of stdout (past it git
/// is killed), until the deadline: `(stdout, truncated, status, stderr)`.
fn collect(
    mut cmd: Command,
    sub: Sub,
    cap: usize,
    deadline: &Deadline,
) -> Result<(Vec<u8>, bool, std::process::ExitStatus, Vec<u8>), WireError> {
    let mut child = cmd
        .spawn()
        .map_err(|_| WireError::GitFailed(GitFailure::NoGit))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or(WireError::GitFailed(GitFailure::NoGit))?;
    let stderr = child.stderr.take();
    let err_thread = std::thread::Builder::new()
        .name("git-stderr".into())
        .spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut e) = stderr {
                let _ = (&mut e).take(8 * 1024).read_to_end(&mut buf);
                let _ = std::io::copy(&mut e, &mut std::io::sink());
            }
            buf
        });
    // Read stdout up to the cap; past it, stop and kill git.
    let mut out = Vec::with_capacity(16 * 1024);
    let read_result = (&mut stdout).take(cap as u64 + 1).read_to_end(&mut out);
    let truncated = out.len() > cap;
    if truncated {
        out.truncate(cap);
        let _ = child.kill();
    }
    drop(stdout);
    let status = wait_until(&mut child, deadline);
    let stderr_bytes = err_thread
        .ok()
        .and_then(|t| t.join().ok())
        .unwrap_or_default();
    let Some(status) = status else {
        return Err(WireError::TimedOut {
            budget_ms: deadline.budget_ms(),
        });
    };
    if read_result.is_err() {
        return Err(WireError::GitFailed(GitFailure::Exit {
            subcommand: sub.as_str().into(),
            code: None,
            stderr: String::new(),
        }));
    }
    Ok((out, truncated, status, stderr_bytes))
}

fn wait_until(
    child: &mut std::process::Child,
    deadline: &Deadline,
) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(st),
            Ok(None) => {}
            Err(_) => return None,
        }
        if deadline.expired() {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        // Short first, then coarser: git usually exits right after its output.
        let pause = if started.elapsed() < Duration::from_millis(20) {
            200
        } else {
            2000
        };
        std::thread::sleep(Duration::from_micros(pause));
    }
}

/// git's first stderr line, cut, with absolute paths outside the workspace
/// replaced by `<path>` and the workspace root shown relative.
fn first_line(stderr: &[u8], ws: &Workspace) -> String {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let root = ws.root().to_string_lossy();
    let mut out = String::new();
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let bare = word.trim_matches(|c| c == '\'' || c == '"' || c == ':' || c == ',');
        if bare.starts_with('/') {
            let shown = match bare.strip_prefix(root.as_ref()) {
                Some(rest) => {
                    let rest = rest.trim_start_matches('/');
                    if rest.is_empty() {
                        ".".to_owned()
                    } else {
                        rest.to_owned()
                    }
                }
                None => "<path>".to_owned(),
            };
            out.push_str(&word.replace(bare, &shown));
        } else {
            out.push_str(word);
        }
    }
    out.chars().take(GIT_STDERR_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_driver_names() {
        let out =
            b"filter.lfs.clean\0filter.lfs.process\0filter.Evil.Two.clean\0filter.x=y.smudge\0";
        assert_eq!(driver_names(out), ["lfs", "Evil.Two", "x=y"]);
        assert!(driver_names(b"").is_empty());
    }

    #[test]
    fn revisions() {
        for ok in [
            "HEAD",
            "HEAD~1",
            "main",
            "HEAD~1..HEAD",
            "@{0}",
            "HEAD@{-1}",
            "main..HEAD",
            " v1.0 ",
        ] {
            assert!(validate_revision(ok).is_ok(), "{ok}");
        }
        let bad = |r: &str| validate_revision(r).unwrap_err();
        assert_eq!(bad(""), WireError::GitFailed(GitFailure::EmptyRevision));
        assert_eq!(bad("  "), WireError::GitFailed(GitFailure::EmptyRevision));
        for dash in [
            "--all",
            "-p",
            "--upload-pack=touch /tmp/x",
            "-c core.pager=sh",
            "--output=/tmp/x",
        ] {
            assert_eq!(
                bad(dash),
                WireError::GitFailed(GitFailure::LeadingDash),
                "{dash}"
            );
        }
        for chars in [
            "HEAD; rm -rf /",
            "HEAD && whoami",
            "$(whoami)",
            "`whoami`",
            "HEAD|tee /tmp/x",
            "a b",
        ] {
            assert_eq!(
                bad(chars),
                WireError::GitFailed(GitFailure::BadCharacters),
                "{chars}"
            );
        }
        assert!(validate_revision(&"a".repeat(201)).is_err());
    }
}

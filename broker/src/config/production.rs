//! The production invariants: what `environment = "production"` refuses,
//! and every other environment warns about.

use std::path::{Path, PathBuf};

use super::http::HttpAuth;
use super::sandbox::SandboxMode;
use super::{Config, Transport};

/// Every production invariant the configuration breaks.
#[must_use]
pub fn production_violations(c: &Config, transport: Transport) -> Vec<String> {
    let mut v = Vec::new();
    if !c.security.redact_secrets {
        v.push("MOAT_SECURITY__REDACT_SECRETS is false: secrets would reach the client".into());
    }
    if !c.security.scan_untrusted_content {
        v.push("MOAT_SECURITY__SCAN_UNTRUSTED_CONTENT is false: injection attempts would go unreported".into());
    }
    if c.sandbox.follow_symlinks {
        v.push(
            "MOAT_SANDBOX__FOLLOW_SYMLINKS is true: links inside the workspace are followed".into(),
        );
    }
    if transport == Transport::Http && c.http.auth == HttpAuth::None {
        v.push(if c.http.bearer_token.is_empty() {
            "MOAT_HTTP__BEARER_TOKEN is empty: the HTTP endpoint would accept any caller".into()
        } else {
            "MOAT_HTTP__AUTH is none: the HTTP endpoint would accept any caller".into()
        });
    }
    if transport == Transport::Http
        && let Some(o) = &c.http.oauth
    {
        v.extend(crate::config::oauth::production_violations(o));
    }
    if transport == Transport::Http && c.http.auth == HttpAuth::Bearer {
        if is_placeholder_token(&c.http.bearer_token) {
            v.push(
                "MOAT_HTTP__BEARER_TOKEN is a placeholder, not a secret: generate one \
                 (openssl rand -hex 32) and give it from a secret store"
                    .into(),
            );
        } else if c.http.bearer_token.chars().count() < MIN_TOKEN_CHARS {
            v.push(format!(
                "MOAT_HTTP__BEARER_TOKEN is shorter than {MIN_TOKEN_CHARS} characters: generate \
                 one (openssl rand -hex 32) and give it from a secret store"
            ));
        }
    }
    if let Some(addr) = c.observability.metrics_addr
        && !addr.ip().is_loopback()
        && c.observability.metrics_token.is_empty()
    {
        v.push(format!(
            "MOAT_OBSERVABILITY__METRICS_ADDR is {addr}, not a loopback address, and \
             MOAT_OBSERVABILITY__METRICS_TOKEN is empty: the metrics would be readable by any \
             caller that reaches it"
        ));
    }
    if c.observability.metrics_addr.is_some() && !c.observability.metrics_token.is_empty() {
        if is_placeholder_token(&c.observability.metrics_token) {
            v.push(
                "MOAT_OBSERVABILITY__METRICS_TOKEN is a placeholder, not a secret: generate one \
                 (openssl rand -hex 32) and give it from a secret store"
                    .into(),
            );
        } else if c.observability.metrics_token.chars().count() < MIN_TOKEN_CHARS {
            v.push(format!(
                "MOAT_OBSERVABILITY__METRICS_TOKEN is shorter than {MIN_TOKEN_CHARS} characters: \
                 generate one (openssl rand -hex 32) and give it from a secret store"
            ));
        }
    }
    if is_home_or_root(&c.sandbox.workspace) {
        v.push("MOAT_SANDBOX__WORKSPACE is a home or root directory: serve a project directory instead".into());
    }
    if c.sandbox.mode == SandboxMode::InProcess && !c.sandbox.allow_in_process_in_production {
        v.push(
            "MOAT_SANDBOX__MODE is in-process: tool requests are not confined by the kernel \
             (set MOAT_SANDBOX__ALLOW_IN_PROCESS_IN_PRODUCTION=true to accept this)"
                .into(),
        );
    }
    if moat_worker::USERLAND_CHECKS_DISABLED {
        v.push(
            "this binary was built with the test-only feature dangerous-disable-userland-checks"
                .into(),
        );
    }
    v
}

/// The files the broker takes on trust, each named with why it matters,
/// that someone other than their owner can change: the configuration file
/// (it says who may call and what is served) and the JWKS file (whoever can
/// write it can mint tokens). A file qualifies when its mode lets its group
/// or others write it, or when the directory holding it lets its group or
/// others write it without the sticky bit (they could put another file in
/// its place). A file that cannot be read is not judged here: loading it
/// fails on its own.
#[must_use]
pub fn writable_by_others(sources: &super::Sources, c: &Config) -> Vec<String> {
    let mut v = Vec::new();
    let mut check = |what: &str, path: &Path| {
        if let Some(why) = open_to_others(path) {
            v.push(format!(
                "{what} {} {why}: whoever can change it decides what the broker trusts; make it \
                 writable by its owner only (chmod go-w)",
                path.display()
            ));
        }
    };
    if let Some(file) = &sources.file {
        check("the configuration file", file);
    }
    if let Some(crate::config::oauth::OauthConfig {
        keys: crate::config::oauth::KeySource::Path(p),
        ..
    }) = &c.http.oauth
    {
        check("the JWKS file (MOAT_HTTP__OAUTH__JWKS_PATH)", p);
    }
    v
}

/// Why `path` is open to others than its owner, if it is.
#[cfg(unix)]
fn open_to_others(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt as _;
    const GROUP_OR_OTHER_WRITE: u32 = 0o022;
    const STICKY: u32 = 0o1000;
    let meta = std::fs::metadata(path).ok()?;
    if meta.mode() & GROUP_OR_OTHER_WRITE != 0 {
        return Some("is writable by its group or by others");
    }
    let dir = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))?;
    let dir_mode = std::fs::metadata(&dir).ok()?.mode();
    if dir_mode & GROUP_OR_OTHER_WRITE != 0 && dir_mode & STICKY == 0 {
        return Some("is in a directory writable by its group or by others");
    }
    None
}

/// Elsewhere file modes say nothing of the kind.
#[cfg(not(unix))]
fn open_to_others(_: &Path) -> Option<&'static str> {
    None
}

/// The shortest bearer token production accepts (`openssl rand -hex 16`
/// gives 32 characters).
pub const MIN_TOKEN_CHARS: usize = 32;

/// Words that stand for a token in examples and templates, compared with
/// the token in lower case with everything but letters and digits removed.
const PLACEHOLDER_WORDS: &[&str] = &[
    "replaceme",
    "changeme",
    "changeit",
    "secret",
    "token",
    "bearertoken",
    "password",
    "passwd",
    "example",
    "placeholder",
    "yourtoken",
    "yourtokenhere",
    "yoursecret",
    "inserttokenhere",
    "todo",
    "fixme",
    "test",
    "dummy",
    "default",
    "redacted",
];

/// Markers that make any token a placeholder wherever they appear in it
/// (`REPLACE_ME_WITH_A_REAL_TOKEN_…`).
const PLACEHOLDER_MARKERS: &[&str] = &["replaceme", "changeme", "placeholder", "yourtoken"];

/// Whether `token` is a placeholder someone forgot to replace: one of the
/// usual words, a token containing a "replace me" marker, or one character
/// repeated (`xxxx…`, `0000…`, `****…`).
#[must_use]
pub fn is_placeholder_token(token: &str) -> bool {
    let squashed: String = token
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let mut chars = squashed.chars();
    let repeated = chars.next().is_none_or(|first| chars.all(|c| c == first));
    repeated
        || PLACEHOLDER_WORDS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(&squashed))
        || PLACEHOLDER_MARKERS.iter().any(|m| squashed.contains(m))
}

/// Whether `p` is the filesystem root or the home directory.
fn is_home_or_root(p: &Path) -> bool {
    if p.parent().is_none() {
        return true;
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    home.is_some_and(|h| h == p)
}

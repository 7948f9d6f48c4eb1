//! The configuration's unit tests: layers, keys, bounds, invariants, and
//! that the documentation states what the code does.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use moat_protocol::limits;

use super::fields::{FIELDS, env_names};
use super::layers::anchor_file_paths;
use super::production::MIN_TOKEN_CHARS;
use super::*;

fn sources(env: &[(&str, &str)]) -> Sources {
    Sources {
        file: None,
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        workspace_flag: Some(std::env::temp_dir()),
        cwd: None,
    }
}

fn load_env(env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    load(&sources(env), Transport::Stdio, true)
}

#[test]
fn unknown_keys_are_refused() {
    let e = load_env(&[("MOAT_SANDBOX__MAX_FILE_BTYES", "10")]).unwrap_err();
    assert!(e.to_string().contains("MOAT_SANDBOX__MAX_FILE_BTYES"));
    assert!(load_env(&[("MOAT_SANDBOXX__X", "1")]).is_err());
    assert!(load_env(&[("MOAT_NOPE", "1")]).is_err());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.toml");
    std::fs::write(&f, "[sandbox]\nmax_file_btyes = 10\n").unwrap();
    let e = load(
        &Sources {
            file: Some(f.clone()),
            ..sources(&[])
        },
        Transport::Stdio,
        true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("max_file_btyes"), "{e}");
    std::fs::write(&f, "[sandboxx]\n").unwrap();
    assert!(
        load(
            &Sources {
                file: Some(f),
                ..sources(&[])
            },
            Transport::Stdio,
            true
        )
        .is_err()
    );
}

#[test]
fn precedence_and_lists() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.toml");
    std::fs::write(
        &f,
        "[sandbox]\nmax_read_lines = 50\nmax_file_bytes = 2048\n",
    )
    .unwrap();
    let c = load(
        &Sources {
            file: Some(f),
            ..sources(&[
                ("MOAT_SANDBOX__MAX_READ_LINES", "60"),
                ("MOAT_SANDBOX__DENY_EXTRA", " a , ,B "),
            ])
        },
        Transport::Stdio,
        true,
    )
    .unwrap();
    assert_eq!(c.sandbox.limits.max_read_lines, 60);
    assert_eq!(c.sandbox.limits.max_file_bytes, 2048);
    assert_eq!(c.sandbox.deny_extra, vec!["a".to_owned(), "b".to_owned()]);
}

#[test]
fn docs_configuration_lists_every_setting() {
    let doc = include_str!("../../../docs/configuration.md");
    for name in env_names() {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/configuration.md does not document {name}"
        );
    }
    for (section, field, _) in FIELDS {
        assert!(
            doc.contains(&format!("### `[{section}]`")) && doc.contains(&format!("| `{field}` |")),
            "docs/configuration.md has no row for {section}.{field}"
        );
    }
}

/// The value of the `- name: NAME` entry's `value:` line in a manifest.
pub(super) fn manifest_env(manifest: &str, name: &str) -> Option<String> {
    let mut lines = manifest.lines();
    lines.find(|l| l.trim() == format!("- name: {name}"))?;
    let value = lines.next()?.trim().strip_prefix("value:")?;
    Some(value.trim().trim_matches('"').to_owned())
}

/// What every Kubernetes example must keep: it defines each claim it mounts,
/// ships no Secret, runs as many workers as its CPU limit, pauses before
/// SIGTERM and runs in production.
pub(super) fn assert_deployable(k8s: &str) {
    let objects: Vec<&str> = k8s.split("\n---\n").collect();
    // Every claim it mounts is one of its objects.
    for line in k8s.lines().filter(|l| l.trim().starts_with("claimName:")) {
        let claim = line.trim().trim_start_matches("claimName:").trim();
        assert!(
            objects
                .iter()
                .any(|o| o.contains("kind: PersistentVolumeClaim")
                    && o.contains(&format!("  name: {claim}\n"))),
            "the manifest mounts claim {claim} but does not define it"
        );
    }
    // No Secret: applying one would overwrite the real token.
    assert!(
        !objects
            .iter()
            .any(|o| o.lines().any(|l| l == "kind: Secret")),
        "the manifest ships a Secret"
    );
    // As many workers as CPUs in the limit.
    let limit = k8s
        .split("limits:")
        .nth(1)
        .and_then(|l| l.lines().find(|l| l.trim().starts_with("cpu:")))
        .map(|l| {
            l.trim()
                .trim_start_matches("cpu:")
                .trim()
                .trim_matches('"')
                .to_owned()
        });
    assert_eq!(
        manifest_env(k8s, "MOAT_SANDBOX__WORKERS"),
        limit,
        "workers must equal the CPU limit"
    );
    // A pause before SIGTERM, with the kubelet's own sleep (the image
    // has no shell and no sleep program).
    let pre_stop = k8s.split("preStop:").nth(1).unwrap_or_default();
    assert!(
        pre_stop.trim_start().starts_with("sleep:"),
        "no preStop sleep"
    );
    assert_eq!(
        manifest_env(k8s, "MOAT_ENVIRONMENT").as_deref(),
        Some("production")
    );
}

#[test]
fn the_kubernetes_example_defines_what_it_uses_and_ships_no_secret() {
    let k8s = include_str!("../../../docs/deploy/kubernetes.yaml");
    assert_deployable(k8s);
    // The production it sets would refuse no placeholder it shows.
    assert!(!k8s.contains("REPLACE_ME\n") && !k8s.contains("bearer-token: "));
}

#[test]
fn type_errors_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.toml");
    for (text, naming) in [
        (
            "[http]\nport = \"80\"\n",
            "http.port must be a non-negative integer",
        ),
        ("[http]\nport = -1\n", "http.port"),
        (
            "[sandbox]\nfollow_symlinks = 1\n",
            "sandbox.follow_symlinks must be true or false",
        ),
        (
            "[sandbox]\ndeny_extra = \"a,b\"\n",
            "sandbox.deny_extra must be a list of strings",
        ),
        ("sandbox = 3\n", "[sandbox] must be a table"),
        ("environment = 1\n", "environment must be a string"),
    ] {
        std::fs::write(&f, text).unwrap();
        let e = load(
            &Sources {
                file: Some(f.clone()),
                ..sources(&[])
            },
            Transport::Stdio,
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains(naming), "{text}: {e}");
    }
}

#[test]
fn bounds_are_enforced() {
    assert!(load_env(&[("MOAT_SANDBOX__MAX_FILE_BYTES", "1")]).is_err());
    assert!(load_env(&[("MOAT_SANDBOX__MAX_FILE_BYTES", "999999999999")]).is_err());
    assert!(load_env(&[("MOAT_HTTP__PORT", "70000")]).is_err());
    assert!(load_env(&[("MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS", "0")]).is_err());
    assert!(load_env(&[("MOAT_SANDBOX__FOLLOW_SYMLINKS", "maybe")]).is_err());
    assert_eq!(load_env(&[("MOAT_HTTP__PORT", "0")]).unwrap().http.port, 0);
}

#[test]
fn production_invariants() {
    let c = load_env(&[]).unwrap();
    assert!(c.violations.is_empty() || moat_worker::USERLAND_CHECKS_DISABLED);
    let e = load(
        &sources(&[("MOAT_ENVIRONMENT", "production")]),
        Transport::Http,
        true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("MOAT_HTTP__BEARER_TOKEN"), "{e}");
    let e = load_env(&[
        ("MOAT_ENVIRONMENT", "production"),
        ("MOAT_SECURITY__REDACT_SECRETS", "false"),
        ("MOAT_SANDBOX__FOLLOW_SYMLINKS", "true"),
    ])
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("REDACT_SECRETS") && text.contains("FOLLOW_SYMLINKS"),
        "{text}"
    );
    let e = load_env(&[
        ("MOAT_ENVIRONMENT", "production"),
        ("MOAT_SANDBOX__MODE", "in-process"),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("in-process"));
    let ok = load_env(&[
        ("MOAT_ENVIRONMENT", "production"),
        ("MOAT_SANDBOX__MODE", "in-process"),
        ("MOAT_SANDBOX__ALLOW_IN_PROCESS_IN_PRODUCTION", "true"),
    ]);
    assert!(ok.is_ok() || moat_worker::USERLAND_CHECKS_DISABLED);
    let local = load_env(&[("MOAT_SECURITY__REDACT_SECRETS", "false")]).unwrap();
    assert_eq!(
        local.violations.len(),
        1,
        "outside production a violation is a warning"
    );
}

#[test]
fn workspace_rules() {
    let mut s = sources(&[]);
    s.workspace_flag = Some(PathBuf::from("/definitely/not/here"));
    assert!(
        load(&s, Transport::Stdio, true)
            .unwrap_err()
            .to_string()
            .contains("cannot be resolved")
    );
    s.workspace_flag = Some(PathBuf::from("/"));
    assert!(
        load(&s, Transport::Stdio, true)
            .unwrap_err()
            .to_string()
            .contains("filesystem root")
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("file");
    std::fs::write(&f, "x").unwrap();
    s.workspace_flag = Some(f);
    assert!(
        load(&s, Transport::Stdio, true)
            .unwrap_err()
            .to_string()
            .contains("not a directory")
    );
}

fn load_file(text: &str, env: &[(&str, &str)]) -> (Result<Config, ConfigError>, PathBuf) {
    let dir = tempfile::tempdir().unwrap().keep();
    let f = dir.join("moat.toml");
    std::fs::write(&f, text).unwrap();
    let got = load(
        &Sources {
            file: Some(f.clone()),
            ..sources(env)
        },
        Transport::Stdio,
        true,
    );
    (got, f)
}

#[test]
fn an_unknown_variable_is_named_with_the_one_most_likely_meant() {
    for (wrong, meant) in [
        ("MOAT_WORKSPACE", "`MOAT_SANDBOX__WORKSPACE`"),
        (
            "MOAT_SANDBOX__MAX_FILE_BTYES",
            "`MOAT_SANDBOX__MAX_FILE_BYTES`",
        ),
        ("MOAT_HTTP_BEARER_TOKEN", "`MOAT_HTTP__BEARER_TOKEN`"),
        ("MOAT_BEARER_TOKEN", "`MOAT_HTTP__BEARER_TOKEN`"),
        ("MOAT_LOG_LEVEL", "`MOAT_OBSERVABILITY__LOG_LEVEL`"),
        ("moat_sandbox__workspaces", "`MOAT_SANDBOX__WORKSPACE`"),
        ("MOAT_SANDBOXX__WORKERS", "`MOAT_SANDBOX__WORKERS`"),
        ("MOAT_ENVIRONMNT", "`MOAT_ENVIRONMENT`"),
        ("MOAT_PORT", "`MOAT_HTTP__PORT`"),
    ] {
        let e = load_env(&[(wrong, "1")]).unwrap_err().to_string();
        assert!(
            e.contains(&wrong.to_uppercase()) && e.contains(&format!("did you mean {meant}?")),
            "{wrong}: {e}"
        );
    }
    let e = load_env(&[("MOAT_NOPE", "1")]).unwrap_err().to_string();
    assert!(
        e.contains("MOAT_NOPE") && !e.contains("did you mean"),
        "{e}"
    );
    for injected in ["MOAT_PORT", "MOAT_SERVICE_HOST", "MOAT_PORT_8080_TCP_ADDR"] {
        let e = load_env(&[(injected, "1")]).unwrap_err().to_string();
        assert!(e.contains("enableServiceLinks: false"), "{injected}: {e}");
    }
    let e = load_env(&[("MOAT_WORKSPACE", "1")])
        .unwrap_err()
        .to_string();
    assert!(!e.contains("enableServiceLinks"), "{e}");
}

#[test]
fn an_unknown_key_in_the_file_is_named_with_its_table_the_file_and_a_guess() {
    for (text, expected) in [
        (
            "[sandbox]\nmax_file_btyes = 10\n",
            "unknown key `max_file_btyes` in [sandbox]; did you mean `max_file_bytes`?",
        ),
        (
            "[sandboxx]\nworkers = 2\n",
            "unknown table [sandboxx]; did you mean `[sandbox]`?",
        ),
        (
            "workspace = \"/srv\"\n",
            "unknown top-level key `workspace`; did you mean `workspace` in `[sandbox]`?",
        ),
        (
            "[http]\nworkspace = \"/srv\"\n",
            "unknown key `workspace` in [http]; did you mean `workspace` in `[sandbox]`?",
        ),
        ("environmnt = \"local\"\n", "did you mean `environment`?"),
        (
            "[http]\nfrobnicate = 1\n",
            "unknown key `frobnicate` in [http]",
        ),
    ] {
        let (got, f) = load_file(text, &[]);
        let e = got.unwrap_err().to_string();
        assert!(e.contains(expected), "{text}: {e}");
        assert!(e.contains(&f.display().to_string()), "{text}: {e}");
    }
}

#[test]
fn a_relative_workspace_in_the_file_is_read_from_the_file_s_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("conf/project")).unwrap();
    let f = dir.path().join("conf/moat.toml");
    std::fs::write(&f, "[sandbox]\nworkspace = \"project\"\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let c = load(
        &Sources {
            file: Some(f),
            workspace_flag: None,
            cwd: Some(elsewhere.path().to_path_buf()),
            env: Vec::new(),
        },
        Transport::Stdio,
        true,
    )
    .unwrap();
    assert_eq!(
        c.sandbox.workspace,
        dir.path().join("conf/project").canonicalize().unwrap()
    );
    // A relative file name is opened from the working directory, and
    // the workspace is read from that file's directory.
    let mut tree = Map::new();
    tree.insert("sandbox".into(), json_workspace("project"));
    anchor_file_paths(&mut tree, Path::new("conf/moat.toml"), Some(dir.path())).unwrap();
    assert_eq!(
        tree["sandbox"]["workspace"],
        dir.path().join("conf/project").display().to_string()
    );
    // Absolute and home-relative paths are left as they are.
    for kept in ["/srv/ws", "~/src/p", "~"] {
        tree.insert("sandbox".into(), json_workspace(kept));
        anchor_file_paths(&mut tree, Path::new("conf/moat.toml"), Some(dir.path())).unwrap();
        assert_eq!(tree["sandbox"]["workspace"], kept);
    }
}

fn json_workspace(ws: &str) -> Value {
    let mut m = Map::new();
    m.insert("workspace".into(), Value::String(ws.into()));
    Value::Object(m)
}

#[test]
fn an_empty_workspace_is_called_empty_wherever_it_comes_from() {
    let e = load_env(&[("MOAT_SANDBOX__WORKSPACE", "")]);
    // The flag (set by `sources`) wins over the environment.
    assert!(e.is_ok(), "{e:?}");
    let mut s = sources(&[("MOAT_SANDBOX__WORKSPACE", " ")]);
    s.workspace_flag = None;
    let e = load(&s, Transport::Stdio, true).unwrap_err().to_string();
    assert!(e.contains("MOAT_SANDBOX__WORKSPACE is empty"), "{e}");
    s.workspace_flag = Some(PathBuf::new());
    let e = load(&s, Transport::Stdio, true).unwrap_err().to_string();
    assert!(e.contains("--workspace is empty"), "{e}");
    let mut s = sources(&[]);
    s.workspace_flag = None;
    let (got, _) = load_file("[sandbox]\nworkspace = \"\"\n", &[]);
    let e = got.unwrap_err().to_string();
    assert!(e.contains("`workspace` in [sandbox] is empty"), "{e}");
    for (k, name) in [
        ("MOAT_SANDBOX__MODE", "sandbox.mode is empty"),
        (
            "MOAT_OBSERVABILITY__LOG_LEVEL",
            "observability.log_level is empty",
        ),
        ("MOAT_ENVIRONMENT", "environment is empty"),
        ("MOAT_HTTP__HOST", "http.host is empty"),
    ] {
        let e = load_env(&[(k, "")]).unwrap_err().to_string();
        assert!(e.contains(name), "{k}: {e}");
    }
}

#[test]
fn the_metrics_settings_are_read_checked_and_the_token_never_shown() {
    let c = load_env(&[]).unwrap();
    assert_eq!(c.observability.metrics_addr, None);
    assert!(c.observability.metrics_token.is_empty());
    let token = "metrics-token-for-a-unit-test-7c1e";
    let c = load_env(&[
        ("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0"),
        ("MOAT_OBSERVABILITY__METRICS_TOKEN", token),
    ])
    .unwrap();
    assert_eq!(
        c.observability.metrics_addr,
        Some("127.0.0.1:0".parse().unwrap())
    );
    assert!(!format!("{c:?}").contains(token));
    let (got, _) = load_file("[observability]\nmetrics_addr = \"[::1]:9464\"\n", &[]);
    assert_eq!(
        got.unwrap().observability.metrics_addr,
        Some("[::1]:9464".parse().unwrap())
    );
    for bad in ["localhost:9464", "127.0.0.1", ""] {
        let e = load_env(&[("MOAT_OBSERVABILITY__METRICS_ADDR", bad)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("observability.metrics_addr"), "{bad}: {e}");
    }
    let (got, _) = load_file("[observability]\nmetrics_adr = \"127.0.0.1:0\"\n", &[]);
    assert!(got.unwrap_err().to_string().contains("metrics_addr"));
    // Only a non-loopback listener without a token is a violation.
    let open = load_env(&[("MOAT_OBSERVABILITY__METRICS_ADDR", "0.0.0.0:9464")]).unwrap();
    assert!(
        open.violations
            .iter()
            .any(|v| v.starts_with("MOAT_OBSERVABILITY__METRICS_ADDR")),
        "{:?}",
        open.violations
    );
    let local = load_env(&[("MOAT_OBSERVABILITY__METRICS_ADDR", "[::1]:9464")]).unwrap();
    assert!(
        !local.violations.iter().any(|v| v.contains("METRICS")),
        "{:?}",
        local.violations
    );
}

#[test]
fn the_audit_settings_are_read_from_the_file_and_the_environment() {
    let c = load_env(&[]).unwrap();
    assert_eq!(c.observability.audit_path, None);
    assert_eq!(c.observability.audit_max_bytes, AUDIT_MAX_BYTES_DEFAULT);
    let c = load_env(&[
        (
            "MOAT_OBSERVABILITY__AUDIT_PATH",
            "/var/log/moat/audit.jsonl",
        ),
        ("MOAT_OBSERVABILITY__AUDIT_MAX_BYTES", "2048"),
    ])
    .unwrap();
    assert_eq!(
        c.observability.audit_path.as_deref(),
        Some(Path::new("/var/log/moat/audit.jsonl"))
    );
    assert_eq!(c.observability.audit_max_bytes, 2048);
    let (got, _) = load_file(
        "[observability]\naudit_path = \"/tmp/a.jsonl\"\naudit_max_bytes = 4096\n",
        &[],
    );
    let c = got.unwrap();
    assert_eq!(
        c.observability.audit_path.as_deref(),
        Some(Path::new("/tmp/a.jsonl"))
    );
    assert_eq!(c.observability.audit_max_bytes, 4096);
    let e = load_env(&[("MOAT_OBSERVABILITY__AUDIT_PATH", " ")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("observability.audit_path is empty"), "{e}");
    let e = load_env(&[("MOAT_OBSERVABILITY__AUDIT_MAX_BYTES", "10")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("observability.audit_max_bytes must be between"),
        "{e}"
    );
    let e = load_env(&[("MOAT_OBSERVABILITY__AUDIT_PAHT", "/tmp/a")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`MOAT_OBSERVABILITY__AUDIT_PATH`"), "{e}");
    let (got, _) = load_file("[observability]\naudit_pth = \"/tmp/a\"\n", &[]);
    let e = got.unwrap_err().to_string();
    assert!(e.contains("did you mean `audit_path`?"), "{e}");
}

#[test]
fn choices_are_read_in_any_case_and_warn_is_a_log_level() {
    let c = load_env(&[
        ("MOAT_SANDBOX__MODE", "In-Process"),
        ("MOAT_OBSERVABILITY__LOG_LEVEL", "WARN"),
        ("MOAT_ENVIRONMENT", "Staging"),
    ])
    .unwrap();
    assert_eq!(c.sandbox.mode, SandboxMode::InProcess);
    assert_eq!(c.observability.log_level, "warning");
    assert_eq!(c.environment, Environment::Staging);
    for level in ["warn", "Warning", " debug ", "ERROR", "Info"] {
        let c = load_env(&[("MOAT_OBSERVABILITY__LOG_LEVEL", level)]).unwrap();
        assert!(
            ["warning", "debug", "error", "info"].contains(&c.observability.log_level.as_str()),
            "{level}"
        );
    }
    let c = load_env(&[("MOAT_SANDBOX__MODE", "CONFINED")]).unwrap();
    assert_eq!(c.sandbox.mode, SandboxMode::Confined);
    let e = load_env(&[("MOAT_SANDBOX__MODE", "inprocess")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean `in-process`?"), "{e}");
    let (got, _) = load_file("[observability]\nlog_level = \"Warn\"\n", &[]);
    assert_eq!(got.unwrap().observability.log_level, "warning");
}

#[test]
fn production_refuses_a_short_or_placeholder_token_over_http() {
    let strong = "4f9c2a7e1b3d5f60718293a4b5c6d7e8";
    let production = |token: &str| {
        load(
            &sources(&[
                ("MOAT_ENVIRONMENT", "production"),
                ("MOAT_HTTP__BEARER_TOKEN", token),
            ]),
            Transport::Http,
            true,
        )
    };
    assert!(production(strong).is_ok() || moat_worker::USERLAND_CHECKS_DISABLED);
    let e = production(&strong[1..]).unwrap_err().to_string();
    assert!(e.contains("shorter than 32 characters"), "{e}");
    for placeholder in [
        "REPLACE_ME",
        "changeme",
        "Secret",
        "token",
        "PASSWORD",
        "example",
        "xxx",
        "x".repeat(40).as_str(),
        "********************************",
        "REPLACE_ME_WITH_THE_OUTPUT_OF_OPENSSL_RAND",
        "<your-token-here>",
        "…",
    ] {
        let e = production(placeholder).unwrap_err().to_string();
        assert!(e.contains("is a placeholder"), "{placeholder}: {e}");
        assert!(!e.contains(placeholder) || placeholder.len() < 6, "{e}");
    }
    // Over stdio the token guards nothing; outside production it is a warning.
    let stdio = load(
        &sources(&[
            ("MOAT_ENVIRONMENT", "production"),
            ("MOAT_HTTP__BEARER_TOKEN", "REPLACE_ME"),
        ]),
        Transport::Stdio,
        true,
    );
    assert!(stdio.is_ok() || moat_worker::USERLAND_CHECKS_DISABLED);
    let local = load(
        &sources(&[("MOAT_HTTP__BEARER_TOKEN", "changeme")]),
        Transport::Http,
        true,
    )
    .unwrap();
    assert!(
        local.violations.iter().any(|v| v.contains("placeholder")),
        "{:?}",
        local.violations
    );
}

#[test]
fn the_debug_form_of_the_configuration_never_shows_the_bearer_token() {
    let token = "moat-debug-form-token-5f2c";
    let c = load_env(&[("MOAT_HTTP__BEARER_TOKEN", token)]).unwrap();
    assert_eq!(c.http.bearer_token, token);
    let shown = format!("{c:?}");
    assert!(!shown.contains(token), "{shown}");
    assert!(shown.contains("bearer_token: \"[redacted]\""), "{shown}");
}

/// `n` as the documentation writes a figure: thousands grouped with commas.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One row of docs/configuration.md's tables of settings.
struct DocRow {
    /// `section.key` (`environment` for the top level).
    key: String,
    /// The Default cell.
    default: String,
    /// The Bounds cell.
    bounds: String,
    /// The What-it-does cell.
    what: String,
}

/// Every row of the tables under `## Settings`, keyed by the section its
/// heading names (`### \`[http.oauth]\`: …`).
fn doc_rows(doc: &str) -> Vec<DocRow> {
    let settings = doc
        .split("\n## Settings\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/configuration.md has a Settings section");
    let mut section = String::new();
    let mut rows = Vec::new();
    for line in settings.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            section = heading
                .split('`')
                .nth(1)
                .map(|s| s.trim_matches(['[', ']']).to_owned())
                .unwrap_or_default();
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| key | env | default | bounds | what |` splits into 7 cells (or
        // more when the last holds a `|`).
        if cells.len() < 7 || !cells[1].starts_with('`') {
            continue;
        }
        let field = cells[1].trim_matches('`');
        rows.push(DocRow {
            key: if section.is_empty() {
                field.to_owned()
            } else {
                format!("{section}.{field}")
            },
            default: cells[3].to_owned(),
            bounds: cells[4].to_owned(),
            what: cells[5..cells.len() - 1].join("|"),
        });
    }
    rows
}

/// A figure as the documentation writes it, in the bound's unit: `1,024`,
/// or for a duration in seconds `0.1` or `15.0` (as milliseconds).
fn doc_figure(text: &str, unit: limits::Unit) -> Option<u64> {
    let text = text.trim().replace(',', "");
    match unit {
        limits::Unit::MillisAsSeconds => {
            let seconds: f64 = text.parse().ok()?;
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a test's parse of a small positive figure"
            )]
            Some((seconds * 1000.0).round() as u64)
        }
        limits::Unit::Number | limits::Unit::Chars => text.parse().ok(),
    }
}

/// The bounds a Bounds cell states before any `;` (`1,024–65,536`,
/// `1–100 characters`, `≤ 512 characters`), or none when it states them in
/// words (`boolean`, `an address`, `one URI or a list …`).
fn doc_bounds(cell: &str, unit: limits::Unit) -> Option<(u64, u64)> {
    let head = cell.split(';').next()?.trim();
    let head = head.strip_suffix(" characters").unwrap_or(head);
    if let Some(max) = head.strip_prefix("≤ ") {
        return Some((0, doc_figure(max, unit)?));
    }
    let (min, max) = head.split_once('–')?;
    Some((doc_figure(min, unit)?, doc_figure(max, unit)?))
}

/// The first figure in backquotes of a Default cell (`` `1048576` (1 MiB) ``).
fn doc_default(cell: &str, unit: limits::Unit) -> Option<u64> {
    doc_figure(cell.split('`').nth(1)?, unit)
}

/// docs/configuration.md's bounds and defaults are `limits::BOUNDS`: every
/// bounded setting has its row, with the same bounds and default, and no
/// row states figures for a setting the table does not bound.
///
/// What the rows state in words is checked where a figure can be found in
/// them: `sandbox.workers`' computed default (one per CPU, within its two
/// figures), the `[http.oauth]` URIs' length, number of issuers and scope
/// length, the answer frame of `max_answer_chars` and the kill grace of
/// `tool_timeout_seconds`. A text setting's default is a text, not
/// compared.
#[test]
fn the_documented_bounds_are_the_limits_table() {
    use crate::config::oauth::{MAX_ISSUERS, MAX_SCOPE_CHARS, MAX_URI_CHARS};

    let doc = include_str!("../../../docs/configuration.md");
    let rows = doc_rows(doc);
    assert!(rows.len() >= FIELDS.len(), "only {} rows read", rows.len());
    let row = |key: &str| rows.iter().find(|r| r.key == key);
    for b in limits::BOUNDS {
        let r =
            row(b.key).unwrap_or_else(|| panic!("docs/configuration.md has no row for {}", b.key));
        assert_eq!(
            doc_bounds(&r.bounds, b.unit),
            Some((b.min, b.max)),
            "{}: the doc says {:?}, the limits table {}–{}",
            b.key,
            r.bounds,
            b.min,
            b.max
        );
        if b.unit == limits::Unit::Chars {
            let (min, max) = (grouped(b.min), grouped(b.max));
            let words = if b.min == 0 {
                format!("≤ {max} characters")
            } else {
                format!("{min}–{max} characters")
            };
            assert!(
                r.bounds.starts_with(&words),
                "{}: {:?} does not say {words}",
                b.key,
                r.bounds
            );
        }
        match b.default {
            Some(d) => assert_eq!(
                doc_default(&r.default, b.unit),
                Some(d),
                "{}: the doc's default is {:?}, the limits table's {d}",
                b.key,
                r.default
            ),
            None if b.unit == limits::Unit::Chars => {}
            None => assert!(
                r.default.contains(&format!(
                    "{}–{}",
                    limits::WORKERS_DEFAULT_MIN,
                    limits::WORKERS_DEFAULT_MAX
                )),
                "{}: {:?}",
                b.key,
                r.default
            ),
        }
    }
    for r in &rows {
        let Some(kind) = FIELDS
            .iter()
            .find(|(s, f, _)| format!("{s}.{f}") == r.key)
            .map(|(_, _, k)| *k)
        else {
            continue;
        };
        let unit = if kind == super::fields::Kind::Float {
            limits::Unit::MillisAsSeconds
        } else {
            limits::Unit::Number
        };
        if doc_bounds(&r.bounds, unit).is_some() {
            assert!(
                limits::BOUNDS.iter().any(|b| b.key == r.key),
                "docs/configuration.md bounds {} ({:?}), which limits::BOUNDS does not",
                r.key,
                r.bounds
            );
        }
    }
    // What the rows say in words.
    let uri = format!("≤ {MAX_URI_CHARS} characters");
    for key in ["issuer", "audience", "resource_metadata_url"] {
        let r = row(&format!("http.oauth.{key}")).expect("a row for the oauth URIs");
        assert!(
            r.bounds.contains(&uri),
            "http.oauth.{key}: {:?} does not say {uri}",
            r.bounds
        );
    }
    let issuer = row("http.oauth.issuer").expect("a row for the issuer");
    assert!(
        issuer.bounds.contains(&format!("at most {MAX_ISSUERS}")),
        "{:?}",
        issuer.bounds
    );
    let scope = row("http.oauth.required_scope").expect("a row for the scope");
    assert!(
        scope.bounds.contains(&format!("1–{MAX_SCOPE_CHARS} ")),
        "{:?}",
        scope.bounds
    );
    let chars = row("sandbox.max_answer_chars").expect("a row for the answer budget");
    let frame = format!(
        "plus {} characters",
        grouped(limits::ANSWER_FRAME_CHARS.into())
    );
    assert!(
        chars.what.contains(&frame),
        "max_answer_chars does not say {frame}"
    );
    let timeout = row("sandbox.tool_timeout_seconds").expect("a row for the timeout");
    let grace = format!("within {} ms", limits::KILL_GRACE_MS);
    assert!(
        timeout.what.contains(&grace),
        "tool_timeout_seconds does not say {grace}"
    );
    let tokens = format!("in production ≥ {MIN_TOKEN_CHARS} ");
    for key in ["http.bearer_token", "observability.metrics_token"] {
        let r = row(key).expect("a row for the tokens");
        assert!(
            r.bounds.contains(&tokens),
            "{key}: {:?} does not say {tokens}",
            r.bounds
        );
    }
}

/// The environment variable of a `section.field` key.
fn variable(key: &str) -> String {
    format!("MOAT_{}", key.to_uppercase().replace('.', "__"))
}

/// Each bounded setting is checked against exactly its `limits::BOUNDS`
/// figures: the bounds accepted, one past them refused with the setting's
/// bounds named.
#[test]
fn the_limits_table_drives_the_checks() {
    for b in limits::BOUNDS {
        let name = variable(b.key);
        let (inside, outside): (Vec<String>, Vec<String>) = match b.unit {
            limits::Unit::Number => (
                vec![b.min.to_string(), b.max.to_string()],
                std::iter::once(b.max + 1)
                    .chain(b.min.checked_sub(1))
                    .map(|v| v.to_string())
                    .collect(),
            ),
            #[expect(clippy::cast_precision_loss, reason = "small figures")]
            limits::Unit::MillisAsSeconds => (
                vec![
                    (b.min as f64 / 1000.0).to_string(),
                    (b.max as f64 / 1000.0).to_string(),
                ],
                vec![
                    ((b.min - 1) as f64 / 1000.0).to_string(),
                    ((b.max + 1) as f64 / 1000.0).to_string(),
                ],
            ),
            limits::Unit::Chars => {
                let len = |n: u64| "x".repeat(usize::try_from(n).unwrap());
                (
                    vec![len(b.min.max(1)), len(b.max)],
                    std::iter::once(b.max + 1)
                        .chain(b.min.checked_sub(1))
                        .map(len)
                        .collect(),
                )
            }
        };
        for v in &inside {
            let got = load_env(&[(&name, v)]);
            assert!(got.is_ok(), "{name}={:.20}: {:?}", v, got.err());
        }
        for v in &outside {
            let e = load_env(&[(&name, v)]).unwrap_err().to_string();
            let says = match b.unit {
                limits::Unit::Chars if b.min == 0 => {
                    format!("{} must be at most {} characters", b.key, b.max)
                }
                limits::Unit::Chars => {
                    format!("{} must be {} to {} characters", b.key, b.min, b.max)
                }
                _ => format!("{} must be between ", b.key),
            };
            assert!(e.starts_with(&says), "{name}={v:.20}: {e}");
        }
    }
}

//! Configuration through the real binary: unknown keys refused at start-up
//! naming the key, in the TOML file and in `MOAT_*` variables; precedence
//! defaults < file < env < flags (seen through `doctor`); comma lists from
//! the environment; bounds; production invariants refusing start-up with
//! every violation listed, and the same list as `doctor` warnings elsewhere.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use moat_tests::http::{HttpMoat, Req, modern_call};
use moat_tests::{Fixture, Moat, Mode, Options, Run, run_moat};
use serde_json::json;

/// `doctor`'s `label  value` lines (labels padded to 19 columns).
fn doctor_lines(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter(|l| l.len() > 19 && !l.starts_with(' '))
        .map(|l| (l[..19].trim().to_owned(), l[19..].trim().to_owned()))
        .collect()
}

fn doctor(
    root: &Path,
    extra_args: &[&str],
    env: &[(&str, &str)],
) -> (Run, BTreeMap<String, String>) {
    let mut args: Vec<&std::ffi::OsStr> = vec!["doctor".as_ref()];
    args.extend(extra_args.iter().map(|a| std::ffi::OsStr::new(*a)));
    if !extra_args.contains(&"--workspace")
        && !env.iter().any(|(k, _)| *k == "MOAT_SANDBOX__WORKSPACE")
    {
        args.push("--workspace".as_ref());
        args.push(root.as_os_str());
    }
    let run = run_moat(&args, env);
    let lines = doctor_lines(&run.stdout);
    (run, lines)
}

/// `moat serve` (stdio, stdin at EOF) with `env` and a config file holding
/// `toml` (if any): a valid configuration serves nothing and exits 0.
fn serve_with(fx: &Fixture, toml: Option<&str>, env: &[(&str, &str)]) -> Run {
    let file = fx.outside.join("moat.toml");
    let mut args = vec![
        "serve".to_owned(),
        "--workspace".to_owned(),
        fx.root.display().to_string(),
    ];
    if let Some(t) = toml {
        std::fs::write(&file, t).unwrap();
        args.push("--config".into());
        args.push(file.display().to_string());
    }
    run_moat(&args, env)
}

#[track_caller]
fn assert_refused(run: &Run, naming: &[&str]) {
    assert_eq!(run.code, Some(2), "{run}");
    assert!(run.stdout.is_empty(), "stdout must stay empty: {run}");
    for n in naming {
        assert!(run.stderr.contains(n), "stderr should name {n}: {run}");
    }
}

#[test]
fn a_valid_configuration_serves_and_exits_zero_on_eof() {
    let fx = Fixture::new();
    let run = serve_with(&fx, Some("[sandbox]\nmax_read_lines = 50\n"), &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.is_empty(), "{run}");
}

#[test]
fn unknown_keys_in_the_file_are_refused_naming_the_key() {
    let fx = Fixture::new();
    for (toml, key) in [
        ("[sandbox]\nmax_file_btyes = 10\n", "max_file_btyes"),
        ("[sandboxx]\nworkers = 1\n", "sandboxx"),
        ("enviroment = \"local\"\n", "enviroment"),
        ("[http]\nbearer_tokn = \"x\"\n", "bearer_tokn"),
        ("[observability]\nlog_levle = \"info\"\n", "log_levle"),
    ] {
        assert_refused(&serve_with(&fx, Some(toml), &[]), &[key]);
    }
}

#[test]
fn unknown_moat_variables_are_refused_naming_them() {
    let fx = Fixture::new();
    for key in [
        "MOAT_SANDBOX__MAX_FILE_BTYES",
        "MOAT_SANDBOXX__WORKERS",
        "MOAT_HTTP__BEARER_TOKN",
        "MOAT_NOPE",
        "MOAT_SERVER_NAME",
    ] {
        assert_refused(&serve_with(&fx, None, &[(key, "1")]), &[key]);
    }
    // Variables without our prefix are none of our business.
    let run = serve_with(&fx, None, &[("MCP_SANDBOX__MAX_FILE_BTYES", "1")]);
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn a_misspelt_setting_is_answered_with_the_one_most_likely_meant() {
    let fx = Fixture::new();
    for (key, meant) in [
        ("MOAT_WORKSPACE", "did you mean `MOAT_SANDBOX__WORKSPACE`?"),
        (
            "MOAT_SANDBOX_WORKERS",
            "did you mean `MOAT_SANDBOX__WORKERS`?",
        ),
        (
            "MOAT_HTTP__BEARER_TOKN",
            "did you mean `MOAT_HTTP__BEARER_TOKEN`?",
        ),
        (
            "MOAT_LOG_LEVEL",
            "did you mean `MOAT_OBSERVABILITY__LOG_LEVEL`?",
        ),
        ("MOAT_SERVICE_HOST", "enableServiceLinks: false"),
    ] {
        assert_refused(&serve_with(&fx, None, &[(key, "1")]), &[key, meant]);
    }
    let file = fx.outside.join("moat.toml").display().to_string();
    for (toml, naming) in [
        (
            "[sandbox]\nmax_file_btyes = 10\n",
            "unknown key `max_file_btyes` in [sandbox]; did you mean `max_file_bytes`?",
        ),
        (
            "[http]\nworkspace = \"/srv\"\n",
            "unknown key `workspace` in [http]; did you mean `workspace` in `[sandbox]`?",
        ),
        (
            "[observabilty]\n",
            "unknown table [observabilty]; did you mean `[observability]`?",
        ),
    ] {
        assert_refused(&serve_with(&fx, Some(toml), &[]), &[naming, &file]);
    }
}

#[test]
fn a_relative_workspace_in_the_file_is_read_from_the_file_s_directory() {
    let fx = Fixture::new();
    fx.file("marker.txt", "here\n");
    let conf = fx.outside.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    let file = conf.join("moat.toml");
    std::fs::write(&file, "[sandbox]\nworkspace = \"../../proj\"\n").unwrap();
    // The test runs from its own directory, nowhere near either.
    let (run, d) = doctor(
        &fx.root,
        &["--config", file.to_str().unwrap()],
        &[("MOAT_SANDBOX__WORKSPACE", "")],
    );
    // An empty variable is refused by name, even next to a file that sets it.
    assert_eq!(run.code, Some(1), "{run}");
    assert!(
        run.stderr.contains("MOAT_SANDBOX__WORKSPACE is empty"),
        "{run}"
    );
    drop(d);
    let run = run_moat(["doctor", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    let d = doctor_lines(&run.stdout);
    assert_eq!(d["workspace"], fx.root.display().to_string(), "{run}");
}

#[test]
fn an_empty_workspace_is_called_empty() {
    let fx = Fixture::new();
    // The flag's parser refuses an empty value itself, naming the flag.
    let flag = run_moat(["serve", "--workspace", ""], &[]);
    assert_refused(&flag, &["--workspace", "none was supplied"]);
    let env = run_moat(["serve"], &[("MOAT_SANDBOX__WORKSPACE", "")]);
    assert_refused(&env, &["MOAT_SANDBOX__WORKSPACE is empty"]);
    let file = fx.outside.join("moat.toml");
    std::fs::write(&file, "[sandbox]\nworkspace = \"\"\n").unwrap();
    let in_file = run_moat(["serve", "--config", file.to_str().unwrap()], &[]);
    assert_refused(
        &in_file,
        &["`workspace` in [sandbox] is empty", "moat.toml"],
    );
    for run in [&flag, &env, &in_file] {
        assert!(!run.stderr.contains("cannot be resolved"), "{run}");
    }
}

#[test]
fn choices_are_read_in_any_case_and_warn_is_a_log_level() {
    let fx = Fixture::new();
    for (k, v) in [
        ("MOAT_SANDBOX__MODE", "In-Process"),
        ("MOAT_SANDBOX__MODE", "CONFINED"),
        ("MOAT_OBSERVABILITY__LOG_LEVEL", "warn"),
        ("MOAT_OBSERVABILITY__LOG_LEVEL", "WARNING"),
        ("MOAT_OBSERVABILITY__LOG_LEVEL", "Debug"),
        ("MOAT_ENVIRONMENT", "Local"),
    ] {
        let run = serve_with(&fx, None, &[(k, v)]);
        assert_eq!(run.code, Some(0), "{k}={v}: {run}");
    }
    let run = serve_with(&fx, Some("[sandbox]\nmode = \"IN-PROCESS\"\n"), &[]);
    assert_eq!(run.code, Some(0), "{run}");
    let root = fx.root.display().to_string();
    let run = run_moat(["doctor", "--transport", "HTTP", "--workspace", &root], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    // At `warn`, the info line that stdio serving starts with is not logged,
    // and the in-process warning is.
    let run = serve_with(
        &fx,
        None,
        &[
            ("MOAT_OBSERVABILITY__LOG_LEVEL", "WARN"),
            ("MOAT_SANDBOX__MODE", "in-process"),
        ],
    );
    assert!(!run.stderr.contains("stdio.started"), "{run}");
    assert!(run.stderr.contains("sandbox.in_process"), "{run}");
    let run = serve_with(&fx, None, &[("MOAT_SANDBOX__MODE", "jail")]);
    assert_refused(&run, &["sandbox.mode must be one of confined, in-process"]);
}

#[test]
fn production_refuses_a_short_or_placeholder_bearer_token() {
    let fx = Fixture::new();
    for (token, naming) in [
        ("REPLACE_ME", "is a placeholder"),
        ("changeme", "is a placeholder"),
        ("SECRET", "is a placeholder"),
        (
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "is a placeholder",
        ),
        (
            "0123456789abcdef0123456789abcde",
            "shorter than 32 characters",
        ),
    ] {
        let run = http_serve(
            &fx,
            &[
                ("MOAT_ENVIRONMENT", "production"),
                ("MOAT_HTTP__BEARER_TOKEN", token),
            ],
        );
        assert_refused(&run, &["MOAT_HTTP__BEARER_TOKEN", naming]);
        assert!(
            !run.stderr.contains(token),
            "the token is not repeated: {run}"
        );
    }
    // Outside production the same token is a warning.
    let (run, _) = doctor(
        &fx.root,
        &["--transport", "http"],
        &[("MOAT_HTTP__BEARER_TOKEN", "changeme")],
    );
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("is a placeholder"), "{run}");
}

#[test]
fn unreadable_or_malformed_files_are_refused() {
    let fx = Fixture::new();
    assert_refused(&serve_with(&fx, Some("[sandbox\n"), &[]), &["moat.toml"]);
    assert_refused(
        &serve_with(&fx, Some("[http]\nport = \"80\"\n"), &[]),
        &["port"],
    );
    let missing = fx.outside.join("absent.toml");
    let run = run_moat(
        [
            "serve".as_ref(),
            "--config".as_ref(),
            missing.as_os_str(),
            "--workspace".as_ref(),
            fx.root.as_os_str(),
        ],
        &[],
    );
    assert_refused(&run, &["absent.toml"]);
}

#[test]
fn precedence_is_defaults_then_file_then_environment_then_flags() {
    let fx = Fixture::new();
    let other = fx.outside.join("other-ws");
    let third = fx.outside.join("third-ws");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::create_dir_all(&third).unwrap();
    let file = fx.outside.join("p.toml");
    std::fs::write(
        &file,
        format!(
            "[sandbox]\nworkspace = \"{}\"\nmax_read_lines = 50\nmax_file_bytes = 2048\n",
            other.display()
        ),
    )
    .unwrap();
    let file_arg = file.display().to_string();

    // Defaults.
    let (run, d) = doctor(&fx.root, &[], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(d["max read lines"], "4000", "{run}");
    assert_eq!(d["max file bytes"], "1048576", "{run}");

    // The file over the defaults (its workspace too: no flag, no variable).
    let run_file = run_moat(["doctor", "--config", &file_arg], &[]);
    let df = doctor_lines(&run_file.stdout);
    assert_eq!(run_file.code, Some(0), "{run_file}");
    assert_eq!(df["max read lines"], "50", "{run_file}");
    assert_eq!(df["max file bytes"], "2048", "{run_file}");
    assert_eq!(df["workspace"], other.display().to_string(), "{run_file}");

    // The environment over the file.
    let third_s = third.display().to_string();
    let run_env = run_moat(
        ["doctor", "--config", &file_arg],
        &[
            ("MOAT_SANDBOX__MAX_READ_LINES", "60"),
            ("MOAT_SANDBOX__WORKSPACE", &third_s),
        ],
    );
    let de = doctor_lines(&run_env.stdout);
    assert_eq!(de["max read lines"], "60", "{run_env}");
    assert_eq!(
        de["max file bytes"], "2048",
        "the file still counts: {run_env}"
    );
    assert_eq!(de["workspace"], third_s, "{run_env}");

    // The flag over the environment.
    let root_s = fx.root.display().to_string();
    let run_flag = run_moat(
        ["doctor", "--config", &file_arg, "--workspace", &root_s],
        &[
            ("MOAT_SANDBOX__MAX_READ_LINES", "60"),
            ("MOAT_SANDBOX__WORKSPACE", &third_s),
        ],
    );
    let dg = doctor_lines(&run_flag.stdout);
    assert_eq!(dg["workspace"], root_s, "{run_flag}");
    assert_eq!(dg["max read lines"], "60", "{run_flag}");
}

#[test]
fn lists_from_the_environment_are_comma_separated() {
    let fx = Fixture::new();
    fx.file("notes.md", "private notes\n");
    fx.file("build.log", "log\n");
    fx.file("a.txt", "alpha\n");
    let env = [("MOAT_SANDBOX__DENY_EXTRA", " notes.md , ,*.LOG,")];
    let (run, d) = doctor(&fx.root, &[], &env);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(d["denied names"], "50", "{run}");
    assert_eq!(d["denied patterns"], "33", "{run}");
    let root = fx.root.display().to_string();
    for (path, denied) in [("notes.md", true), ("build.log", true), ("a.txt", false)] {
        let args = json!({"path": path}).to_string();
        let run = run_moat(
            ["call", "read_file", &args, "--json", "--workspace", &root],
            &env,
        );
        let v: serde_json::Value =
            serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run}"));
        let code = v["result"]["structuredContent"]["error"]
            .as_str()
            .unwrap_or("");
        if denied {
            assert_eq!(code, "denied_path", "{path}: {run}");
        } else {
            assert_eq!(code, "", "{path}: {run}");
        }
    }
    // The same list in the file is a TOML array.
    let run = serve_with(&fx, Some("[sandbox]\ndeny_extra = [\"notes.md\"]\n"), &[]);
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn out_of_range_values_are_refused() {
    let fx = Fixture::new();
    for (key, value, naming) in [
        (
            "MOAT_SANDBOX__MAX_FILE_BYTES",
            "1",
            "sandbox.max_file_bytes",
        ),
        (
            "MOAT_SANDBOX__MAX_FILE_BYTES",
            "999999999999",
            "sandbox.max_file_bytes",
        ),
        ("MOAT_HTTP__PORT", "70000", "http.port"),
        (
            "MOAT_HTTP__MAX_REQUEST_BYTES",
            "10",
            "http.max_request_bytes",
        ),
        ("MOAT_HTTP__MAX_CONNECTIONS", "0", "http.max_connections"),
        ("MOAT_HTTP__MAX_IN_FLIGHT", "0", "http.max_in_flight"),
        (
            "MOAT_HTTP__HEADER_TIMEOUT_MS",
            "5",
            "http.header_timeout_ms",
        ),
        (
            "MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS",
            "0",
            "tool_timeout_seconds",
        ),
        ("MOAT_SANDBOX__WORKERS", "0", "sandbox.workers"),
        (
            "MOAT_SANDBOX__FOLLOW_SYMLINKS",
            "maybe",
            "MOAT_SANDBOX__FOLLOW_SYMLINKS",
        ),
        (
            "MOAT_SANDBOX__MAX_READ_LINES",
            "-5",
            "MOAT_SANDBOX__MAX_READ_LINES",
        ),
        ("MOAT_SANDBOX__MODE", "jail", "sandbox.mode"),
        ("MOAT_OBSERVABILITY__LOG_LEVEL", "verbose", "log_level"),
        ("MOAT_ENVIRONMENT", "prod", "environment"),
    ] {
        let run = serve_with(&fx, None, &[(key, value)]);
        assert_refused(&run, &[naming]);
    }
    assert_refused(
        &serve_with(&fx, Some("[http]\nport = 70000\n"), &[]),
        &["http.port"],
    );
}

/// Each production violation, with the name its message starts with.
const VIOLATIONS: &[(&str, &str, &str)] = &[
    (
        "MOAT_SECURITY__REDACT_SECRETS",
        "false",
        "MOAT_SECURITY__REDACT_SECRETS",
    ),
    (
        "MOAT_SECURITY__SCAN_UNTRUSTED_CONTENT",
        "false",
        "MOAT_SECURITY__SCAN_UNTRUSTED_CONTENT",
    ),
    (
        "MOAT_SANDBOX__FOLLOW_SYMLINKS",
        "true",
        "MOAT_SANDBOX__FOLLOW_SYMLINKS",
    ),
    ("MOAT_SANDBOX__MODE", "in-process", "MOAT_SANDBOX__MODE"),
];

/// A bearer token production accepts (32 characters or more, no placeholder).
const TOKEN: &str = "t0ken-for-production-8a41f07c2e9b";

fn http_serve(fx: &Fixture, env: &[(&str, &str)]) -> Run {
    let root = fx.root.display().to_string();
    let mut all = vec![("MOAT_HTTP__PORT", "0")];
    all.extend_from_slice(env);
    run_moat(["serve", "--transport", "http", "--workspace", &root], &all)
}

#[test]
fn production_refuses_start_up_listing_every_violation() {
    let fx = Fixture::new();
    let root = fx.root.display().to_string();
    let mut env: Vec<(&str, &str)> = vec![("MOAT_ENVIRONMENT", "production"), ("HOME", &root)];
    env.extend(VIOLATIONS.iter().map(|(k, v, _)| (*k, *v)));
    let run = http_serve(&fx, &env);
    let mut names: Vec<&str> = VIOLATIONS.iter().map(|(_, _, n)| *n).collect();
    names.extend([
        "MOAT_HTTP__BEARER_TOKEN",
        "MOAT_SANDBOX__WORKSPACE",
        "home or root directory",
        "refusing to start in production",
    ]);
    assert_refused(&run, &names);
    let listed = run.stderr.lines().filter(|l| l.starts_with("  - ")).count();
    assert_eq!(listed, 6, "one line per violation: {run}");

    // Each one alone is enough (the token is set so only it is wrong).
    for (k, v, name) in VIOLATIONS {
        let run = http_serve(
            &fx,
            &[
                ("MOAT_ENVIRONMENT", "production"),
                ("MOAT_HTTP__BEARER_TOKEN", TOKEN),
                (k, v),
            ],
        );
        assert_refused(&run, &[name]);
        assert_eq!(
            run.stderr.lines().filter(|l| l.starts_with("  - ")).count(),
            1,
            "{run}"
        );
    }
    let run = http_serve(&fx, &[("MOAT_ENVIRONMENT", "production")]);
    assert_refused(&run, &["MOAT_HTTP__BEARER_TOKEN"]);
    // The explicit opt-out accepts the in-process mode, and only that.
    let run = http_serve(
        &fx,
        &[
            ("MOAT_ENVIRONMENT", "PRODUCTION"),
            ("MOAT_HTTP__BEARER_TOKEN", TOKEN),
            ("MOAT_SANDBOX__MODE", "in-process"),
            ("MOAT_SANDBOX__ALLOW_IN_PROCESS_IN_PRODUCTION", "true"),
            ("MOAT_SECURITY__REDACT_SECRETS", "false"),
        ],
    );
    assert_refused(&run, &["MOAT_SECURITY__REDACT_SECRETS"]);
    assert!(!run.stderr.contains("MOAT_SANDBOX__MODE"), "{run}");
}

#[test]
fn a_correct_production_configuration_starts() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let token = "t0ken-for-production-4c1d9e27b05a6f38";
    let opts = Options::new(Mode::Confined)
        .env("MOAT_ENVIRONMENT", "production")
        .env("MOAT_HTTP__BEARER_TOKEN", token)
        .env("MOAT_SANDBOX__WORKERS", "1");
    let mut s = HttpMoat::start(&fx.root, &opts);
    let r = s.send(&Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"}))).bearer(token));
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(r.json()["result"]["isError"], false, "{r}");
    assert!(s.events("config.warning").is_empty(), "{}", s.stderr());
    s.signal(libc::SIGTERM);
    assert_eq!(
        s.wait_exit(Duration::from_secs(10)).unwrap().code(),
        Some(0)
    );

    // Over stdio the token is not needed (it guards the HTTP endpoint).
    let opts = Options::new(Mode::Confined)
        .env("MOAT_ENVIRONMENT", "production")
        .env("MOAT_SANDBOX__WORKERS", "1");
    let mut m = Moat::connect(&fx.root, &opts, moat_tests::Era::Modern);
    assert!(m.tool_names().contains(&"read_file".to_owned()));
    assert!(m.close().success());
}

#[test]
fn outside_production_the_violations_are_doctor_warnings() {
    let fx = Fixture::new();
    for environment in ["local", "staging"] {
        let mut env: Vec<(&str, &str)> = vec![("MOAT_ENVIRONMENT", environment)];
        env.extend(VIOLATIONS.iter().map(|(k, v, _)| (*k, *v)));
        let (run, d) = doctor(&fx.root, &["--transport", "http"], &env);
        assert_eq!(run.code, Some(0), "{run}");
        assert_eq!(d["environment"], environment, "{run}");
        let warnings: Vec<&str> = run
            .stdout
            .split("\nwarnings:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("no warnings section: {run}"))
            .lines()
            .take_while(|l| l.starts_with("  - "))
            .collect();
        for (_, _, name) in VIOLATIONS {
            assert!(
                warnings
                    .iter()
                    .any(|w| w.starts_with(&format!("  - {name}"))),
                "{name} not warned: {run}"
            );
        }
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("MOAT_HTTP__BEARER_TOKEN")),
            "{run}"
        );
        assert_eq!(warnings.len(), 5, "{run}");
        assert_eq!(
            run.stdout.trim_end().lines().last(),
            Some("ready, with warnings"),
            "{run}"
        );
    }
    // A clean configuration has no warnings section.
    let (run, _) = doctor(&fx.root, &[], &[]);
    assert!(!run.stdout.contains("warnings:"), "{run}");
    assert_eq!(run.stdout.trim_end().lines().last(), Some("ready"), "{run}");
}

#[test]
fn doctor_in_production_refuses_a_violating_configuration() {
    let fx = Fixture::new();
    let (run, _) = doctor(
        &fx.root,
        &["--transport", "http"],
        &[("MOAT_ENVIRONMENT", "production")],
    );
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("configuration refused"), "{run}");
    assert!(run.stderr.contains("MOAT_HTTP__BEARER_TOKEN"), "{run}");
}

/// The numeric bounds docs/configuration.md states for each setting are the
/// ones the binary enforces: both ends accepted, one step past either end
/// refused naming the setting.
#[test]
fn every_documented_numeric_bound_is_the_one_enforced() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md"),
    )
    .expect("docs/configuration.md");
    let fx = Fixture::new();
    let mut checked = Vec::new();
    for row in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        if cells.len() < 4 {
            continue;
        }
        let (Some(key), Some(var)) = (
            cells[0]
                .strip_prefix("| `")
                .and_then(|k| k.strip_suffix('`')),
            cells[1].strip_prefix('`').and_then(|v| v.strip_suffix('`')),
        ) else {
            continue;
        };
        let Some((low, high)) = cells[3].split_once('–') else {
            continue;
        };
        let number = |s: &str| s.trim().replace(',', "").parse::<f64>().ok();
        let (Some(low), Some(high)) = (number(low), number(high)) else {
            continue;
        };
        let integer = low.fract() == 0.0 && high.fract() == 0.0 && !cells[3].contains('.');
        let show = |v: f64| {
            if integer {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        };
        let step = if integer { 1.0 } else { low.min(1.0) / 10.0 };
        for v in [low, high] {
            let run = serve_with(&fx, None, &[(var, &show(v))]);
            assert_eq!(
                run.code,
                Some(0),
                "{key} = {} is documented as allowed: {run}",
                show(v)
            );
        }
        for v in [high + step, low - step] {
            if v < 0.0 {
                continue;
            }
            let run = serve_with(&fx, None, &[(var, &show(v))]);
            assert_eq!(
                run.code,
                Some(2),
                "{key} = {} is documented as refused: {run}",
                show(v)
            );
            assert!(run.stderr.contains(key), "{key}: {run}");
        }
        checked.push(key.to_owned());
    }
    // The rows that have numeric bounds are all found (a table change that
    // breaks the parse must not pass silently).
    for key in [
        "max_file_bytes",
        "max_read_lines",
        "max_search_results",
        "max_result_bytes",
        "max_answer_chars",
        "tool_timeout_seconds",
        "max_answer_bytes",
        "queue_timeout_ms",
    ] {
        assert!(
            checked.iter().any(|k| k == key),
            "{key} not checked: {checked:?}"
        );
    }
}

//! The kernel alone: every escape still fails when moat's own checks are
//! switched off.
//!
//! [`dangerous_moat_bin`] is `moat` built with the TEST-ONLY feature
//! `moat-worker/dangerous-disable-userland-checks`: path containment and the
//! denylist hand the client's path to the kernel as given
//! (`worker/src/fs/containment.rs`, `dangerous_unchecked`), so in confined
//! mode only Landlock stands between a request and the rest of the machine.
//! The worker maps the kernel's `EACCES`/`EPERM` to `outside_workspace`
//! ("the sandbox refused access").
//!
//! The in-process test is the control experiment: the same binary without the
//! kernel layer *does* return the secret, so the confined tests would fail if
//! Landlock were not doing the refusing.

use std::path::Path;

use moat_tests::{Era, Fixture, Moat, Mode, Options, dangerous_moat_bin, error_code, moat_bin};
use serde_json::{Value, json};

/// The text of the Fixture's `outside/secret.txt` (and `outside/id_ed25519`).
const SECRET: &str = "OUTSIDE-SECRET-7d1f";

fn dangerous(fx: &Fixture, mode: Mode) -> Moat {
    let mut opts = Options::new(mode);
    opts.bin = Some(dangerous_moat_bin());
    Moat::connect(&fx.root, &opts, Era::Modern)
}

/// All text a tool result carries, blocks and structured content alike.
fn everything(result: &Value) -> String {
    result.to_string()
}

/// Whether `result` served `line` as a line of file content: a fenced content
/// block holds `N  <line>`. The in-process control test shows this predicate
/// does see a leak, so its absence in confined mode means something.
fn served_line(result: &Value, line: &str) -> bool {
    result["content"].as_array().is_some_and(|blocks| {
        blocks.iter().filter_map(|b| b["text"].as_str()).any(|t| {
            t.lines()
                .any(|l| l.split_once("  ").is_some_and(|(_, rest)| rest == line))
        })
    })
}

/// Whether a `list_directory` result names `name` among its entries.
fn lists(result: &Value, name: &str) -> bool {
    result["structuredContent"]["entries"]
        .as_array()
        .is_some_and(|e| e.iter().any(|x| x["name"] == name))
}

/// The refusal a kernel denial becomes.
fn assert_kernel_refused(result: &Value, what: &str) {
    assert_eq!(result["isError"], json!(true), "{what}: {result}");
    assert_eq!(error_code(result), "outside_workspace", "{what}: {result}");
    assert!(
        result["structuredContent"]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the sandbox refused access"),
        "{what}: {result}"
    );
    assert!(!everything(result).contains(SECRET), "{what}: {result}");
}

fn hostname() -> String {
    let text = std::fs::read_to_string("/etc/hostname").unwrap();
    let first = text.lines().next().unwrap_or_default().to_owned();
    assert!(
        !first.is_empty(),
        "the test needs a non-empty /etc/hostname"
    );
    first
}

#[test]
fn etc_hostname_is_refused_by_the_kernel_alone() {
    let fx = Fixture::new();
    let mut m = dangerous(&fx, Mode::Confined);
    let r = m.call("read_file", json!({"path": "/etc/hostname"}));
    assert_kernel_refused(&r, "/etc/hostname");
    assert!(!served_line(&r, &hostname()), "{r}");
    assert!(r["structuredContent"].get("size_bytes").is_none(), "{r}");
}

#[test]
fn an_absolute_path_outside_is_refused_by_the_kernel_alone() {
    let fx = Fixture::new();
    let mut m = dangerous(&fx, Mode::Confined);
    let secret = fx.outside.join("secret.txt");
    let r = m.call("read_file", json!({"path": secret}));
    assert_kernel_refused(&r, "absolute outside path");
    let r = m.call("read_file", json!({"path": "../outside/secret.txt"}));
    assert_kernel_refused(&r, "../outside/secret.txt");
    // Not in the logs either.
    assert!(!m.stderr().contains(SECRET));
}

#[test]
fn an_escaping_symlink_is_refused_by_the_kernel_alone() {
    let fx = Fixture::new();
    fx.symlink("escape_abs", fx.outside.join("secret.txt"));
    fx.symlink("escape_rel", "../outside/secret.txt");
    fx.symlink("host", "/etc/hostname");
    let mut m = dangerous(&fx, Mode::Confined);
    for link in ["escape_abs", "escape_rel", "host"] {
        let r = m.call("read_file", json!({"path": link}));
        assert_kernel_refused(&r, link);
        assert!(!served_line(&r, &hostname()), "{link}: {r}");
    }
}

#[test]
fn listing_outside_directories_is_refused_by_the_kernel_alone() {
    let fx = Fixture::new();
    let mut m = dangerous(&fx, Mode::Confined);
    let r = m.call("list_directory", json!({"path": "/"}));
    assert_kernel_refused(&r, "/");
    assert!(!lists(&r, "etc"), "{r}");
    let r = m.call("list_directory", json!({"path": "../outside"}));
    assert_kernel_refused(&r, "../outside");
    assert!(!lists(&r, "secret.txt"), "{r}");
}

#[test]
fn files_inside_still_read_with_userland_checks_off() {
    let fx = Fixture::new();
    fx.file("src/in.txt", "INSIDE-OK-31\n");
    let mut m = dangerous(&fx, Mode::Confined);
    let r = m.call("read_file", json!({"path": "src/in.txt"}));
    assert_ne!(r["isError"], json!(true), "{r}");
    assert!(served_line(&r, "INSIDE-OK-31"), "{r}");
    let r = m.call("list_directory", json!({"path": "src"}));
    assert!(lists(&r, "in.txt"), "{r}");
}

/// The control experiment: the same binary, without the kernel layer, leaks
/// every one of the paths above. If Landlock were not what refuses them in
/// confined mode, the tests above would see this instead.
#[test]
fn in_process_the_same_binary_leaks_which_is_what_the_kernel_layer_prevents() {
    let fx = Fixture::new();
    fx.symlink("escape_abs", fx.outside.join("secret.txt"));
    let mut m = dangerous(&fx, Mode::InProcess);
    let secret = fx.outside.join("secret.txt");
    for path in [
        json!(secret),
        json!("../outside/secret.txt"),
        json!("escape_abs"),
    ] {
        let r = m.call("read_file", json!({ "path": path }));
        assert!(served_line(&r, SECRET), "{path}: {r}");
    }
    let r = m.call("read_file", json!({"path": "/etc/hostname"}));
    assert!(served_line(&r, &hostname()), "{r}");
    let r = m.call("list_directory", json!({"path": "/"}));
    assert!(lists(&r, "etc"), "{r}");
}

/// A documented residual (docs/sandbox.md): Landlock checks the path a file
/// is opened by, not where else the inode lives, so a hard link placed in the
/// workspace reaches an outside file. moat's own `nlink > 1` refusal is what
/// stops it; with the userland checks off the kernel lets it through.
#[test]
fn a_hard_link_is_refused_by_moat_because_landlock_cannot_see_it() {
    let fx = Fixture::new();
    fx.hardlink("linked.txt", &fx.outside.join("secret.txt"));

    let mut kernel_only = dangerous(&fx, Mode::Confined);
    let r = kernel_only.call("read_file", json!({"path": "linked.txt"}));
    assert!(
        served_line(&r, SECRET),
        "if Landlock ever refuses this, update docs/sandbox.md: {r}"
    );

    let mut real = Moat::connect(&fx.root, &Options::new(Mode::Confined), Era::Modern);
    let r = real.call("read_file", json!({"path": "linked.txt"}));
    assert_eq!(error_code(&r), "hard_link", "{r}");
    assert!(!everything(&r).contains(SECRET), "{r}");
}

fn run(bin: &Path, args: &[&str], root: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let ws = [std::ffi::OsStr::new("--workspace"), root.as_os_str()];
    let args = args.iter().map(std::ffi::OsStr::new).chain(ws);
    let out = moat_tests::run_bin(bin, args, env);
    (out.code.unwrap_or(-1), out.stdout, out.stderr)
}

const FEATURE: &str = "dangerous-disable-userland-checks";

#[test]
fn the_dangerous_build_refuses_to_serve_in_production() {
    let fx = Fixture::new();
    let prod = [("MOAT_ENVIRONMENT", "production")];
    let (code, stdout, stderr) = run(&dangerous_moat_bin(), &["serve"], &fx.root, &prod);
    assert_eq!(code, 2, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("refusing to start in production") && stderr.contains(FEATURE),
        "{stderr}"
    );
    // The normal binary, same configuration, serves (and exits 0 at EOF).
    let (code, _, stderr) = run(&moat_bin(), &["serve"], &fx.root, &prod);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn doctor_flags_the_dangerous_build() {
    let fx = Fixture::new();
    let (code, stdout, stderr) = run(&dangerous_moat_bin(), &["doctor"], &fx.root, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let warnings = stdout.split("\nwarnings:\n").nth(1).unwrap_or_default();
    assert!(warnings.contains(FEATURE), "{stdout}");
    assert!(stdout.ends_with("\nready, with warnings\n"), "{stdout}");

    let prod = [("MOAT_ENVIRONMENT", "production")];
    let (code, stdout, stderr) = run(&dangerous_moat_bin(), &["doctor"], &fx.root, &prod);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("refusing to start in production") && stderr.contains(FEATURE),
        "{stderr}"
    );
}

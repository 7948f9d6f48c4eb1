//! The denylist: credential and key files refused at any depth and in any
//! case, checked on the resolved path, extensible but never shortened, and
//! never named in listings.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::json;

use super::util::{call_err, call_ok, fenced_body};

const CONTENT: &str = "DENIED-CONTENT-91ab";

/// Files that must be refused, each created so the refusal is not a miss.
const DENIED: [&str; 22] = [
    ".env",
    ".ENV",
    ".env.production",
    "config/.env",
    "deploy.pem",
    "Deploy.PEM",
    "keys/server.pem",
    "id_rsa",
    "nested/deep/id_ed25519",
    ".git/config",
    ".git/HEAD",
    ".ssh/known_hosts",
    ".ssh/config",
    ".SSH/other",
    ".aws/credentials",
    "terraform.tfstate",
    "backup_rsa",
    ".config/gcloud/creds.json",
    "sub/.config/gcloud/creds.json",
    "node_modules/.cache/x.js",
    "pkg/node_modules/.cache/y.js",
    "secrets/service-account.json",
];

/// Paths that reach a denied file by another spelling.
const ALIASES: [&str; 5] = [
    "docs/../.env",
    "./.env",
    "config/../.env",
    "nested/./deep/id_ed25519",
    "docs/../.ssh/config",
];

const ALLOWED: [&str; 6] = [
    "src/main.py",
    "README.md",
    "docs/env-setup.md",
    "environment.py",
    "node_modules/leftpad/index.js",
    "docs/readme.md",
];

fn fixture() -> Fixture {
    let fx = Fixture::new();
    for p in DENIED {
        // `.ENV` and `.env` are two files only on a case-sensitive file system.
        fx.file(p, format!("{CONTENT}\n"));
    }
    for p in ALLOWED {
        fx.file(p, "fine\n");
    }
    fx
}

#[test]
fn denied_files_are_refused() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            for p in DENIED.iter().chain(&ALIASES) {
                let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
                assert_eq!(code, "denied_path", "{mode:?}/{era:?} {p}: {r}");
                assert!(!r.to_string().contains(CONTENT), "{r}");
                assert!(r["structuredContent"]["remedy"].is_string(), "{r}");
            }
            for p in ALLOWED {
                let r = call_ok(&mut m, "read_file", json!({"path": p}));
                assert_eq!(fenced_body(&r), "1  fine", "{p}");
            }
        }
    }
}

#[test]
fn denied_directories_cannot_be_listed() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for p in [
            ".git",
            ".ssh",
            ".SSH",
            ".aws",
            ".config/gcloud",
            "pkg/node_modules/.cache",
        ] {
            let (code, r) = call_err(&mut m, "list_directory", json!({"path": p}));
            assert_eq!(code, "denied_path", "{p}: {r}");
        }
        // Their parents can be.
        let r = call_ok(&mut m, "list_directory", json!({"path": ".config"}));
        assert_eq!(r["structuredContent"]["hidden_by_denylist"], 1, "{r}");
        let r = call_ok(&mut m, "list_directory", json!({"path": "node_modules"}));
        assert_eq!(
            r["structuredContent"]["entries"].as_array().unwrap().len(),
            1,
            "{r}"
        );
    }
}

#[test]
fn multi_segment_directories_are_denied_at_any_depth() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    for p in [
        "sub/.config/gcloud/creds.json",
        "pkg/node_modules/.cache/y.js",
    ] {
        let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
        assert_eq!(code, "denied_path", "{p}: {r}");
        assert!(!r.to_string().contains(CONTENT));
    }
}

#[test]
fn the_reason_quotes_the_rule() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    let (_, r) = call_err(&mut m, "read_file", json!({"path": ".env"}));
    assert!(text(&r, 0).contains("'.env'"), "{r}");
    let (_, r) = call_err(&mut m, "read_file", json!({"path": "Deploy.PEM"}));
    assert!(text(&r, 0).contains("'*.pem'"), "{r}");
    let (_, r) = call_err(&mut m, "read_file", json!({"path": ".git/HEAD"}));
    assert!(text(&r, 0).contains("'.git'"), "{r}");
}

#[test]
fn deny_extra_extends_the_list() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__DENY_EXTRA", "README.md, *.py");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        for p in [
            "README.md",
            "docs/readme.md",
            "src/main.py",
            "environment.py",
        ] {
            let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
            assert_eq!(code, "denied_path", "{mode:?} {p}: {r}");
        }
        let r = call_ok(&mut m, "read_file", json!({"path": "docs/env-setup.md"}));
        assert_eq!(fenced_body(&r), "1  fine");
        // The built-in entries are still there.
        let (code, _) = call_err(&mut m, "read_file", json!({"path": ".env"}));
        assert_eq!(code, "denied_path");
    }
}

#[test]
fn an_empty_deny_extra_does_not_unlock_anything() {
    let fx = fixture();
    for extra in ["", ",", " , ,"] {
        let o = Options::new(Mode::InProcess).env("MOAT_SANDBOX__DENY_EXTRA", extra);
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        for p in [".env", "deploy.pem", ".git/config"] {
            let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
            assert_eq!(code, "denied_path", "extra {extra:?} {p}: {r}");
        }
        let r = call_ok(&mut m, "read_file", json!({"path": "README.md"}));
        assert_eq!(fenced_body(&r), "1  fine");
    }
}

#[test]
fn listings_count_denied_entries_without_naming_them() {
    let fx = Fixture::new();
    fx.file(".env", "x");
    fx.file("deploy.pem", "x");
    fx.file("prod.key", "x");
    fx.file(".git/config", "x");
    fx.file(".ssh/config", "x");
    fx.file(".github/workflows/ci.yml", "x");
    fx.file(".hidden", "x");
    fx.file("README.md", "x");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(&mut m, "list_directory", json!({"include_hidden": true}));
        let s = &r["structuredContent"];
        let names = super::util::entry_names(&r);
        assert_eq!(names, [".github", ".hidden", "README.md"], "{r}");
        assert_eq!(s["hidden_by_denylist"], 5, "{r}");
        assert!(
            text(&r, 0).contains("5 entries hidden by the denylist"),
            "{r}"
        );
        let whole = r.to_string();
        for leaked in [
            "deploy.pem",
            "prod.key",
            ".env",
            ".ssh",
            ".git/",
            "\".git\"",
        ] {
            assert!(!whole.contains(leaked), "{leaked} named in {whole}");
        }
        // Without include_hidden, dot-names are skipped silently; the
        // visible denied ones are still counted.
        let r = call_ok(&mut m, "list_directory", json!({}));
        let s = &r["structuredContent"];
        assert_eq!(s["hidden_by_denylist"], 2, "{r}");
        assert!(!r.to_string().contains("deploy.pem"));
    }
}

/// Credential files of common tools, from public secret-scanner path lists
/// and the tools' own documentation (docs/redaction.md gives each reason).
const TOOL_CREDENTIALS: [&str; 36] = [
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    "keys/AuthKey_ABC123.p8",
    "terraform.tfvars",
    "infra/prod.auto.tfvars",
    "kubeconfig",
    ".kube/config",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".yarnrc.yml",
    "prod.env",
    ".env-production",
    ".env_local",
    "home/.ssh-keys/id_ecdsa_sk",
    "id_ed25519_sk",
    "backup_ecdsa",
    "etc/ssh_host_ed25519_key",
    "client_secret_42.apps.googleusercontent.com.json",
    "app-firebase-adminsdk-x1y2.json",
    ".bash_history",
    "vpn/office.ovpn",
    ".dockercfg",
    ".terraformrc",
    ".databrickscfg",
    ".sentryclirc",
    "config/secrets.yml",
    ".streamlit/secrets.toml",
    "auth.json",
    "jenkins/credentials.xml",
    ".passwd-s3fs",
    ".mylogin.cnf",
];

#[test]
fn tool_credential_files_are_refused_unlisted_and_never_searched() {
    let fx = Fixture::new();
    for p in TOOL_CREDENTIALS {
        fx.file(p, format!("{CONTENT}\n"));
    }
    fx.file("src/app.py", format!("# mentions {CONTENT} once\n"));
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for p in TOOL_CREDENTIALS {
            for spelling in [p.to_owned(), format!("./{p}"), p.to_uppercase()] {
                let (code, r) = call_err(&mut m, "read_file", json!({"path": spelling}));
                // Upper case names a file that does not exist on a
                // case-sensitive file system: refused by name all the same.
                assert_eq!(code, "denied_path", "{mode:?} {spelling}: {r}");
                assert!(!r.to_string().contains(CONTENT), "{r}");
            }
            let parent = p.rsplit_once('/').map_or(".", |(d, _)| d);
            let base = p.rsplit('/').next().unwrap_or(p);
            if let Ok(r) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                m.call(
                    "list_directory",
                    json!({"path": parent, "include_hidden": true}),
                )
            })) && r["isError"] == false
            {
                let names = super::util::entry_names(&r);
                assert!(!names.iter().any(|n| n == base), "{mode:?} {p} listed: {r}");
                assert!(
                    r["structuredContent"]["hidden_by_denylist"]
                        .as_u64()
                        .unwrap()
                        >= 1,
                    "{mode:?} {parent}: {r}"
                );
            }
        }
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": CONTENT, "max_results": 100}),
        );
        let hits: Vec<&str> = moat_tests::strings(&r["structuredContent"]["matches"], "path");
        assert_eq!(hits, ["src/app.py"], "{mode:?}: {r}");
        assert!(
            !text(&r, 1).contains(&format!("{CONTENT}\n")),
            "{mode:?}: {r}"
        );
    }
}

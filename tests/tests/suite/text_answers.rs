//! The text half carries the answer, not only `structuredContent`:
//! qualified names in `find_symbol`, Rust `impl` blocks with their methods
//! in `file_outline`, what manifests declare and the members of Cargo and
//! npm workspaces in `project_overview`, and the version control of a
//! workspace that is a subdirectory of a repository.

use moat_tests::{Fixture, Mode, text};
use serde_json::json;

use super::tools_util::{fenced, ok, ok_result, refused, start};
use super::util::git;

const LIB: &str = "pub struct Engine { speed: u32 }

impl Engine {
    pub fn new() -> Self { Engine { speed: 0 } }
    pub fn start(&mut self) { self.speed = 1; }
}

impl Default for Engine {
    fn default() -> Self { Self::new() }
}

pub trait Runner { fn run(&self); }

impl<T: Clone> Runner for Vec<T> {
    fn run(&self) {}
}

pub fn free() {}
";

/// A repository holding a Rust workspace and an npm workspace, each in a
/// subdirectory.
fn monorepo() -> Fixture {
    let fx = Fixture::new();
    fx.file(
        "rust/Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\", \"tools/gen\"]\nresolver = \"2\"\n",
    );
    fx.file(
        "rust/crates/engine/Cargo.toml",
        "[package]\nname = \"engine\"\nversion = \"0.3.1\"\n[dependencies]\nserde = \"1\"\n",
    );
    fx.file("rust/crates/engine/src/lib.rs", LIB);
    fx.file(
        "rust/crates/cli/Cargo.toml",
        "[package]\nname = \"cli\"\nversion = \"0.3.1\"\n",
    );
    fx.file("rust/crates/cli/src/main.rs", "fn main() {}\n");
    fx.file(
        "rust/tools/gen/Cargo.toml",
        "[package]\nname = \"gen\"\nversion = \"0.1.0\"\n",
    );
    fx.file("rust/tools/gen/src/main.rs", "fn main() {}\n");
    fx.file(
        "web/package.json",
        r#"{"name": "web", "version": "2.0.0", "workspaces": {"packages": ["packages/*"]}, "dependencies": {"react": "^19"}, "scripts": {"build": "vite build"}}"#,
    );
    fx.file("web/packages/ui/package.json", r#"{"name": "ui"}"#);
    fx.file("web/packages/api/package.json", r#"{"name": "api"}"#);
    fx.file("web/packages/api/index.js", "export const x = 1;\n");
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "monorepo"]);
    fx
}

#[test]
fn find_symbol_names_what_a_method_belongs_to_in_both_halves() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", LIB);
    let mut m = start(&fx.root, Mode::InProcess);
    let r = ok_result(&mut m, "find_symbol", json!({"symbol": "run"}));
    let body = fenced(&r, "symbol-definitions");
    assert!(
        body.contains("src/lib.rs:12  Runner.run  [method, parsed]"),
        "{body}"
    );
    assert!(
        body.contains("src/lib.rs:15  Vec.run  [method, parsed]"),
        "{body}"
    );
    let defs = r["structuredContent"]["definitions"].as_array().unwrap();
    let parents: Vec<&str> = defs.iter().map(|d| d["parent"].as_str().unwrap()).collect();
    assert_eq!(parents, ["Runner", "Vec"]);
    let r = ok_result(&mut m, "find_symbol", json!({"symbol": "free"}));
    assert!(fenced(&r, "symbol-definitions").contains("src/lib.rs:18  free  [function, parsed]"));
    assert_eq!(r["structuredContent"]["definitions"][0]["parent"], "");
}

#[test]
fn file_outline_shows_impl_blocks_with_their_methods_under_them() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", LIB);
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(&mut m, "file_outline", json!({"path": "src/lib.rs"}));
    let body = fenced(&r, "file-outline");
    let lines: Vec<&str> = body.lines().skip(1).collect();
    let want = [
        "1-1  struct Engine  pub struct Engine",
        "3-6  impl Engine  impl Engine",
        "4-4    method new  pub fn new() -> Self",
        "5-5    method start  pub fn start(&mut self)",
        "8-10  impl Engine  impl Default for Engine",
        "9-9    method default  fn default() -> Self",
        "12-12  trait Runner  pub trait Runner",
        "12-12    method run  fn run(&self)",
        "14-16  impl Vec  impl<T: Clone> Runner for Vec<T>",
        "15-15    method run  fn run(&self)",
        "18-18  function free  pub fn free()",
    ];
    assert_eq!(&lines[..want.len()], want, "{body}");
    assert!(
        text(&r, 0).starts_with("src/lib.rs: 8 definitions, 3 impl blocks (rust"),
        "{r}"
    );
    let items = r["structuredContent"]["items"].as_array().unwrap();
    let block = &items[4];
    assert_eq!(
        (
            &block["kind"],
            &block["symbol_kind"],
            &block["signature"],
            &block["line"],
            &block["end_line"]
        ),
        (
            &json!("impl"),
            &json!("none"),
            &json!("impl Default for Engine"),
            &json!(8),
            &json!(10)
        ),
        "{block}"
    );
    assert_eq!(items[5]["parent"], "Engine");
    // find_symbol does not return a block: it defines no name.
    let s = ok(&mut m, "find_symbol", json!({"symbol": "Engine"}));
    assert_eq!(s["definition_count"], 1, "{s}");
}

#[test]
fn project_overview_says_what_manifests_declare_and_a_workspace_below_a_repository_is_under_git() {
    let fx = monorepo();
    let mut m = start(&fx.root.join("rust"), Mode::Confined);
    let r = ok_result(&mut m, "project_overview", json!({}));
    let summary = text(&r, 0);
    assert!(
        summary.contains(
            "Manifests: Cargo.toml (workspace members: crates/cli, crates/engine, tools/gen)."
        ),
        "{summary}"
    );
    assert!(
        summary.contains("Version control: git (the workspace is a subdirectory of a repository"),
        "{summary}"
    );
    assert!(
        summary.contains("Largest files: crates/engine/src/lib.rs"),
        "{summary}"
    );
    let s = &r["structuredContent"];
    assert_eq!(s["version_control"], "git");
    assert_eq!(s["repository_root"], "above");
    assert_eq!(
        s["manifests"][0]["declares"]["workspace_members"],
        json!(["crates/cli", "crates/engine", "tools/gen"])
    );
    // A member's own manifest, surveyed there.
    let r = ok_result(&mut m, "project_overview", json!({"path": "crates/engine"}));
    assert!(
        text(&r, 0).contains("Manifests: Cargo.toml (engine 0.3.1; dependencies: serde)."),
        "{r}"
    );
    // The git tools say why they cannot read it, and what to do.
    let (code, r) = refused(&mut m, "git_log", json!({}));
    assert_eq!(code, "not_a_repository");
    assert!(
        text(&r, 0).contains("subdirectory of a git repository")
            && text(&r, 0).contains("Serve the repository's root"),
        "{r}"
    );
    drop(m);
    let mut m = start(&fx.root.join("web"), Mode::InProcess);
    let r = ok_result(&mut m, "project_overview", json!({}));
    assert!(
        text(&r, 0).contains(
            "Manifests: package.json (web 2.0.0; workspaces: packages/api, packages/ui; dependencies: react; scripts: build)."
        ),
        "{r}"
    );
    // At the repository's root, the repository is the workspace's.
    let mut m = start(&fx.root, Mode::InProcess);
    let s = ok(&mut m, "project_overview", json!({}));
    assert_eq!(
        (&s["version_control"], &s["repository_root"]),
        (&json!("git"), &json!("workspace"))
    );
    // Outside any repository there is none.
    let plain = Fixture::new();
    plain.file("a.py", "x = 1\n");
    let mut m = start(&plain.root, Mode::InProcess);
    let r = ok_result(&mut m, "project_overview", json!({}));
    assert!(text(&r, 0).contains("Version control: none."), "{r}");
    assert!(r["structuredContent"].get("repository_root").is_none());
}

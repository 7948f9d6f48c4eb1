//! `project_overview` through the real binary: languages, manifests, tests,
//! version control, the file cap, and go.mod's single-line `require`.

use moat_tests::{Fixture, Mode, have_git, text};
use serde_json::json;

use super::tools_util::{ok, ok_result, refused, start, start_with};

fn language<'a>(ov: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    ov["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["language"] == name)
}

#[test]
fn python_files_are_counted_in_both_modes() {
    let fx = Fixture::demo_project();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let ov = ok(&mut m, "project_overview", json!({}));
        let py = language(&ov, "python").unwrap_or_else(|| panic!("{mode:?}: {ov}"));
        // __init__, core, settings, vendored, broken, test_core.
        assert_eq!(py["files"], 6, "{mode:?}: {ov}");
        assert!(py["lines"].as_u64().unwrap() > 20, "{py}");
        assert_eq!(ov["languages"][0]["language"], "python");
        assert_eq!(ov["path"], ".");
    }
}

#[test]
fn pyproject_declares_name_version_and_dependencies() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let ov = ok(&mut m, "project_overview", json!({}));
    let pyproject = ov["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["file"] == "pyproject.toml")
        .unwrap_or_else(|| panic!("{ov}"));
    let d = &pyproject["declares"];
    assert_eq!(d["name"], "demo", "{d}");
    assert_eq!(d["version"], "1.2.3");
    assert_eq!(d["requires_python"], ">=3.12");
    assert_eq!(d["dependencies"], json!(["httpx", "structlog"]));
}

#[test]
fn a_malformed_package_json_is_a_parse_error_not_a_failure() {
    let fx = Fixture::demo_project();
    fx.file("package.json", "{\"name\": \"demo\",,}");
    let mut m = start(&fx.root, Mode::Confined);
    let ov = ok(&mut m, "project_overview", json!({}));
    let pkg = ov["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["file"] == "package.json")
        .unwrap_or_else(|| panic!("{ov}"));
    assert!(
        pkg["declares"]["parse_error"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{pkg}"
    );
    fx.file("package.json", "[1, 2]");
    let ov = ok(&mut m, "project_overview", json!({}));
    let pkg = ov["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["file"] == "package.json")
        .unwrap();
    assert_eq!(
        pkg["declares"]["parse_error"], "package.json is not an object",
        "{pkg}"
    );
    fx.file(
        "package.json",
        r#"{"name": "web", "version": "0.1.0", "dependencies": {"react": "1", "axios": "2"}, "devDependencies": {"jest": "1"}, "scripts": {"test": "jest", "build": "x"}}"#,
    );
    let ov = ok(&mut m, "project_overview", json!({}));
    let pkg = ov["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["file"] == "package.json")
        .unwrap();
    assert_eq!(
        pkg["declares"]["dependencies"],
        json!(["axios", "react"]),
        "{pkg}"
    );
    assert_eq!(
        pkg["declares"]["scripts"],
        json!(["build", "test"]),
        "{pkg}"
    );
}

#[test]
fn test_files_are_counted_and_node_modules_is_skipped() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let ov = ok(&mut m, "project_overview", json!({}));
    assert!(ov["test_files"].as_u64().unwrap() >= 1, "{ov}");
    assert!(language(&ov, "javascript").is_none(), "{ov}");
    assert!(language(&ov, "typescript").is_some(), "{ov}");
    // Denied files are not counted either.
    let total = ov["total_files"].as_u64().unwrap();
    // pyproject, README, 6 under src/demo, test_core, guide, logo.bin.
    assert_eq!(total, 11, "{ov}");
}

#[test]
fn version_control_is_none_then_git() {
    if !have_git() {
        eprintln!("skipped: no git");
        return;
    }
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let ov = ok(&mut m, "project_overview", json!({}));
    assert_eq!(ov["version_control"], "none", "{ov}");
    fx.demo_git();
    let r = ok_result(&mut m, "project_overview", json!({}));
    assert_eq!(r["structuredContent"]["version_control"], "git");
    assert!(
        text(&r, 0).contains("Version control: git."),
        "{}",
        text(&r, 0)
    );
    // The root's .git counts for a subdirectory too, and is never walked.
    let ov = ok(&mut m, "project_overview", json!({"path": "src"}));
    assert_eq!(ov["version_control"], "git");
    let ov = ok(&mut m, "project_overview", json!({}));
    assert_eq!(ov["total_files"], 11, "{ov}");
}

#[test]
fn the_summary_names_languages_and_manifests() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(&mut m, "project_overview", json!({}));
    let s = text(&r, 0);
    assert!(s.contains("Languages: python (6 files, "), "{s}");
    assert!(
        s.contains("Manifests: pyproject.toml (demo 1.2.3; requires-python >=3.12; dependencies: httpx, structlog)."),
        "{s}"
    );
    assert!(s.contains("Test files: 1."), "{s}");
    assert!(s.starts_with("11 files, "), "{s}");
    assert!(s.contains(" under demo-project/"), "{s}");
    // Not fenced.
    assert!(r["content"].as_array().unwrap().len() == 1, "{r}");
    assert!(r["structuredContent"].get("untrusted_content").is_none());
}

#[test]
fn go_mod_single_line_require_is_a_dependency() {
    let fx = Fixture::new();
    fx.file(
        "go.mod",
        "module example.com/app\n\ngo 1.22\n\nrequire github.com/pkg/errors v0.9.1\n\n\
         require (\n\tgolang.org/x/sync v0.7.0\n\tgithub.com/stretchr/testify v1.9.0 // indirect\n)\n\n\
         replace example.com/old => example.com/new v1.0.0\n",
    );
    fx.file("main.go", "package main\n\nfunc main() {}\n");
    let mut m = start(&fx.root, Mode::Confined);
    let ov = ok(&mut m, "project_overview", json!({}));
    let gomod = &ov["manifests"][0];
    assert_eq!(gomod["file"], "go.mod", "{ov}");
    let d = &gomod["declares"];
    assert_eq!(d["name"], "example.com/app", "{d}");
    assert_eq!(d["go_version"], "1.22");
    assert_eq!(
        d["dependencies"],
        json!([
            "github.com/pkg/errors",
            "github.com/stretchr/testify",
            "golang.org/x/sync"
        ]),
        "{d}"
    );
    assert_eq!(ov["entry_points"], json!(["main.go"]));
}

#[test]
fn the_file_cap_bounds_the_survey() {
    let fx = Fixture::new();
    for i in 0..200 {
        fx.file(&format!("pkg{}/m{i}.py", i % 10), "x = 1\n");
    }
    let mut m = start_with(
        &fx.root,
        Mode::Confined,
        &[("MOAT_SANDBOX__MAX_SEARCH_FILES", "20")],
    );
    let ov = ok(&mut m, "project_overview", json!({}));
    let total = ov["total_files"].as_u64().unwrap();
    assert!((1..=20).contains(&total), "{ov}");
    assert!(language(&ov, "python").unwrap()["files"].as_u64().unwrap() <= 20);
}

#[test]
fn a_file_or_missing_path_is_refused() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let (code, _) = refused(&mut m, "project_overview", json!({"path": "README.md"}));
    assert_eq!(code, "not_a_directory");
    let (code, _) = refused(&mut m, "project_overview", json!({"path": "nope"}));
    assert_eq!(code, "not_found");
    let (code, _) = refused(&mut m, "project_overview", json!({"path": "../.."}));
    assert_eq!(code, "outside_workspace");
}

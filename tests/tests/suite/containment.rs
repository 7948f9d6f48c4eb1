//! Path containment: traversal shapes against both tools, absolute paths,
//! NUL bytes, percent-encoding, and what a refusal may reveal.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::json;

use super::util::{SECRET, call_err, call_ok, fenced_body};

/// Eight escape shapes: plain and deep `..`, bare `..` and `../`, and `..`
/// after a real directory or `.`.
const SHAPES: [&str; 8] = [
    "../../etc/passwd",
    "../../../../../../etc/shadow",
    "..",
    "../",
    "docs/../../outside",
    "docs/../../../root/.ssh/id_rsa",
    "./../../..",
    "src/../../..",
];

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("docs/guide.md", "guide\n");
    fx.file("src/x.py", "print('x')\n");
    fx
}

#[test]
fn traversal_shapes_are_refused_by_both_tools() {
    let fx = fixture();
    let outside = fx.outside.display().to_string();
    let parent = fx.root.parent().unwrap().display().to_string();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            for shape in SHAPES {
                for tool in ["read_file", "list_directory"] {
                    let (code, r) = call_err(&mut m, tool, json!({"path": shape}));
                    assert!(
                        matches!(
                            code.as_str(),
                            "outside_workspace" | "not_found" | "denied_path"
                        ),
                        "{mode:?}/{era:?} {tool} {shape}: {r}"
                    );
                    let whole = r.to_string();
                    assert!(!whole.contains(SECRET), "{whole}");
                    assert!(!whole.contains(&outside), "outside dir leaked: {whole}");
                    assert!(!whole.contains(&parent), "workspace parent leaked: {whole}");
                    assert!(!whole.contains("root:x:0"), "{whole}");
                    assert!(r["structuredContent"]["remedy"].is_string(), "{r}");
                }
            }
        }
    }
}

#[test]
fn traversal_that_climbs_out_is_outside_workspace() {
    // Shapes that leave the root lexically are named as such, not as a
    // missing file (which would hint at what exists outside).
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for shape in [
            "..",
            "../",
            "../outside/secret.txt",
            "docs/../../outside",
            "./../../..",
        ] {
            for tool in ["read_file", "list_directory"] {
                let (code, r) = call_err(&mut m, tool, json!({"path": shape}));
                assert_eq!(code, "outside_workspace", "{mode:?} {tool} {shape}: {r}");
                assert!(text(&r, 0).contains("proj/"), "remedy names the root: {r}");
            }
        }
        // The sibling's secret exists, but the answer is the same as for a
        // path that does not.
        let (a, _) = call_err(
            &mut m,
            "read_file",
            json!({"path": "../outside/secret.txt"}),
        );
        let (b, _) = call_err(&mut m, "read_file", json!({"path": "../outside/nope.txt"}));
        assert_eq!(a, b);
    }
}

#[test]
fn absolute_paths_are_contained_not_refused_outright() {
    let fx = fixture();
    let inside = fx.root.join("docs/guide.md").display().to_string();
    let inside_dir = fx.root.join("docs").display().to_string();
    let outside = fx.outside.join("secret.txt").display().to_string();
    let sneaky = format!("{}/../outside/secret.txt", fx.root.display());
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(&mut m, "read_file", json!({"path": inside}));
        assert_eq!(r["structuredContent"]["path"], "docs/guide.md", "{r}");
        assert_eq!(fenced_body(&r), "1  guide");
        let r = call_ok(&mut m, "list_directory", json!({"path": inside_dir}));
        assert_eq!(r["structuredContent"]["path"], "docs", "{r}");
        let r = call_ok(
            &mut m,
            "list_directory",
            json!({"path": fx.root.display().to_string()}),
        );
        assert_eq!(r["structuredContent"]["path"], ".", "{r}");
        for p in [outside.as_str(), sneaky.as_str(), "/etc/passwd", "/"] {
            for tool in ["read_file", "list_directory"] {
                let (code, r) = call_err(&mut m, tool, json!({"path": p}));
                assert_eq!(code, "outside_workspace", "{mode:?} {tool} {p}: {r}");
                assert!(!r.to_string().contains(SECRET));
                assert!(!r.to_string().contains("root:x:0"));
            }
        }
        // A sibling whose name merely starts with the root's is outside.
        let prefix_sibling = format!("{}-evil/x", fx.root.display());
        let (code, _) = call_err(&mut m, "read_file", json!({"path": prefix_sibling}));
        assert_eq!(code, "outside_workspace");
    }
}

#[test]
fn dot_dot_that_stays_inside_works() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Legacy);
        for p in [
            "docs/../src/x.py",
            "./src/x.py",
            "src/./x.py",
            "  src/x.py  ",
            "src//x.py",
        ] {
            let r = call_ok(&mut m, "read_file", json!({"path": p}));
            assert_eq!(r["structuredContent"]["path"], "src/x.py", "{p}: {r}");
        }
        for p in ["", ".", "./", "docs/..", "src/../docs/.."] {
            let r = call_ok(&mut m, "list_directory", json!({"path": p}));
            assert_eq!(r["structuredContent"]["path"], ".", "{p:?}: {r}");
        }
    }
}

#[test]
fn a_nul_byte_is_outside_workspace() {
    let fx = fixture();
    fx.file("README.md", "readme\n");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for p in ["README.md\u{0}/../../.env", "\u{0}", "docs\u{0}guide.md"] {
            for tool in ["read_file", "list_directory"] {
                let (code, r) = call_err(&mut m, tool, json!({"path": p}));
                assert_eq!(code, "outside_workspace", "{tool} {p:?}: {r}");
                assert!(text(&r, 0).contains("NUL"), "{r}");
                assert!(!r.to_string().contains("readme"), "{r}");
            }
        }
    }
}

#[test]
fn percent_encoding_is_just_a_name() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        for p in [
            "%2e%2e/%2e%2e/etc/passwd",
            "..%2f..%2fetc%2fpasswd",
            "%2e%2e",
        ] {
            let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
            assert_eq!(code, "not_found", "{p}: {r}");
        }
        // ... and a file really named like that is served.
        fx.file("%2e%2e", "percent\n");
        let r = call_ok(&mut m, "read_file", json!({"path": "%2e%2e"}));
        assert_eq!(fenced_body(&r), "1  percent");
        std::fs::remove_file(fx.root.join("%2e%2e")).unwrap();
    }
}

#[test]
fn refusals_quote_only_the_request() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    let (_, r) = call_err(&mut m, "read_file", json!({"path": "../../etc/shadow"}));
    let msg = r["structuredContent"]["message"].as_str().unwrap();
    assert!(msg.contains("'../../etc/shadow'"), "{msg}");
    // Control characters in the request are escaped, not echoed raw.
    let (_, r) = call_err(&mut m, "read_file", json!({"path": "../a\nb\u{1b}[31m"}));
    let t = text(&r, 0);
    assert!(!t.contains('\n') && !t.contains('\u{1b}'), "{t:?}");
}

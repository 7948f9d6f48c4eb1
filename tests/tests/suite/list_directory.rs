//! `list_directory`: order (directories first, case-insensitive), hidden
//! names, record shape, `walked_by_search`, and the not-a-directory and
//! missing cases.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::util::{call_err, call_ok, entry_names as names};

#[test]
fn directories_first_then_files_sorted_case_insensitively() {
    let fx = Fixture::new();
    fx.file("b.txt", "bb");
    fx.file("A.txt", "a");
    fx.file("C.md", "");
    fx.dir("c");
    fx.dir("B");
    fx.dir("a");
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let r = call_ok(&mut m, "list_directory", json!({}));
            assert_eq!(names(&r), ["a", "B", "c", "A.txt", "b.txt", "C.md"], "{r}");
            let s = &r["structuredContent"];
            assert_eq!(s["path"], ".");
            assert_eq!(s["directories"], 3);
            assert_eq!(s["files"], 3);
            assert_eq!(s["truncated"], false);
            assert_eq!(s["hidden_by_denylist"], 0);
            assert_eq!(s["symlinks_skipped"], 0);
            let t = text(&r, 0);
            assert!(t.starts_with("./: 6 entries."), "{t}");
            assert!(t.contains("\ndir   B\n"), "{t}");
            assert!(t.contains("\nfile  b.txt  (2 bytes)"), "{t}");
        }
    }
}

#[test]
fn records_name_each_entry_once_and_size_only_files() {
    let fx = Fixture::new();
    fx.file("src/pkg/mod.rs", "fn main() {}\n");
    fx.file("node_modules/leftpad/index.js", "x");
    fx.file("target/debug/x", "x");
    fx.dir("src/pkg/inner");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(&mut m, "list_directory", json!({"path": "src/pkg"}));
        let s = &r["structuredContent"];
        assert_eq!(s["path"], "src/pkg");
        assert_eq!(
            s["entries"],
            json!([
                {"name": "inner", "type": "directory"},
                {"name": "mod.rs", "type": "file", "size_bytes": 13}
            ]),
            "{r}"
        );
        assert!(text(&r, 0).starts_with("src/pkg/: 2 entries."), "{r}");
        let r = call_ok(&mut m, "list_directory", json!({}));
        let entries = r["structuredContent"]["entries"]
            .as_array()
            .unwrap()
            .clone();
        let walked = |n: &str| {
            entries
                .iter()
                .find(|e| e["name"] == n)
                .unwrap_or_else(|| panic!("{n} missing: {r}"))["walked_by_search"]
                .clone()
        };
        assert_eq!(walked("node_modules"), json!(false));
        assert_eq!(walked("target"), json!(false));
        assert_eq!(walked("src"), Value::Null, "absent where searches walk it");
    }
}

#[test]
fn hidden_names_need_include_hidden_except_github() {
    let fx = Fixture::new();
    fx.file(".hidden", "h");
    fx.dir(".github/workflows");
    fx.dir(".vscode");
    fx.file("visible", "v");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(&mut m, "list_directory", json!({}));
        assert_eq!(names(&r), [".github", "visible"], "{r}");
        let r = call_ok(&mut m, "list_directory", json!({"include_hidden": false}));
        assert_eq!(names(&r), [".github", "visible"], "{r}");
        let r = call_ok(&mut m, "list_directory", json!({"include_hidden": true}));
        assert_eq!(
            names(&r),
            [".github", ".vscode", ".hidden", "visible"],
            "{r}"
        );
        // A hidden directory can be listed by name.
        let r = call_ok(&mut m, "list_directory", json!({"path": ".github"}));
        assert_eq!(names(&r), ["workflows"], "{r}");
    }
}

#[test]
fn files_and_missing_paths_are_refused() {
    let fx = Fixture::new();
    fx.file("a.txt", "a");
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Legacy);
        let (code, r) = call_err(&mut m, "list_directory", json!({"path": "a.txt"}));
        assert_eq!(code, "not_a_directory", "{r}");
        assert!(text(&r, 0).contains("read_file"), "{r}");
        for p in ["nope", "nope/deeper", "a.txt/x"] {
            let (code, r) = call_err(&mut m, "list_directory", json!({"path": p}));
            assert_eq!(code, "not_found", "{p}: {r}");
        }
    }
}

#[test]
fn an_empty_directory_lists_nothing() {
    let fx = Fixture::new();
    fx.dir("empty");
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    let r = call_ok(&mut m, "list_directory", json!({"path": "empty"}));
    assert_eq!(r["structuredContent"]["entries"], json!([]), "{r}");
    assert_eq!(text(&r, 0), "empty/: 0 entries.");
    // Listings are not fenced: one content block.
    assert_eq!(r["content"].as_array().unwrap().len(), 1, "{r}");
    assert!(r["structuredContent"].get("untrusted_content").is_none());
}

#[test]
fn unusual_names_are_listed_and_read() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    fx.file("dir with space/ünï cödé.txt", "unicode\n");
    fx.file("dir with space/-rf", "dash\n");
    let raw = std::ffi::OsStr::from_bytes(b"bad\xffname");
    std::fs::write(fx.root.join("dir with space").join(raw), "x").unwrap();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = call_ok(&mut m, "list_directory", json!({"path": "dir with space"}));
        assert_eq!(r["structuredContent"]["files"], 3, "{r}");
        let n = names(&r);
        assert!(n.contains(&"ünï cödé.txt".to_owned()), "{n:?}");
        assert!(n.contains(&"-rf".to_owned()), "{n:?}");
        assert!(n.iter().any(|x| x.starts_with("bad")), "{n:?}");
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "dir with space/ünï cödé.txt"}),
        );
        assert_eq!(
            r["structuredContent"]["path"],
            "dir with space/ünï cödé.txt"
        );
        let r = call_ok(&mut m, "read_file", json!({"path": "dir with space/-rf"}));
        assert_eq!(r["structuredContent"]["total_lines"], 1);
    }
}

/// A directory whose entries take several `getdents64` buffers, with
/// directories, files and links (classified from the entry type or by
/// `fstatat`): every entry is listed or counted exactly once, with its kind
/// and size.
#[test]
fn a_directory_larger_than_one_read_is_listed_whole() {
    let fx = Fixture::new();
    // Names of ~90 bytes: 3 x 400 entries need well over 32 KiB of dirents.
    let long = "n".repeat(80);
    for i in 0..400 {
        fx.file(&format!("big/f_{long}_{i:04}.txt"), "x".repeat(i % 7));
        fx.dir(&format!("big/d_{long}_{i:04}"));
        std::os::unix::fs::symlink("f", fx.root.join(format!("big/l_{long}_{i:04}"))).unwrap();
    }
    for mode in Mode::BOTH {
        let opts = Options::new(mode)
            .env("MOAT_SANDBOX__MAX_DIRECTORY_ENTRIES", "5000")
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "400000");
        let mut m = Moat::connect(&fx.root, &opts, Era::Modern);
        let r = call_ok(&mut m, "list_directory", json!({"path": "big"}));
        let s = &r["structuredContent"];
        assert_eq!(s["directories"], 400, "{mode:?}");
        assert_eq!(s["files"], 400, "{mode:?}");
        assert_eq!(s["symlinks_skipped"], 400, "{mode:?}");
        assert_eq!(s["truncated"], false, "{mode:?}");
        let entries = s["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 800, "{mode:?}");
        for (i, e) in entries[..400].iter().enumerate() {
            assert_eq!(e["name"], format!("d_{long}_{i:04}"), "{mode:?}");
            assert_eq!(e["type"], "directory");
            // Nothing repeated: no path, no size for a directory, and
            // walked_by_search only where it is false.
            assert!(
                e.get("size_bytes").is_none() && e.get("path").is_none(),
                "{e}"
            );
            assert!(e.get("walked_by_search").is_none(), "{e}");
        }
        for (i, e) in entries[400..].iter().enumerate() {
            assert_eq!(e["name"], format!("f_{long}_{i:04}.txt"), "{mode:?}");
            assert_eq!(e["type"], "file");
            assert_eq!(e["size_bytes"], i % 7, "{mode:?} {e}");
        }
    }
}

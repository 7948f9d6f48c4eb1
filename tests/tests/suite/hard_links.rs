//! Hard links: a second name for a file outside the workspace cannot be told
//! apart from an ordinary file by its path, so a regular file with more than
//! one link is refused (`hard_link`) unless `sandbox.allow_hard_links` is set.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::json;

use super::util::{SECRET, call_err, call_ok, fenced_body};

#[test]
fn a_hard_link_to_an_outside_file_is_refused() {
    let fx = Fixture::new();
    fx.hardlink("notes.txt", &fx.outside.join("secret.txt"));
    fx.dir("docs");
    fx.hardlink("docs/innocent.md", &fx.outside.join("secret.txt"));
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            for p in ["notes.txt", "docs/innocent.md"] {
                let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
                assert_eq!(code, "hard_link", "{mode:?}/{era:?} {p}: {r}");
                assert!(!r.to_string().contains(SECRET), "{r}");
                assert!(text(&r, 0).contains("hard link"), "{r}");
                // Ranges do not get around it.
                let (code, _) = call_err(
                    &mut m,
                    "read_file",
                    json!({"path": p, "start_line": 1, "end_line": 1}),
                );
                assert_eq!(code, "hard_link");
            }
        }
    }
}

#[test]
fn multiply_linked_files_read_when_allowed() {
    let fx = Fixture::new();
    let a = fx.file("a.txt", "shared\n");
    fx.hardlink("b.txt", &a);
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let (code, _) = call_err(&mut m, "read_file", json!({"path": "a.txt"}));
        assert_eq!(code, "hard_link", "both names are refused by default");
        let o = Options::new(mode).env("MOAT_SANDBOX__ALLOW_HARD_LINKS", "true");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        for p in ["a.txt", "b.txt"] {
            let r = call_ok(&mut m, "read_file", json!({"path": p}));
            assert_eq!(fenced_body(&r), "1  shared");
        }
    }
}

#[test]
fn a_singly_linked_file_is_unaffected() {
    let fx = Fixture::new();
    let a = fx.file("a.txt", "one\n");
    let b = fx.hardlink("b.txt", &a);
    std::fs::remove_file(b).unwrap();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Legacy);
        let r = call_ok(&mut m, "read_file", json!({"path": "a.txt"}));
        assert_eq!(fenced_body(&r), "1  one");
        // Listing shows the file: hard links are refused on read, not hidden.
        let r = call_ok(&mut m, "list_directory", json!({}));
        assert_eq!(r["structuredContent"]["files"], 1, "{r}");
    }
}

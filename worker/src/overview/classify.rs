//! What `project_overview` counts as a test file and as an entry point.
//!
//! Both are decided by name only (nothing is read):
//! - a **test file** has a parent directory named one of
//!   [`TEST_DIRECTORIES`], or a name starting `test_`, or a stem (the name
//!   without its last suffix) ending `_test`, `.test` or `.spec`;
//! - an **entry point** is a file named one of [`ENTRY_POINTS`] (compared
//!   exactly: `Main.java`, not `main.java`). The overview only asks this of
//!   files in a recognised language.

/// Directory names that conventionally hold tests (compared exactly).
pub const TEST_DIRECTORIES: &[&str] = &[
    "tests",
    "test",
    "spec",
    "specs",
    "__tests__",
    "e2e",
    "integration",
];

/// File names that are conventionally the way into a program.
pub const ENTRY_POINTS: &[&str] = &[
    "main.py",
    "__main__.py",
    "app.py",
    "manage.py",
    "wsgi.py",
    "asgi.py",
    "index.js",
    "index.ts",
    "main.go",
    "main.rs",
    "Main.java",
    "server.js",
    "cli.py",
];

/// Whether the file at `rel_path` (workspace-relative, POSIX separators)
/// looks like a test, by a parent directory or by its name.
#[must_use]
pub fn is_test_file(rel_path: &str) -> bool {
    let mut parts = rel_path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".");
    let Some(name) = parts.next_back() else {
        return false;
    };
    if parts.any(|parent| TEST_DIRECTORIES.contains(&parent)) {
        return true;
    }
    let stem = stem(name);
    name.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
}

/// Whether a file of this name is a conventional entry point.
#[must_use]
pub fn is_entry_point(file_name: &str) -> bool {
    ENTRY_POINTS.contains(&file_name)
}

/// The name without its last suffix: a leading dot does not start a suffix
/// (`.test` is all stem), nor does a trailing one.
fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(dot) if dot > 0 && dot + 1 < name.len() => &name[..dot],
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_test_directory_makes_a_test_file() {
        for path in [
            "tests/test_core.py",
            "tests/helpers.py",
            "src/test/java/AppTest.java",
            "web/__tests__/app.js",
            "spec/models/user_spec.rb",
            "specs/a.rb",
            "e2e/login.ts",
            "pkg/integration/db.go",
            "./tests/x.py",
        ] {
            assert!(is_test_file(path), "{path}");
        }
    }

    #[test]
    fn a_test_name_makes_a_test_file() {
        for path in [
            "test_core.py",
            "src/test_utils.py",
            "pkg/server_test.go",
            "src/app.test.ts",
            "src/app.spec.js",
            "lib/widget.test.tsx",
            "x/.test",
        ] {
            assert!(is_test_file(path), "{path}");
        }
    }

    #[test]
    fn other_files_are_not_tests() {
        for path in [
            "src/demo/core.py",
            "tests",
            "testing/helpers.py",
            "src/contest.py",
            "src/latest_test_data.json.bak",
            "src/test.py",
            "src/spec.ts",
            "src/tests.rs",
            "integration.md",
            "Tests/a.py",
            "",
            "/",
        ] {
            assert!(!is_test_file(path), "{path}");
        }
    }

    #[test]
    fn only_parent_directories_count_not_the_file_name() {
        assert!(!is_test_file("tests"));
        assert!(!is_test_file("src/e2e"));
        assert!(is_test_file("e2e/x"));
    }

    #[test]
    fn entry_points_are_the_thirteen_names_compared_exactly() {
        assert_eq!(ENTRY_POINTS.len(), 13);
        for name in ENTRY_POINTS {
            assert!(is_entry_point(name), "{name}");
        }
        for name in [
            "main.java",
            "Main.py",
            "index.tsx",
            "src/main.rs",
            "lib.rs",
            "MAIN.GO",
        ] {
            assert!(!is_entry_point(name), "{name}");
        }
    }

    #[test]
    fn stems_follow_python() {
        assert_eq!(stem("a.test.ts"), "a.test");
        assert_eq!(stem(".bashrc"), ".bashrc");
        assert_eq!(stem("file."), "file.");
        assert_eq!(stem("plain"), "plain");
    }
}

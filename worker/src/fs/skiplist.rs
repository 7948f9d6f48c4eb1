//! Generated and vendored trees that walks (search, symbols, overview) do not
//! descend. They are *skipped*, not denied: reading a file inside one by its
//! path is allowed.

/// 25 names, matched exactly (case-sensitive) against a directory's
/// base name.
pub const SKIPPED_DIRECTORIES: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".tox",
    ".nox",
    "dist",
    "build",
    ".next",
    ".nuxt",
    "target",
    "vendor",
    ".terraform",
    ".gradle",
    ".idea",
    ".vscode",
    "site-packages",
    "htmlcov",
    ".coverage",
];

/// Whether walks skip a directory with this base name.
#[must_use]
pub fn is_skipped(name: &str) -> bool {
    SKIPPED_DIRECTORIES.contains(&name)
}

/// Version-control stores: never walked and never counted as skipped. They
/// are not part of the tree a search is about (git's own answers come from
/// the git tools), so no switch walks them.
#[must_use]
pub fn is_vcs_store(name: &str) -> bool {
    matches!(name, ".git" | ".hg" | ".svn")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_but_case_sensitive() {
        assert_eq!(SKIPPED_DIRECTORIES.len(), 25);
        assert!(is_skipped("node_modules"));
        assert!(is_skipped("target"));
        assert!(!is_skipped("Target"));
        assert!(!is_skipped("src"));
    }
}

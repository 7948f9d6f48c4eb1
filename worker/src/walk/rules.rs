//! Ignore files, read the way git and ripgrep read them, decided per entry
//! so that every entry they exclude is counted.
//!
//! * `.gitignore` applies only inside a git repository: a directory that
//!   holds `.git` (a directory, or the file of a linked worktree), anything
//!   beneath one, or the whole workspace when its root lies inside a
//!   repository whose `.git` is above it. A source tarball whose packaging
//!   left a `.gitignore` of `/*` behind is searched like any other tree.
//! * `.ignore` applies anywhere (it is the searching tools' own file).
//! * `.git/info/exclude` applies to its repository, below every
//!   `.gitignore`.
//! * The deepest file with a matching pattern decides, `.ignore` before
//!   `.gitignore` in one directory; a negated pattern (`!name`) re-includes.
//!
//! Ignore files are read from inside the workspace only (never the user's
//! global excludes, never a parent of the root).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore rules of one walk.
pub(super) struct Rules {
    root: PathBuf,
    inside_repository: bool,
    /// Per directory (workspace-relative, `""` for the root): the matchers
    /// that apply beneath it, deepest first.
    dirs: RwLock<HashMap<String, Arc<Dir>>>,
}

/// What applies beneath one directory.
struct Dir {
    /// It is inside a git repository.
    in_git: bool,
    /// Matchers deepest first (within a directory, `.ignore` first), each
    /// rooted at its own directory.
    chain: Vec<Arc<Gitignore>>,
    /// The exclude file of the repository it is in, if any.
    exclude: Option<Arc<Gitignore>>,
}

impl Rules {
    pub(super) fn new(root: &Path, inside_repository: bool) -> Rules {
        Rules {
            root: root.to_path_buf(),
            inside_repository,
            dirs: RwLock::new(HashMap::new()),
        }
    }

    /// Whether the entry at `rel` (a directory when `is_dir`) is excluded by
    /// an ignore file of one of its ancestors.
    pub(super) fn ignored(&self, rel: &str, is_dir: bool) -> bool {
        let parent = rel.rfind('/').map_or("", |i| &rel[..i]);
        let dir = self.dir(parent);
        let path = self.root.join(rel);
        for m in &dir.chain {
            match m.matched(&path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        dir.exclude
            .as_ref()
            .is_some_and(|m| m.matched(&path, is_dir).is_ignore())
    }

    /// The rules beneath the directory `rel`, built once.
    fn dir(&self, rel: &str) -> Arc<Dir> {
        if let Ok(dirs) = self.dirs.read()
            && let Some(d) = dirs.get(rel)
        {
            return Arc::clone(d);
        }
        let parent = if rel.is_empty() {
            None
        } else {
            Some(self.dir(rel.rfind('/').map_or("", |i| &rel[..i])))
        };
        let abs = self.root.join(rel);
        let has_git = std::fs::symlink_metadata(abs.join(".git")).is_ok();
        let in_git = has_git || parent.as_ref().map_or(self.inside_repository, |p| p.in_git);
        let mut chain = Vec::new();
        if let Some(m) = read(&abs, ".ignore") {
            chain.push(m);
        }
        if in_git && let Some(m) = read(&abs, ".gitignore") {
            chain.push(m);
        }
        let exclude = if has_git && abs.join(".git").is_dir() {
            read(&abs, ".git/info/exclude")
        } else {
            parent.as_ref().and_then(|p| p.exclude.clone())
        };
        if let Some(p) = &parent {
            chain.extend(p.chain.iter().cloned());
        }
        let dir = Arc::new(Dir {
            in_git,
            chain,
            exclude,
        });
        if let Ok(mut dirs) = self.dirs.write() {
            dirs.entry(rel.to_owned())
                .or_insert_with(|| Arc::clone(&dir));
        }
        dir
    }
}

/// The matcher of the ignore file `name` in `dir`, rooted at `dir`; `None`
/// when there is none or it has no pattern. A file that cannot be read
/// excludes nothing (as for git); a malformed line is passed over.
fn read(dir: &Path, name: &str) -> Option<Arc<Gitignore>> {
    let file = dir.join(name);
    if !std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut builder = GitignoreBuilder::new(dir);
    let _ = builder.add(&file);
    let m = builder.build().ok()?;
    (!m.is_empty()).then(|| Arc::new(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn gitignore_applies_only_inside_a_repository() {
        let t = tree(&[(".gitignore", "/*\n"), ("src/a.c", "")]);
        let plain = Rules::new(t.path(), false);
        assert!(!plain.ignored("src", true));
        let above = Rules::new(t.path(), true);
        assert!(above.ignored("src", true));
        std::fs::create_dir(t.path().join(".git")).unwrap();
        let repo = Rules::new(t.path(), false);
        assert!(repo.ignored("src", true));
    }

    #[test]
    fn deepest_decides_and_ignore_files_apply_anywhere() {
        let t = tree(&[
            (".ignore", "*.log\n"),
            ("a/.ignore", "!keep.log\n"),
            ("a/keep.log", ""),
            ("a/other.log", ""),
        ]);
        let r = Rules::new(t.path(), false);
        assert!(!r.ignored("a/keep.log", false));
        assert!(r.ignored("a/other.log", false));
        assert!(r.ignored("x.log", false));
        assert!(!r.ignored("a", true));
    }

    #[test]
    fn a_nested_repository_applies_its_own_gitignore() {
        let t = tree(&[
            ("sub/.git/HEAD", ""),
            ("sub/.gitignore", "gen/\n"),
            ("gen/x", ""),
        ]);
        let r = Rules::new(t.path(), false);
        assert!(r.ignored("sub/gen", true));
        assert!(!r.ignored("gen", true));
    }

    #[test]
    fn the_exclude_file_counts_below_every_gitignore() {
        let t = tree(&[
            (".git/info/exclude", "*.tmp\n"),
            (".gitignore", "!keep.tmp\n"),
        ]);
        let r = Rules::new(t.path(), false);
        assert!(r.ignored("a.tmp", false));
        assert!(!r.ignored("keep.tmp", false));
    }
}

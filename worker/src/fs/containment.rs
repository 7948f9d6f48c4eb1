//! Path containment: the only way to name a file is a [`ContainedPath`].
//!
//! [`resolve`] takes the path a client sent and either proves it names
//! something beneath the workspace root that is not denied, or refuses with a
//! typed [`WireError`]. It walks the path one component at a time against the
//! real filesystem (`lstat` relative to the root), so a symbolic link anywhere
//! in the path is seen, not just in the last component:
//!
//! * following off (the default): a link whose target leaves the root is
//!   `outside_workspace`; any other link is `denied_path`;
//! * following on: links are expanded in place (at most [`MAX_SYMLINK_HOPS`])
//!   and the *expanded* path must stay beneath the root.
//!
//! The denylist is then checked on the resolved path.
//!
//! This walk decides *what to answer*. It is not what keeps a request inside:
//! the open that follows (`fs/open.rs`) never follows a link at all
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux), so a link
//! swapped in after this walk is refused by the kernel, and Landlock confines
//! the worker underneath both.
//!
//! # Invariants of [`ContainedPath`]
//!
//! Its relative form has no `.` or `..` components, no empty components, no
//! leading `/`, no NUL; when built with following off, no component was a
//! symbolic link when it was resolved; it is not denied. The root is the empty
//! path (displayed as `.`).

use std::io;
use std::path::{Component, Path, PathBuf};

use moat_protocol::name;
use moat_protocol::wire_error::{Denial, Outside, WireError};

use crate::fs::Workspace;

/// Most symbolic links expanded while resolving one path (the kernel's own
/// limit is 40).
pub const MAX_SYMLINK_HOPS: u32 = 40;

/// A path proven to be beneath the workspace root and not denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainedPath {
    rel: String,
    /// Named with a value redaction replaces: answers show the name
    /// redacted, so its raw spelling addresses nothing (see [`resolve`]).
    hidden: bool,
    #[cfg(feature = "dangerous-disable-userland-checks")]
    pub(crate) unchecked: Option<PathBuf>,
}

impl ContainedPath {
    /// The workspace root.
    #[must_use]
    pub fn root() -> ContainedPath {
        ContainedPath::from_clean(String::new())
    }

    fn from_clean(rel: String) -> ContainedPath {
        ContainedPath {
            rel,
            hidden: false,
            #[cfg(feature = "dangerous-disable-userland-checks")]
            unchecked: None,
        }
    }

    /// Relative POSIX form; empty for the root.
    #[must_use]
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// Relative POSIX form with the root shown as `.`.
    #[must_use]
    pub fn display(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }

    /// Whether the path is spelt with a value redaction replaces: it is
    /// then answered for as a path that does not exist.
    #[must_use]
    pub fn is_hidden(&self) -> bool {
        self.hidden
    }

    /// The relative form for a lookup in a git tree: a hidden path is one
    /// no tree holds (tree entries never contain NUL).
    #[must_use]
    pub fn tree_rel(&self) -> &str {
        if self.hidden { "\0" } else { &self.rel }
    }

    /// Whether this is the workspace root.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.rel.is_empty()
    }

    /// The child `name` of this directory. The caller guarantees `name` is a
    /// single component read from the directory itself (no `/`, not `.`/`..`);
    /// the child is *not* re-checked against the denylist here.
    #[must_use]
    pub fn child(&self, name: &str) -> ContainedPath {
        debug_assert!(!name.contains('/') && name != "." && name != "..");
        if self.rel.is_empty() {
            ContainedPath::from_clean(name.to_owned())
        } else {
            ContainedPath::from_clean(format!("{}/{}", self.rel, name))
        }
    }

    /// A path given by its clean relative form (from the walk, which only
    /// yields contained, non-denied paths).
    #[must_use]
    pub fn child_path(&self, rel: &str) -> ContainedPath {
        if self.rel.is_empty() {
            ContainedPath::from_clean(rel.to_owned())
        } else {
            ContainedPath::from_clean(format!("{}/{}", self.rel, rel))
        }
    }

    /// Components of the relative form.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.rel.split('/').filter(|c| !c.is_empty())
    }

    /// Last component, or the empty string for the root.
    #[must_use]
    pub fn file_name(&self) -> &str {
        self.rel.rsplit('/').next().unwrap_or("")
    }
}

/// Resolve `requested` against the workspace (see the module docs).
pub fn resolve(ws: &Workspace, requested: &str) -> Result<ContainedPath, WireError> {
    #[cfg(feature = "dangerous-disable-userland-checks")]
    {
        return Ok(dangerous_unchecked(ws, requested));
    }
    #[cfg(not(feature = "dangerous-disable-userland-checks"))]
    {
        let rel = resolve_components(ws, requested)?;
        if let Some(denial) = ws.denylist().check(&rel) {
            return Err(WireError::DeniedPath(denial));
        }
        let mut path = ContainedPath::from_clean(rel.join("/"));
        // Answers show a name holding a credential redacted, so the model
        // never learns its raw spelling; were the raw spelling to address
        // the file, guessing it would tell the value. Such a path is
        // answered for exactly as one that does not exist.
        let redactor = ws.redactor();
        path.hidden = redactor.enabled()
            && redactor
                .redact_str(&path.rel, &mut crate::redact::RedactionReport::default())
                .is_some();
        Ok(path)
    }
}

/// TEST ONLY: no containment, no denylist; the path is handed to the kernel as
/// given so the tests can show Landlock alone refuses an escape.
#[cfg(feature = "dangerous-disable-userland-checks")]
fn dangerous_unchecked(ws: &Workspace, requested: &str) -> ContainedPath {
    let trimmed = requested.trim();
    let p = Path::new(trimmed);
    let raw = if p.is_absolute() {
        p.to_path_buf()
    } else {
        ws.root().join(p)
    };
    let mut cp = ContainedPath::from_clean(trimmed.trim_start_matches("./").to_owned());
    cp.unchecked = Some(raw);
    cp
}

/// Resolve to clean relative components (no denylist check).
fn resolve_components(ws: &Workspace, requested: &str) -> Result<Vec<String>, WireError> {
    let trimmed = requested.trim();
    if trimmed.contains('\0') {
        return Err(WireError::OutsideWorkspace(Outside::NulByte));
    }
    if trimmed.is_empty() || trimmed == "." || trimmed == "./" {
        return Ok(Vec::new());
    }
    let path = Path::new(trimmed);
    let relative: Vec<String> = if path.is_absolute() {
        strip_root(ws.root(), path).ok_or(WireError::OutsideWorkspace(Outside::Escapes))?
    } else {
        lexical_components(path).ok_or(WireError::OutsideWorkspace(Outside::Escapes))?
    };
    // Each component becomes the one text form of the name it stands for
    // (`id\x5frsa` is `id_rsa`), so the denylist and the symlink checks
    // below judge the name the kernel will be given, however it was spelt.
    let mut canonical = Vec::with_capacity(relative.len());
    for c in &relative {
        if let Some(c) = canonical_component(c)? {
            canonical.push(c);
        }
    }
    let relative = canonical;

    let mut out: Vec<String> = Vec::new();
    // Work list, front = next component. `..` entries are kept as such.
    let mut pending: std::collections::VecDeque<String> = relative.into();
    let mut hops = 0u32;
    while let Some(c) = pending.pop_front() {
        if c == ".." {
            if out.pop().is_none() {
                return Err(WireError::OutsideWorkspace(Outside::Escapes));
            }
            continue;
        }
        out.push(c);
        // Every component is looked at, even after a missing one: a later
        // `..` can climb back out of what is missing (`missing/../link`).
        match ws.lstat_is_symlink(&out.join("/")) {
            Ok(false) => {}
            Ok(true) => {
                let here = out.join("/");
                out.pop();
                let target = ws.read_link(&here).map_err(|e| io_to_wire(&e))?;
                let target_parts = symlink_target(ws.root(), &target)
                    .ok_or(WireError::DeniedPath(Denial::Symlink))?;
                // Where does the link point, lexically, from its directory?
                let escapes = match &target_parts {
                    LinkTarget::Outside => true,
                    LinkTarget::FromRoot(parts) => lexically_escapes(&[], parts),
                    LinkTarget::Relative(parts) => lexically_escapes(&out, parts),
                };
                if escapes {
                    return Err(WireError::OutsideWorkspace(Outside::Escapes));
                }
                if !ws.follow_symlinks() {
                    return Err(WireError::DeniedPath(Denial::Symlink));
                }
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(WireError::OutsideWorkspace(Outside::SymlinkLoop));
                }
                let parts = match target_parts {
                    LinkTarget::Outside => {
                        return Err(WireError::OutsideWorkspace(Outside::Escapes));
                    }
                    LinkTarget::FromRoot(parts) => {
                        out.clear();
                        parts
                    }
                    LinkTarget::Relative(parts) => parts,
                };
                for p in parts.into_iter().rev() {
                    pending.push_front(p);
                }
            }
            Err(e) if is_missing(&e) => {}
            Err(e) => return Err(io_to_wire(&e)),
        }
    }
    Ok(out)
}

/// The text form of one requested component; `None` for `.`. A component
/// whose escapes decode to a `/` or a NUL names nothing and is refused.
fn canonical_component(c: &str) -> Result<Option<String>, WireError> {
    if c == ".." {
        return Ok(Some(c.to_owned()));
    }
    let bytes = name::decode(c);
    if bytes.contains(&0) {
        return Err(WireError::OutsideWorkspace(Outside::NulByte));
    }
    if bytes.contains(&b'/') {
        return Err(WireError::OutsideWorkspace(Outside::Escapes));
    }
    if bytes.as_ref() == b"." {
        return Ok(None);
    }
    Ok(Some(name::encode(&bytes).into_owned()))
}

/// The text form of a name read from the file system (a link target's
/// component).
fn os_text(s: &std::ffi::OsStr) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(name::encode(s.as_bytes()).into_owned())
    }
    #[cfg(not(unix))]
    {
        s.to_str().map(|t| name::encode(t.as_bytes()).into_owned())
    }
}

enum LinkTarget {
    /// Absolute, and not beneath the root.
    Outside,
    /// Absolute beneath the root: components from the root.
    FromRoot(Vec<String>),
    /// Relative: components from the link's directory (may hold `..`).
    Relative(Vec<String>),
}

fn symlink_target(root: &Path, target: &Path) -> Option<LinkTarget> {
    if target.is_absolute() {
        return Some(match strip_root_with(root, target, os_text) {
            Some(parts) => LinkTarget::FromRoot(parts),
            None => LinkTarget::Outside,
        });
    }
    let mut parts = Vec::new();
    for c in target.components() {
        match c {
            Component::Normal(s) => parts.push(os_text(s)?),
            Component::ParentDir => parts.push("..".to_owned()),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Some(LinkTarget::Outside),
        }
    }
    Some(LinkTarget::Relative(parts))
}

/// Whether applying `parts` (which may hold `..`) to `base` climbs above the root.
fn lexically_escapes(base: &[String], parts: &[String]) -> bool {
    let mut depth = base.len();
    for p in parts {
        if p == ".." {
            if depth == 0 {
                return true;
            }
            depth -= 1;
        } else {
            depth += 1;
        }
    }
    false
}

/// Components of a relative path; `..` kept, `.` dropped. `None` if it has a
/// root or prefix or a non-UTF-8 component.
fn lexical_components(path: &Path) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?.to_owned()),
            Component::ParentDir => parts.push("..".to_owned()),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts)
}

/// If absolute `path` lies beneath `root` (component-wise, after lexically
/// applying `..`), its components relative to the root.
fn strip_root(root: &Path, path: &Path) -> Option<Vec<String>> {
    strip_root_with(root, path, |s| s.to_str().map(str::to_owned))
}

/// [`strip_root`], each remaining component converted by `text`.
fn strip_root_with(
    root: &Path,
    path: &Path,
    text: fn(&std::ffi::OsStr) -> Option<String>,
) -> Option<Vec<String>> {
    // Normalise `path` lexically first: `/ws/../etc` must not pass as `/ws`.
    let mut norm: Vec<std::ffi::OsString> = Vec::new();
    let mut prefix = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(p) => prefix.push(p.as_os_str()),
            Component::RootDir => prefix.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                norm.pop();
            }
            Component::Normal(s) => norm.push(s.to_os_string()),
        }
    }
    let mut root_parts: Vec<std::ffi::OsString> = Vec::new();
    for c in root.components() {
        if let Component::Normal(s) = c {
            root_parts.push(s.to_os_string());
        }
    }
    if norm.len() < root_parts.len() {
        return None;
    }
    let same = norm
        .iter()
        .zip(&root_parts)
        .all(|(a, b)| same_component(a, b));
    if !same {
        return None;
    }
    norm[root_parts.len()..].iter().map(|s| text(s)).collect()
}

#[cfg(any(windows, target_os = "macos"))]
fn same_component(a: &std::ffi::OsStr, b: &std::ffi::OsStr) -> bool {
    // Case-insensitive file systems by default on these platforms.
    a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
}

#[cfg(not(any(windows, target_os = "macos")))]
fn same_component(a: &std::ffi::OsStr, b: &std::ffi::OsStr) -> bool {
    a == b
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Map an I/O error met while resolving or opening to the client's code.
pub(crate) fn io_to_wire(e: &io::Error) -> WireError {
    use moat_protocol::wire_error::Missing;
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => {
            WireError::NotFound(Missing::Path)
        }
        io::ErrorKind::PermissionDenied => WireError::OutsideWorkspace(Outside::KernelDenied),
        _ => match e.raw_os_error() {
            Some(code) if code == errno::ELOOP => WireError::DeniedPath(Denial::Symlink),
            Some(code) if code == errno::EXDEV => WireError::OutsideWorkspace(Outside::Escapes),
            Some(code) if code == errno::EPERM => {
                WireError::OutsideWorkspace(Outside::KernelDenied)
            }
            _ => WireError::NotFound(Missing::Unreadable),
        },
    }
}

mod errno {
    #[cfg(unix)]
    pub const ELOOP: i32 = rustix::io::Errno::LOOP.raw_os_error();
    #[cfg(unix)]
    pub const EXDEV: i32 = rustix::io::Errno::XDEV.raw_os_error();
    #[cfg(unix)]
    pub const EPERM: i32 = rustix::io::Errno::PERM.raw_os_error();
    #[cfg(not(unix))]
    pub const ELOOP: i32 = -1;
    #[cfg(not(unix))]
    pub const EXDEV: i32 = -2;
    #[cfg(not(unix))]
    pub const EPERM: i32 = -3;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_root_is_component_wise() {
        let root = Path::new("/srv/ws");
        assert_eq!(
            strip_root(root, Path::new("/srv/ws/a/b")),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(strip_root(root, Path::new("/srv/ws")), Some(vec![]));
        assert_eq!(strip_root(root, Path::new("/srv/wsx/a")), None);
        assert_eq!(strip_root(root, Path::new("/srv/ws/../etc")), None);
        assert_eq!(strip_root(root, Path::new("/etc/passwd")), None);
    }

    // See: fuzz/containment, first finding. After a missing component the
    // walk stopped looking at the filesystem, so `missing/../link/x` came back
    // as `link/x` without the link being seen: with following off a
    // ContainedPath crossed a link (on Linux the openat2 still refused it; the
    // fallback elsewhere would have opened through it), with following on the
    // link was not expanded.
    #[cfg(unix)]
    #[test]
    fn r_fuzz_a_link_after_missing_then_dotdot_is_seen() {
        use moat_protocol::request::{SandboxRequest, WorkerInit};
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root.join("out")).unwrap();
        std::os::unix::fs::symlink("src", root.join("in")).unwrap();
        let open = |follow_symlinks| {
            Workspace::open(&WorkerInit {
                workspace: root.to_string_lossy().into_owned(),
                limits: Default::default(),
                follow_symlinks,
                allow_hard_links: false,
                deny_extra: vec![],
                redact: true,
                inside_repository: false,
                sandbox: SandboxRequest::ProcessOnly,
            })
            .unwrap()
        };
        let (plain, following) = (open(false), open(true));
        for ws in [&plain, &following] {
            assert_eq!(
                resolve(ws, "missing/../out/secret"),
                Err(WireError::OutsideWorkspace(Outside::Escapes))
            );
            assert_eq!(
                resolve(ws, "a/b/../../out"),
                Err(WireError::OutsideWorkspace(Outside::Escapes))
            );
        }
        assert_eq!(
            resolve(&plain, "missing/../in/x"),
            Err(WireError::DeniedPath(Denial::Symlink))
        );
        assert_eq!(
            resolve(&following, "missing/../in/x").unwrap().rel(),
            "src/x"
        );
        assert_eq!(resolve(&plain, "missing/x").unwrap().rel(), "missing/x");
    }

    #[test]
    fn lexical_escape() {
        let base = vec!["a".to_owned()];
        assert!(!lexically_escapes(&base, &["..".into()]));
        assert!(lexically_escapes(&base, &["..".into(), "..".into()]));
        assert!(lexically_escapes(&[], &["..".into(), "x".into()]));
        assert!(!lexically_escapes(&[], &["x".into(), "..".into()]));
    }
}

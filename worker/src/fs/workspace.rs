//! The served directory, as a worker sees it: the canonical root, on Linux a
//! directory descriptor of it (every open starts there), the denylist and the
//! limits.

use std::io;
use std::path::{Path, PathBuf};

use moat_protocol::limits::Limits;
use moat_protocol::request::WorkerInit;

use crate::fs::denylist::Denylist;
use crate::redact::Redactor;

/// The workspace. Built once per worker (or once per broker in in-process mode).
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    name: String,
    #[cfg(target_os = "linux")]
    root_fd: rustix::fd::OwnedFd,
    denylist: Denylist,
    limits: Limits,
    follow_symlinks: bool,
    allow_hard_links: bool,
    redactor: Redactor,
    inside_repository: bool,
}

impl Workspace {
    /// Open the workspace described by `init`. The root must be an existing
    /// directory given as an absolute path.
    pub fn open(init: &WorkerInit) -> io::Result<Workspace> {
        let root = PathBuf::from(&init.workspace);
        if !root.is_absolute() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "workspace path is not absolute",
            ));
        }
        #[cfg(target_os = "linux")]
        let root_fd = {
            use rustix::fs::{Mode, OFlags};
            rustix::fs::open(
                &root,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?
        };
        #[cfg(not(target_os = "linux"))]
        if !std::fs::metadata(&root)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "workspace is not a directory",
            ));
        }
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Workspace {
            root,
            name,
            #[cfg(target_os = "linux")]
            root_fd,
            denylist: Denylist::new(&init.deny_extra),
            limits: init.limits.clamped(),
            follow_symlinks: init.follow_symlinks,
            allow_hard_links: init.allow_hard_links,
            redactor: Redactor::new(init.redact),
            inside_repository: init.inside_repository,
        })
    }

    /// Canonical absolute root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Base name of the root (`<name>/` in prose).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The denylist in force.
    #[must_use]
    pub fn denylist(&self) -> &Denylist {
        &self.denylist
    }

    /// The limits in force (clamped).
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether the root lies inside a git repository whose `.git` is above
    /// it (so `.gitignore` files apply from the root down).
    #[must_use]
    pub fn inside_repository(&self) -> bool {
        self.inside_repository
    }

    /// Whether in-workspace symbolic links are followed.
    #[must_use]
    pub fn follow_symlinks(&self) -> bool {
        self.follow_symlinks
    }

    /// Whether multiply-linked regular files are served.
    #[must_use]
    pub fn allow_hard_links(&self) -> bool {
        self.allow_hard_links
    }

    /// The redactor whole sources pass through before any answer is cut
    /// from them (disabled when the broker's configuration turns redaction
    /// off).
    #[must_use]
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A name (a base name or a relative path) as answers show it: redacted
    /// as one text. Every filter a request applies to names (a name
    /// substring, a glob) and every order of names reads this form, never
    /// the raw one, so no filter or order tells what a placeholder hides.
    #[must_use]
    pub fn shown<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        if !self.redactor.enabled() {
            return std::borrow::Cow::Borrowed(name);
        }
        match self
            .redactor
            .redact_str(name, &mut crate::redact::RedactionReport::default())
        {
            Some(shown) => std::borrow::Cow::Owned(shown),
            None => std::borrow::Cow::Borrowed(name),
        }
    }

    /// The root directory descriptor.
    #[cfg(target_os = "linux")]
    #[must_use]
    pub fn root_fd(&self) -> rustix::fd::BorrowedFd<'_> {
        use rustix::fd::AsFd;
        self.root_fd.as_fd()
    }

    /// Whether `rel` (clean, relative) is a symbolic link, without following it.
    pub(crate) fn lstat_is_symlink(&self, rel: &str) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{AtFlags, FileType};
            let st =
                rustix::fs::statat(self.root_fd(), &*rel_or_dot(rel), AtFlags::SYMLINK_NOFOLLOW)?;
            Ok(FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Ok(std::fs::symlink_metadata(host_path(&self.root, rel))?
                .file_type()
                .is_symlink())
        }
    }

    /// The target of the symbolic link at `rel`.
    pub(crate) fn read_link(&self, rel: &str) -> io::Result<PathBuf> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::ffi::OsStringExt;
            let target = rustix::fs::readlinkat(self.root_fd(), &*rel_or_dot(rel), Vec::new())?;
            Ok(PathBuf::from(std::ffi::OsString::from_vec(
                target.into_bytes(),
            )))
        }
        #[cfg(not(target_os = "linux"))]
        {
            std::fs::read_link(host_path(&self.root, rel))
        }
    }
}

/// The path the kernel is given for `rel`, or `.` for the root (the kernel
/// wants a non-empty path). `rel` is a name's text form
/// ([`moat_protocol::name`]): an escaped byte is given back as that byte.
#[must_use]
#[cfg(target_os = "linux")]
pub(crate) fn rel_or_dot(rel: &str) -> std::borrow::Cow<'_, std::ffi::OsStr> {
    use std::borrow::Cow;
    use std::ffi::{OsStr, OsString};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    if rel.is_empty() {
        return Cow::Borrowed(OsStr::new("."));
    }
    match moat_protocol::name::decode(rel) {
        Cow::Borrowed(b) => Cow::Borrowed(OsStr::from_bytes(b)),
        Cow::Owned(v) => Cow::Owned(OsString::from_vec(v)),
    }
}

/// `rel` (a name's text form, see [`rel_or_dot`]) as a path to hand the
/// standard library, beneath `root`.
#[must_use]
#[cfg(not(target_os = "linux"))]
pub(crate) fn host_path(root: &Path, rel: &str) -> PathBuf {
    let bytes = moat_protocol::name::decode(rel);
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        root.join(std::ffi::OsStr::from_bytes(&bytes))
    }
    #[cfg(not(unix))]
    {
        root.join(String::from_utf8_lossy(&bytes).as_ref())
    }
}

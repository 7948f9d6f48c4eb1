//! The opener: reads a [`ContainedPath`] ([`open_file`], [`read_for_scan`],
//! [`read_dir`]) and stats it ([`stat`], [`stat_rel`]) without following any
//! link, and refuses what must not be read: special files (FIFOs, sockets,
//! devices) and hard links.
//!
//! [`containment`](super::containment) decides which path a request names;
//! this module makes the kernel hold it to that path at the moment of the
//! open.
//!
//! On Linux every open is `openat2(root_fd, rel, .., RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`: the kernel refuses any
//! symbolic link in any component and any escape from the root, atomically,
//! so there is no window between a check and the open (a link swapped in
//! between them, SECURITY.md T2). A file is first opened `O_PATH` (which has no side effects, even on a
//! device) and its *descriptor* is `fstat`ed: directories, FIFOs, sockets and
//! devices are refused there without ever being opened for reading, and so is
//! a regular file with more than one hard link (which may be the other name of
//! a file outside the workspace) unless `allow_hard_links` is set. The file is
//! then opened for reading (`O_NONBLOCK`, so even a FIFO swapped in at that
//! instant cannot block) and must be the same inode.
//!
//! Elsewhere the same checks run on `symlink_metadata` then `File::open`;
//! there the check and the open are two steps (documented residual).

use std::fs::File;
use std::io;

use moat_protocol::wire_error::{Missing, SpecialKind, TooLarge, WireError};

use crate::fs::Workspace;
use crate::fs::containment::{ContainedPath, io_to_wire};

/// Kind of an inode, from a no-follow stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Regular file.
    File,
    /// Directory.
    Directory,
    /// Symbolic link.
    Symlink,
    /// FIFO, socket or device.
    Special(SpecialKind),
}

/// What a no-follow stat says about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// Its kind.
    pub kind: Kind,
    /// Size in bytes.
    pub size: u64,
    /// Hard link count.
    pub nlink: u64,
}

/// An open regular file, checked.
#[derive(Debug)]
pub struct OpenFile {
    /// The file, open for reading.
    pub file: File,
    /// Its size at open time.
    pub size: u64,
}

/// Open a regular file for reading, refusing directories, special files, hard
/// links (unless allowed) and files over `limit` bytes.
pub fn open_file(ws: &Workspace, path: &ContainedPath, limit: u64) -> Result<OpenFile, WireError> {
    if path.is_hidden() {
        return Err(map_missing(&hidden(), Missing::File));
    }
    #[cfg(feature = "dangerous-disable-userland-checks")]
    if let Some(raw) = &path.unchecked {
        let file = File::open(raw).map_err(|e| map_missing(&e, Missing::File))?;
        let size = file.metadata().map_err(|e| io_to_wire(&e))?.len();
        return Ok(OpenFile { file, size });
    }
    sys::open_file(ws, path, limit)
}

fn check_regular(ws: &Workspace, meta: &Meta, limit: u64) -> Result<(), WireError> {
    match meta.kind {
        Kind::Directory => return Err(WireError::NotAFile),
        Kind::Special(k) => return Err(WireError::SpecialFile(k)),
        Kind::Symlink => {
            return Err(WireError::DeniedPath(
                moat_protocol::wire_error::Denial::Symlink,
            ));
        }
        Kind::File => {}
    }
    if meta.nlink > 1 && !ws.allow_hard_links() {
        return Err(WireError::HardLink { links: meta.nlink });
    }
    if meta.size > limit {
        return Err(WireError::TooLarge(TooLarge::File {
            size: meta.size,
            limit,
        }));
    }
    Ok(())
}

/// What opening a hidden path ([`ContainedPath::is_hidden`]) fails with:
/// what a path that does not exist fails with.
fn hidden() -> io::Error {
    io::Error::from(io::ErrorKind::NotFound)
}

fn map_missing(e: &io::Error, what: Missing) -> WireError {
    match io_to_wire(e) {
        WireError::NotFound(Missing::Path) => WireError::NotFound(what),
        other => other,
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::*;
    use rustix::fd::OwnedFd;
    use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

    use crate::fs::workspace::rel_or_dot;

    const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
        .union(ResolveFlags::NO_SYMLINKS)
        .union(ResolveFlags::NO_MAGICLINKS);

    pub(super) fn open_beneath(ws: &Workspace, rel: &str, flags: OFlags) -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat2(
            ws.root_fd(),
            &*rel_or_dot(rel),
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        )?)
    }

    pub(super) fn meta_of(st: &rustix::fs::Stat) -> Meta {
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Directory,
            FileType::Symlink => Kind::Symlink,
            FileType::Fifo => Kind::Special(SpecialKind::Fifo),
            FileType::Socket => Kind::Special(SpecialKind::Socket),
            FileType::BlockDevice => Kind::Special(SpecialKind::BlockDevice),
            _ => Kind::Special(SpecialKind::CharDevice),
        };
        #[allow(
            clippy::useless_conversion,
            reason = "st_nlink is u32 on some architectures"
        )]
        let nlink = u64::from(st.st_nlink);
        Meta {
            kind,
            size: u64::try_from(st.st_size).unwrap_or(0),
            nlink,
        }
    }

    pub(super) fn stat(ws: &Workspace, path: &ContainedPath) -> io::Result<Meta> {
        let fd = open_beneath(ws, path.rel(), OFlags::PATH)?;
        Ok(meta_of(&rustix::fs::fstat(&fd)?))
    }

    pub(super) fn open_file(
        ws: &Workspace,
        path: &ContainedPath,
        limit: u64,
    ) -> Result<OpenFile, WireError> {
        let pfd = open_beneath(ws, path.rel(), OFlags::PATH)
            .map_err(|e| map_missing(&e, Missing::File))?;
        let before = rustix::fs::fstat(&pfd).map_err(|e| io_to_wire(&e.into()))?;
        check_regular(ws, &meta_of(&before), limit)?;
        let fd = open_beneath(
            ws,
            path.rel(),
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        )
        .map_err(|e| io_to_wire(&e))?;
        let after = rustix::fs::fstat(&fd).map_err(|e| io_to_wire(&e.into()))?;
        if (before.st_dev, before.st_ino) != (after.st_dev, after.st_ino) {
            // Replaced between the two opens: refuse rather than guess.
            return Err(WireError::NotFound(Missing::Unreadable));
        }
        let now = meta_of(&after);
        check_regular(ws, &now, limit)?;
        Ok(OpenFile {
            file: File::from(fd),
            size: now.size,
        })
    }

    pub(super) fn open_dir(ws: &Workspace, path: &ContainedPath) -> io::Result<OwnedFd> {
        open_beneath(ws, path.rel(), OFlags::RDONLY | OFlags::DIRECTORY)
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use super::*;

    pub(super) fn meta_of(md: &std::fs::Metadata) -> Meta {
        let ft = md.file_type();
        let kind = if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_dir() {
            Kind::Directory
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Special(special_kind(&ft))
        };
        Meta {
            kind,
            size: md.len(),
            nlink: nlink(md),
        }
    }

    #[cfg(unix)]
    fn special_kind(ft: &std::fs::FileType) -> SpecialKind {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            SpecialKind::Fifo
        } else if ft.is_socket() {
            SpecialKind::Socket
        } else if ft.is_block_device() {
            SpecialKind::BlockDevice
        } else {
            SpecialKind::CharDevice
        }
    }

    #[cfg(not(unix))]
    fn special_kind(_: &std::fs::FileType) -> SpecialKind {
        SpecialKind::CharDevice
    }

    #[cfg(unix)]
    fn nlink(md: &std::fs::Metadata) -> u64 {
        use std::os::unix::fs::MetadataExt;
        md.nlink()
    }

    #[cfg(not(unix))]
    fn nlink(_: &std::fs::Metadata) -> u64 {
        1
    }

    pub(super) fn stat(ws: &Workspace, path: &ContainedPath) -> io::Result<Meta> {
        Ok(meta_of(&std::fs::symlink_metadata(
            crate::fs::workspace::host_path(ws.root(), path.rel()),
        )?))
    }

    pub(super) fn open_file(
        ws: &Workspace,
        path: &ContainedPath,
        limit: u64,
    ) -> Result<OpenFile, WireError> {
        let meta = stat(ws, path).map_err(|e| map_missing(&e, Missing::File))?;
        check_regular(ws, &meta, limit)?;
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(
                rustix::fs::OFlags::NOFOLLOW.bits() as i32
                    | rustix::fs::OFlags::NONBLOCK.bits() as i32,
            );
        }
        let file = opts
            .open(crate::fs::workspace::host_path(ws.root(), path.rel()))
            .map_err(|e| io_to_wire(&e))?;
        let now = meta_of(&file.metadata().map_err(|e| io_to_wire(&e))?);
        check_regular(ws, &now, limit)?;
        Ok(OpenFile {
            file,
            size: now.size,
        })
    }
}

/// No-follow stat of a contained path.
pub fn stat(ws: &Workspace, path: &ContainedPath) -> io::Result<Meta> {
    if path.is_hidden() {
        return Err(hidden());
    }
    #[cfg(feature = "dangerous-disable-userland-checks")]
    if let Some(raw) = &path.unchecked {
        let md = std::fs::metadata(raw)?;
        let kind = if md.is_dir() {
            Kind::Directory
        } else {
            Kind::File
        };
        return Ok(Meta {
            kind,
            size: md.len(),
            nlink: 1,
        });
    }
    sys::stat(ws, path)
}

/// One entry of a directory, from a no-follow stat of the entry.
#[derive(Debug, Clone)]
pub struct RawEntry {
    /// Base name, in its text form ([`moat_protocol::name::encode`]).
    pub name: String,
    /// What the entry is; `None` if it could not be stat'ed.
    pub meta: Option<Meta>,
}

/// The text form of a name read from the file system.
#[cfg(not(target_os = "linux"))]
fn os_name(name: &std::ffi::OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        moat_protocol::name::encode(name.as_bytes()).into_owned()
    }
    #[cfg(not(unix))]
    {
        moat_protocol::name::encode(name.to_string_lossy().as_bytes()).into_owned()
    }
}

/// Read the entries of a directory (excluding `.` and `..`).
pub fn read_dir(ws: &Workspace, path: &ContainedPath) -> Result<Vec<RawEntry>, WireError> {
    if path.is_hidden() {
        return Err(map_missing(&hidden(), Missing::Directory));
    }
    #[cfg(feature = "dangerous-disable-userland-checks")]
    if let Some(raw) = &path.unchecked {
        let rd = std::fs::read_dir(raw).map_err(|e| io_to_wire(&e))?;
        return Ok(rd
            .filter_map(Result::ok)
            .map(|e| RawEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                meta: e.metadata().ok().map(|m| Meta {
                    kind: if m.is_dir() {
                        Kind::Directory
                    } else {
                        Kind::File
                    },
                    size: m.len(),
                    nlink: 1,
                }),
            })
            .collect());
    }
    read_dir_sys(ws, path)
}

/// `Ok` if `path` is a directory; otherwise why it cannot be listed (missing,
/// a symbolic link, not a directory), from a no-follow look at it.
fn require_directory(ws: &Workspace, path: &ContainedPath) -> Result<(), WireError> {
    let meta = stat(ws, path).map_err(|e| map_missing(&e, Missing::Directory))?;
    match meta.kind {
        Kind::Directory => Ok(()),
        Kind::Symlink => Err(WireError::DeniedPath(
            moat_protocol::wire_error::Denial::Symlink,
        )),
        _ => Err(WireError::NotADirectory),
    }
}

/// Bytes of `getdents64` buffer for one listing.
#[cfg(target_os = "linux")]
const LISTING_BUFFER: usize = 32 * 1024;

#[cfg(target_os = "linux")]
fn read_dir_sys(ws: &Workspace, path: &ContainedPath) -> Result<Vec<RawEntry>, WireError> {
    use rustix::fs::{AtFlags, FileType, RawDir};
    use std::mem::MaybeUninit;
    // Opened once, with `O_DIRECTORY` and no link followed, so a listing costs
    // one `openat2`. The error alone does not say why a path cannot be
    // listed (ENOTDIR is also a missing parent), so only then is it looked at.
    let fd = sys::open_dir(ws, path).map_err(|e| match require_directory(ws, path) {
        Ok(()) => io_to_wire(&e),
        Err(why) => why,
    })?;
    // getdents64 straight from the opened fd into one 32 KiB buffer (a
    // 100-entry directory in one call), rather than rustix's `Dir`, which
    // reopens the fd and starts with a small buffer.
    let mut buf = vec![MaybeUninit::<u8>::uninit(); LISTING_BUFFER];
    let mut dir = RawDir::new(&fd, &mut buf);
    let mut out = Vec::new();
    while let Some(entry) = dir.next() {
        let Ok(entry) = entry else {
            return Err(WireError::Unsupported(
                moat_protocol::wire_error::Unsupported::ListingFailed,
            ));
        };
        let name_c = entry.file_name();
        let bytes = name_c.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        // Directories and links are known from the entry's type: a listing
        // reports neither's size, so they need no `fstatat`. Everything else
        // (files for their size, unknown types) is looked at without
        // following links.
        let meta = match entry.file_type() {
            FileType::Directory => Some(Meta {
                kind: Kind::Directory,
                size: 0,
                nlink: 1,
            }),
            FileType::Symlink => Some(Meta {
                kind: Kind::Symlink,
                size: 0,
                nlink: 1,
            }),
            _ => rustix::fs::statat(&fd, name_c, AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .map(|st| sys::meta_of(&st)),
        };
        out.push(RawEntry {
            name: moat_protocol::name::encode(bytes).into_owned(),
            meta,
        });
    }
    Ok(out)
}

#[cfg(not(target_os = "linux"))]
fn read_dir_sys(ws: &Workspace, path: &ContainedPath) -> Result<Vec<RawEntry>, WireError> {
    // `std::fs::read_dir` follows links: look first.
    require_directory(ws, path)?;
    let rd = std::fs::read_dir(crate::fs::workspace::host_path(ws.root(), path.rel()))
        .map_err(|e| io_to_wire(&e))?;
    let mut out = Vec::new();
    for entry in rd {
        let Ok(entry) = entry else {
            return Err(WireError::Unsupported(
                moat_protocol::wire_error::Unsupported::ListingFailed,
            ));
        };
        let meta = std::fs::symlink_metadata(entry.path())
            .ok()
            .map(|m| sys::meta_of(&m));
        out.push(RawEntry {
            name: os_name(&entry.file_name()),
            meta,
        });
    }
    Ok(out)
}

/// Why a walked file was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanSkip {
    /// Larger than the scan cap.
    TooLarge,
    /// Not a regular file when opened (raced, or special).
    NotRegular,
    /// More than one hard link (and hard links are not allowed).
    HardLink,
    /// Could not be opened or read.
    Unreadable,
}

/// Read a walked file for scanning in one open: no link followed, the opened
/// descriptor must be a regular file with one link (unless allowed) and at
/// most `max` bytes. Used on the hot path of searches, where the walk already
/// classified the entry as a regular file.
pub fn read_for_scan(ws: &Workspace, rel: &str, max: u64) -> Result<Vec<u8>, ScanSkip> {
    let (file, size) = open_for_scan(ws, rel)?;
    read_opened(file, size, max)
}

/// Open a walked file for scanning, with the checks of [`read_for_scan`]
/// but none on its size, which is returned with it.
pub fn open_for_scan(ws: &Workspace, rel: &str) -> Result<(File, u64), ScanSkip> {
    #[cfg(target_os = "linux")]
    let (file, meta) = {
        use rustix::fs::OFlags;
        let fd = sys::open_beneath(ws, rel, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)
            .map_err(|_| ScanSkip::Unreadable)?;
        let st = rustix::fs::fstat(&fd).map_err(|_| ScanSkip::Unreadable)?;
        (File::from(fd), sys::meta_of(&st))
    };
    #[cfg(not(target_os = "linux"))]
    let (file, meta) = {
        let path = ContainedPath::root().child_path(rel);
        let meta = stat(ws, &path).map_err(|_| ScanSkip::Unreadable)?;
        if meta.kind != Kind::File {
            return Err(ScanSkip::NotRegular);
        }
        let file = File::open(crate::fs::workspace::host_path(ws.root(), rel))
            .map_err(|_| ScanSkip::Unreadable)?;
        let m = file.metadata().map_err(|_| ScanSkip::Unreadable)?;
        (file, sys::meta_of(&m))
    };
    if meta.kind != Kind::File {
        return Err(ScanSkip::NotRegular);
    }
    if meta.nlink > 1 && !ws.allow_hard_links() {
        return Err(ScanSkip::HardLink);
    }
    Ok((file, meta.size))
}

/// Read a file [`open_for_scan`] opened (`size` bytes when opened), whole,
/// if it is at most `max` bytes; a file that grew past `max` is too large.
pub fn read_opened(file: File, size: u64, max: u64) -> Result<Vec<u8>, ScanSkip> {
    use std::io::Read;
    if size > max {
        return Err(ScanSkip::TooLarge);
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "bounded by `max`, at most a few MiB"
    )]
    let mut buf = Vec::with_capacity(size as usize + 1);
    file.take(max + 1)
        .read_to_end(&mut buf)
        .map_err(|_| ScanSkip::Unreadable)?;
    if buf.len() as u64 > max {
        return Err(ScanSkip::TooLarge);
    }
    Ok(buf)
}

/// The fields of a stat that git keeps in its index to tell an unchanged
/// file without reading it: modification and status-change times to the
/// nanosecond, inode, owner and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Modification time: seconds and nanoseconds since the epoch.
    pub mtime: (i64, u32),
    /// Status-change time: seconds and nanoseconds since the epoch.
    pub ctime: (i64, u32),
    /// Inode number.
    pub ino: u64,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// The permission bits and type (`st_mode`).
    pub mode: u32,
}

/// No-follow stat of a walked relative path, with its [`Stamp`] where the
/// platform gives all of it (`None` elsewhere: the caller must read).
pub fn stamp_rel(ws: &Workspace, rel: &str) -> io::Result<(Meta, Option<Stamp>)> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::OFlags;
        let fd = sys::open_beneath(ws, rel, OFlags::PATH)?;
        let st = rustix::fs::fstat(&fd)?;
        #[allow(
            clippy::useless_conversion,
            clippy::unnecessary_cast,
            reason = "the stat field types differ between architectures"
        )]
        let stamp = Stamp {
            mtime: (
                i64::from(st.st_mtime),
                u32::try_from(st.st_mtime_nsec).unwrap_or(u32::MAX),
            ),
            ctime: (
                i64::from(st.st_ctime),
                u32::try_from(st.st_ctime_nsec).unwrap_or(u32::MAX),
            ),
            ino: u64::from(st.st_ino),
            uid: st.st_uid,
            gid: st.st_gid,
            mode: st.st_mode,
        };
        Ok((sys::meta_of(&st), Some(stamp)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok((stat_rel(ws, rel)?, None))
    }
}

/// No-follow stat of a walked (clean, contained) relative path.
pub fn stat_rel(ws: &Workspace, rel: &str) -> io::Result<Meta> {
    stat(ws, &ContainedPath::root().child_path(rel))
}

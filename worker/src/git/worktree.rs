//! Work-tree bytes for git answers, read exactly as `read_file` reads them.
//!
//! A tracked path is resolved by [`containment::resolve`] (containment,
//! denylist, symbolic-link policy) and opened by [`open::open_file`]
//! (`openat2` beneath the root, no link followed, the opened descriptor must
//! be a regular file with one link, at most `max_file_bytes`). What
//! `read_file` would refuse is never read: the diff shows a one-line notice
//! with the reason instead. A tracked symbolic link is compared by its target
//! text (what git stores for it), read without following it.
//!
//! A tracked file whose stat still matches what the index recorded when it
//! was last known to match its blob is not read at all ([`IndexStats`]), by
//! git's own rule: times to the nanosecond, inode, owner and size must all be
//! equal, and the file must not be "racily clean" (modified in or after the
//! instant the index was written, when a change can hide behind an equal
//! stat). The stat is taken through the same opener, so it sees exactly the
//! file a read would open, and the shortcut applies only where a read would
//! succeed or was refused only for its size (a regular file, one link
//! unless hard links are allowed); everything else is read or refused as
//! before.

use std::collections::HashMap;
use std::io::Read;

use moat_protocol::wire_error::{Denial, Missing, Outside, TooLarge, WireError};

use crate::fs::Workspace;
use crate::fs::open::{Kind, Stamp};
use crate::fs::{containment, open};

/// The stat fields the index keeps for an entry, as recorded.
#[derive(Debug, Clone, Copy)]
struct Recorded {
    mtime: (i64, u32),
    ctime: (i64, u32),
    ino: u32,
    uid: u32,
    gid: u32,
    size: u32,
}

/// The index's recorded stats, and when the index was written.
#[derive(Debug, Default)]
pub struct IndexStats {
    by_path: HashMap<String, Recorded>,
    /// The index file's modification time; `None`: no index, nothing is
    /// trusted.
    written: Option<(i64, u32)>,
}

impl IndexStats {
    /// No index: every file is read.
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// An index written at `secs`.`nanos`.
    #[must_use]
    pub fn written_at(secs: i64, nanos: u32) -> Self {
        Self {
            by_path: HashMap::new(),
            written: Some((secs, nanos)),
        }
    }

    /// Record the stat the index holds for `path`.
    pub fn insert(&mut self, path: &str, stat: &gix::index::entry::Stat) {
        self.by_path.insert(
            path.to_owned(),
            Recorded {
                mtime: (i64::from(stat.mtime.secs), stat.mtime.nsecs),
                ctime: (i64::from(stat.ctime.secs), stat.ctime.nsecs),
                ino: stat.ino,
                uid: stat.uid,
                gid: stat.gid,
                size: stat.size,
            },
        );
    }

    /// Whether the work-tree file at the tracked path `rel` (index mode
    /// `mode`) is, by its stat alone, the blob the index names. `false`
    /// means only "read it to know".
    #[must_use]
    pub fn unchanged(&self, ws: &Workspace, rel: &str, mode: u32) -> bool {
        if mode == 0o120000 || mode == 0o160000 {
            return false;
        }
        let (Some(written), Some(rec)) = (self.written, self.by_path.get(rel)) else {
            return false;
        };
        // Racily clean: the file may have changed within the timestamp
        // granularity of the index write, after its stat was recorded.
        if rec.mtime >= written {
            return false;
        }
        let Ok((meta, Some(stamp))) = open::stamp_rel(ws, rel) else {
            return false;
        };
        // A file over the size limit is never read, but its stat can still
        // say it is unchanged (which says nothing of its content); a second
        // hard link may be another file's name and is refused as a read is.
        let regular = meta.kind == Kind::File && (meta.nlink <= 1 || ws.allow_hard_links());
        regular && same(rec, &stamp, meta.size)
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "the index keeps the low 32 bits of inode and size, as git does"
)]
fn same(rec: &Recorded, now: &Stamp, size: u64) -> bool {
    rec.mtime == now.mtime
        && rec.ctime == now.ctime
        && rec.ino == now.ino as u32
        && rec.uid == now.uid
        && rec.gid == now.gid
        && rec.size == size as u32
}

/// The git mode of what the work tree holds at the tracked path `rel`
/// (index mode `mode`), from a no-follow stat: a symbolic link is
/// `120000`; a regular file is `100755` when its owner may execute it and
/// `100644` otherwise, as git records it, or keeps the index's executable
/// bit when `exec_bit` is false (`core.fileMode = false`, git's rule);
/// anything else keeps the index's mode (a read then says why it is not
/// compared).
#[must_use]
pub fn mode_of(ws: &Workspace, rel: &str, mode: u32, exec_bit: bool) -> u32 {
    const REGULAR: u32 = 0o100000;
    if mode == 0o160000 {
        return mode;
    }
    match open::stamp_rel(ws, rel) {
        Ok((meta, _)) if meta.kind == Kind::Symlink => 0o120000,
        Ok((meta, stamp)) if meta.kind == Kind::File => {
            let exec = match (exec_bit, stamp) {
                (true, Some(stamp)) => stamp.mode & 0o100 != 0,
                _ => mode == 0o100755,
            };
            if mode & 0o170000 != REGULAR && !exec_bit {
                return 0o100644;
            }
            if exec { 0o100755 } else { 0o100644 }
        }
        _ => mode,
    }
}

/// What the work tree holds at a tracked path.
#[derive(Debug)]
pub enum Side {
    /// The bytes (of a file, or a symbolic link's target).
    Bytes(Vec<u8>),
    /// Nothing: the file was deleted.
    Missing,
    /// Not read; the reason, as a fixed phrase.
    Refused(String),
}

/// Read the work-tree content of the tracked path `rel` whose index mode is
/// `mode`.
#[must_use]
pub fn read(ws: &Workspace, rel: &str, mode: u32) -> Side {
    if mode == 0o120000 {
        return read_link(ws, rel);
    }
    let path = match containment::resolve(ws, rel) {
        Ok(p) => p,
        Err(e) => return refusal(&e),
    };
    let limit = ws.limits().max_file_bytes;
    let mut opened = match open::open_file(ws, &path, limit) {
        Ok(o) => o,
        Err(e) => return refusal(&e),
    };
    #[expect(
        clippy::cast_possible_truncation,
        reason = "bounded by max_file_bytes, at most a few MiB"
    )]
    let mut buf = Vec::with_capacity(opened.size.min(limit) as usize + 1);
    match (&mut opened.file).take(limit + 1).read_to_end(&mut buf) {
        Ok(_) if buf.len() as u64 > limit => {
            refusal(&WireError::TooLarge(TooLarge::Grew { limit }))
        }
        Ok(_) => Side::Bytes(buf),
        Err(_) => Side::Refused("it could not be read".into()),
    }
}

/// A tracked symbolic link: its target text, if the work tree still has a
/// link there (its parent directories checked like any path).
fn read_link(ws: &Workspace, rel: &str) -> Side {
    let parent = rel.rsplit_once('/').map_or("", |(p, _)| p);
    if !parent.is_empty()
        && let Err(e) = containment::resolve(ws, parent)
    {
        return refusal(&e);
    }
    if let Some(denial) = ws.denylist().check_path(rel) {
        return refusal(&WireError::DeniedPath(denial));
    }
    match ws.lstat_is_symlink(rel) {
        Ok(true) => match ws.read_link(rel) {
            Ok(target) => Side::Bytes(target.to_string_lossy().into_owned().into_bytes()),
            Err(_) => Side::Refused("it could not be read".into()),
        },
        Ok(false) => Side::Refused("it is no longer a symbolic link".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Side::Missing,
        Err(_) => Side::Refused("it could not be read".into()),
    }
}

/// The one-line reason `read_file` would give (never content).
fn refusal(e: &WireError) -> Side {
    let why = match e {
        WireError::NotFound(Missing::File | Missing::Path) => return Side::Missing,
        WireError::NotFound(_) => "it could not be read".to_owned(),
        WireError::DeniedPath(Denial::Symlink) => {
            "it goes through a symbolic link, which this server does not follow".to_owned()
        }
        WireError::DeniedPath(_) => "the denylist covers it".to_owned(),
        WireError::OutsideWorkspace(Outside::KernelDenied) => {
            "the sandbox refused to open it".to_owned()
        }
        WireError::OutsideWorkspace(_) => "it resolves outside the workspace".to_owned(),
        WireError::HardLink { links } => {
            format!("it has {links} hard links and may be another file's second name")
        }
        WireError::SpecialFile(k) => format!("it is {}", k.describe()),
        WireError::TooLarge(TooLarge::File { size, limit }) => {
            format!("it is {size} bytes, over the {limit}-byte limit")
        }
        WireError::TooLarge(_) => "it is over the file size limit".to_owned(),
        WireError::NotAFile => "it is a directory".to_owned(),
        _ => "it could not be read".to_owned(),
    };
    Side::Refused(why)
}

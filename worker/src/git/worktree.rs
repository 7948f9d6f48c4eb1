//! Work-tree bytes for git answers, read exactly as `read_file` reads them.
//!
//! A tracked path is resolved by [`containment::resolve`] (containment,
//! denylist, symbolic-link policy) and opened by [`open::open_file`]
//! (`openat2` beneath the root, no link followed, the opened descriptor must
//! be a regular file with one link, at most `max_file_bytes`). What
//! `read_file` would refuse is never read: the diff shows a one-line notice
//! with the reason instead. A tracked symbolic link is compared by its target
//! text (what git stores for it), read without following it.

use std::io::Read;

use moat_protocol::wire_error::{Denial, Missing, Outside, TooLarge, WireError};

use crate::fs::Workspace;
use crate::fs::{containment, open};

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

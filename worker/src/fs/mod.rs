//! The file-system layer: the workspace, and naming and opening files inside
//! it.
//!
//! * [`workspace`]: the served directory as a worker sees it ([`Workspace`]:
//!   the root and its directory fd, the denylist, the limits).
//! * [`containment`]: turns a requested path into a [`ContainedPath`], the
//!   only way to name a file; checks the path stays beneath the root (through
//!   symbolic links too) and is not denied.
//! * [`open`]: the opener. Opens, stats and lists a [`ContainedPath`] without
//!   following any link (`openat2` with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS` from the root directory fd on Linux), fstats the
//!   *opened* descriptor, and refuses special files and hard links.
//! * [`listing`]: what a listing of one directory shows and passes over.
//! * [`denylist`]: names moat never reads.
//! * [`skiplist`]: generated trees that walks skip.

pub mod containment;
pub mod denylist;
pub mod listing;
pub mod open;
pub mod skiplist;
pub mod workspace;

pub use containment::ContainedPath;
pub use workspace::Workspace;

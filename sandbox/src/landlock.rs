//! Landlock (step 6): the kernel's filesystem, network and IPC restrictions,
//! applied to the calling thread (and everything it later starts or execs).
//!
//! The ruleset **handles every right the running kernel's ABI knows** (an
//! unhandled right is allowed, so handling fewer would leave holes) and grants:
//!
//! | beneath | rights | who needs it |
//! |---|---|---|
//! | the workspace | ReadFile, ReadDir | the tools, git read in-process |
//! | `/dev/null` | ReadFile, WriteFile | a harmless sink |
//!
//! Nothing is writable and **nothing is executable** (no rule grants Execute:
//! the worker reads git in-process and starts no program; seccomp has no
//! `execve` either), `/proc` is not readable.
//! ABI ≥ 4: TCP bind and connect are handled with no port rule, so both are
//! denied. ABI ≥ 6: abstract unix sockets and signals are scoped to the
//! sandbox (the worker cannot signal the broker).
//!
//! Every path is opened here, and a path that cannot be opened is an error:
//! `landlock::path_beneath_rules` would skip it silently.
//!
//! Not covered by Landlock, on purpose or by design (see the sandbox notes):
//! metadata (`stat`, `access`, `readlink`, `chdir`) of any path, hard links that
//! already exist inside the workspace, UDP and other socket families (seccomp
//! refuses non-unix sockets), fds opened before this step (closed in step 1).

use std::fs;
use std::io;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, PathFdError,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use moat_protocol::response::Enforcement;

use super::{Policy, SandboxError};

/// `LANDLOCK_CREATE_RULESET_VERSION` (include/uapi/linux/landlock.h): with a
/// NULL attribute and size 0, `landlock_create_ruleset` returns the ABI version.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The newest ABI whose features this policy uses (scopes). A kernel below it
/// still gets every right it knows, and the report says `Partial`.
const POLICY_ABI: u8 = 6;

/// What Landlock enforces, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LandlockStatus {
    /// `Full`: every control of the policy (files, TCP, IPC scopes); `Partial`:
    /// files are restricted but the kernel lacks TCP rules (ABI < 4) or scopes
    /// (ABI < 6).
    pub(super) enforcement: Enforcement,
    /// TCP bind and connect are denied.
    pub(super) tcp_denied: bool,
    /// Abstract unix sockets and signals are scoped.
    pub(super) ipc_scoped: bool,
}

/// The Landlock ABI version the running kernel offers; 0 without Landlock
/// (not built in, or disabled at boot).
pub(super) fn kernel_abi() -> u8 {
    // SAFETY: with a NULL attribute pointer, size 0 and the VERSION flag the
    // kernel reads no memory and only returns the ABI version (or -1).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u8::try_from(version.max(0)).unwrap_or(u8::MAX)
}

/// Builds the ruleset for `policy` and restricts the calling thread with it.
/// Fails if the kernel has no Landlock, a path cannot be opened, or the
/// ruleset is not enforced.
pub(super) fn restrict(policy: &Policy<'_>) -> Result<LandlockStatus, SandboxError> {
    let kernel = kernel_abi();
    if kernel == 0 {
        return Err(SandboxError::LandlockUnavailable { abi: 0 });
    }
    // Every right the kernel knows, as the crate names them: a kernel newer than
    // the crate maps to the crate's newest ABI.
    let abi = ABI::from(i32::from(kernel));
    let tcp = kernel >= 4;
    let scopes = kernel >= 6;

    let workspace = open_dir(policy.workspace)?;
    let null = open_path(Path::new("/dev/null"))?;

    let ruleset_err = |e: landlock::RulesetError| SandboxError::LandlockRuleset(Box::new(e));
    // HardRequirement: we ask for exactly what the kernel reported, so anything
    // the kernel then refuses is an error, never a silent downgrade.
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(ruleset_err)?;
    if tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(ruleset_err)?;
    }
    if scopes {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(ruleset_err)?;
    }
    let read_only = AccessFs::ReadFile | AccessFs::ReadDir;
    let created = ruleset
        .create()
        .map_err(ruleset_err)?
        .add_rule(PathBeneath::new(workspace, read_only))
        .map_err(ruleset_err)?
        .add_rule(PathBeneath::new(
            null,
            AccessFs::ReadFile | AccessFs::WriteFile,
        ))
        .map_err(ruleset_err)?;
    let status = created.restrict_self().map_err(ruleset_err)?;

    let enforced = match status.ruleset {
        RulesetStatus::NotEnforced => return Err(SandboxError::LandlockNotEnforced),
        RulesetStatus::PartiallyEnforced => false,
        RulesetStatus::FullyEnforced => true,
    };
    if !status.no_new_privs {
        return Err(SandboxError::LandlockNotEnforced);
    }
    let complete = enforced && kernel >= POLICY_ABI;
    Ok(LandlockStatus {
        enforcement: if complete {
            Enforcement::Full
        } else {
            Enforcement::Partial
        },
        tcp_denied: tcp,
        ipc_scoped: scopes,
    })
}

/// Opens `path` for a rule (`O_PATH`), mapping the error to this step.
fn open_path(path: &Path) -> Result<PathFd, SandboxError> {
    PathFd::new(path).map_err(|e| {
        let source = match e {
            PathFdError::OpenCall { source, .. } => source,
            #[allow(unreachable_patterns, reason = "the enum is non_exhaustive")]
            other => io::Error::other(other.to_string()),
        };
        SandboxError::LandlockPath {
            path: path.to_owned(),
            source,
        }
    })
}

/// The workspace must exist and be a directory.
fn open_dir(path: &Path) -> Result<PathFd, SandboxError> {
    let kind_err = |source| SandboxError::LandlockPath {
        path: path.to_owned(),
        source,
    };
    let meta = fs::metadata(path).map_err(kind_err)?;
    if !meta.is_dir() {
        return Err(kind_err(io::Error::from(io::ErrorKind::NotADirectory)));
    }
    open_path(path)
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::path::PathBuf;

    use super::*;

    /// Landlock (ABI < 8) restricts only the calling thread, so each test
    /// confines a fresh thread and the test process stays free.
    fn in_confined_thread<T: Send + 'static>(
        workspace: PathBuf,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> (LandlockStatus, T) {
        std::thread::spawn(move || {
            let policy = Policy {
                workspace: &workspace,
                confine: true,
                socket_fd: 3,
            };
            let status = restrict(&policy).unwrap();
            (status, body())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn this_kernel_offers_landlock() {
        assert!(kernel_abi() >= 1, "the test machine has Landlock ABI 7");
    }

    #[test]
    fn workspace_is_readable_and_nothing_else() {
        let ws = tempfile::tempdir().unwrap();
        fs::write(ws.path().join("inside.txt"), "inside").unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        let outside_path = outside.path().to_owned();
        let ws_path = ws.path().to_owned();
        let (status, (inside, out, write, hostname)) =
            in_confined_thread(ws_path.clone(), move || {
                (
                    fs::read_to_string(ws_path.join("inside.txt")).ok(),
                    fs::read(&outside_path).map_err(|e| e.raw_os_error()),
                    fs::write(ws_path.join("new.txt"), "x").map_err(|e| e.raw_os_error()),
                    fs::read("/etc/hostname").map_err(|e| e.raw_os_error()),
                )
            });
        assert_eq!(status.enforcement, Enforcement::Full);
        assert_eq!(inside.as_deref(), Some("inside"));
        assert_eq!(out.unwrap_err(), Some(libc::EACCES));
        assert_eq!(write.unwrap_err(), Some(libc::EACCES));
        assert_eq!(hostname.unwrap_err(), Some(libc::EACCES));
    }

    #[test]
    fn tcp_connect_is_denied_by_landlock_alone() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let (status, connect) = in_confined_thread(ws.path().to_owned(), move || {
            TcpStream::connect(addr)
                .map(|_| ())
                .map_err(|e| e.raw_os_error())
        });
        assert!(status.tcp_denied);
        assert_eq!(connect.unwrap_err(), Some(libc::EACCES));
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "nothing may have connected");
    }

    #[test]
    fn dev_null_is_writable() {
        let ws = tempfile::tempdir().unwrap();
        let (_, wrote) = in_confined_thread(ws.path().to_owned(), || {
            let mut f = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")?;
            let mut buf = Vec::new();
            f.read_to_end(&mut buf)?;
            std::io::Write::write_all(&mut f, b"x")
        });
        wrote.unwrap();
    }

    #[test]
    fn a_missing_workspace_is_an_error_not_a_skipped_rule() {
        let policy = Policy {
            workspace: Path::new("/nonexistent/moat/workspace"),
            confine: true,
            socket_fd: 3,
        };
        // Fails while opening paths, before anything is restricted.
        let err = restrict(&policy).unwrap_err();
        assert!(matches!(err, SandboxError::LandlockPath { .. }), "{err:?}");
        assert_eq!(err.exit_code(), 77);
    }
}

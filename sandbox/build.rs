//! Compiles the worker's seccomp policy, `seccomp/<arch>.json` in this crate,
//! into BPF at build time (seccompiler's JSON front-end), so the worker
//! carries no JSON parser and cannot load a policy at run time.
//!
//! For each filter named in [`FILTERS`] it writes `OUT_DIR/seccomp_<name>.bpf`:
//! the instructions as 8-byte little-endian records (`code: u16, jt: u8,
//! jf: u8, k: u32`), which `src/seccomp.rs` includes with
//! `include_bytes!` and turns back into `sock_filter`s.
//!
//! Before compiling, both architectures' files are checked (a broken aarch64
//! policy fails an x86_64 build too):
//! - exactly the filters in [`FILTERS`], with the actions the worker relies on;
//! - every syscall entry has a non-empty `"comment"` naming who needs it;
//! - no syscall in [`NEVER_ALLOWED`] is allowed by the allow-list, except when
//!   the `enosys` filter answers it unconditionally (ERRNO beats ALLOW when
//!   filters are stacked);
//! - every syscall of the `enosys` filter is also in the allow-list (or the
//!   allow-list's KILL would beat the ENOSYS answer).
//!
//! A Linux target on an architecture without a policy gets empty files (and a
//! warning): the worker then fails closed when confinement is requested. A
//! non-Linux target needs no policy.

#![allow(
    clippy::disallowed_macros,
    clippy::print_stdout,
    reason = "a build script speaks to cargo on stdout"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::env;
use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};

/// The filters a policy file must contain, in installation order.
const FILTERS: [&str; 2] = ["enosys", "worker"];

/// Compiled filters by name: the encoded instructions.
type Programs = BTreeMap<String, Vec<u8>>;

/// Architectures with a policy file.
const ARCHES: [&str; 2] = ["x86_64", "aarch64"];

/// Syscalls that would loosen or escape the sandbox. The allow-list must not
/// allow them (unless the `enosys` filter answers them first).
const NEVER_ALLOWED: &[&str] = &[
    // Changing the sandbox itself.
    "seccomp",
    "landlock_create_ruleset",
    "landlock_add_rule",
    "landlock_restrict_self",
    // Other processes' memory and fds.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    // Mounts and namespaces.
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    // Kernel attack surface with no use here.
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "open_by_handle_at",
    "name_to_handle_at",
    // io_uring performs I/O (sockets included) without the syscalls below.
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    // Network: no connections, no listeners.
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "sendmsg",
    "sendmmsg",
    "recvmmsg",
    // Executing any program: the worker reads git in-process and never
    // starts one; memfd code would also be invisible to Landlock.
    "execve",
    "execveat",
    "fork",
    "vfork",
    "memfd_create",
    "memfd_secret",
    // Raising limits again.
    "setrlimit",
];

/// Syscalls the allow-list may only allow with argument conditions.
const ONLY_WITH_ARGS: &[&str] = &[
    "socket",
    "socketpair",
    "clone",
    "ioctl",
    "prctl",
    "prlimit64",
];

fn main() -> Result<(), Box<dyn Error>> {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").ok_or("no CARGO_MANIFEST_DIR")?);
    let policy_dir = manifest.join("seccomp");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("no OUT_DIR")?);
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", policy_dir.display());
    for arch in ARCHES {
        println!(
            "cargo:rerun-if-changed={}",
            policy_file(&policy_dir, arch).display()
        );
    }

    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if target_os != "linux" {
        return Ok(());
    }

    let mut compiled = None;
    for arch in ARCHES {
        let text = fs::read_to_string(policy_file(&policy_dir, arch))
            .map_err(|e| format!("{}: {e}", policy_file(&policy_dir, arch).display()))?;
        check_policy(arch, &text).map_err(|e| format!("seccomp/{arch}.json: {e}"))?;
        let programs = compile(arch, &text).map_err(|e| format!("seccomp/{arch}.json: {e}"))?;
        if arch == target_arch {
            compiled = programs;
        }
    }

    for name in FILTERS {
        let bytes = match &compiled {
            Some(programs) => programs.get(name).cloned().unwrap_or_default(),
            None => Vec::new(),
        };
        fs::write(out_dir.join(format!("seccomp_{name}.bpf")), bytes)?;
    }
    if compiled.is_none() {
        println!(
            "cargo:warning=no seccomp policy for target arch {target_arch:?} (or host is not \
             Linux): the worker will refuse to start confined"
        );
    }
    Ok(())
}

fn policy_file(dir: &Path, arch: &str) -> PathBuf {
    dir.join(format!("{arch}.json"))
}

/// Structural and policy checks on one JSON policy (see the crate docs above).
fn check_policy(arch: &str, text: &str) -> Result<(), Box<dyn Error>> {
    let root: serde_json::Value = serde_json::from_str(text)?;
    let filters = root.as_object().ok_or("top level must be an object")?;
    let names: BTreeSet<&str> = filters.keys().map(String::as_str).collect();
    if names != FILTERS.iter().copied().collect() {
        return Err(format!("filters must be exactly {FILTERS:?}, found {names:?}").into());
    }
    let expect_actions = |name: &str, mismatch: serde_json::Value, matched: serde_json::Value| {
        let filter = &filters[name];
        if filter["mismatch_action"] != mismatch || filter["match_action"] != matched {
            return Err(format!(
                "filter {name:?} must have mismatch_action {mismatch} and match_action {matched}"
            ));
        }
        Ok(())
    };
    expect_actions("enosys", "allow".into(), serde_json::json!({ "errno": 38 }))?;
    expect_actions("worker", "kill_process".into(), "allow".into())?;

    // syscall -> unconditional?
    let rules = |name: &str| -> Result<BTreeMap<String, bool>, Box<dyn Error>> {
        let mut seen = BTreeMap::new();
        let list = filters[name]["filter"]
            .as_array()
            .ok_or("`filter` must be an array")?;
        for rule in list {
            let syscall = rule["syscall"].as_str().ok_or("rule without `syscall`")?;
            let comment = rule["comment"].as_str().unwrap_or_default();
            if comment.trim().is_empty() {
                return Err(format!("{name}: {syscall} has no comment naming who needs it").into());
            }
            let unconditional = rule.get("args").is_none();
            let entry = seen.entry(syscall.to_owned()).or_insert(false);
            *entry |= unconditional;
        }
        Ok(seen)
    };
    let enosys = rules("enosys")?;
    let worker = rules("worker")?;
    for (syscall, unconditional) in &enosys {
        if !unconditional {
            return Err(
                format!("enosys: {syscall} must be answered regardless of arguments").into(),
            );
        }
        if !worker.contains_key(syscall) {
            return Err(format!(
                "{syscall} is answered ENOSYS but missing from the allow-list: KILL would win"
            )
            .into());
        }
    }
    for syscall in NEVER_ALLOWED {
        if worker.contains_key(*syscall) && !enosys.contains_key(*syscall) {
            return Err(format!("{syscall} must never be allowed ({arch})").into());
        }
    }
    for syscall in ONLY_WITH_ARGS {
        if worker.get(*syscall) == Some(&true) {
            return Err(format!("{syscall} may only be allowed with argument conditions").into());
        }
    }
    Ok(())
}

/// Compiles one policy; `None` when this host cannot run seccompiler.
#[cfg(target_os = "linux")]
fn compile(arch: &str, text: &str) -> Result<Option<Programs>, Box<dyn Error>> {
    let target = seccompiler::TargetArch::try_from(arch).map_err(|e| format!("{e:?}"))?;
    let programs = seccompiler::compile_from_json(text.as_bytes(), target)?;
    let mut encoded = BTreeMap::new();
    for (name, program) in programs {
        let mut bytes = Vec::with_capacity(program.len() * 8);
        for insn in program {
            bytes.extend_from_slice(&insn.code.to_le_bytes());
            bytes.push(insn.jt);
            bytes.push(insn.jf);
            bytes.extend_from_slice(&insn.k.to_le_bytes());
        }
        encoded.insert(name, bytes);
    }
    Ok(Some(encoded))
}

/// seccompiler only builds on Linux hosts: a cross build from another host
/// checks the JSON above but embeds no policy.
#[cfg(not(target_os = "linux"))]
fn compile(_arch: &str, _text: &str) -> Result<Option<Programs>, Box<dyn Error>> {
    Ok(None)
}

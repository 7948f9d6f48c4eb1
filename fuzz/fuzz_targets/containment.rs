//! Path resolution (`moat_worker::containment::resolve`) over a real
//! workspace populated with directories, denied names and symbolic links (inside,
//! escaping, looping, dangling), with symbolic-link following off and on.
//!
//! Property: the result is a refusal, or a `ContainedPath` whose relative form
//! has no `..`, `.` or empty component (nor a NUL or a leading `/`), that is
//! not denied, that crosses no symbolic link (links are refused, or expanded in
//! place when following), and whose real path (canonicalised) is beneath the
//! root.
//!
//! The workspace is built once per process, in a directory named after the
//! process; directories left by earlier processes that are gone are removed.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use moat_protocol::request::{SandboxRequest, WorkerInit};
use moat_worker::Workspace;
use moat_worker::containment::resolve;

const PREFIX: &str = "moat-fuzz-containment-";

/// Names the path builder draws from: everything in the workspace, plus the usual tricks.
const NAMES: &[&str] = &[
    "src",
    "main.rs",
    "lib",
    "mod.rs",
    "docs",
    "guide.md",
    ".env",
    ".ENV",
    ".git",
    "config",
    "keys",
    "server.pem",
    "deep",
    "a",
    "b",
    "c",
    "file.txt",
    "link_src",
    "link_abs_src",
    "link_abs_root",
    "link_up_out",
    "link_abs_out",
    "link_etc",
    "up",
    "upup",
    "sib",
    "loop_a",
    "loop_b",
    "self_loop",
    "to_env",
    "to_git",
    "dangling",
    "missing",
    "chain",
    "top",
    "esc",
    "file_link",
    "dotdot_link",
    "outside",
    "ws",
    "secret.txt",
    "passwd",
    "..",
    ".",
    "",
    " ",
    "...",
    "x",
];

struct Fixture {
    root: PathBuf,
    plain: Workspace,
    following: Workspace,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| build().expect("the fixture workspace can be built"))
}

fn build() -> std::io::Result<Fixture> {
    use std::fs;
    use std::os::unix::fs::symlink;

    let tmp = std::env::temp_dir().canonicalize()?;
    for entry in fs::read_dir(&tmp)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix(PREFIX) {
            if !Path::new("/proc").join(pid).exists() {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
    let base = tmp.join(format!("{PREFIX}{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    let root = base.join("ws");
    let outside = base.join("outside");
    for dir in ["src/lib", "docs", ".git", "keys", "deep/a/b/c"] {
        fs::create_dir_all(root.join(dir))?;
    }
    fs::create_dir_all(&outside)?;
    for file in [
        "src/main.rs",
        "src/lib/mod.rs",
        "docs/guide.md",
        ".env",
        ".git/config",
        "keys/server.pem",
        "deep/a/b/c/file.txt",
    ] {
        fs::write(root.join(file), "x\n")?;
    }
    fs::write(outside.join("secret.txt"), "secret\n")?;
    let links: &[(&str, PathBuf)] = &[
        ("link_src", "src".into()),
        ("link_abs_src", root.join("src")),
        ("link_abs_root", root.clone()),
        ("link_up_out", "../outside".into()),
        ("link_abs_out", outside.clone()),
        ("link_etc", "/etc".into()),
        ("src/up", "..".into()),
        ("src/upup", "../..".into()),
        ("src/sib", "../docs".into()),
        ("loop_a", "loop_b".into()),
        ("loop_b", "loop_a".into()),
        ("self_loop", "self_loop".into()),
        ("to_env", ".env".into()),
        ("to_git", ".git".into()),
        ("dangling", "missing/file".into()),
        ("chain", "link_src/lib".into()),
        ("deep/a/b/c/top", "../../../..".into()),
        ("deep/a/b/c/esc", "../../../../..".into()),
        ("file_link", "src/main.rs".into()),
        ("dotdot_link", "./../ws/src".into()),
    ];
    for (at, target) in links {
        symlink(target, root.join(at))?;
    }
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
    };
    Ok(Fixture {
        plain: open(false)?,
        following: open(true)?,
        root,
    })
}

#[derive(Arbitrary, Debug)]
enum Part {
    Known(u8),
    Free(String),
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw {
        follow: bool,
        path: String,
    },
    Built {
        follow: bool,
        absolute: bool,
        parts: Vec<Part>,
        trailing_slash: bool,
        padded: bool,
    },
}

fn build_path(root: &Path, absolute: bool, parts: &[Part], trailing: bool, padded: bool) -> String {
    let mut path = String::new();
    if padded {
        path.push(' ');
    }
    if absolute {
        path.push_str(&root.to_string_lossy());
        path.push('/');
    }
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            path.push('/');
        }
        match part {
            Part::Known(n) => path.push_str(NAMES[usize::from(*n) % NAMES.len()]),
            Part::Free(s) => path.push_str(s),
        }
    }
    if trailing {
        path.push('/');
    }
    if padded {
        path.push('\t');
    }
    path
}

fn check(fx: &Fixture, follow: bool, requested: &str) {
    let ws = if follow { &fx.following } else { &fx.plain };
    let Ok(contained) = resolve(ws, requested) else {
        return;
    };
    let rel = contained.rel();
    let why = |what: &str| format!("{requested:?} (following {follow}) -> {rel:?}: {what}");
    assert!(!rel.contains('\0'), "{}", why("NUL"));
    if !rel.is_empty() {
        for c in rel.split('/') {
            assert!(
                !c.is_empty() && c != "." && c != "..",
                "{}",
                why("bad component")
            );
        }
    }
    assert!(ws.denylist().check_path(rel).is_none(), "{}", why("denied"));
    // Walk the real filesystem: no existing prefix is a symbolic link, and the
    // longest existing prefix, canonicalised, is beneath the root.
    let mut existing = fx.root.clone();
    let mut at = fx.root.clone();
    for c in contained.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) => {
                assert!(!meta.file_type().is_symlink(), "{}", why("crosses a link"));
                existing = at.clone();
            }
            Err(_) => break,
        }
    }
    let real = existing
        .canonicalize()
        .expect("an existing prefix canonicalises");
    assert!(
        real.starts_with(&fx.root),
        "{}",
        why(&format!("real path {}", real.display()))
    );
}

fuzz_target!(|input: Input| {
    let fx = fixture();
    match input {
        Input::Raw { follow, path } => check(fx, follow, &path),
        Input::Built {
            follow,
            absolute,
            parts,
            trailing_slash,
            padded,
        } => {
            let path = build_path(&fx.root, absolute, &parts, trailing_slash, padded);
            check(fx, follow, &path);
        }
    }
});

//! The shape of the code, checked on the repository's own sources: the
//! rules docs/design.md states for the map of the code, so that a change
//! that breaks one fails the suite instead of waiting for a reviewer.
//!
//! - no module imports a sibling that imports it back, at any depth of any
//!   product crate (a sibling is another child of the same parent: two
//!   top-level modules of a crate, or two files of one folder);
//! - no non-test source file is over 800 lines;
//! - `unsafe` appears in the sandbox crate only: the other product crates
//!   forbid it at their root;
//! - nothing refers to files outside the repository or to a system it
//!   replaced: the project explains itself;
//! - every tool the binary declares has its broker file and its worker file,
//!   named after it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use moat_tests::run_moat;
use serde_json::Value;

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The crates that ship (their `src/` folders); the test harness, the
/// benchmarks and the fuzz targets are tools around them.
const PRODUCT_CRATES: [&str; 4] = ["protocol", "sandbox", "worker", "broker"];

/// The longest a non-test source file may be.
const MAX_LINES: usize = 800;

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "target") {
                    continue;
                }
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Whether `path` (relative to a crate's `src/`) holds only tests: a
/// `tests.rs`, or a file of a `tests/` folder.
fn is_test_file(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "tests.rs")
        || rel
            .parent()
            .is_some_and(|p| p.components().any(|c| c.as_os_str() == "tests"))
}

/// A source file's module path within its crate: `lib.rs`/`main.rs` is the
/// root, `a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some(last) = parts.pop() else {
        return parts;
    };
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// `text` without comments, string literals and the unit tests at its end
/// (a `#[cfg(test)]` item starts them), so that only code is read.
fn code_of(text: &str) -> String {
    let text = match unit_tests_start(text) {
        Some(i) => &text[..i],
        None => text,
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' && (i == 0 || b[i - 1] != b'\'') {
            // A string literal (raw strings of this code base hold no `"`
            // they would need to escape, so `\` escapes are enough).
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            out.push(char::from(b[i]));
            i += 1;
        }
    }
    out
}

/// Where a file's inline unit tests (`#[cfg(test)] mod tests {`) start;
/// they come last.
fn unit_tests_start(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(off) = text[from..].find("#[cfg(test)]") {
        let i = from + off;
        from = i + 1;
        let after = text[i + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod tests {") {
            return Some(i);
        }
    }
    None
}

/// Every path the code names from `crate::`, `super::` or `self::`,
/// resolved to a path from the crate root; `use` trees with braces are
/// expanded. `here` is the module the code is in.
fn referenced_paths(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(off) = code[from..].find(start) {
            let i = from + off;
            from = i + start.len();
            let before = if i == 0 { b' ' } else { b[i - 1] };
            if before.is_ascii_alphanumeric() || before == b'_' || before == b'$' || before == b':'
            {
                continue;
            }
            // The path, braces and all, up to where it ends.
            let mut j = i;
            let mut depth = 0usize;
            while j < b.len() {
                let c = b[j];
                if c == b'{' {
                    depth += 1;
                } else if c == b'}' {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                } else if (depth == 0
                    && !(c.is_ascii_alphanumeric() || c == b'_' || c == b':' || c == b'*'))
                    || c == b';'
                {
                    break;
                }
                j += 1;
            }
            for path in expand(&code[i..j]) {
                if let Some(abs) = resolve(&path, here) {
                    out.push(abs);
                }
            }
        }
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e` (segments only).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![segments(&tree)];
    };
    let prefix = segments(&tree[..open]);
    let inner = tree[open + 1..].trim_end_matches('}');
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' if depth == 0 => parts.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    parts.push(cur);
    let mut out = Vec::new();
    for p in parts.iter().filter(|p| !p.is_empty()) {
        for tail in expand(p) {
            let mut full = prefix.clone();
            full.extend(tail);
            out.push(full);
        }
    }
    out
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty() && *s != "*")
        .map(|s| s.split(" as ").next().unwrap_or(s).to_owned())
        .collect()
}

/// A path that starts with `crate`, `super` or `self`, from the crate root.
fn resolve(path: &[String], here: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here[..here.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
        base.pop()?;
        rest = tail;
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// The import edges between siblings of one crate: for each parent module,
/// which of its children reaches into which other (a child's descendants
/// count as the child).
type Edges = BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<(String, String)>>>;

fn sibling_edges(src: &Path) -> Edges {
    let files: Vec<(Vec<String>, String, String)> = rust_files(src)
        .into_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(src).ok()?.to_path_buf();
            if is_test_file(&rel) || rel.starts_with("bin") {
                return None;
            }
            let text = std::fs::read_to_string(&f).ok()?;
            Some((module_path(&rel), rel.display().to_string(), code_of(&text)))
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let mut edges = Edges::new();
    for (here, file, code) in &files {
        for target in referenced_paths(code, here) {
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common >= here.len() || common >= target.len() {
                // Into the module's own children, or out to an ancestor's
                // items: the tree's edges, not a sibling's.
                continue;
            }
            let sibling = target[..=common].to_vec();
            if !modules.contains(&sibling) {
                // An item of the common ancestor, not a module.
                continue;
            }
            edges
                .entry(here[..common].to_vec())
                .or_default()
                .entry(here[common].clone())
                .or_default()
                .insert((target[common].clone(), file.clone()));
        }
    }
    edges
}

/// Each cycle among the children of one parent, as `a -> b -> a` with the
/// files that make each step.
fn cycles(edges: &Edges) -> Vec<String> {
    let mut found = Vec::new();
    for (parent, children) in edges {
        let next = |n: &str| -> Vec<(String, String)> {
            children
                .get(n)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default()
        };
        for start in children.keys() {
            // Depth-first from `start`, reporting a path back to it once
            // (from its least name, so each cycle is named once).
            let mut stack: Vec<(String, Vec<(String, String)>)> = vec![(start.clone(), Vec::new())];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for (to, file) in next(&node) {
                    let mut p = path.clone();
                    p.push((to.clone(), file));
                    if &to == start {
                        if p.iter().all(|(n, _)| n >= start) {
                            let steps: Vec<String> =
                                p.iter().map(|(n, f)| format!("{n} (from {f})")).collect();
                            found.push(format!(
                                "in {}: {start} -> {}",
                                if parent.is_empty() {
                                    "the crate root".to_owned()
                                } else {
                                    parent.join("::")
                                },
                                steps.join(" -> ")
                            ));
                        }
                    } else if seen.insert(to.clone()) {
                        stack.push((to, p));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_sibling_that_imports_it_back() {
    let mut found = Vec::new();
    for krate in PRODUCT_CRATES {
        let src = repo().join(krate).join("src");
        let edges = sibling_edges(&src);
        assert!(
            !edges.is_empty() || !matches!(krate, "broker" | "worker"),
            "{krate}: no import read at all: the reader is broken"
        );
        found.extend(cycles(&edges).into_iter().map(|c| format!("{krate}: {c}")));
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The cycle finder itself, on a made-up crate: a cycle through three
/// siblings is named, a parent using its child and the child using the
/// parent's items is not.
#[test]
fn the_cycle_finder_finds_a_cycle_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "mod a; mod b; mod c; pub struct Root;\n");
    write("a/mod.rs", "mod inner; use crate::b::B; use inner::I;\n");
    write(
        "a/inner.rs",
        "use super::super::Root; // crate::c::C in a comment\n",
    );
    write("b.rs", "pub struct B; use crate::{c::{C, D as E}};\n");
    write(
        "c.rs",
        "pub struct C; fn f() { let _ = \"crate::b::B\"; }\n",
    );
    let edges = sibling_edges(src);
    assert!(cycles(&edges).is_empty(), "{edges:?}");
    write("c.rs", "pub struct C; fn f() { crate::a::inner::g(); }\n");
    let found = cycles(&sibling_edges(src));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "in the crate root: a -> b (from a/mod.rs) -> c (from b.rs) -> a (from c.rs)"
        ),
        "{found:?}"
    );
}

#[test]
fn no_non_test_source_file_is_over_800_lines() {
    let mut long = Vec::new();
    let mut roots: Vec<PathBuf> = PRODUCT_CRATES
        .iter()
        .map(|k| repo().join(k).join("src"))
        .collect();
    roots.push(repo().join("sandbox/build.rs"));
    roots.push(repo().join("bench/peers/src"));
    for root in roots {
        let files = if root.is_file() {
            vec![root.clone()]
        } else {
            rust_files(&root)
        };
        assert!(!files.is_empty(), "{} has no source", root.display());
        for f in files {
            let rel = f.strip_prefix(&root).unwrap_or(&f);
            if is_test_file(rel) {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            // Unit tests at the end of a file are not counted.
            let code = unit_tests_start(&text).map_or(text.as_str(), |i| &text[..i]);
            let n = code.lines().count();
            if n > MAX_LINES {
                long.push(format!("{}: {n} lines", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn unsafe_code_lives_in_the_sandbox_crate_only() {
    for krate in ["protocol", "worker", "broker"] {
        let lib = std::fs::read_to_string(repo().join(krate).join("src/lib.rs")).unwrap();
        assert!(
            lib.contains("#![forbid(unsafe_code)]"),
            "{krate}/src/lib.rs must forbid unsafe code"
        );
        for f in rust_files(&repo().join(krate).join("src")) {
            let code = code_of(&std::fs::read_to_string(&f).unwrap());
            for (n, line) in code.lines().enumerate() {
                let words: Vec<&str> = line
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .collect();
                assert!(
                    !words.contains(&"unsafe") && !line.contains("allow(unsafe_code"),
                    "{}:{}: unsafe outside the sandbox crate: {line}",
                    f.display(),
                    n + 1
                );
            }
        }
    }
    // The sandbox crate: every unsafe block, function or impl says why it
    // is sound (the lint `undocumented_unsafe_blocks` covers blocks; this
    // covers the rest the same way).
    let mut undocumented = Vec::new();
    for f in rust_files(&repo().join("sandbox/src")) {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            if t.starts_with("//") || !line.contains("unsafe ") || line.contains("unsafe_code") {
                continue;
            }
            let said = lines[n.saturating_sub(12)..n]
                .iter()
                .any(|l| l.contains("SAFETY:") || l.contains("# Safety"))
                || line.contains("SAFETY:");
            if !said {
                undocumented.push(format!("{}:{}: {t}", f.display(), n + 1));
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "unsafe without a SAFETY comment:\n{}",
        undocumented.join("\n")
    );
}

#[test]
fn nothing_refers_to_files_outside_the_repository_or_to_what_moat_replaced() {
    // Built from parts so that this file does not match itself.
    let banned: Vec<String> = [
        ["..", "/shared"],
        ["the ", "seed"],
        ["seed", "-facts"],
        ["fact ", "sheet"],
        ["python ", "system"],
        ["style", ".md"],
    ]
    .iter()
    .map(|[a, b]| format!("{a}{b}"))
    .collect();
    let quirk = format!("{}{}", "quir", "k");
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(listed.status.success(), "git ls-files failed");
    let files: Vec<String> = listed
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    assert!(
        files.len() > 100,
        "git ls-files listed {} files",
        files.len()
    );
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(repo().join(f)) else {
            continue; // binary, or deleted in the work tree
        };
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for b in &banned {
                if lower.contains(b.as_str()) {
                    found.push(format!("{f}:{}: {b}: {}", n + 1, line.trim()));
                }
            }
            // "quirk" with a number after it: a reference to a numbered list
            // kept elsewhere.
            let mut rest = lower.as_str();
            while let Some(i) = rest.find(quirk.as_str()) {
                let after = rest[i + quirk.len()..].trim_start_matches([' ', '#', '-', '_']);
                if after.starts_with(|c: char| c.is_ascii_digit()) {
                    found.push(format!("{f}:{}: {}", n + 1, line.trim()));
                }
                rest = &rest[i + quirk.len()..];
            }
        }
    }
    assert!(
        found.is_empty(),
        "outside references:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_declared_tool_has_its_broker_file_and_its_worker_file() {
    let run = run_moat(["tools", "--json"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    let declared: Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = declared
        .as_array()
        .or_else(|| declared["tools"].as_array())
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.len() >= 14, "{names:?}");
    for name in &names {
        for dir in ["broker/src/tool", "worker/src/tools"] {
            let f = repo().join(dir).join(format!("{name}.rs"));
            assert!(f.is_file(), "{name}: no {}", f.display());
        }
    }
    // And no tool file without a tool.
    for dir in ["broker/src/tool", "worker/src/tools"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            let p = e.path();
            if !p.is_file() {
                continue;
            }
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let helpers = ["mod", "render", "schema", "validator"];
            assert!(
                names.contains(&stem.as_str()) || helpers.contains(&stem.as_str()),
                "{}: a file in the tools folder that is no tool's",
                p.display()
            );
        }
    }
}

//! Helpers for the walking tools' files (`search`, `symbols`, `overview`,
//! `git`, `timeouts`, `tool_limits`): start a server, call a tool, and read
//! its answer, with the failing call and answer in every panic message.

use std::path::Path;
use std::time::{Duration, Instant};

use moat_tests::{Era, Moat, Mode, Options, text};
use serde_json::{Value, json};

/// Start a server on `root` in `mode` (modern era).
pub fn start(root: &Path, mode: Mode) -> Moat {
    Moat::connect(root, &Options::new(mode), Era::Modern)
}

/// Start a server on `root` in `mode` with extra `MOAT_*` variables.
pub fn start_with(root: &Path, mode: Mode, env: &[(&str, &str)]) -> Moat {
    let mut opts = Options::new(mode);
    for (k, v) in env {
        opts = opts.env(k, *v);
    }
    Moat::connect(root, &opts, Era::Modern)
}

/// Call `tool`, require success, and return `structuredContent`.
#[track_caller]
pub fn ok(m: &mut Moat, tool: &str, args: Value) -> Value {
    let r = m.call(tool, args.clone());
    assert_eq!(
        r["isError"],
        json!(false),
        "{tool} {args} should succeed, got: {r}"
    );
    r["structuredContent"].clone()
}

/// Call `tool`, require success, and return the whole result.
pub use super::util::call_ok as ok_result;

/// Call `tool`, require a tool error, and return `(code, whole result)`.
pub use super::util::call_err as refused;

/// Call `tool` with arguments its input schema refuses and return the
/// refusal's message: a tool error `invalid_arguments` from revision
/// 2025-11-25 on (SEP-1303; `tool_error`, as in the modern era), a JSON-RPC
/// `-32602` before it.
#[track_caller]
pub fn schema_refused(m: &mut Moat, tool: &str, args: Value, tool_error: bool) -> String {
    super::util::schema_refusal(m, json!({"name": tool, "arguments": args}), tool_error)
}

/// Start a server on `root` in `mode` that speaks the legacy revision
/// 2025-06-18, where schema failures are JSON-RPC `-32602` errors.
pub fn start_2025_06_18(root: &Path, mode: Mode) -> Moat {
    Moat::connect_legacy(root, &Options::new(mode), "2025-06-18")
}

/// Call `tool` and return the result and how long the round trip took.
pub fn timed(m: &mut Moat, tool: &str, args: Value) -> (Value, Duration) {
    let t = Instant::now();
    let r = m.call(tool, args);
    (r, t.elapsed())
}

/// The `path` of every match of a `search_code` result.
pub fn match_paths(sc: &Value) -> Vec<String> {
    sc["matches"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| m["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The fenced body (content block 1) of a result, with its fence lines, and
/// checked to be a fence labelled `label`.
#[track_caller]
pub fn fenced(result: &Value, label: &str) -> String {
    let t = text(result, 1);
    assert!(
        t.starts_with(&format!("<untrusted-{label} id=")),
        "content[1] is not a {label} fence: {t:?}"
    );
    let last = t.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("</untrusted-{label} id=")),
        "unclosed {label} fence: {t:?}"
    );
    t
}

/// The `name` of each object in the array `list` of an answer (outline
/// items, tree entries), in order.
pub fn names<'a>(answer: &'a Value, list: &str) -> Vec<&'a str> {
    answer[list]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["name"].as_str()).collect())
        .unwrap_or_default()
}

/// The definitions of a `find_symbol` result as `(qualified_name, kind,
/// method, path, line)`.
pub fn defs(fs: &Value) -> Vec<(String, String, String, String, u64)> {
    let s = |d: &Value, k: &str| d[k].as_str().unwrap_or_default().to_owned();
    fs["definitions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| {
                    (
                        s(d, "qualified_name"),
                        s(d, "kind"),
                        s(d, "method"),
                        s(d, "path"),
                        d["line"].as_u64().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Write `n` files in a tree under `root/sub`: 100 files per directory,
/// each `line` followed by a newline, on a few threads. Returns how long it
/// took.
pub fn tree(root: &Path, sub: &str, n: usize, line: &str) -> Duration {
    let t = Instant::now();
    let content = format!("{line}\n");
    let threads = 4;
    std::thread::scope(|s| {
        for k in 0..threads {
            let content = &content;
            s.spawn(move || {
                // Whole directories per thread: 100 files each.
                for d in (0..n.div_ceil(100)).filter(|d| d % threads == k) {
                    let dir = root.join(sub).join(format!("d{}/e{}", d / 10, d % 10));
                    std::fs::create_dir_all(&dir).unwrap();
                    for i in d * 100..((d + 1) * 100).min(n) {
                        std::fs::write(dir.join(format!("file{i}.txt")), content).unwrap();
                    }
                }
            });
        }
    });
    t.elapsed()
}

/// Characters of text in a result (every content block).
pub fn answer_chars(r: &Value) -> usize {
    r["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .map(|t| t.chars().count())
                .sum()
        })
        .unwrap_or(0)
}

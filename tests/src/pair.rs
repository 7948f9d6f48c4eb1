//! Two workspaces that differ only in what the model must not see, one
//! server on each, and the same request sent to both.
//!
//! The property every answer must keep is noninterference: when two
//! workspaces differ only in (a) the contents of denied files and
//! directories and (b) the values redaction replaces (in contents, names,
//! commit messages, ref names), every request gets the same answer, and
//! the same work is done for it. The answers are compared after
//! [`canonical`] has replaced what legitimately differs: git object ids
//! (hashes over content that differs, mapped to labels by the order they
//! first appear in), fence nonces and the JSON-RPC id.
//!
//! A request may name a per-workspace value: `{commit:N:L}` is the first
//! `L` hex digits of the `N`th commit on the first-parent chain from
//! `HEAD` (0 is `HEAD`), `{object:SPEC:L}` the first `L` digits of what
//! `git rev-parse SPEC` names (a tree, a blob, a stash) in that workspace.
//! Both are replaced in the arguments before each side's call, so the two
//! calls mean the same thing to a client that knows one workspace each.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};

use crate::{Era, Fixture, Moat, Options, git_as};

/// Two workspaces and a server on each.
pub struct Pair {
    /// The first workspace (kept alive for its server).
    pub a: Fixture,
    /// The second.
    pub b: Fixture,
    /// The server on `a`.
    pub ma: Moat,
    /// The server on `b`.
    pub mb: Moat,
    ids_a: Vec<String>,
    ids_b: Vec<String>,
    next: u64,
}

/// One side's answer to one request, exactly as it left the server, and
/// the audit event's `work` for it (if the server wrote one).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The `result` (or `error`) member, canonicalised.
    pub canonical: String,
    /// The raw response line.
    pub line: String,
}

impl Pair {
    /// Start a server in `opts`' mode on each workspace.
    #[must_use]
    pub fn start(a: Fixture, b: Fixture, opts: &Options) -> Pair {
        let ids_a = object_ids(&a.root);
        let ids_b = object_ids(&b.root);
        let ma = Moat::connect(&a.root, opts, Era::Modern);
        let mb = Moat::connect(&b.root, opts, Era::Modern);
        Pair {
            a,
            b,
            ma,
            mb,
            ids_a,
            ids_b,
            next: 1,
        }
    }

    /// Send `method` with `params` (templates resolved per side) to both
    /// servers and return both answers.
    pub fn both(&mut self, method: &str, params: &Value) -> (Answer, Answer) {
        let id = self.next;
        self.next += 1;
        let pa = resolve(params, &self.a.root);
        let pb = resolve(params, &self.b.root);
        let la = exchange(&mut self.ma, id, method, pa);
        let lb = exchange(&mut self.mb, id, method, pb);
        let ca = canonical(&la, &self.ids_a);
        let cb = canonical(&lb, &self.ids_b);
        (
            Answer {
                canonical: ca,
                line: la,
            },
            Answer {
                canonical: cb,
                line: lb,
            },
        )
    }

    /// [`Pair::both`] for `tools/call`, asserting that both sides answer
    /// alike; returns side a's canonical answer.
    #[track_caller]
    pub fn same_call(&mut self, tool: &str, args: &Value) -> String {
        let params = json!({"name": tool, "arguments": args});
        self.same("tools/call", &params)
    }

    /// [`Pair::both`], asserting that both sides answer alike; returns side
    /// a's canonical answer.
    #[track_caller]
    pub fn same(&mut self, method: &str, params: &Value) -> String {
        let (a, b) = self.both(method, params);
        assert_eq!(
            a.canonical, b.canonical,
            "{method} {params}: the answers differ, so they tell the workspaces apart\n\
             a: {}\nb: {}",
            a.line, b.line
        );
        a.canonical
    }

    /// The audit events' `work` of every tool call so far, per side, in
    /// order.
    #[must_use]
    pub fn work(&self) -> (Vec<Value>, Vec<Value>) {
        (work_of(&self.ma.stderr()), work_of(&self.mb.stderr()))
    }
}

/// The `work` member of every audit event in `stderr`, in order.
#[must_use]
pub fn work_of(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["message"] == "audit")
        .map(|v| v.get("work").cloned().unwrap_or(Value::Null))
        .collect()
}

fn exchange(m: &mut Moat, id: u64, method: &str, params: Value) -> String {
    let mut params = params;
    if m.era == Era::Modern
        && let Some(obj) = params.as_object_mut()
    {
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if let (Some(meta), Some(modern)) = (meta.as_object_mut(), Moat::modern_meta().as_object())
        {
            for (k, v) in modern {
                meta.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    m.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    m.recv_line_within(Duration::from_secs(60))
        .unwrap_or_else(|| panic!("no answer to {method}; stderr:\n{}", m.stderr()))
}

/// Every object id in the repository at `root` (none without one).
#[must_use]
pub fn object_ids(root: &Path) -> Vec<String> {
    if !root.join(".git").exists() {
        return Vec::new();
    }
    let out = std::process::Command::new("git")
        .args([
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ])
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git cat-file");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `line` (one JSON-RPC response) with what legitimately differs between
/// the two workspaces replaced: the response id, fence nonces, and every
/// hex run of 7 to 40 digits that begins an object id of `ids` (labelled by
/// the order its object first appears), in every string of the answer.
#[must_use]
pub fn canonical(line: &str, ids: &[String]) -> String {
    let v: Value = serde_json::from_str(line).unwrap_or(Value::String(line.to_owned()));
    let mut body = v
        .get("result")
        .or_else(|| v.get("error"))
        .cloned()
        .unwrap_or(v);
    let mut labels: HashMap<String, usize> = HashMap::new();
    canonical_strings(&mut body, ids, &mut labels);
    body.to_string()
}

fn canonical_strings(v: &mut Value, ids: &[String], labels: &mut HashMap<String, usize>) {
    static NONCE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static HEX: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    match v {
        Value::String(s) => {
            let nonce = NONCE.get_or_init(|| {
                Regex::new(r"(untrusted-[a-z-]+ id=)[0-9a-f]{16}").expect("nonce pattern")
            });
            let text = nonce.replace_all(s, "${1}NONCE");
            let text = cursors(&text);
            let hex = HEX.get_or_init(|| Regex::new(r"\b[0-9a-f]{7,40}\b").expect("hex pattern"));
            let out = hex.replace_all(&text, |c: &regex::Captures<'_>| {
                let run = &c[0];
                match ids.iter().find(|id| id.starts_with(run)) {
                    Some(id) => {
                        let n = labels.len();
                        let label = *labels.entry(id.clone()).or_insert(n);
                        format!("<object-{label}>")
                    }
                    None => run.to_owned(),
                }
            });
            *s = out.into_owned();
        }
        Value::Array(items) => {
            for item in items {
                canonical_strings(item, ids, labels);
            }
        }
        Value::Object(map) => {
            for (_, item) in map.iter_mut() {
                canonical_strings(item, ids, labels);
            }
        }
        _ => {}
    }
}

/// `text` with every paging cursor replaced by `<cursor@POSITION>`. A
/// cursor is the fingerprint of its query's arguments and a position; the
/// fingerprint differs between two workspaces exactly when the arguments do
/// (a commit named by its id), and the position is what the answer tells.
fn cursors(text: &str) -> String {
    use base64::Engine as _;
    static CURSOR: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = CURSOR.get_or_init(|| {
        Regex::new(r"(^|[^A-Za-z0-9_-])([A-Za-z0-9_-]{23})($|[^A-Za-z0-9_-])").expect("cursor")
    });
    re.replace_all(text, |c: &regex::Captures<'_>| {
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&c[2]);
        match decoded {
            Ok(bytes) if bytes.len() == 17 && bytes[0] == 1 => {
                let mut word = [0u8; 8];
                word.copy_from_slice(&bytes[9..17]);
                format!("{}<cursor@{}>{}", &c[1], u64::from_le_bytes(word), &c[3])
            }
            _ => c[0].to_owned(),
        }
    })
    .into_owned()
}

/// `params` with `{commit:N:L}` and `{object:SPEC:L}` replaced by the
/// values they name in the repository at `root`.
#[must_use]
pub fn resolve(params: &Value, root: &Path) -> Value {
    static TEMPLATE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let text = params.to_string();
    let template = TEMPLATE.get_or_init(|| {
        Regex::new(r"\{(commit|object):(.+?):([0-9]+)\}").expect("template pattern")
    });
    let mut cache: BTreeMap<String, String> = BTreeMap::new();
    let out = template.replace_all(&text, |c: &regex::Captures<'_>| {
        let spec = match &c[1] {
            "commit" => format!("HEAD~{}", &c[2]),
            _ => c[2].to_owned(),
        };
        let len: usize = c[3].parse().unwrap_or(40);
        let full = cache
            .entry(spec.clone())
            .or_insert_with(|| rev_parse(root, &spec))
            .clone();
        full.chars().take(len).collect::<String>()
    });
    serde_json::from_str(&out).unwrap_or_else(|_| params.clone())
}

fn rev_parse(root: &Path, spec: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", spec])
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git rev-parse");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if id.is_empty() {
        // Named nothing here: a value that names nothing anywhere.
        "0".repeat(40)
    } else {
        id
    }
}

/// Run git in `root` as the fixtures do (fixed identity and dates).
pub fn git(root: &Path, args: &[&str]) -> String {
    git_as(root, "Fixture", "2026-01-02T03:04:05Z", args)
}

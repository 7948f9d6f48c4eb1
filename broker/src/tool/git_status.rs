//! `git_status`: its declaration, its request and its rendering.

use std::fmt::Write as _;

use serde_json::{Value, json};

use moat_protocol::limits;
use moat_protocol::request::{GitStatusArgs, Request};
use moat_protocol::response::{GitStatusOutput, Limit};

use super::render::{continue_with, listing, next_call, obj, stopped_json, withheld_sentence};
use super::schema::scalars;
use super::{Args, ITEM, Spec};
use crate::content::Rendered;
use crate::content::fence::{show_name, structured_name};

pub(super) const SPEC: Spec = Spec {
    name: "git_status",
    title: "Read the working tree's status",
    description: "Read the repository's status: the branch (or the detached HEAD commit), the upstream's \
                 ahead/behind counts from local refs (nothing is fetched), and the changed paths with a status \
                 letter: staged (index against HEAD: A added, M modified, D deleted, T type changed), not staged \
                 (work tree against the index; X: not compared because this server does not read it, such as \
                 a hard link or special file) and untracked (?; .gitignore respected; an untracked directory \
                 is one dir/ entry). Cost: every tracked file is read and hashed, so it is slower on very \
                 large trees. At most max_entries paths are listed (counts are always complete); when a \
                 limit cuts the answer, structuredContent has truncated and stopped_by and the text \
                 ends with the call that continues it. Paths on the denylist are counted, never named. Then \
                 use git_diff to read a change. Needs a git repository at the workspace root.",
    fence_label: None,
    optional_outputs: &["ahead", "behind"],
    required_inputs: &[],
    input,
    output,
    to_request,
};

fn input() -> Value {
    json!({
        "max_entries": {"type": "integer", "minimum": 1, "maximum": limits::MAX_GIT_ENTRIES_MAX, "description": "Most paths to list, staged, not staged and untracked together (capped by the server). Default 200."},
        "untracked": {"type": "boolean", "description": "List untracked paths. Default true."}
    })
}

fn output() -> Value {
    let (int, boolean, string, _) = scalars();

    let entries = json!({"type": "array", "items": {
        "type": "object", "additionalProperties": false, "required": ["path", "status"],
        "properties": {"path": string, "status": {"type": "string", "enum": ["A", "M", "D", "T", "R", "X", "?"]}, "from": string}
    }});
    json!({
        "branch": string, "detached": boolean, "head": string, "upstream": string,
        "ahead": int, "behind": int,
        "staged": entries, "unstaged": entries, "untracked": entries,
        "staged_count": int, "unstaged_count": int, "untracked_count": int,
        "withheld_by_denylist": int, "truncated": boolean,
    })
}

fn to_request(a: &Args<'_>, caps: &limits::Limits) -> Request {
    Request::GitStatus(GitStatusArgs {
        max_entries: a.capped("max_entries", 200, caps.max_git_entries),
        untracked: a.bool("untracked", true),
    })
}

/// About how many bytes of text rendering `o` reads.
pub(super) fn work(o: &GitStatusOutput) -> usize {
    ITEM * (o.staged.len() + o.unstaged.len() + o.untracked.len())
}

/// The answer's summary, `structuredContent` and fenced text.
pub(super) fn render(request: &Request, o: GitStatusOutput) -> Rendered {
    let mut summary = match (&o.branch, &o.head) {
        (Some(b), None) => format!("On branch {}, no commits yet.", show_name(b)),
        (Some(b), Some(_)) => format!("On branch {}.", show_name(b)),
        (None, Some(h)) => format!(
            "HEAD detached at {}.",
            h.chars().take(12).collect::<String>()
        ),
        (None, None) => "HEAD names no commit.".to_owned(),
    };
    if let Some(u) = &o.upstream {
        match (u.ahead, u.behind) {
            (Some(a), Some(b)) => {
                let _ = write!(
                    summary,
                    " Upstream {}: ahead {a}, behind {b}.",
                    show_name(&u.name)
                );
            }
            _ => {
                let _ = write!(
                    summary,
                    " Upstream {}: ahead and behind not counted (no local ref, or history too long).",
                    show_name(&u.name)
                );
            }
        }
    }
    let section = |summary: &mut String,
                   title: &str,
                   list: &[moat_protocol::response::StatusEntry],
                   total: u64| {
        if total == 0 {
            return;
        }
        let _ = write!(summary, "\n{title} ({total}):");
        for e in list {
            match &e.from {
                Some(from) => {
                    let _ = write!(
                        summary,
                        "\n  {}  {} -> {}",
                        e.status,
                        show_name(from),
                        show_name(&e.path)
                    );
                }
                None => {
                    let _ = write!(summary, "\n  {}  {}", e.status, show_name(&e.path));
                }
            }
        }
        if (list.len() as u64) < total {
            let _ = write!(summary, "\n  … {} more", total - list.len() as u64);
        }
    };
    section(&mut summary, "Staged", &o.staged, o.staged_count);
    section(&mut summary, "Not staged", &o.unstaged, o.unstaged_count);
    section(&mut summary, "Untracked", &o.untracked, o.untracked_count);
    if o.staged_count + o.unstaged_count + o.untracked_count == 0 && o.truncation.is_none() {
        summary.push_str("\nNothing to commit, working tree clean.");
    }
    if o.withheld_by_denylist > 0 {
        let _ = write!(
            summary,
            "\n{}",
            withheld_sentence(o.withheld_by_denylist, "path", "paths")
        );
    }
    let asked = match request {
        Request::GitStatus(a) => a.max_entries,
        _ => 0,
    };
    let mut call = None;
    match o.truncation {
        Some(Limit::Entries) => {
            let total = o.staged_count + o.unstaged_count + o.untracked_count;
            let _ = write!(
                summary,
                "\nListed {asked} of {total} paths (the entry limit)."
            );
            let cap = u64::from(o.entry_cap);
            let (line, next) = if u64::from(asked) < total.min(cap) {
                continue_with("git_status", &json!({"max_entries": total.min(cap)}))
            } else {
                continue_with("git_diff", &json!({"stat_only": true}))
            };
            let _ = write!(summary, "\n{line}");
            call = Some(next);
        }
        Some(t @ (Limit::Files | Limit::Time)) => {
            let (line, next) = continue_with("git_status", &json!({"untracked": false}));
            let _ = write!(
                summary,
                "\nThe status stopped at {} before every path was looked at; the lists are incomplete.\n{line}",
                if t == Limit::Files {
                    "the work-tree walk's entry limit"
                } else {
                    "the time budget"
                },
            );
            call = Some(next);
        }
        _ => {}
    }
    let list = |v: &[moat_protocol::response::StatusEntry]| -> Vec<Value> {
        v.iter()
            .map(|e| {
                let mut v =
                    json!({"path": structured_name(&e.path), "status": e.status.to_string()});
                if let (Some(from), Some(m)) = (&e.from, v.as_object_mut()) {
                    m.insert("from".into(), json!(structured_name(from)));
                }
                v
            })
            .collect()
    };
    let mut structured = obj(json!({
        "branch": o.branch.clone().unwrap_or_default(), "detached": o.branch.is_none(),
        "head": o.head.clone().unwrap_or_default(),
        "upstream": o.upstream.as_ref().map_or(String::new(), |u| u.name.clone()),
        "staged": list(&o.staged), "unstaged": list(&o.unstaged), "untracked": list(&o.untracked),
        "staged_count": o.staged_count, "unstaged_count": o.unstaged_count,
        "untracked_count": o.untracked_count, "withheld_by_denylist": o.withheld_by_denylist,
        "truncated": o.truncation.is_some(), "stopped_by": stopped_json(o.truncation.as_slice())
    }));
    if let Some(u) = &o.upstream
        && let (Some(a), Some(b)) = (u.ahead, u.behind)
    {
        structured.insert("ahead".into(), json!(a));
        structured.insert("behind".into(), json!(b));
    }
    next_call(&mut structured, call);
    listing(summary, structured)
}

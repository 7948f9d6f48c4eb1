//! `project_overview`: its declaration, its request and its rendering.

use std::fmt::Write as _;

use serde_json::{Value, json};

use moat_protocol::limits;
use moat_protocol::request::{ProjectOverviewArgs, Request};
use moat_protocol::response::{Declares, Limit, ProjectOverviewOutput};

use super::render::{
    display, listing, obj, plural, skipped_json, skipped_notes, stopped_json, walk_last_line,
};
use super::schema::{
    include_generated_schema, path_schema, respect_gitignore_schema, scalars,
    skipped_reasons_schema,
};
use super::{Args, ITEM, Spec};
use crate::content::Rendered;
use crate::content::fence::{show_name, structured_name};

pub(super) const SPEC: Spec = Spec {
    name: "project_overview",
    title: "Summarise the project",
    description: "Summarise the project in one call: languages by files and lines, manifests and what they \
                 declare, entry points, test files, the largest files, and version control. Everything is \
                 measured, nothing guessed. Call it first on an unfamiliar repository.",
    fence_label: None,
    // Only an answer under version control has it.
    optional_outputs: &["repository_root"],
    required_inputs: &[],
    input,
    output,
    to_request,
};

fn input() -> Value {
    json!({
        "path": path_schema("Directory to survey. Default: the root."),
        "respect_gitignore": respect_gitignore_schema(),
        "include_generated": include_generated_schema()
    })
}

fn output() -> Value {
    let (int, boolean, string, strings) = scalars();
    json!({
        "path": string, "total_files": int, "total_bytes": int,
        "skipped_reasons": skipped_reasons_schema(),
        "languages": {"type": "array", "items": {
            "type": "object", "additionalProperties": false,
            "required": ["bytes", "files", "language", "lines"],
            "properties": {"language": string, "files": int, "lines": int, "bytes": int}
        }},
        "manifests": {"type": "array", "items": {
            "type": "object", "additionalProperties": false, "required": ["file"],
            "properties": {"file": string, "declares": {"type": "object"}}
        }},
        "entry_points": strings, "test_files": int,
        "largest_files": {"type": "array", "items": {
            "type": "object", "additionalProperties": false, "required": ["path", "size_bytes"],
            "properties": {"path": string, "size_bytes": int}
        }},
        "version_control": {"type": "string", "enum": ["git", "none"]},
        "repository_root": {"type": "string", "enum": ["workspace", "above"],
            "description": "With version_control git: where the repository's root is; above when the workspace is a subdirectory of it, where the git tools do not read it."},
        "timed_out": boolean, "truncated": boolean
    })
}

fn to_request(a: &Args<'_>, _caps: &limits::Limits) -> Request {
    Request::ProjectOverview(ProjectOverviewArgs {
        path: a.path(),
        respect_gitignore: a.bool("respect_gitignore", true),
        include_generated: a.bool("include_generated", false),
    })
}

/// About how many bytes of text rendering `o` reads.
pub(super) fn work(o: &ProjectOverviewOutput) -> usize {
    ITEM * (o.languages.len() + o.manifests.len() + o.entry_points.len() + o.largest_files.len())
}

/// The answer's summary, `structuredContent` and fenced text.
pub(super) fn render(o: ProjectOverviewOutput, root: &str) -> Rendered {
    let mut summary = format!(
        "{}, {} bytes under {}\nVersion control: {}{}.",
        plural(o.total_files, "file", "files"),
        o.total_bytes,
        display(&o.path, root),
        o.version_control,
        if o.repository_above {
            " (the workspace is a subdirectory of a repository whose root is above it; the git tools read a repository only at the workspace root, so serve that root to use them)"
        } else {
            ""
        }
    );
    if !o.languages.is_empty() {
        // Ordered by lines (what a reader spends time on), every language
        // named: the first ones with their figures, the rest by name.
        let mut by_lines: Vec<_> = o.languages.iter().collect();
        by_lines.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.language.cmp(&b.language)));
        let mut langs: Vec<String> = by_lines
            .iter()
            .take(8)
            .map(|l| {
                format!(
                    "{} ({}, {})",
                    l.language,
                    plural(l.files, "file", "files"),
                    plural(l.lines, "line", "lines")
                )
            })
            .collect();
        if by_lines.len() > 8 {
            let rest: Vec<&str> = by_lines[8..].iter().map(|l| l.language.as_str()).collect();
            langs.push(format!("and {} more: {}", rest.len(), rest.join(", ")));
        }
        let _ = write!(summary, "\nLanguages: {}.", langs.join(", "));
    }
    if !o.manifests.is_empty() {
        // Each manifest with what it declares: names, versions and lists of
        // names, escaped as names are and bounded.
        let names: Vec<String> = o
            .manifests
            .iter()
            .map(|m| {
                let file = show_name(&m.file).into_owned();
                match m.declares.as_ref().map(declares_words) {
                    Some(words) if !words.is_empty() => format!("{file} ({words})"),
                    _ => file,
                }
            })
            .collect();
        let _ = write!(summary, "\nManifests: {}.", names.join("; "));
    }
    if !o.entry_points.is_empty() {
        let eps: Vec<String> = o
            .entry_points
            .iter()
            .take(10)
            .map(|e| show_name(e).into_owned())
            .collect();
        let _ = write!(summary, "\nEntry points: {}.", eps.join(", "));
    }
    let _ = write!(summary, "\nTest files: {}.", o.test_files);
    if !o.largest_files.is_empty() {
        let largest: Vec<String> = o
            .largest_files
            .iter()
            .take(5)
            .map(|f| format!("{} ({} bytes)", show_name(&f.path), f.size_bytes))
            .collect();
        let _ = write!(summary, "\nLargest files: {}.", largest.join(", "));
    }
    let mut n = Vec::new();
    skipped_notes(&o.skipped_reasons, &mut n);
    for note in n {
        let _ = write!(summary, "\n{note}.");
    }
    if o.stopped_by.contains(&Limit::Files) {
        let _ = write!(
            summary,
            "\nIncomplete: the walk stopped at the file limit after {}; every count is a lower bound.",
            plural(o.total_files, "file", "files")
        );
    }
    if o.timed_out {
        summary.push_str("\nThe walk stopped at the time budget; the counts are a lower bound.");
    }
    if let Some(line) = walk_last_line("project_overview", &o.stopped_by, None) {
        summary.push('\n');
        summary.push_str(&line);
    }
    let manifests: Vec<Value> = o
        .manifests
        .iter()
        .map(|m| match &m.declares {
            Some(d) => {
                json!({"file": structured_name(&m.file), "declares": declares_json(d)})
            }
            None => json!({"file": structured_name(&m.file)}),
        })
        .collect();
    let mut structured = obj(json!({
        "path": structured_name(&o.path), "total_files": o.total_files, "total_bytes": o.total_bytes,
        "languages": o.languages.iter().map(|l| json!({"language": l.language, "files": l.files, "lines": l.lines, "bytes": l.bytes})).collect::<Vec<_>>(),
        "manifests": manifests, "entry_points": o.entry_points.iter().map(|e| structured_name(e)).collect::<Vec<_>>(), "test_files": o.test_files,
        "largest_files": o.largest_files.iter().map(|f| json!({"path": structured_name(&f.path), "size_bytes": f.size_bytes})).collect::<Vec<_>>(),
        "version_control": o.version_control,
        "timed_out": o.timed_out,
        "skipped_reasons": skipped_json(&o.skipped_reasons),
        "truncated": !o.stopped_by.is_empty(), "stopped_by": stopped_json(&o.stopped_by)
    }));
    if o.version_control == "git" {
        let root = if o.repository_above {
            "above"
        } else {
            "workspace"
        };
        structured.insert("repository_root".into(), Value::from(root));
    }
    listing(summary, structured)
}

fn declares_json(d: &Declares) -> Value {
    match d {
        Declares::Pyproject {
            name,
            version,
            requires_python,
            dependencies,
        } => {
            json!({"name": name, "version": version, "requires_python": requires_python, "dependencies": dependencies})
        }
        Declares::PackageJson {
            name,
            version,
            dependencies,
            scripts,
            workspaces,
        } => {
            json!({"name": name, "version": version, "dependencies": dependencies, "scripts": scripts, "workspaces": workspaces})
        }
        Declares::Cargo {
            name,
            version,
            dependencies,
            workspace_members,
        } => {
            json!({"name": name, "version": version, "dependencies": dependencies, "workspace_members": workspace_members})
        }
        Declares::GoMod {
            name,
            go_version,
            dependencies,
        } => {
            json!({"name": name, "go_version": go_version, "dependencies": dependencies})
        }
        Declares::ParseError(e) => json!({"parse_error": e}),
    }
}

/// Most names of one list shown in the text (the structured half has all).
const LIST_SHOWN: usize = 12;
/// Most characters of one declared value shown in the text.
const VALUE_CHARS: usize = 80;

/// One declared value as the text shows it: escaped as a name is, cut.
fn value(v: &str) -> String {
    let shown = show_name(v);
    match shown.char_indices().nth(VALUE_CHARS) {
        Some((at, _)) => format!("{}…", &shown[..at]),
        None => shown.into_owned(),
    }
}

/// `label: a, b, c and N more`, or nothing for an empty list.
fn list(label: &str, items: &[String]) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    let mut shown: Vec<String> = items.iter().take(LIST_SHOWN).map(|i| value(i)).collect();
    if items.len() > LIST_SHOWN {
        shown.push(format!("and {} more", items.len() - LIST_SHOWN));
    }
    Some(format!("{label}: {}", shown.join(", ")))
}

/// What a manifest declares, in words: its name and version, its workspace
/// members, its dependencies (and scripts).
fn declares_words(d: &Declares) -> String {
    let named = |name: &Option<String>, version: &Option<String>| match (name, version) {
        (Some(n), Some(v)) => Some(format!("{} {}", value(n), value(v))),
        (Some(n), None) => Some(value(n)),
        (None, Some(v)) => Some(format!("version {}", value(v))),
        (None, None) => None,
    };
    let parts: Vec<Option<String>> = match d {
        Declares::Pyproject {
            name,
            version,
            requires_python,
            dependencies,
        } => vec![
            named(name, version),
            requires_python
                .as_ref()
                .map(|r| format!("requires-python {}", value(r))),
            list("dependencies", dependencies),
        ],
        Declares::PackageJson {
            name,
            version,
            dependencies,
            scripts,
            workspaces,
        } => vec![
            named(name, version),
            list("workspaces", workspaces),
            list("dependencies", dependencies),
            list("scripts", scripts),
        ],
        Declares::Cargo {
            name,
            version,
            dependencies,
            workspace_members,
        } => vec![
            named(name, version),
            list("workspace members", workspace_members),
            list("dependencies", dependencies),
        ],
        Declares::GoMod {
            name,
            go_version,
            dependencies,
        } => vec![
            name.as_ref().map(|n| format!("module {}", value(n))),
            go_version.as_ref().map(|g| format!("go {}", value(g))),
            list("requires", dependencies),
        ],
        Declares::ParseError(e) => vec![Some(format!("could not be parsed: {}", value(e)))],
    };
    parts.into_iter().flatten().collect::<Vec<_>>().join("; ")
}

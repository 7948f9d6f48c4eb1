//! The pieces of schema several tools declare alike.

use serde_json::{Value, json};

use moat_protocol::limits;
use moat_protocol::response::Limit;

const SCHEMA_URI: &str = "https://json-schema.org/draft/2020-12/schema";

/// The plain member types output schemas are made of: `(int, boolean,
/// string, strings)`, where an int is a count (never negative) and strings
/// an array of strings.
pub(super) fn scalars() -> (Value, Value, Value, Value) {
    (
        json!({"type": "integer", "minimum": 0}),
        json!({"type": "boolean"}),
        json!({"type": "string"}),
        json!({"type": "array", "items": {"type": "string"}}),
    )
}

/// A workspace-relative path argument, described by `desc`.
pub(super) fn path_schema(desc: &str) -> Value {
    json!({"type": "string", "maxLength": limits::MAX_PATH_CHARS, "description": desc})
}

/// A paged tool's `cursor` argument.
pub(super) fn cursor_schema() -> Value {
    json!({
        "type": "string", "minLength": 1, "maxLength": limits::MAX_CURSOR_CHARS,
        "description": "The cursor from the previous page's answer (next_cursor), to continue it. Pass the same other arguments."
    })
}

/// A walking tool's `respect_gitignore` argument.
pub(super) fn respect_gitignore_schema() -> Value {
    json!({
        "type": "boolean",
        "description": "Skip what .gitignore files (inside a git repository) and .ignore files exclude. Default true. A path named in `path` is walked even when ignored."
    })
}

/// A walking tool's `include_generated` argument.
pub(super) fn include_generated_schema() -> Value {
    json!({
        "type": "boolean",
        "description": "Also walk generated and vendored trees (target, build, dist, vendor, node_modules, .venv, …). Default false. A path named in `path` is walked either way."
    })
}

/// Which limits stopped an answer's work, in one vocabulary for every
/// tool (empty: complete).
pub(super) fn stopped_by_schema() -> Value {
    let names: Vec<&str> = Limit::ALL.iter().map(|l| l.as_str()).collect();
    json!({"type": "array", "items": {"type": "string", "enum": names}})
}

/// The `next_call` member: the tool and arguments of the call that
/// continues a cut answer.
pub(super) fn next_call_schema() -> Value {
    json!({
        "type": "object", "additionalProperties": false, "required": ["arguments", "tool"],
        "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
        "description": "The call that continues this cut answer (the twin of its last line)."
    })
}

/// A whole input or output schema: `props`, `required` sorted, nothing else
/// allowed.
pub(super) fn object_schema<S: AsRef<str>>(props: Value, required: &[S]) -> Value {
    let mut s = json!({
        "$schema": SCHEMA_URI,
        "type": "object",
        "properties": props,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        let mut r: Vec<&str> = required.iter().map(AsRef::as_ref).collect();
        r.sort_unstable();
        s["required"] = json!(r);
    }
    s
}

/// Files skipped, by reason (only reasons that occurred are present).
pub(super) fn skipped_reasons_schema() -> Value {
    let int = json!({"type": "integer", "minimum": 1});
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path_too_long": int, "unreadable": int, "vanished": int, "name_not_utf8": int,
            "binary": int, "too_large": int, "hard_link": int,
            "ignored": int, "generated": int, "denied": int
        }
    })
}

/// The `redaction` member every result has.
pub(super) fn redaction_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["applied", "count", "rules"],
        "properties": {
            "applied": {"type": "boolean"},
            "count": {"type": "integer", "minimum": 0},
            "rules": {"type": "array", "items": {"type": "string"}}
        }
    })
}

/// The `content_assessment` member of results with fenced text.
pub(super) fn assessment_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["invisible_characters", "level", "risk", "signals"],
        "properties": {
            "level": {"type": "string", "enum": ["none", "low", "elevated", "high"]},
            "risk": {"type": "number", "minimum": 0, "maximum": 1},
            "invisible_characters": {"type": "integer", "minimum": 0},
            "signals": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["context", "description", "excerpt", "line", "signal"],
                "properties": {
                    "signal": {"type": "string"}, "description": {"type": "string"},
                    "line": {"type": "integer", "minimum": 1}, "excerpt": {"type": "string"},
                    "context": {"type": "string", "enum": ["comment", "string literal", "Markdown prose", "markup", "data", "code", "other"]}
                }
            }}
        }
    })
}

//! The tools: one file each, holding everything the broker knows of that
//! tool (its name, title, description, input and output schemas, fence
//! label, the conversion of validated arguments into a typed [`Request`] for
//! a worker, and the rendering of the worker's answer); this file is the
//! registry that lists them and dispatches to them.
//!
//! The output schemas describe everything results really contain
//! (`redaction`, `content_assessment`, `exact` and `kind` included); the test
//! suite validates real results against them.

mod directory_tree;
mod file_outline;
mod find_files;
mod find_references;
mod find_symbol;
mod git_blame;
mod git_diff;
mod git_log;
mod git_show;
mod git_status;
mod list_directory;
mod project_overview;
mod read_file;
mod render;
mod schema;
mod search_code;
mod validator;

use serde_json::{Map, Value, json};

use moat_protocol::limits;
use moat_protocol::request::Request;
use moat_protocol::response::{RedactionCounts, ToolOutput};

use crate::content::Rendered;
use crate::cursor;

use schema::{
    assessment_schema, next_call_schema, object_schema, redaction_schema, stopped_by_schema,
};
use validator::Validator;
pub use validator::{InvalidArgument, SchemaError};

/// The git revision pattern: the characters of branch and tag names, hashes
/// and suffixes such as `~2`, `^` and `@{u}`, and no leading `-`, so a
/// revision can never be read as an option such as `--all`.
pub const REVISION_PATTERN: &str = r"^[A-Za-z0-9._/@^~{}][A-Za-z0-9._/@^~{}-]*$";

/// What an identifier argument may be: letters, digits and `_`, not starting
/// with a digit (what whole-word matching can find in every language).
pub const IDENTIFIER_PATTERN: &str = r"^[A-Za-z_][A-Za-z0-9_]*$";

/// A generous allowance for one listed item's names and fields, in a
/// tool's [`work_estimate`].
const ITEM: usize = 256;

/// What one tool's file declares: the registry builds the `tools/list`
/// entry from it and calls its request mapping.
struct Spec {
    /// The MCP tool name.
    name: &'static str,
    /// The title (also the annotations' title).
    title: &'static str,
    /// The description a model reads.
    description: &'static str,
    /// The fence label, for tools that return file-derived text.
    fence_label: Option<&'static str>,
    /// Output members present only in some answers (the others always are,
    /// but for `next_cursor`).
    optional_outputs: &'static [&'static str],
    /// The arguments a call must give.
    required_inputs: &'static [&'static str],
    /// The input schema's properties.
    input: fn() -> Value,
    /// The output schema's own properties (the registry adds the members
    /// every result has).
    output: fn() -> Value,
    /// Validated arguments to a worker request, within the configured caps.
    to_request: fn(&Args<'_>, &limits::Limits) -> Request,
}

/// Validated arguments, read the way every tool reads them.
struct Args<'a>(&'a Map<String, Value>);

impl Args<'_> {
    fn str(&self, k: &str) -> Option<String> {
        self.0.get(k).and_then(Value::as_str).map(str::to_owned)
    }

    fn bool(&self, k: &str, default: bool) -> bool {
        self.0.get(k).and_then(Value::as_bool).unwrap_or(default)
    }

    fn u64(&self, k: &str) -> Option<u64> {
        self.0.get(k).and_then(Value::as_u64)
    }

    /// `path`, the root when absent.
    fn path(&self) -> String {
        self.str("path").unwrap_or_else(|| ".".to_owned())
    }

    /// A small number (a depth, a count of context lines), saturated.
    fn small(&self, k: &str) -> Option<u8> {
        self.u64(k).map(|v| u8::try_from(v).unwrap_or(u8::MAX))
    }

    /// A count a caller may lower, never raise past `cap`.
    fn capped(&self, k: &str, default: u32, cap: u32) -> u32 {
        self.u64(k)
            .map_or(default, |v| u32::try_from(v).unwrap_or(u32::MAX))
            .min(cap)
    }

    /// An array of strings (globs), empty when absent.
    fn strings(&self, k: &str) -> Vec<String> {
        self.0
            .get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One of the tools: an MCP tool name, and the key to its declaration, its
/// request mapping and its rendering (one file of this folder each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `read_file`.
    ReadFile,
    /// `list_directory`.
    ListDirectory,
    /// `search_code`.
    SearchCode,
    /// `find_symbol`.
    FindSymbol,
    /// `project_overview`.
    ProjectOverview,
    /// `git_log`.
    GitLog,
    /// `git_diff`.
    GitDiff,
    /// `find_files`.
    FindFiles,
    /// `directory_tree`.
    DirectoryTree,
    /// `file_outline`.
    FileOutline,
    /// `find_references`.
    FindReferences,
    /// `git_show`.
    GitShow,
    /// `git_blame`.
    GitBlame,
    /// `git_status`.
    GitStatus,
}

impl Tool {
    /// Every tool, sorted by name.
    pub const ALL: [Tool; 14] = [
        Tool::DirectoryTree,
        Tool::FileOutline,
        Tool::FindFiles,
        Tool::FindReferences,
        Tool::FindSymbol,
        Tool::GitBlame,
        Tool::GitDiff,
        Tool::GitLog,
        Tool::GitShow,
        Tool::GitStatus,
        Tool::ListDirectory,
        Tool::ProjectOverview,
        Tool::ReadFile,
        Tool::SearchCode,
    ];

    fn spec(self) -> &'static Spec {
        match self {
            Tool::ReadFile => &read_file::SPEC,
            Tool::ListDirectory => &list_directory::SPEC,
            Tool::SearchCode => &search_code::SPEC,
            Tool::FindSymbol => &find_symbol::SPEC,
            Tool::ProjectOverview => &project_overview::SPEC,
            Tool::GitLog => &git_log::SPEC,
            Tool::GitDiff => &git_diff::SPEC,
            Tool::FindFiles => &find_files::SPEC,
            Tool::DirectoryTree => &directory_tree::SPEC,
            Tool::FileOutline => &file_outline::SPEC,
            Tool::FindReferences => &find_references::SPEC,
            Tool::GitShow => &git_show::SPEC,
            Tool::GitBlame => &git_blame::SPEC,
            Tool::GitStatus => &git_status::SPEC,
        }
    }

    /// The MCP tool name.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// By name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The fence label, for tools that return file-derived text.
    #[must_use]
    pub fn fence_label(self) -> Option<&'static str> {
        self.spec().fence_label
    }

    fn output_properties(self) -> (Value, Vec<String>) {
        let mut props = (self.spec().output)();
        if let Some(obj) = props.as_object_mut() {
            // Which limits stopped the work (empty: the answer is complete).
            obj.insert("stopped_by".into(), stopped_by_schema());
            // With a cut answer that goes on through other arguments: the
            // call that continues it (the twin of its last line).
            obj.insert("next_call".into(), next_call_schema());
            obj.insert("redaction".into(), redaction_schema());
            if self.fence_label().is_some() {
                obj.insert("untrusted_content".into(), json!({"type": "boolean"}));
            }
            // Every answer carries workspace-derived text (content, or at
            // least names), and every one is assessed.
            obj.insert("content_assessment".into(), assessment_schema());
        }
        // Every member is always present, but for a tool's optional ones.
        let optional = self.spec().optional_outputs;
        let required = props
            .as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| {
                        !optional.contains(&k.as_str())
                            && !matches!(k.as_str(), "next_cursor" | "next_call")
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        (props, required)
    }

    /// The `tools/list` entry. Every tool is read-only, so the annotations
    /// are the same for all but the title.
    #[must_use]
    pub fn declaration(self) -> Value {
        let spec = self.spec();
        let props = (spec.input)();
        let (out_props, out_required) = self.output_properties();
        json!({
            "name": spec.name,
            "title": spec.title,
            "description": spec.description,
            "inputSchema": object_schema(props, spec.required_inputs),
            "outputSchema": object_schema(out_props, &out_required),
            "annotations": {
                "title": spec.title,
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false
            }
        })
    }

    /// Convert validated arguments into a worker request. `caps` are the
    /// configured limits (a caller may ask for less, never more).
    #[must_use]
    pub fn to_request(self, args: &Map<String, Value>, caps: &limits::Limits) -> Request {
        (self.spec().to_request)(&Args(args), caps)
    }

    /// [`Tool::to_request`], then the `cursor` argument (if any) applied:
    /// decoded, checked against this query, and turned into the position the
    /// worker starts from.
    ///
    /// # Errors
    /// When the cursor is not one this server issued for this query, or the
    /// tool takes none (an invalid argument, refused before anything runs).
    pub fn to_paged_request(
        self,
        args: &Map<String, Value>,
        caps: &limits::Limits,
    ) -> Result<Request, ArgumentError> {
        let mut request = self.to_request(args, caps);
        if let Some(text) = args.get("cursor").and_then(Value::as_str) {
            let c = cursor::decode(text, query_fingerprint(&request))?;
            match &mut request {
                Request::FindFiles(a) => a.skip = c.position,
                Request::FindReferences(a) => a.skip = c.position,
                Request::SearchCode(a) => a.skip = c.position.min(limits::MAX_PAGED_ITEMS),
                Request::FindSymbol(a) => a.skip = c.position.min(limits::MAX_PAGED_ITEMS),
                Request::ListDirectory(a) => a.skip = c.position,
                Request::GitLog(a) => a.skip = c.position.min(limits::MAX_PAGED_ITEMS),
                Request::DirectoryTree(a) => a.skip = c.position.min(limits::MAX_PAGED_ITEMS),
                Request::GitDiff(a) => a.skip = c.position,
                _ => return Err(ArgumentError::CursorNotAccepted),
            }
        }
        Ok(request)
    }
}

/// Why a tool call's arguments are refused before anything runs, worded
/// for the client (without the final full stop).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// They fail the tool's input schema.
    #[error(transparent)]
    Schema(#[from] InvalidArgument),
    /// The cursor is not one this server issued for this query.
    #[error(transparent)]
    Cursor(#[from] cursor::CursorError),
    /// A cursor given to a tool that is not paged.
    #[error("arguments.cursor is not accepted by this tool")]
    CursorNotAccepted,
}

/// The fingerprint a cursor is bound to: the tool and every argument as the
/// worker receives it (defaults filled in), except the position and the page
/// size.
#[must_use]
pub fn query_fingerprint(request: &Request) -> u64 {
    let mut query = request.clone();
    match &mut query {
        Request::FindFiles(a) => {
            a.skip = 0;
            a.max_results = 0;
        }
        Request::FindReferences(a) => {
            a.skip = 0;
            a.max_results = 0;
        }
        Request::SearchCode(a) => {
            a.skip = 0;
            a.max_results = 0;
        }
        Request::GitLog(a) => {
            a.skip = 0;
            a.limit = 0;
        }
        Request::DirectoryTree(a) => {
            a.skip = 0;
            a.max_entries = 0;
        }
        // The page size is the server's, not an argument.
        Request::FindSymbol(a) => a.skip = 0,
        Request::ListDirectory(a) => a.skip = 0,
        Request::GitDiff(a) => a.skip = 0,
        _ => {}
    }
    // Serialising a typed request cannot fail; were it to, every cursor
    // would be bound to the empty query and refused for any other.
    let bytes = serde_json::to_vec(&query).unwrap_or_default();
    cursor::fingerprint(&bytes)
}

/// The declared tools (implemented ones), sorted by name, with a validator
/// that has compiled every input and output schema.
#[derive(Debug)]
pub struct Registry {
    tools: Vec<(Tool, Value)>,
    validator: Validator,
}

impl Registry {
    /// Build the registry (every tool: git is read in-process, so the git
    /// tools need nothing installed). Fails only if a schema is malformed (a
    /// bug caught by the unit tests).
    ///
    /// # Errors
    /// The first schema the validator cannot check.
    pub fn new() -> Result<Registry, SchemaError> {
        let tools: Vec<(Tool, Value)> = Tool::ALL
            .into_iter()
            .map(|t| (t, t.declaration()))
            .collect();
        let schemas: Vec<&Value> = tools
            .iter()
            .flat_map(|(_, d)| [&d["inputSchema"], &d["outputSchema"]])
            .collect();
        let validator = Validator::new(schemas)?;
        let mut registry = Registry { tools, validator };
        registry.set_answer_chars(limits::MAX_ANSWER_CHARS_DEFAULT);
        Ok(registry)
    }

    /// Declare the answer budget to clients that read a size hint: each
    /// tool's `_meta["anthropic/maxResultSizeChars"]` is the most characters
    /// one of its results holds (the budget of its text plus its summary and
    /// fence lines), so such a client takes every answer inline.
    pub fn set_answer_chars(&mut self, chars: u32) {
        let hint = u64::from(chars) + u64::from(limits::ANSWER_FRAME_CHARS);
        for (_, d) in &mut self.tools {
            d["_meta"] = json!({ "anthropic/maxResultSizeChars": hint });
        }
    }

    /// Declarations in `tools/list` order.
    pub fn declarations(&self) -> impl Iterator<Item = &Value> {
        self.tools.iter().map(|(_, d)| d)
    }

    /// Number of declared tools.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// A declared tool by name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<(Tool, &Value)> {
        self.tools
            .iter()
            .find(|(t, _)| t.name() == name)
            .map(|(t, d)| (*t, d))
    }

    /// Validate `args` against the tool's input schema.
    ///
    /// # Errors
    /// The first way `args` fails the schema.
    pub fn validate_input(&self, declaration: &Value, args: &Value) -> Result<(), ArgumentError> {
        Ok(self.validator.validate(&declaration["inputSchema"], args)?)
    }
}

/// About how many bytes of text rendering `out` reads (and the content
/// controls redact and score): what decides whether the work is done where
/// the answer arrived or handed to a thread of its own.
#[must_use]
pub fn work_estimate(out: &ToolOutput) -> usize {
    match out {
        ToolOutput::ReadFile(o) => read_file::work(o),
        ToolOutput::ListDirectory(o) => list_directory::work(o),
        ToolOutput::SearchCode(o) => search_code::work(o),
        ToolOutput::FindSymbol(o) => find_symbol::work(o),
        ToolOutput::ProjectOverview(o) => project_overview::work(o),
        ToolOutput::GitLog(o) => git_log::work(o),
        ToolOutput::GitDiff(o) => git_diff::work(o),
        ToolOutput::FindFiles(o) => find_files::work(o),
        ToolOutput::DirectoryTree(o) => directory_tree::work(o),
        ToolOutput::FileOutline(o) => file_outline::work(o),
        ToolOutput::FindReferences(o) => find_references::work(o),
        ToolOutput::GitShow(o) => git_show::work(o),
        ToolOutput::GitBlame(o) => git_blame::work(o),
        ToolOutput::GitStatus(o) => git_status::work(o),
    }
}

/// Render `out`, the answer to `request`. `root` is the workspace base name.
/// `out` is taken by value so its text moves into the result, not copied.
#[must_use]
pub fn render(request: &Request, mut out: ToolOutput, root: &str) -> Rendered {
    let worker_redaction = match &mut out {
        ToolOutput::ReadFile(o) => std::mem::take(&mut o.redaction),
        ToolOutput::SearchCode(o) => std::mem::take(&mut o.redaction),
        ToolOutput::FindSymbol(o) => std::mem::take(&mut o.redaction),
        ToolOutput::ProjectOverview(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitLog(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitDiff(o) => std::mem::take(&mut o.redaction),
        ToolOutput::FileOutline(o) => std::mem::take(&mut o.redaction),
        ToolOutput::FindReferences(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitShow(o) => std::mem::take(&mut o.redaction),
        ToolOutput::GitBlame(o) => std::mem::take(&mut o.redaction),
        ToolOutput::ListDirectory(_)
        | ToolOutput::FindFiles(_)
        | ToolOutput::DirectoryTree(_)
        | ToolOutput::GitStatus(_) => RedactionCounts::default(),
    };
    Rendered {
        worker_redaction,
        ..render_output(request, out, root)
    }
}

fn render_output(request: &Request, out: ToolOutput, root: &str) -> Rendered {
    match out {
        ToolOutput::ReadFile(o) => read_file::render(o),
        ToolOutput::ListDirectory(o) => list_directory::render(request, o),
        ToolOutput::SearchCode(o) => search_code::render(request, o, root),
        ToolOutput::FindSymbol(o) => find_symbol::render(request, o),
        ToolOutput::ProjectOverview(o) => project_overview::render(o, root),
        ToolOutput::GitLog(o) => git_log::render(request, o),
        ToolOutput::GitDiff(o) => git_diff::render(request, o),
        ToolOutput::FindFiles(o) => find_files::render(request, o, root),
        ToolOutput::DirectoryTree(o) => directory_tree::render(request, o, root),
        ToolOutput::FileOutline(o) => file_outline::render(o),
        ToolOutput::FindReferences(o) => find_references::render(request, o, root),
        ToolOutput::GitShow(o) => git_show::render(o),
        ToolOutput::GitBlame(o) => git_blame::render(o),
        ToolOutput::GitStatus(o) => git_status::render(request, o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_compiles_and_names_are_legal() {
        let schemas: Vec<Value> = Tool::ALL.iter().map(|t| t.declaration()).collect();
        let all: Vec<&Value> = schemas
            .iter()
            .flat_map(|d| [&d["inputSchema"], &d["outputSchema"]])
            .collect();
        Validator::new(all).unwrap();
        for t in Tool::ALL {
            let n = t.name();
            assert!(!n.is_empty() && n.len() <= 128);
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            );
            for word in [
                "write", "create", "delete", "remove", "move", "rename", "exec", "run", "shell",
            ] {
                assert!(!n.split('_').any(|w| w == word), "{n}");
            }
            if t.fence_label().is_some() {
                assert!(t.spec().description.contains("untrusted"), "{n}");
            }
        }
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }

    #[test]
    fn revision_pattern_refuses_leading_dash() {
        let re = regex::Regex::new(REVISION_PATTERN).unwrap();
        for ok in [
            "HEAD",
            "HEAD~1",
            "main",
            "HEAD~1..HEAD",
            "@{0}",
            "HEAD@{-1}",
            "main..HEAD",
            "v1.2-rc",
        ] {
            assert!(re.is_match(ok), "{ok}");
        }
        for bad in [
            "--all",
            "-p",
            "-c core.pager=sh",
            "HEAD; rm -rf /",
            "$(whoami)",
            "`whoami`",
            "HEAD|tee /tmp/x",
            "HEAD && whoami",
        ] {
            assert!(!re.is_match(bad), "{bad}");
        }
    }
}

//! Workspace files as MCP resources, and completion of their paths.
//!
//! * URIs are `moat://workspace/<path>`: the workspace-relative path (in
//!   the text form every tool uses, percent-encoded where a URI needs it)
//!   under a virtual root, so no URI ever shows where the workspace is on
//!   the host. A custom scheme rather than `file:` so that no client
//!   resolves one against its own file system. One template,
//!   `moat://workspace/{+path}`.
//! * `resources/list` is `find_files` over the whole workspace (the same
//!   walk: `.gitignore`, the skip list, the denylist), paged with the same
//!   stateless cursors.
//! * `resources/read` is `read_file` of the path: the same containment,
//!   denylist, hard-link, special-file and size controls, the same
//!   redaction, fence and content assessment. The content is the fenced,
//!   numbered text `read_file` answers, and its item's `_meta` carries the
//!   assessment (`moat/contentAssessment`), the redaction report
//!   (`moat/redaction`) and, for a file longer than one answer, where the
//!   next part starts (`moat/nextStartLine`, and `moat/nextStartColumn`
//!   inside a line longer than one answer; read it with `read_file`).
//!   Binary files are refused, as `read_file` refuses them. A URI that is
//!   not one of ours, or that names nothing readable, is `-32602` with
//!   `data.uri` (and `data.reason`, the refusal's code).
//! * `completion/complete` completes the template's `path` argument from
//!   the listing of the directory the value is in (`list_directory`'s
//!   controls: denied names are never offered, hidden ones only when the
//!   value's last part starts with `.`), at most 100 values.
//! * Nothing is subscribed to and the list never announces changes: there
//!   is no file watcher inside the sandbox.

use serde_json::{Map, Value, json};

use super::jsonrpc::{Id, RpcError, code};
use super::{Era, Server};

/// The scheme and virtual root of every resource URI.
pub const URI_PREFIX: &str = "moat://workspace/";
/// The one resource template.
pub const TEMPLATE: &str = "moat://workspace/{+path}";
/// Resources per `resources/list` page.
const LIST_PAGE: u64 = 100;
/// Values per completion.
const MAX_COMPLETIONS: usize = 100;

/// `path` as a resource URI: bytes other than unreserved characters and
/// `/` percent-encoded.
#[must_use]
pub fn uri_of(path: &str) -> String {
    let mut uri = String::with_capacity(URI_PREFIX.len() + path.len());
    uri.push_str(URI_PREFIX);
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The workspace path a URI names, or `None` when it is not one of ours or
/// its encoding is broken. What the path then names is for `read_file`'s
/// controls to judge (a `..` decoded here is refused there like any other).
#[must_use]
pub fn path_of(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix(URI_PREFIX)?;
    if rest.is_empty() || rest.contains(['?', '#']) {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = rest.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A MIME type by extension, for clients that choose a viewer by it; every
/// resource moat serves is text.
fn mime_of(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "js" | "mjs" | "cjs" => "text/javascript",
        "py" => "text/x-python",
        "rs" => "text/x-rust",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "c" | "h" => "text/x-c",
        "cc" | "cpp" | "hpp" | "cxx" => "text/x-c++",
        "sh" | "bash" => "text/x-shellscript",
        _ => "text/plain",
    }
}

/// The audit facts of a `resources/read`: the method as the tool and the
/// path the URI names (the URI itself when it names none).
#[must_use]
pub fn facts_of_read(
    params: &Map<String, Value>,
    caller: std::borrow::Cow<'static, str>,
    client: &str,
) -> crate::audit::Facts {
    let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
    let path = path_of(uri).unwrap_or_else(|| uri.to_owned());
    let mut call = Map::new();
    call.insert("name".into(), Value::from("resources/read"));
    call.insert("arguments".into(), json!({ "path": path }));
    crate::audit::Facts::of_call(&call, caller, client)
}

fn invalid(id: Option<&Id>, message: impl Into<String>) -> RpcError {
    RpcError::new(id.cloned(), code::INVALID_PARAMS, message)
}

/// The modern revision's caching hints: file listings and contents change
/// on disk, so they are not to be reused (`ttlMs: 0`, per client).
fn no_cache(result: &mut Value) {
    result["ttlMs"] = json!(0);
    result["cacheScope"] = json!("private");
}

impl Server {
    /// Run one of the tools for a resource method, without its own audit
    /// event (the caller audits a read; listings are not audited).
    async fn inner_tool(
        &self,
        id: Option<&Id>,
        tool: &str,
        arguments: Value,
        era: Era<'_>,
        facts: &mut crate::audit::Facts,
    ) -> Result<Map<String, Value>, RpcError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(tool));
        params.insert("arguments".into(), arguments);
        let result = self.tools_call(id, &params, era, facts).await?;
        match result {
            Value::Object(m) => Ok(m),
            _ => Err(invalid(id, "no result")),
        }
    }

    /// `resources/list`.
    pub(super) async fn resources_list(
        &self,
        id: Option<&Id>,
        params: &Map<String, Value>,
        era: Era<'_>,
    ) -> Result<Value, RpcError> {
        let mut arguments = json!({"path": ".", "max_results": LIST_PAGE});
        match params.get("cursor") {
            None | Some(Value::Null) => {}
            Some(Value::String(c)) => arguments["cursor"] = Value::from(c.as_str()),
            Some(_) => return Err(invalid(id, "cursor must be a string")),
        }
        let mut facts = crate::audit::Facts::default();
        let found = self
            .inner_tool(id, "find_files", arguments, era, &mut facts)
            .await?;
        let s = &found["structuredContent"];
        if found.get("isError") == Some(&Value::Bool(true)) {
            let why = s["message"].as_str().unwrap_or("the listing failed");
            return Err(invalid(id, why.to_owned()));
        }
        let resources: Vec<Value> = s["files"]
            .as_array()
            .map(|files| {
                files
                    .iter()
                    .filter_map(|f| {
                        let path = f["path"].as_str()?;
                        let name = path.rsplit('/').next().unwrap_or(path);
                        Some(json!({
                            "uri": uri_of(path),
                            "name": name,
                            "title": path,
                            "mimeType": mime_of(path),
                            "size": f["size_bytes"],
                        }))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let names: Vec<&str> = resources
            .iter()
            .filter_map(|r| r["title"].as_str())
            .collect();
        let assessment = self.controls.assess_names(&names);
        let mut result = json!({ "resources": resources });
        if let Some(next) = s.get("next_cursor").and_then(Value::as_str) {
            result["nextCursor"] = Value::from(next);
        }
        if let Era::Modern(rm) = era {
            result["resultType"] = json!("complete");
            no_cache(&mut result);
            result["_meta"] = self.result_meta(rm);
        }
        with_assessment(&mut result, assessment);
        Ok(result)
    }

    /// `resources/templates/list`.
    pub(super) fn resources_templates(&self, era: Era<'_>) -> Value {
        let mut result = json!({"resourceTemplates": [{
            "uriTemplate": TEMPLATE,
            "name": "workspace-file",
            "title": "A file of the workspace",
            "description": "A workspace file by its path relative to the workspace root (as the tools take it). Read through the same controls as read_file: credential files refused, secrets redacted, the text fenced and assessed.",
        }]});
        if let Era::Modern(rm) = era {
            result["resultType"] = json!("complete");
            result["ttlMs"] = json!(self.config.server.discovery_ttl_ms);
            result["cacheScope"] = json!("public");
            result["_meta"] = self.result_meta(rm);
        }
        result
    }

    /// `resources/read`. `facts` is the read's audit event.
    pub(super) async fn resources_read(
        &self,
        id: Option<&Id>,
        params: &Map<String, Value>,
        era: Era<'_>,
        facts: &mut crate::audit::Facts,
    ) -> Result<Value, RpcError> {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Err(invalid(id, "resources/read needs params.uri, a string"));
        };
        let not_found = |reason: &str, message: String| {
            invalid(id, message).with_data(json!({"uri": uri, "reason": reason}))
        };
        let Some(path) = path_of(uri) else {
            return Err(not_found(
                "unknown_resource",
                format!("Resource not found: this server's resources are {TEMPLATE}"),
            ));
        };
        let read = self
            .inner_tool(id, "read_file", json!({"path": path}), era, facts)
            .await?;
        let s = &read["structuredContent"];
        if read.get("isError") == Some(&Value::Bool(true)) {
            let reason = s["error"].as_str().unwrap_or("refused");
            let why = read["content"][0]["text"].as_str().unwrap_or("refused");
            return Err(not_found(reason, format!("Resource not readable: {why}")));
        }
        let text = read["content"]
            .as_array()
            .and_then(|c| c.last())
            .and_then(|b| b["text"].as_str())
            .unwrap_or("");
        let mut item_meta = json!({
            "moat/contentAssessment": s["content_assessment"],
            "moat/redaction": s["redaction"],
        });
        if let Some(next) = s.get("next_start_line") {
            item_meta["moat/nextStartLine"] = next.clone();
        }
        if let Some(next) = s.get("next_start_column") {
            item_meta["moat/nextStartColumn"] = next.clone();
        }
        let mut result = json!({"contents": [{
            "uri": uri,
            "mimeType": mime_of(&path),
            "text": text,
            "_meta": item_meta,
        }]});
        if let Era::Modern(rm) = era {
            result["resultType"] = json!("complete");
            no_cache(&mut result);
            result["_meta"] = self.result_meta(rm);
        }
        Ok(result)
    }

    /// `completion/complete`.
    pub(super) async fn complete(
        &self,
        id: Option<&Id>,
        params: &Map<String, Value>,
        era: Era<'_>,
    ) -> Result<Value, RpcError> {
        let reference = params.get("ref");
        let argument = params.get("argument");
        let (Some(reference), Some(argument)) = (reference, argument) else {
            return Err(invalid(
                id,
                "completion/complete needs params.ref and params.argument",
            ));
        };
        let ours = reference["type"] == "ref/resource"
            && reference["uri"] == TEMPLATE
            && argument["name"] == "path";
        let value = argument["value"].as_str().unwrap_or("");
        let mut values: Vec<String> = Vec::new();
        let mut listing_cut = false;
        if ours {
            let (dir, base) = match value.rsplit_once('/') {
                Some((d, b)) => (d, b),
                None => ("", value),
            };
            let arguments = json!({
                "path": if dir.is_empty() { "." } else { dir },
                "include_hidden": base.starts_with('.'),
            });
            let mut facts = crate::audit::Facts::default();
            if let Ok(listed) = self
                .inner_tool(id, "list_directory", arguments, era, &mut facts)
                .await
                && listed.get("isError") != Some(&Value::Bool(true))
            {
                let s = &listed["structuredContent"];
                listing_cut = s["truncated"] == true;
                for e in s["entries"].as_array().into_iter().flatten() {
                    let Some(name) = e["name"].as_str() else {
                        continue;
                    };
                    if !name.starts_with(base) {
                        continue;
                    }
                    let slash = if e["type"] == "directory" { "/" } else { "" };
                    let full = if dir.is_empty() {
                        format!("{name}{slash}")
                    } else {
                        format!("{dir}/{name}{slash}")
                    };
                    values.push(full);
                }
            }
        }
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        let names: Vec<&str> = values.iter().map(String::as_str).collect();
        let assessment = self.controls.assess_names(&names);
        let mut result = json!({"completion": {
            "values": values,
            "total": total,
            "hasMore": total > MAX_COMPLETIONS || listing_cut,
        }});
        if let Era::Modern(rm) = era {
            result["resultType"] = json!("complete");
            result["_meta"] = self.result_meta(rm);
        }
        with_assessment(&mut result, assessment);
        Ok(result)
    }
}

/// Attach the assessment of the names a result lists, as file reads carry
/// theirs (`moat/contentAssessment` in `_meta`): names are the workspace's
/// text, as hostile as its files.
fn with_assessment(result: &mut Value, assessment: Value) {
    if !result.get("_meta").is_some_and(Value::is_object) {
        result["_meta"] = json!({});
    }
    result["_meta"]["moat/contentAssessment"] = assessment;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_show_no_host_path() {
        for path in [
            "src/main.rs",
            "a b/c#d?.txt",
            "caf\\xe9.txt",
            "100%.md",
            "ü/ß.txt",
        ] {
            let uri = uri_of(path);
            assert!(uri.starts_with(URI_PREFIX), "{uri}");
            assert!(!uri[URI_PREFIX.len()..].contains(['#', '?', ' ']), "{uri}");
            assert_eq!(path_of(&uri).as_deref(), Some(path), "{uri}");
        }
        for bad in [
            "file:///etc/passwd",
            "moat://workspace/",
            "moat://other/x",
            "moat://workspace/a%zz",
            "moat://workspace/a%",
            "moat://workspace/a?b",
            "moat://workspace/%ff%fe",
        ] {
            assert_eq!(path_of(bad), None, "{bad}");
        }
        // Decoding is not judging: `..` reaches read_file's containment.
        assert_eq!(
            path_of("moat://workspace/..%2f..%2fetc").as_deref(),
            Some("../../etc")
        );
    }
}

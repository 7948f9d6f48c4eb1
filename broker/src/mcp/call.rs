//! `tools/call`: the arguments checked against the tool's input schema
//! (and its cursor), admission, the run on the executor, the rendering and
//! content controls of the answer, its size cap, its log line and the
//! facts of its audit event.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::jsonrpc::{Id, RpcError, code};
use super::progress::progress_reporter;
use super::{Era, Server, json_out, micros};
use crate::content::Findings;
use crate::error::{ToolFailure, describe};
use crate::tool::{self, render};

/// Up to about this many bytes of text, an answer is rendered, redacted,
/// scored and encoded on the thread that received it (some 150 µs of work at
/// most); a larger one is handed to a blocking thread, so the transport's
/// thread keeps answering control messages meanwhile.
pub const INLINE_WORK_BYTES: usize = 64 * 1024;

impl Server {
    /// `tools/call` in `era`; `facts` is the call's audit event, filled in
    /// here whatever becomes of the call.
    pub(super) async fn tools_call(
        &self,
        id: Option<&Id>,
        params: &Map<String, Value>,
        era: Era<'_>,
        facts: &mut crate::audit::Facts,
    ) -> Result<Value, RpcError> {
        let client = facts.client.clone();
        let client = client.as_str();
        let invalid = |m: String| RpcError::new(id.cloned(), code::INVALID_PARAMS, m);
        let name = match params.get("name") {
            Some(Value::String(n)) if !n.is_empty() => n.as_str(),
            _ => {
                return Err(invalid(
                    "tools/call needs params.name, a non-empty string".into(),
                ));
            }
        };
        let empty = Value::Object(Map::new());
        let args = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(v @ Value::Object(_)) => v,
            Some(_) => return Err(invalid("params.arguments must be an object".into())),
        };
        let Some((tool, declaration)) = self.registry.get(name) else {
            return Err(invalid(format!(
                "unknown tool '{}'",
                crate::error::quote(name).trim_matches('\'')
            )));
        };
        let limits = &self.config.sandbox.limits;
        let args_map = args.as_object().cloned().unwrap_or_default();
        // A cursor is an argument too: one that is not this server's for
        // this query is refused like any argument that fails the schema.
        let paged = self
            .registry
            .validate_input(declaration, args)
            .and_then(|()| tool.to_paged_request(&args_map, limits));
        let request = match paged {
            Ok(request) => request,
            Err(problem) => {
                if !validation_is_tool_error(era.version()) {
                    return Err(invalid(problem.to_string()));
                }
                // 2025-11-25 and later (SEP-1303): arguments that fail the input
                // schema are a tool execution error the model can correct, still
                // refused before anything runs.
                let refusal = crate::content::Refusal {
                    code: "invalid_arguments",
                    message: format!("{problem}."),
                    remedy: "Call the tool again with arguments that match its inputSchema.".into(),
                };
                tracing::info!(
                    tool = name,
                    client,
                    error = "invalid_arguments",
                    content_level = "",
                    redactions = 0u64,
                    duration_us = 0u64,
                    "tool.call"
                );
                let (result, findings) = self.controls.failure(&refusal);
                let result = complete(result, self.era_meta(era));
                facts.outcome = std::borrow::Cow::Borrowed(refusal.code);
                facts.bytes = json_out::encoded_len(&result);
                facts.findings = findings;
                return Ok(Value::Object(result));
            }
        };
        let budget = Duration::from_millis(limits.tool_timeout_ms);
        let path_arg = args_map.get("path").and_then(Value::as_str);
        let started = Instant::now();
        // Only here, after validation, does a call take room: a call refused
        // for its arguments, and every other method, never waits on one.
        // The place is held until the answer is rendered and measured, so
        // the admission counts every call that still costs memory.
        let ticket = self.admission.try_admit();
        let in_flight = ticket.as_ref().map(|_| crate::metrics::InFlight::enter());
        let work = Arc::new(std::sync::Mutex::new(None));
        let outcome = match &ticket {
            Some(_) => {
                let progress = progress_reporter(params);
                let sink = Arc::clone(&work);
                let on_work: crate::supervisor::OnWork = Arc::new(move |w| {
                    if let Ok(mut slot) = sink.lock() {
                        *slot = Some(w);
                    }
                });
                self.executor
                    .run(request.clone(), budget, progress, Some(on_work))
                    .await
            }
            None => Err(ToolFailure::Busy {
                admitted: self.admission.admitted(),
            }),
        };
        let rendering = self.rendering.acquire().await.ok();
        // The revision's result fields, added before the answer is measured:
        // the cap is on the answer as sent.
        let modern_meta = self.era_meta(era);
        let finish = |(result, findings): (Map<String, Value>, Findings), meta: Option<Value>| {
            let result = complete(result, meta);
            let size = json_out::encoded_len(&result);
            (result, size, findings)
        };
        let answered = match outcome {
            Ok(Ok(out)) => {
                // Rendering, redaction, scanning and measuring a large answer
                // are CPU work: off the runtime's threads, in one hand-off,
                // so that the transports keep answering control messages
                // meanwhile. A small answer is rendered here: handing it to
                // a thread and back costs more than the work itself.
                let rendered = if tool::work_estimate(&out) <= INLINE_WORK_BYTES {
                    Ok(finish(
                        self.controls
                            .success(tool.fence_label(), render(&request, out, &self.root_name)),
                        modern_meta.clone(),
                    ))
                } else {
                    let controls = Arc::clone(&self.controls);
                    let root = self.root_name.clone();
                    let req = request.clone();
                    let meta = modern_meta.clone();
                    tokio::task::spawn_blocking(move || {
                        finish(
                            controls.success(tool.fence_label(), render(&req, out, &root)),
                            meta,
                        )
                    })
                    .await
                };
                rendered.map_err(|_| ToolFailure::WorkerFailed {
                    why: "could not have its answer rendered",
                })
            }
            Ok(Err(wire)) => Err(ToolFailure::Wire(wire)),
            Err(failure) => Err(failure),
        };
        let ((mut result, size, findings), code) = match answered {
            Ok(answer) => (answer, None),
            Err(failure) => {
                let refusal = describe(&failure, path_arg, &self.root_name);
                (
                    finish(self.controls.failure(&refusal), modern_meta.clone()),
                    Some(refusal.code),
                )
            }
        };
        // What an operator alerts on: the injection level of the content
        // returned ("" for a tool that returns none) and how much was redacted.
        let content_level = findings.content_level;
        let redactions = findings.redactions;
        let duration_us = micros(started);
        facts.outcome = std::borrow::Cow::Borrowed(code.unwrap_or("ok"));
        facts.bytes = size;
        facts.work = work.lock().ok().and_then(|w| *w);
        facts.findings = findings;
        if self.config.observability.log_tool_arguments {
            let names: Vec<&str> = args_map.keys().map(String::as_str).collect();
            tracing::info!(tool = name, client, error = code.unwrap_or(""), content_level, redactions, arguments = ?names, duration_us, "tool.call");
        } else {
            tracing::info!(
                tool = name,
                client,
                error = code.unwrap_or(""),
                content_level,
                redactions,
                duration_us,
                "tool.call"
            );
        }
        // The cap is on the answer as sent: escaping can make it several
        // times the size of the content it carries.
        let limit = self.config.server.max_answer_bytes;
        drop(rendering);
        drop(ticket);
        drop(in_flight);
        if size > limit {
            tracing::warn!(tool = name, size, limit, "tool.answer_too_large");
            let refusal = describe(
                &ToolFailure::AnswerTooLarge { size, limit },
                path_arg,
                &self.root_name,
            );
            let (refused, findings) = self.controls.failure(&refusal);
            result = complete(refused, modern_meta);
            facts.outcome = std::borrow::Cow::Borrowed(refusal.code);
            facts.bytes = json_out::encoded_len(&result);
            facts.findings = findings;
        }
        Ok(Value::Object(result))
    }
}

/// A tool result with the fields its revision adds (`resultType` and
/// `_meta`, from 2026-07-28 on) when `meta` is given.
fn complete(mut result: Map<String, Value>, meta: Option<Value>) -> Map<String, Value> {
    if let Some(meta) = meta {
        result.insert("resultType".into(), json!("complete"));
        result.insert("_meta".into(), meta);
    }
    result
}

/// Whether arguments that fail the input schema are answered as a tool error
/// (`isError: true`, revisions 2025-11-25 and later, SEP-1303) rather than a
/// JSON-RPC `-32602` (earlier revisions, whose tools spec lists invalid
/// arguments among protocol errors). Revision strings are ISO dates, so they
/// order as text.
#[must_use]
pub fn validation_is_tool_error(version: &str) -> bool {
    version >= "2025-11-25"
}

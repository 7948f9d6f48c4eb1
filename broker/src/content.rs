//! Content controls over a finished tool result: the untrusted fence and the
//! injection assessment for file-derived text, then one redaction pass over
//! everything the client will see (both halves, errors too), then the
//! redaction report.
//!
//! The file-derived text is redacted *before* it is fenced, on its own: the
//! fence lines are the broker's, and no rule may read across them. (A rule
//! whose secret runs to the next whitespace, `basic-auth-header`, would
//! otherwise take the closing tag of content ending in `Authorization:
//! Bearer` for the token and replace it, leaving the fence unclosed.)
//!
//! The worker is not trusted to do any of this: it runs here, in the broker,
//! on the assembled result.

use serde_json::{Map, Value, json};

use crate::error::Refusal;
use crate::fence::{Nonce, fence};
use crate::redact::{RedactionReport, Redactor};
use crate::render::Rendered;
use crate::scan::{Scanner, warning_line};
use crate::tools::Tool;

/// The compiled controls, shared by every call.
#[derive(Debug)]
pub struct Controls {
    redactor: Redactor,
    scanner: Scanner,
    scan: bool,
}

impl Controls {
    /// Compile the controls.
    #[must_use]
    pub fn new(redact: bool, scan: bool) -> Controls {
        Controls {
            redactor: Redactor::new(redact),
            scanner: Scanner::new(),
            scan,
        }
    }

    /// The redactor (also used for log fields).
    #[must_use]
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Assemble a successful tool result: `{content, structuredContent, isError: false}`.
    #[must_use]
    pub fn success(&self, tool: Tool, rendered: Rendered) -> Map<String, Value> {
        let Rendered {
            mut summary,
            mut structured,
            untrusted,
            scan,
        } = rendered;
        let mut report = RedactionReport::default();
        let mut fenced = None;
        if let Some(label) = tool.fence_label() {
            let raw = untrusted.unwrap_or_default();
            // The assessment reads the raw text; its excerpts pass through the
            // redaction pass below with everything else.
            let assessment = if self.scan {
                match &scan {
                    Some((text, offset, path)) => {
                        let mut a = self.scanner.assess_file(text, Some(path)).to_json();
                        shift_lines(&mut a, *offset);
                        a
                    }
                    None => self.scanner.assess(&raw).to_json(),
                }
            } else {
                json!({"level": "none", "risk": 0.0, "invisible_characters": 0, "signals": []})
            };
            if let Some(warning) = warning_line(&assessment) {
                summary.push('\n');
                summary.push_str(&warning);
            }
            structured.insert("untrusted_content".into(), Value::Bool(true));
            structured.insert("content_assessment".into(), assessment);
            let raw = self.redactor.redact_str(&raw, &mut report).unwrap_or(raw);
            let nonce = Nonce::generate();
            fenced = Some(fence(label, &nonce, &raw));
        }
        self.assemble(summary, fenced, structured, report, false)
    }

    /// Assemble a refusal: `{content, structuredContent: {error, message, remedy?}, isError: true}`.
    #[must_use]
    pub fn failure(&self, refusal: &Refusal) -> Map<String, Value> {
        let text = if refusal.remedy.is_empty() {
            refusal.message.clone()
        } else {
            format!("{} {}", refusal.message, refusal.remedy)
        };
        let mut structured = Map::new();
        structured.insert("error".into(), Value::from(refusal.code));
        structured.insert("message".into(), Value::from(refusal.message.clone()));
        if !refusal.remedy.is_empty() {
            structured.insert("remedy".into(), Value::from(refusal.remedy.clone()));
        }
        self.assemble(text, None, structured, RedactionReport::default(), true)
    }

    /// Redact `summary` and `structured` into `report` (which already counts
    /// what redacting the fenced text replaced), attach the report, and build
    /// the result. `fenced` is already redacted and is not read again.
    fn assemble(
        &self,
        summary: String,
        fenced: Option<String>,
        structured: Map<String, Value>,
        mut report: RedactionReport,
        is_error: bool,
    ) -> Map<String, Value> {
        let summary = self
            .redactor
            .redact_str(&summary, &mut report)
            .unwrap_or(summary);
        let content: Vec<Value> = std::iter::once(summary)
            .chain(fenced)
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        let mut structured = Value::Object(structured);
        self.redactor.redact_value(&mut structured, &mut report);
        if let Value::Object(s) = &mut structured {
            s.insert("redaction".into(), report.to_json());
        }
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(content));
        result.insert("structuredContent".into(), structured);
        result.insert("isError".into(), Value::Bool(is_error));
        result
    }
}

/// Add `offset` to every finding's line number.
fn shift_lines(assessment: &mut Value, offset: u64) {
    if offset == 0 {
        return;
    }
    if let Some(signals) = assessment.get_mut("signals").and_then(Value::as_array_mut) {
        for s in signals {
            if let Some(line) = s.get("line").and_then(Value::as_u64) {
                s["line"] = Value::from(line + offset);
            }
        }
    }
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;

//! Content controls over a finished tool result: the untrusted fence and the
//! injection assessment for file-derived text, then one redaction pass over
//! everything the client will see (both halves, errors too), then the
//! redaction report.
//!
//! The worker is not trusted to do any of this: it runs here, in the broker,
//! on the assembled result.

use serde_json::{Map, Value, json};

use crate::error::Refusal;
use crate::fence::{Nonce, fence};
use crate::redact::{RedactionReport, Redactor};
use crate::render::Rendered;
use crate::scan::Scanner;
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
            summary,
            mut structured,
            untrusted,
            scan,
        } = rendered;
        let mut texts = vec![summary];
        if let Some(label) = tool.fence_label() {
            let raw = untrusted.unwrap_or_default();
            // The assessment reads the raw text; its excerpts pass through the
            // redaction pass below with everything else.
            let assessment = if self.scan {
                match &scan {
                    Some((text, offset)) => {
                        let mut a = self.scanner.assess(text).to_json();
                        shift_lines(&mut a, *offset);
                        a
                    }
                    None => self.scanner.assess(&raw).to_json(),
                }
            } else {
                json!({"level": "none", "risk": 0.0, "invisible_characters": 0, "signals": []})
            };
            structured.insert("untrusted_content".into(), Value::Bool(true));
            structured.insert("content_assessment".into(), assessment);
            let nonce = Nonce::generate();
            texts.push(fence(label, &nonce, &raw));
        }
        self.assemble(texts, structured, false)
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
        self.assemble(vec![text], structured, true)
    }

    fn assemble(
        &self,
        texts: Vec<String>,
        structured: Map<String, Value>,
        is_error: bool,
    ) -> Map<String, Value> {
        let mut report = RedactionReport::default();
        let content: Vec<Value> = texts
            .into_iter()
            .map(|t| {
                let t = self.redactor.redact_str(&t, &mut report).unwrap_or(t);
                json!({"type": "text", "text": t})
            })
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

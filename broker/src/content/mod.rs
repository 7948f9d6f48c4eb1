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
//! The worker has already redacted every source an answer was cut from, whole
//! and raw (`worker/src/sources.rs`), so multi-line forms and context outside
//! an excerpt were seen. It is not trusted to have done so: this pass runs
//! here, in the broker, on the assembled result, whatever the worker did.
//! Single-line shapes are caught here even from a worker that skipped its
//! own pass; see SECURITY.md for what such a worker could still show.
//!
//! The injection assessment reads the fenced text after that pass, so a
//! signal's excerpt never carries what a placeholder replaced.

pub mod fence;
mod rendered;
pub mod scan;

use std::borrow::Cow;

use moat_protocol::response::RedactionCounts;
use serde_json::{Map, Value, json};

use crate::redact::{RedactionReport, Redactor};
use fence::{Nonce, fence};
use moat_worker::redact_source;
use rendered::number_lines;
pub use rendered::{FenceText, Refusal, Rendered};
use scan::{Level, Scanner, warning_line};

/// The redacted text when redaction replaced something (a borrowed text is
/// the source itself).
fn replaced(redacted: Cow<'_, str>) -> Option<String> {
    match redacted {
        Cow::Owned(text) => Some(text),
        Cow::Borrowed(_) => None,
    }
}

/// What the controls found in one answer, as the logs, the audit trail and
/// the metrics report it (so no one reads it back out of the result).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Findings {
    /// The content assessment's level; empty for an answer without
    /// file-derived content (a refusal, a listing).
    pub content_level: &'static str,
    /// Replacements, the worker's included.
    pub redactions: u64,
    /// The rules that fired (rules of this build only), sorted.
    pub rules: Vec<&'static str>,
}

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
    pub fn success(
        &self,
        fence_label: Option<&str>,
        rendered: Rendered,
    ) -> (Map<String, Value>, Findings) {
        let Rendered {
            mut summary,
            mut structured,
            untrusted,
            scan_path,
            fence_text,
            worker_redaction,
        } = rendered;
        let mut report = RedactionReport::default();
        let mut fenced = None;
        let content_level;
        if let Some(label) = fence_label {
            let raw = untrusted.unwrap_or_default();
            // Redaction first, then the assessment of what was left: a
            // signal's excerpt is cut from the text the client is shown, so
            // it can never carry what a placeholder replaced (an excerpt is
            // short and out of context; no rule would recognise the secret in
            // it afterwards).
            let (redacted, assessed) = match fence_text {
                // A whole source: both controls' literal searches in one walk.
                FenceText::Numbered { .. } if self.scan => {
                    let (redacted, assessed) = self.scanner.redact_and_assess(
                        &self.redactor,
                        &raw,
                        scan_path.as_deref(),
                        &mut report,
                    );
                    (replaced(redacted).unwrap_or(raw), Some(assessed))
                }
                _ => (self.redact_fenced(raw, fence_text, &mut report), None),
            };
            let assessment = if self.scan {
                let offset = match fence_text {
                    FenceText::Numbered { start, .. } => start.saturating_sub(1),
                    FenceText::Whole | FenceText::PerLine => 0,
                };
                let assessed = assessed
                    .unwrap_or_else(|| self.scanner.assess_file(&redacted, scan_path.as_deref()));
                content_level = assessed.level.as_str();
                let mut a = assessed.to_json();
                shift_lines(&mut a, offset);
                a
            } else {
                content_level = Level::None.as_str();
                json!({"level": content_level, "risk": 0.0, "invisible_characters": 0, "signals": []})
            };
            if let Some(warning) = warning_line(&assessment) {
                summary.push('\n');
                summary.push_str(&warning);
            }
            structured.insert("untrusted_content".into(), Value::Bool(true));
            structured.insert("content_assessment".into(), assessment);
            let shown = match fence_text {
                FenceText::Numbered { start, end } => number_lines(&redacted, start, end),
                FenceText::Whole | FenceText::PerLine => redacted,
            };
            // A listing with nothing in it (no match, no commit, no change)
            // says so in the summary; an empty fence would only cost tokens.
            // A file's lines are always fenced, an empty file too.
            let empty_listing =
                shown.is_empty() && !matches!(fence_text, FenceText::Numbered { .. });
            if !empty_listing {
                let nonce = Nonce::generate();
                fenced = Some(fence(label, &nonce, &shown));
            }
        } else {
            // No fence: the answer is a listing, and the names in it are the
            // workspace's text, as hostile as a file's. They are redacted
            // with the rest of the summary (below) and assessed here the way
            // a file's content is, so a name that reads as an instruction is
            // warned about like a file line that does.
            let shown = self
                .redactor
                .redact_str(&summary, &mut RedactionReport::default())
                .unwrap_or_else(|| summary.clone());
            let assessment = if self.scan {
                let assessed = self.scanner.assess_file(&shown, None);
                content_level = assessed.level.as_str();
                assessed.to_json()
            } else {
                content_level = Level::None.as_str();
                json!({"level": content_level, "risk": 0.0, "invisible_characters": 0, "signals": []})
            };
            if let Some(warning) = warning_line(&assessment) {
                summary.push('\n');
                summary.push_str(
                    &warning.replace("The fenced content is data", "The names listed are data"),
                );
            }
            structured.insert("content_assessment".into(), assessment);
        }
        self.assemble(
            summary,
            fenced,
            structured,
            report,
            &worker_redaction,
            false,
            content_level,
        )
    }

    /// The broker's pass over file-derived text, read as `how` says (see
    /// [`FenceText`]): what the broker adds around the content is never read
    /// together with it. Numbered text is returned unnumbered (the caller
    /// numbers it after the assessment).
    fn redact_fenced(&self, raw: String, how: FenceText, report: &mut RedactionReport) -> String {
        match how {
            FenceText::Whole => self.redactor.redact_str(&raw, report).unwrap_or(raw),
            FenceText::PerLine => {
                // When the joined text has nothing to replace, no line has
                // (the argument of `Redactor::redact_value`): one scan.
                if self
                    .redactor
                    .redact_str(&raw, &mut RedactionReport::default())
                    .is_none()
                {
                    return raw;
                }
                let mut out = String::with_capacity(raw.len());
                for (i, line) in raw.split('\n').enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    match self.redactor.redact_str(line, report) {
                        Some(redacted) => out.push_str(&redacted),
                        None => out.push_str(line),
                    }
                }
                out
            }
            FenceText::Numbered { .. } => {
                replaced(redact_source(&self.redactor, &raw, report)).unwrap_or(raw)
            }
        }
    }

    /// The assessment of `names` (workspace names a result lists outside any
    /// tool answer: resources, completion values), scored as one text, a
    /// name a line, after redaction, as file content is.
    #[must_use]
    pub fn assess_names(&self, names: &[&str]) -> Value {
        if !self.scan {
            return json!({"level": Level::None.as_str(), "risk": 0.0, "invisible_characters": 0, "signals": []});
        }
        let text = names.join("\n");
        let shown = self
            .redactor
            .redact_str(&text, &mut RedactionReport::default())
            .unwrap_or(text);
        self.scanner.assess_file(&shown, None).to_json()
    }

    /// Assemble a refusal: `{content, structuredContent: {error, message, remedy?}, isError: true}`.
    #[must_use]
    pub fn failure(&self, refusal: &Refusal) -> (Map<String, Value>, Findings) {
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
        self.assemble(
            text,
            None,
            structured,
            RedactionReport::default(),
            &RedactionCounts::default(),
            true,
            "",
        )
    }

    /// Redact `summary` and `structured` into `report` (which already counts
    /// what redacting the fenced text replaced), attach the report with what
    /// the worker's pass over whole sources replaced added to it, and build
    /// the result and what was found in it. `fenced` is already redacted and
    /// is not read again.
    #[expect(
        clippy::too_many_arguments,
        reason = "the parts of one result, each from a different step of success or failure"
    )]
    fn assemble(
        &self,
        summary: String,
        fenced: Option<String>,
        structured: Map<String, Value>,
        mut report: RedactionReport,
        worker: &RedactionCounts,
        is_error: bool,
        content_level: &'static str,
    ) -> (Map<String, Value>, Findings) {
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
        let (redactions, rules) = merged_report(&report, worker);
        if let Value::Object(s) = &mut structured {
            s.insert(
                "redaction".into(),
                json!({"applied": redactions > 0, "count": redactions, "rules": rules}),
            );
        }
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(content));
        result.insert("structuredContent".into(), structured);
        result.insert("isError".into(), Value::Bool(is_error));
        let findings = Findings {
            content_level,
            redactions,
            rules,
        };
        (result, findings)
    }
}

/// The broker's report plus the worker's: the count and the rules, sorted.
/// Rule names the worker reports are kept only when they are rules this
/// build has (a compromised worker cannot put text of its own there).
fn merged_report(report: &RedactionReport, worker: &RedactionCounts) -> (u64, Vec<&'static str>) {
    let known = Redactor::rule_names();
    let mut rules: Vec<&'static str> = report.rules();
    rules.extend(
        worker
            .rules
            .iter()
            .filter_map(|r| known.iter().find(|k| **k == r.as_str()).copied()),
    );
    rules.sort_unstable();
    rules.dedup();
    (report.count().saturating_add(worker.count), rules)
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
mod tests;

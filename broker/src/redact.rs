//! TEMPORARY placeholder (replaced by the content-controls work).
use serde_json::{Value, json};

/// Redactor.
#[derive(Debug)]
pub struct Redactor;

impl Redactor {
    /// New.
    #[must_use]
    pub fn new(_enabled: bool) -> Redactor {
        Redactor
    }
    /// Redact a string.
    pub fn redact_str(&self, _text: &str, _report: &mut RedactionReport) -> Option<String> {
        None
    }
    /// Redact a value.
    pub fn redact_value(&self, _value: &mut Value, _report: &mut RedactionReport) {}
    /// Rule names.
    #[must_use]
    pub fn rule_names() -> &'static [&'static str] {
        &[]
    }
}

/// Report.
#[derive(Debug, Default, Clone)]
pub struct RedactionReport;

impl RedactionReport {
    /// Count.
    #[must_use]
    pub fn count(&self) -> u64 {
        0
    }
    /// Rules.
    #[must_use]
    pub fn rules(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// JSON.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({"applied": false, "count": 0, "rules": []})
    }
}

/// Credential field names.
#[must_use]
pub fn is_credential_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["token", "secret", "password", "authorization", "api_key"]
        .iter()
        .any(|w| n.contains(w))
}

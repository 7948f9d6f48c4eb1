//! TEMPORARY placeholder (replaced by the content-controls work).
use serde_json::{Value, json};

/// Scanner.
#[derive(Debug, Default)]
pub struct Scanner;

impl Scanner {
    /// New.
    #[must_use]
    pub fn new() -> Scanner {
        Scanner
    }
    /// Assess.
    #[must_use]
    pub fn assess(&self, _text: &str) -> Assessment {
        Assessment
    }
}

/// Assessment.
#[derive(Debug)]
pub struct Assessment;

impl Assessment {
    /// JSON.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({"level": "none", "risk": 0.0, "invisible_characters": 0, "signals": []})
    }
}

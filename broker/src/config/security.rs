//! `[security]`: the content controls.

use serde::Deserialize;

/// `[security]`.
#[derive(Debug, Clone)]
pub struct SecurityConfig {
    /// Redact credential-shaped text.
    pub redact_secrets: bool,
    /// Score untrusted content for injection signals.
    pub scan_untrusted_content: bool,
}

/// `[security]` as given.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSecurity {
    redact_secrets: Option<bool>,
    scan_untrusted_content: Option<bool>,
}

/// `[security]`: both controls on unless turned off.
pub(super) fn validate(raw: &RawSecurity) -> SecurityConfig {
    SecurityConfig {
        redact_secrets: raw.redact_secrets.unwrap_or(true),
        scan_untrusted_content: raw.scan_untrusted_content.unwrap_or(true),
    }
}

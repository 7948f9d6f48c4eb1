//! TEMPORARY placeholder (replaced by the content-controls work).
use std::borrow::Cow;

/// A per-call nonce.
#[derive(Debug, Clone)]
pub struct Nonce(String);

impl Nonce {
    /// Generate.
    #[must_use]
    pub fn generate() -> Nonce {
        let mut b = [0u8; 8];
        let _ = getrandom::fill(&mut b);
        Nonce(b.iter().map(|x| format!("{x:02x}")).collect())
    }
    /// As text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Fence content.
#[must_use]
pub fn fence(label: &str, nonce: &Nonce, content: &str) -> String {
    format!(
        "<untrusted-{label} id={n}>\n{content}\n</untrusted-{label} id={n}>",
        n = nonce.as_str()
    )
}

/// Escape for prose.
#[must_use]
pub fn escape_for_prose(name: &str) -> Cow<'_, str> {
    if name.chars().any(char::is_control) {
        Cow::Owned(name.chars().flat_map(char::escape_default).collect())
    } else {
        Cow::Borrowed(name)
    }
}

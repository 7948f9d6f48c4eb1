//! Where in a file a finding sits: a comment, a string literal, Markdown
//! prose, markup, code or data. Derived from the file's extension and a light
//! lexical look at the line, not from a parser: it tells a reader whether the
//! words are addressed to whoever reads the file (prose, a comment) or carried
//! by the program (a string literal, as in a test fixture). Every context is
//! scored the same; the context is evidence, not an excuse.

/// What kind of text a file holds, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Markdown, reStructuredText, plain text.
    Prose,
    /// HTML, XML, SVG.
    Markup,
    /// JSON, YAML, TOML, INI.
    Data,
    /// Source code whose comments start with these markers.
    Code(&'static [&'static str]),
    /// Unknown (no path, or a result holding several files).
    Unknown,
}

const SLASH: &[&str] = &["//", "/*", "*"];
const HASH: &[&str] = &["#"];
const DASH: &[&str] = &["--"];
const ANY: &[&str] = &["//", "/*", "#", "--", "<!--", ";", "*"];

impl Kind {
    /// The kind of the file at `path` (workspace-relative).
    pub(super) fn of(path: Option<&str>) -> Kind {
        let Some(path) = path else {
            return Kind::Unknown;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let lower = name.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
        match ext {
            "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" | "org" | "tex" => Kind::Prose,
            "html" | "htm" | "xml" | "svg" | "xhtml" | "vue" => Kind::Markup,
            "json" | "jsonl" | "toml" | "ini" | "cfg" | "csv" | "yaml" | "yml" => Kind::Data,
            "c" | "h" | "cc" | "cpp" | "hpp" | "cxx" | "rs" | "go" | "java" | "js" | "mjs"
            | "cjs" | "ts" | "tsx" | "jsx" | "cs" | "swift" | "kt" | "kts" | "scala" | "php"
            | "css" | "scss" | "dart" | "zig" | "proto" | "groovy" | "gradle" => Kind::Code(SLASH),
            "py" | "pyi" | "sh" | "bash" | "zsh" | "rb" | "pl" | "pm" | "r" | "cmake" | "conf"
            | "mk" | "nix" | "ps1" | "tcl" | "awk" | "dockerfile" => Kind::Code(HASH),
            "sql" | "lua" | "hs" | "elm" | "ada" | "adb" => Kind::Code(DASH),
            "" if lower.starts_with("readme")
                || lower.starts_with("changelog")
                || lower.starts_with("license")
                || lower.starts_with("copying") =>
            {
                Kind::Prose
            }
            "" if lower == "makefile" || lower == "dockerfile" || lower == "kconfig" => {
                Kind::Code(HASH)
            }
            _ => Kind::Unknown,
        }
    }
}

/// The context of a finding at byte `at` of `line` (one line of the lowered
/// text) in a file of `kind`.
pub(super) fn classify(kind: Kind, line: &str, at: usize) -> &'static str {
    let at = at.min(line.len());
    let trimmed = line.trim_start();
    let lead = line.len() - trimmed.len();
    match kind {
        Kind::Prose => {
            if trimmed.starts_with("<!--") {
                "comment"
            } else {
                "Markdown prose"
            }
        }
        Kind::Markup => {
            if trimmed.starts_with("<!--") || line[..at].contains("<!--") {
                "comment"
            } else {
                "markup"
            }
        }
        Kind::Data => {
            if in_string(&line[..at]) {
                "string literal"
            } else if trimmed.starts_with('#') || trimmed.starts_with(';') {
                "comment"
            } else {
                "data"
            }
        }
        Kind::Code(_) | Kind::Unknown => {
            let markers = match kind {
                Kind::Code(markers) => markers,
                _ => ANY,
            };
            if markers.iter().any(|m| trimmed.starts_with(m)) {
                return "comment";
            }
            // A marker before the finding, outside quotes, opens a trailing
            // comment; otherwise an odd number of quotes before it means it is
            // inside a string.
            let before = &line[lead.min(at)..at];
            let mut quote: Option<u8> = None;
            let bytes = before.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                match quote {
                    Some(_) if b == b'\\' => i += 1,
                    Some(q) if b == q => quote = None,
                    Some(_) => {}
                    None if b == b'"' || b == b'\'' || b == b'`' => quote = Some(b),
                    None if markers.iter().any(|m| bytes[i..].starts_with(m.as_bytes())) => {
                        return "comment";
                    }
                    None => {}
                }
                i += 1;
            }
            if quote.is_some() {
                "string literal"
            } else if matches!(kind, Kind::Unknown) {
                "other"
            } else {
                "code"
            }
        }
    }
}

/// Whether the end of `before` is inside a double-quoted string.
fn in_string(before: &str) -> bool {
    let mut inside = false;
    let mut escaped = false;
    for b in before.bytes() {
        if escaped {
            escaped = false;
        } else if b == b'\\' {
            escaped = true;
        } else if b == b'"' {
            inside = !inside;
        }
    }
    inside
}

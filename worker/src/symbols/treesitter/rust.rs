//! Rust definitions, from the tree-sitter-rust grammar.
//!
//! - `struct`, `enum`, `union`, `trait` → `class`; a trait's body is a scope,
//!   so `Start.start` is the trait's method.
//! - `impl Type` and `impl Trait for Type` are scopes named by the *type*
//!   (its last path segment, without generics or references): a method
//!   `Type::method` is reported `Type.method`, whichever trait it implements.
//!   An outline also lists the block itself (kind `impl`, named by the type,
//!   its header as signature), so its methods show under it; `find_symbol`
//!   does not return it (it defines no name).
//! - `fn` → `method` directly in an `impl` or trait, else `function` (a fn
//!   nested in a fn is `outer.inner`); bodiless trait and `extern` signatures
//!   count too. `macro_rules! name` → `function`.
//! - `const` and `static` items → `variable`, wherever they are (they are
//!   items, not locals); `type` items and associated types → `type`.
//! - `mod name { ... }` extends qualified names; `let` bindings are locals.
//! - A raw identifier `r#type` is reported as `type`.

use moat_protocol::request::SymbolKind;
use tree_sitter::Node;

use super::{Cx, ScopeKind, Step};
use crate::symbols::collapse_whitespace;

/// The Rust rule; see the module docs.
pub(super) fn visit(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    match node.kind() {
        "struct_item" | "enum_item" | "union_item" => {
            if let Some((at, name)) = name_of(cx, node) {
                cx.emit(name, at, None, SymbolKind::Class, |cx| {
                    cx.header_to_field(node, "body")
                });
            }
            Step::Skip
        }
        "trait_item" => {
            let Some((at, name)) = name_of(cx, node) else {
                return Step::Skip;
            };
            cx.emit(name, at, None, SymbolKind::Class, |cx| {
                cx.header_to_field(node, "body")
            });
            Step::Enter(ScopeKind::Impl, name.to_owned())
        }
        "impl_item" => {
            let name = node
                .child_by_field_name("type")
                .map(|t| type_base_name(cx, t))
                .unwrap_or_default();
            // An outline shows the block itself, its methods under it.
            if cx.is_outline() {
                cx.emit(&name, node, None, SymbolKind::Class, |cx| {
                    cx.header_to_field(node, "body")
                });
            }
            Step::Enter(ScopeKind::Impl, name)
        }
        "function_item" | "function_signature_item" => {
            let Some((at, name)) = name_of(cx, node) else {
                return Step::Skip;
            };
            let kind = if cx.scope() == ScopeKind::Impl {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            cx.emit(name, at, None, kind, |cx| cx.header_to_field(node, "body"));
            if node.kind() == "function_item" {
                Step::Enter(ScopeKind::Function, name.to_owned())
            } else {
                Step::Skip
            }
        }
        "const_item" | "static_item" => {
            if let Some((at, name)) = name_of(cx, node) {
                cx.emit(name, at, None, SymbolKind::Variable, |cx| {
                    cx.header_to_field(node, "value")
                });
            }
            Step::Skip
        }
        "type_item" | "associated_type" => {
            if let Some((at, name)) = name_of(cx, node) {
                cx.emit(name, at, None, SymbolKind::Type, |cx| {
                    cx.header(node, node.end_byte())
                });
            }
            Step::Skip
        }
        "mod_item" => match (name_of(cx, node), node.child_by_field_name("body")) {
            (Some((_, name)), Some(_)) => Step::Enter(ScopeKind::Namespace, name.to_owned()),
            _ => Step::Skip,
        },
        "macro_definition" => {
            if let Some((at, name)) = name_of(cx, node) {
                cx.emit(name, at, None, SymbolKind::Function, |_| {
                    format!("macro_rules! {name}")
                });
            }
            Step::Skip
        }
        "line_comment"
        | "block_comment"
        | "attribute_item"
        | "inner_attribute_item"
        | "use_declaration"
        | "extern_crate_declaration"
        | "macro_invocation"
        | "token_tree"
        | "string_literal"
        | "raw_string_literal"
        | "parameters"
        | "type_parameters"
        | "where_clause" => Step::Skip,
        _ => Step::Descend,
    }
}

/// A node's `name` field and its text (raw prefix removed).
fn name_of<'a, 't>(cx: &Cx<'a>, node: Node<'t>) -> Option<(Node<'t>, &'a str)> {
    node.child_by_field_name("name")
        .map(|n| (n, strip_raw(cx.text(n))))
}

/// `r#type` → `type`.
fn strip_raw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

/// The name an `impl` qualifies its items with: `Engine` for `Engine<T>`,
/// `crate::a::Engine`, `&'a Engine`; other types (`[T]`, `(A, B)`,
/// `dyn Trait`) are shown as written.
fn type_base_name(cx: &Cx<'_>, node: Node<'_>) -> String {
    let mut current = node;
    for _ in 0..16 {
        let next = match current.kind() {
            "type_identifier" | "primitive_type" => return strip_raw(cx.text(current)).to_owned(),
            "generic_type" | "reference_type" | "pointer_type" => {
                current.child_by_field_name("type")
            }
            "scoped_type_identifier" => current.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(next) => current = next,
            None => break,
        }
    }
    collapse_whitespace(cx.text(current), 80)
}

#[cfg(test)]
mod tests {
    use moat_protocol::response::SymbolMethod;

    use super::*;
    use crate::symbols::{Language, Query, find_in_source};

    const SNIPPET: &str = r#"//! Engines.
use std::fmt;

/// Most engines.
pub const MAX_ENGINES: usize = 8;
static COUNTER: AtomicUsize = AtomicUsize::new(0);
pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone)]
pub struct Engine<T: Clone> {
    name: String,
    inner: T,
}

pub enum State { Idle, Running(u32) }

pub trait Start: Send {
    type Output;
    fn start(&mut self, name: &str) -> Self::Output;
    fn stop(&mut self) {}
}

impl<T: Clone> Engine<T> {
    pub const DEFAULT_NAME: &'static str = "engine";

    /// Make one.
    pub fn new(name: impl Into<String>, inner: T) -> Self {
        fn normalise(name: String) -> String {
            name.trim().to_owned()
        }
        let local = 1;
        Engine { name: normalise(name.into()), inner }
    }
}

impl<T: Clone> Start for Engine<T> {
    type Output = bool;
    fn start(&mut self, name: &str) -> bool {
        true
    }
}

impl fmt::Display for crate::engines::Engine<u8> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

pub async fn run_all<'a>(
    engines: &'a mut [Engine<u8>], // all of them
    limit: Option<usize>,
) -> Result<()>
where
    'a: 'static,
{
    Ok(())
}

mod tests {
    fn helper() {}
}

macro_rules! engine { ($n:expr) => { Engine::new($n, 0u8) }; }

fn r#type() {}
"#;

    fn all(name: &str) -> Vec<(String, SymbolKind, u64, String)> {
        let found = find_in_source(
            Language::Rust,
            "src/engines.rs",
            SNIPPET,
            &Query {
                name,
                exact: true,
                kind: None,
            },
        );
        assert!(!found.unparseable);
        assert!(
            found
                .definitions
                .iter()
                .all(|d| d.method == SymbolMethod::Parsed && d.language == "rust")
        );
        found
            .definitions
            .into_iter()
            .map(|d| (d.qualified_name, d.kind, d.line, d.signature))
            .collect()
    }

    fn check(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        let got = all(name);
        let got: Vec<(&str, SymbolKind, u64, &str)> = got
            .iter()
            .map(|(q, k, l, s)| (q.as_str(), *k, *l, s.as_str()))
            .collect();
        assert_eq!(got, expected, "{name}");
    }

    #[test]
    fn structs_enums_and_traits_are_classes() {
        check(
            "Engine",
            &[(
                "Engine",
                SymbolKind::Class,
                10,
                "pub struct Engine<T: Clone>",
            )],
        );
        check(
            "State",
            &[("State", SymbolKind::Class, 15, "pub enum State")],
        );
        check(
            "Start",
            &[("Start", SymbolKind::Class, 17, "pub trait Start: Send")],
        );
    }

    #[test]
    fn methods_are_qualified_by_the_implementing_type() {
        check(
            "start",
            &[
                (
                    "Start.start",
                    SymbolKind::Method,
                    19,
                    "fn start(&mut self, name: &str) -> Self::Output",
                ),
                (
                    "Engine.start",
                    SymbolKind::Method,
                    38,
                    "fn start(&mut self, name: &str) -> bool",
                ),
            ],
        );
        check(
            "new",
            &[(
                "Engine.new",
                SymbolKind::Method,
                27,
                "pub fn new(name: impl Into<String>, inner: T) -> Self",
            )],
        );
        check(
            "fmt",
            &[(
                "Engine.fmt",
                SymbolKind::Method,
                44,
                "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result",
            )],
        );
        check(
            "stop",
            &[("Start.stop", SymbolKind::Method, 20, "fn stop(&mut self)")],
        );
    }

    #[test]
    fn free_and_nested_functions_are_functions() {
        check(
            "run_all",
            &[(
                "run_all",
                SymbolKind::Function,
                49,
                "pub async fn run_all<'a>(engines: &'a mut [Engine<u8>], limit: Option<usize>,) -> Result<()> where 'a: 'static",
            )],
        );
        check(
            "normalise",
            &[(
                "Engine.new.normalise",
                SymbolKind::Function,
                28,
                "fn normalise(name: String) -> String",
            )],
        );
        check(
            "helper",
            &[("tests.helper", SymbolKind::Function, 60, "fn helper()")],
        );
        check(
            "engine",
            &[("engine", SymbolKind::Function, 63, "macro_rules! engine")],
        );
        check("type", &[("type", SymbolKind::Function, 65, "fn r#type()")]);
    }

    #[test]
    fn consts_and_statics_are_variables_and_lets_are_not() {
        check(
            "MAX_ENGINES",
            &[(
                "MAX_ENGINES",
                SymbolKind::Variable,
                5,
                "pub const MAX_ENGINES: usize",
            )],
        );
        check(
            "COUNTER",
            &[(
                "COUNTER",
                SymbolKind::Variable,
                6,
                "static COUNTER: AtomicUsize",
            )],
        );
        check(
            "DEFAULT_NAME",
            &[(
                "Engine.DEFAULT_NAME",
                SymbolKind::Variable,
                24,
                "pub const DEFAULT_NAME: &'static str",
            )],
        );
        check("local", &[]);
        check("name", &[]);
    }

    #[test]
    fn type_aliases_and_associated_types_are_types() {
        check(
            "Result",
            &[(
                "Result",
                SymbolKind::Type,
                7,
                "pub type Result<T> = std::result::Result<T, Error>",
            )],
        );
        check(
            "Output",
            &[
                ("Start.Output", SymbolKind::Type, 18, "type Output"),
                ("Engine.Output", SymbolKind::Type, 37, "type Output = bool"),
            ],
        );
    }
}

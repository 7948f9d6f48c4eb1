//! Go definitions, from the tree-sitter-go grammar.
//!
//! - `func F` → `function`; `func (r *T) M` → `method` qualified `T.M` by
//!   the receiver's base type (pointer and type arguments removed).
//! - `type T struct` and `type T interface` → `class` (an interface's method
//!   list → `method`, qualified `T.M`); any other `type T ...` and aliases
//!   `type T = ...` → `type`. Types declared inside a function are reported,
//!   qualified by the function.
//! - Package-level `const` and `var` names → `variable`, one per name (a
//!   spec may declare several); those inside functions are locals.
//! - Go has no named nested functions: a closure `f := func() {...}` is a
//!   local, not a definition.

use moat_protocol::request::SymbolKind;
use tree_sitter::Node;

use super::{Cx, ScopeKind, Step, field_children};

/// The Go rule; see the module docs.
pub(super) fn visit(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    match node.kind() {
        "function_declaration" => {
            let Some(at) = node.child_by_field_name("name") else {
                return Step::Skip;
            };
            let name = cx.text(at);
            cx.emit(name, at, None, SymbolKind::Function, |cx| {
                cx.header_to_field(node, "body")
            });
            Step::Enter(ScopeKind::Function, name.to_owned())
        }
        "method_declaration" => {
            let Some(at) = node.child_by_field_name("name") else {
                return Step::Skip;
            };
            let name = cx.text(at);
            let receiver = node
                .child_by_field_name("receiver")
                .map_or("", |r| receiver_type(cx, r));
            cx.emit(name, at, Some(receiver), SymbolKind::Method, |cx| {
                cx.header_to_field(node, "body")
            });
            let scope = if receiver.is_empty() {
                name.to_owned()
            } else {
                format!("{receiver}.{name}")
            };
            Step::Enter(ScopeKind::Function, scope)
        }
        "type_spec" => type_spec(node, cx),
        "type_alias" => {
            if let Some(at) = node.child_by_field_name("name") {
                let name = cx.text(at);
                cx.emit(name, at, None, SymbolKind::Type, |cx| {
                    format!("type {}", cx.snippet(node, node.end_byte()))
                });
            }
            Step::Skip
        }
        "method_elem" | "method_spec" => {
            if cx.scope() == ScopeKind::Class
                && let Some(at) = node.child_by_field_name("name")
            {
                let name = cx.text(at);
                cx.emit(name, at, None, SymbolKind::Method, |cx| {
                    cx.snippet(node, node.end_byte())
                });
            }
            Step::Skip
        }
        "const_declaration" | "var_declaration" | "var_spec_list" => {
            if cx.scope() == ScopeKind::File {
                Step::Descend
            } else {
                Step::Skip
            }
        }
        "const_spec" | "var_spec" => {
            let keyword = if node.kind() == "const_spec" {
                "const"
            } else {
                "var"
            };
            for at in field_children(node, "name") {
                let name = cx.text(at);
                cx.emit(name, at, None, SymbolKind::Variable, |cx| {
                    format!("{keyword} {}", cx.header_to_field(node, "value"))
                });
            }
            Step::Skip
        }
        "comment" | "package_clause" | "import_declaration" | "parameter_list" => Step::Skip,
        _ => Step::Descend,
    }
}

/// `type T struct {...}`, `type T interface {...}`, `type T U`.
fn type_spec(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    let Some(at) = node.child_by_field_name("name") else {
        return Step::Skip;
    };
    let name = cx.text(at);
    let ty = node.child_by_field_name("type");
    match ty.map(|t| t.kind()) {
        Some("struct_type" | "interface_type") => {
            let is_interface = ty.is_some_and(|t| t.kind() == "interface_type");
            // The header stops at the type's `{`.
            let end = ty.and_then(|t| open_brace(t)).unwrap_or(node.end_byte());
            cx.emit(name, at, None, SymbolKind::Class, |cx| {
                format!("type {}", cx.snippet(node, end))
            });
            if is_interface {
                Step::Enter(ScopeKind::Class, name.to_owned())
            } else {
                Step::Skip
            }
        }
        _ => {
            cx.emit(name, at, None, SymbolKind::Type, |cx| {
                format!("type {}", cx.snippet(node, node.end_byte()))
            });
            Step::Skip
        }
    }
}

/// Byte offset of the `{` opening a struct or interface type.
fn open_brace(ty: Node<'_>) -> Option<usize> {
    let mut cursor = ty.walk();
    let children: Vec<Node<'_>> = ty.children(&mut cursor).collect();
    children.into_iter().find_map(|c| match c.kind() {
        "{" => Some(c.start_byte()),
        "field_declaration_list" => Some(c.start_byte()),
        _ => None,
    })
}

/// The receiver's base type name: `T` for `(t *T)`, `(T)`, `(t *T[K, V])`.
fn receiver_type<'a>(cx: &Cx<'a>, receiver: Node<'_>) -> &'a str {
    let Some(mut current) = receiver
        .named_child(0)
        .and_then(|p| p.child_by_field_name("type"))
    else {
        return "";
    };
    for _ in 0..16 {
        let next = match current.kind() {
            "type_identifier" => return cx.text(current),
            "generic_type" => current.child_by_field_name("type"),
            "pointer_type" | "parenthesized_type" => current.named_child(0),
            "qualified_type" => current.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(next) => current = next,
            None => break,
        }
    }
    cx.text(current)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::symbols::Language;

    const SNIPPET: &str = r#"// Package engine runs things.
package engine

import (
	"context"
	"errors"
)

// MaxWorkers bounds the pool.
const MaxWorkers = 8

const (
	modeFast, modeSlow Mode = 1, 2
)

var (
	ErrStopped  = errors.New("stopped")
	defaultName string
)

type Mode int

type Handler = func(ctx context.Context) error

type Engine[T any] struct {
	name  string
	items []T
}

type Runner interface {
	Run(ctx context.Context) error
	Stop()
}

func (e *Engine[T]) Run(ctx context.Context) error {
	done := func() bool { return true }
	type result struct{ err error }
	_ = done
	return nil
}

func (e Engine[T]) Stop() {}

// New makes an engine.
func New[T any](name string, items ...T) *Engine[T] {
	var local = 1
	_ = local
	return &Engine[T]{name: name, items: items}
}
"#;

    fn check(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        crate::symbols::testutil::assert_parsed(
            Language::Go,
            "engine/engine.go",
            SNIPPET,
            name,
            expected,
        );
    }

    #[test]
    fn structs_and_interfaces_are_classes() {
        check(
            "Engine",
            &[("Engine", SymbolKind::Class, 25, "type Engine[T any] struct")],
        );
        check(
            "Runner",
            &[("Runner", SymbolKind::Class, 30, "type Runner interface")],
        );
        check(
            "result",
            &[(
                "Engine.Run.result",
                SymbolKind::Class,
                37,
                "type result struct",
            )],
        );
    }

    #[test]
    fn methods_are_qualified_by_their_receiver_type() {
        check(
            "Run",
            &[
                (
                    "Runner.Run",
                    SymbolKind::Method,
                    31,
                    "Run(ctx context.Context) error",
                ),
                (
                    "Engine.Run",
                    SymbolKind::Method,
                    35,
                    "func (e *Engine[T]) Run(ctx context.Context) error",
                ),
            ],
        );
        check(
            "Stop",
            &[
                ("Runner.Stop", SymbolKind::Method, 32, "Stop()"),
                (
                    "Engine.Stop",
                    SymbolKind::Method,
                    42,
                    "func (e Engine[T]) Stop()",
                ),
            ],
        );
    }

    #[test]
    fn functions_are_functions_and_closures_are_not_definitions() {
        check(
            "New",
            &[(
                "New",
                SymbolKind::Function,
                45,
                "func New[T any](name string, items ...T) *Engine[T]",
            )],
        );
        check("done", &[]);
    }

    #[test]
    fn package_level_consts_and_vars_are_variables_and_locals_are_not() {
        check(
            "MaxWorkers",
            &[("MaxWorkers", SymbolKind::Variable, 10, "const MaxWorkers")],
        );
        check(
            "modeSlow",
            &[(
                "modeSlow",
                SymbolKind::Variable,
                13,
                "const modeFast, modeSlow Mode",
            )],
        );
        check(
            "ErrStopped",
            &[("ErrStopped", SymbolKind::Variable, 17, "var ErrStopped")],
        );
        check(
            "defaultName",
            &[(
                "defaultName",
                SymbolKind::Variable,
                18,
                "var defaultName string",
            )],
        );
        check("local", &[]);
    }

    #[test]
    fn other_type_definitions_and_aliases_are_types() {
        check("Mode", &[("Mode", SymbolKind::Type, 21, "type Mode int")]);
        check(
            "Handler",
            &[(
                "Handler",
                SymbolKind::Type,
                23,
                "type Handler = func(ctx context.Context) error",
            )],
        );
    }
}

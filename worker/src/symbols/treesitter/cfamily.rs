//! C and C++ definitions, from the tree-sitter-c and tree-sitter-cpp
//! grammars (C++ is close to a superset, so one rule reads both).
//!
//! - `struct`, `union`, `enum` and `class` specifiers *with a body* →
//!   `class` (a bare `struct x *p` is a use, not a definition); their bodies
//!   are scopes.
//! - Function definitions → `function`, or `method` inside a class body or
//!   when qualified out of class (`void Engine::step() {}` is
//!   `Engine.step`: the grammar cannot tell a class from a namespace there,
//!   so a qualified definition counts as a method). Member functions
//!   *declared* in a class body are reported as methods too; file-level
//!   prototypes are not (they only repeat a definition).
//! - Variables at file or namespace level (not `extern`) and `static` data
//!   members → `variable`; instance members and locals are not reported.
//! - `typedef` and `using X = ...` → `type`; object-like `#define` →
//!   `variable`, function-like `#define F(x)` → `function`.
//! - `namespace a::b` qualifies what is in it (`a.b.Engine`); an anonymous
//!   namespace adds nothing. Signatures keep a `template <...>` prefix and
//!   show typedef bodies as `{...}`. Enumerators are not reported.

use moat_protocol::request::SymbolKind;
use tree_sitter::Node;

use super::{Cx, ScopeKind, Step, field_children, named_children};
use crate::symbols::collapse_whitespace;

/// The C/C++ rule; see the module docs.
pub(super) fn visit(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    match node.kind() {
        "function_definition" => function_definition(node, cx),
        "declaration" | "field_declaration" => {
            declaration(node, cx);
            // The type may define a struct; initialisers may hold lambdas.
            Step::Descend
        }
        "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier" => {
            specifier(node, cx)
        }
        "type_definition" => {
            for declarator in field_children(node, "declarator") {
                if let Some(found) = declarator_name(cx, declarator) {
                    cx.emit(&found.name, found.at, None, SymbolKind::Type, |cx| {
                        cx.header(node, node.end_byte())
                    });
                }
            }
            Step::Descend
        }
        "alias_declaration" => {
            if let Some(at) = node.child_by_field_name("name") {
                cx.emit(cx.text(at), at, None, SymbolKind::Type, |cx| {
                    cx.header(node, node.end_byte())
                });
            }
            Step::Skip
        }
        "namespace_definition" => {
            let name = cx
                .field_text(node, "name")
                .map(|n| collapse_whitespace(n, 200).replace("::", "."));
            Step::Enter(ScopeKind::Namespace, name.unwrap_or_default())
        }
        "template_declaration" => Step::Wrap,
        "preproc_def" => {
            if let Some(at) = node.child_by_field_name("name") {
                cx.emit(cx.text(at), at, None, SymbolKind::Variable, |cx| {
                    cx.snippet(node, node.end_byte())
                });
            }
            Step::Skip
        }
        "preproc_function_def" => {
            if let Some(at) = node.child_by_field_name("name") {
                cx.emit(cx.text(at), at, None, SymbolKind::Function, |cx| {
                    cx.header_to_field(node, "value")
                });
            }
            Step::Skip
        }
        "lambda_expression" => Step::Enter(ScopeKind::Function, String::new()),
        "comment"
        | "preproc_include"
        | "preproc_call"
        | "string_literal"
        | "raw_string_literal"
        | "parameter_list"
        | "template_parameter_list"
        | "enumerator_list"
        | "field_initializer_list" => Step::Skip,
        _ => Step::Descend,
    }
}

fn function_definition(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    let Some(found) = node
        .child_by_field_name("declarator")
        .and_then(|d| declarator_name(cx, d))
    else {
        return Step::Enter(ScopeKind::Function, String::new());
    };
    let prefix = found.scope.join(".");
    let kind = if cx.scope() == ScopeKind::Class || !prefix.is_empty() {
        SymbolKind::Method
    } else {
        SymbolKind::Function
    };
    cx.emit(&found.name, found.at, Some(&prefix), kind, |cx| {
        cx.header_to_field(node, "body")
    });
    let scope = if prefix.is_empty() {
        found.name
    } else {
        format!("{prefix}.{}", found.name)
    };
    Step::Enter(ScopeKind::Function, scope)
}

/// Member function declarations in a class; variables at file or namespace
/// level and `static` members.
fn declaration(node: Node<'_>, cx: &mut Cx<'_>) {
    let in_class = cx.scope() == ScopeKind::Class;
    let top_level = cx.at_top_level();
    if !in_class && !top_level {
        return;
    }
    let storage: Vec<&str> = named_children(node)
        .into_iter()
        .filter(|c| c.kind() == "storage_class_specifier")
        .map(|c| cx.text(c))
        .collect();
    let is_static = storage.contains(&"static");
    let is_extern = storage.contains(&"extern");
    let declarators = field_children(node, "declarator");
    let Some(first) = declarators.first() else {
        return;
    };
    let type_end = first.start_byte();
    for declarator in &declarators {
        let Some(found) = declarator_name(cx, *declarator) else {
            continue;
        };
        let prefix = found.scope.join(".");
        if found.is_function {
            if in_class {
                cx.emit(
                    &found.name,
                    found.at,
                    Some(&prefix),
                    SymbolKind::Method,
                    |cx| cx.header(node, node.end_byte()),
                );
            }
        } else if (in_class && is_static) || (top_level && !is_extern) {
            cx.emit(
                &found.name,
                found.at,
                Some(&prefix),
                SymbolKind::Variable,
                |cx| {
                    let value = declarator
                        .child_by_field_name("value")
                        .filter(|_| declarator.kind() == "init_declarator");
                    let end = value.map_or(declarator.end_byte(), |v| v.start_byte());
                    format!(
                        "{} {}",
                        cx.header(node, type_end),
                        cx.snippet(*declarator, end)
                    )
                },
            );
        }
    }
}

/// A struct, class, union or enum specifier.
fn specifier(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    let Some(body) = node.child_by_field_name("body") else {
        return Step::Skip;
    };
    let Some(found) = node
        .child_by_field_name("name")
        .and_then(|n| declarator_name(cx, n))
    else {
        return Step::Enter(ScopeKind::Class, String::new());
    };
    let prefix = found.scope.join(".");
    cx.emit(
        &found.name,
        found.at,
        Some(&prefix),
        SymbolKind::Class,
        |cx| cx.header(node, body.start_byte()),
    );
    if node.kind() == "enum_specifier" {
        return Step::Skip;
    }
    let scope = if prefix.is_empty() {
        found.name
    } else {
        format!("{prefix}.{}", found.name)
    };
    Step::Enter(ScopeKind::Class, scope)
}

/// The name a declarator declares.
struct Declared<'t> {
    /// The name's node (its line is the definition's).
    at: Node<'t>,
    /// The name, whitespace collapsed (`operator==`, `~Engine`).
    name: String,
    /// Qualifiers written before it (`Engine` in `Engine<T>::step`).
    scope: Vec<String>,
    /// The innermost declarator around the name is a function declarator:
    /// `char *f(void)` declares a function, `int (*f)(void)` a pointer.
    is_function: bool,
}

/// Unwrap pointer, reference, array, function and qualified declarators
/// down to the declared name (at most 32 levels).
fn declarator_name<'t>(cx: &Cx<'_>, node: Node<'t>) -> Option<Declared<'t>> {
    let mut current = node;
    let mut is_function = false;
    let mut scope = Vec::new();
    for _ in 0..32 {
        let next = match current.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "operator_name"
            | "destructor_name" => {
                let name = collapse_whitespace(cx.text(current), 200);
                return Some(Declared {
                    at: current,
                    name,
                    scope,
                    is_function,
                });
            }
            "function_declarator" => {
                is_function = true;
                current.child_by_field_name("declarator")
            }
            "init_declarator" => current.child_by_field_name("declarator"),
            "pointer_declarator"
            | "reference_declarator"
            | "array_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                is_function = false;
                current
                    .child_by_field_name("declarator")
                    .or_else(|| current.named_child(0))
            }
            "qualified_identifier" => {
                if let Some(qualifier) = current.child_by_field_name("scope") {
                    scope.push(scope_name(cx, qualifier));
                }
                current.child_by_field_name("name")
            }
            "template_function" | "template_type" => current.child_by_field_name("name"),
            _ => None,
        };
        current = next?;
    }
    None
}

/// `Engine` for `Engine<T>`, as written otherwise.
fn scope_name(cx: &Cx<'_>, node: Node<'_>) -> String {
    let node = if node.kind() == "template_type" {
        node.child_by_field_name("name").unwrap_or(node)
    } else {
        node
    };
    collapse_whitespace(cx.text(node), 200)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::symbols::Language;

    const CPP: &str = r#"#include <string>
#define ENGINE_VERSION 3
#define SQUARE(x) ((x) * (x))

namespace app::core {

constexpr int kMaxWorkers = 8;
using JobId = long;
typedef void (*Callback)(int status);

template <typename T>
class Engine : public Base {
public:
    explicit Engine(std::string name);
    ~Engine() {}
    virtual void run() = 0;
    static int instances;
    int size;

    bool operator==(const Engine& other) const { return true; }

    struct Options {
        int retries;
    };

private:
    void step();
};

template <typename T>
void Engine<T>::step() {
    auto helper = [](int n) { return n; };
    helper(1);
}

int Engine<int>::instances = 0;

static std::string describe(const Engine<int>& engine, int verbosity = 0) {
    struct Local { int n; };
    return "";
}

enum class State { Idle, Running };

}  // namespace app::core

namespace {
int hidden_counter = 0;
}

extern "C" int c_entry(void) { return 0; }
"#;

    const C: &str = r#"#include <stdio.h>

#define BUFFER_SIZE 4096

static const int default_limit = 3, *limit_ptr;
extern int shared_counter;
int prototype_only(int a);

typedef struct node {
    int value;
    struct node *next;
} node_t;

typedef int (*compare_fn)(const void *, const void *);

struct point { int x, y; };

union number { int i; float f; };

enum color { RED, GREEN };

/* make_name(void) is documented here */
static char *
make_name(const char *prefix, ...)
{
    int local = 0;
    return NULL;
}

#ifdef DEBUG
void debug_dump(const node_t *head) {}
#endif
"#;

    fn check(lang: Language, source: &str, name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        crate::symbols::testutil::assert_parsed(lang, "src/engine.x", source, name, expected);
    }

    fn cpp(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        check(Language::Cpp, CPP, name, expected);
    }

    fn c(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        check(Language::C, C, name, expected);
    }

    #[test]
    fn cpp_classes_are_qualified_by_namespace_and_class() {
        cpp(
            "Engine",
            &[
                (
                    "app.core.Engine",
                    SymbolKind::Class,
                    12,
                    "template <typename T> class Engine : public Base",
                ),
                (
                    "app.core.Engine.Engine",
                    SymbolKind::Method,
                    14,
                    "explicit Engine(std::string name)",
                ),
            ],
        );
        cpp(
            "Options",
            &[(
                "app.core.Engine.Options",
                SymbolKind::Class,
                22,
                "struct Options",
            )],
        );
        cpp(
            "State",
            &[("app.core.State", SymbolKind::Class, 43, "enum class State")],
        );
        cpp(
            "Local",
            &[(
                "app.core.describe.Local",
                SymbolKind::Class,
                39,
                "struct Local",
            )],
        );
    }

    #[test]
    fn cpp_member_functions_declared_and_defined() {
        cpp(
            "~Engine",
            &[(
                "app.core.Engine.~Engine",
                SymbolKind::Method,
                15,
                "~Engine()",
            )],
        );
        cpp(
            "run",
            &[(
                "app.core.Engine.run",
                SymbolKind::Method,
                16,
                "virtual void run() = 0",
            )],
        );
        cpp(
            "operator==",
            &[(
                "app.core.Engine.operator==",
                SymbolKind::Method,
                20,
                "bool operator==(const Engine& other) const",
            )],
        );
        cpp(
            "step",
            &[
                (
                    "app.core.Engine.step",
                    SymbolKind::Method,
                    27,
                    "void step()",
                ),
                (
                    "app.core.Engine.step",
                    SymbolKind::Method,
                    31,
                    "template <typename T> void Engine<T>::step()",
                ),
            ],
        );
    }

    #[test]
    fn cpp_free_functions_and_locals() {
        cpp(
            "describe",
            &[(
                "app.core.describe",
                SymbolKind::Function,
                38,
                "static std::string describe(const Engine<int>& engine, int verbosity = 0)",
            )],
        );
        cpp(
            "c_entry",
            &[("c_entry", SymbolKind::Function, 51, "int c_entry(void)")],
        );
        cpp("helper", &[]);
    }

    #[test]
    fn cpp_variables_types_and_macros() {
        cpp(
            "kMaxWorkers",
            &[(
                "app.core.kMaxWorkers",
                SymbolKind::Variable,
                7,
                "constexpr int kMaxWorkers",
            )],
        );
        cpp(
            "instances",
            &[
                (
                    "app.core.Engine.instances",
                    SymbolKind::Variable,
                    17,
                    "static int instances",
                ),
                (
                    "app.core.Engine.instances",
                    SymbolKind::Variable,
                    36,
                    "int Engine<int>::instances",
                ),
            ],
        );
        cpp(
            "hidden_counter",
            &[(
                "hidden_counter",
                SymbolKind::Variable,
                48,
                "int hidden_counter",
            )],
        );
        cpp("size", &[]);
        cpp(
            "JobId",
            &[("app.core.JobId", SymbolKind::Type, 8, "using JobId = long")],
        );
        cpp(
            "Callback",
            &[(
                "app.core.Callback",
                SymbolKind::Type,
                9,
                "typedef void (*Callback)(int status)",
            )],
        );
        cpp(
            "ENGINE_VERSION",
            &[(
                "ENGINE_VERSION",
                SymbolKind::Variable,
                2,
                "#define ENGINE_VERSION 3",
            )],
        );
        cpp(
            "SQUARE",
            &[("SQUARE", SymbolKind::Function, 3, "#define SQUARE(x)")],
        );
    }

    #[test]
    fn c_structs_typedefs_and_functions() {
        c("node", &[("node", SymbolKind::Class, 9, "struct node")]);
        c(
            "node_t",
            &[(
                "node_t",
                SymbolKind::Type,
                12,
                "typedef struct node {...} node_t",
            )],
        );
        c(
            "compare_fn",
            &[(
                "compare_fn",
                SymbolKind::Type,
                14,
                "typedef int (*compare_fn)(const void *, const void *)",
            )],
        );
        c("point", &[("point", SymbolKind::Class, 16, "struct point")]);
        c(
            "number",
            &[("number", SymbolKind::Class, 18, "union number")],
        );
        c("color", &[("color", SymbolKind::Class, 20, "enum color")]);
        c(
            "make_name",
            &[(
                "make_name",
                SymbolKind::Function,
                24,
                "static char * make_name(const char *prefix, ...)",
            )],
        );
        c(
            "debug_dump",
            &[(
                "debug_dump",
                SymbolKind::Function,
                31,
                "void debug_dump(const node_t *head)",
            )],
        );
    }

    #[test]
    fn c_variables_and_what_is_not_a_definition() {
        c(
            "BUFFER_SIZE",
            &[(
                "BUFFER_SIZE",
                SymbolKind::Variable,
                3,
                "#define BUFFER_SIZE 4096",
            )],
        );
        c(
            "default_limit",
            &[(
                "default_limit",
                SymbolKind::Variable,
                5,
                "static const int default_limit",
            )],
        );
        c(
            "limit_ptr",
            &[(
                "limit_ptr",
                SymbolKind::Variable,
                5,
                "static const int *limit_ptr",
            )],
        );
        c("shared_counter", &[]);
        c("prototype_only", &[]);
        c("local", &[]);
        c("RED", &[]);
        c("value", &[]);
    }
}

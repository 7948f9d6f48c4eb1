//! Python definitions, from the tree-sitter-python grammar.
//!
//! - `class X` → `class`; its body is a class scope.
//! - `def`/`async def` → `method` when directly in a class body, else
//!   `function` (a function nested in a function is a `function` qualified
//!   `outer.inner`). The signature is the whole
//!   header as written: `async def f(a, *args, b: int = 1, **kw) -> str`,
//!   comments dropped, whitespace collapsed.
//! - An assignment or annotated assignment to a bare name at module level or
//!   in a class body → `variable` (`Engine.x` for a class attribute),
//!   signature `X = ...` or `X: T = ...` (values are not shown). Each target
//!   of a chain `a = b = 1` counts; tuple, attribute, subscript and augmented
//!   targets do not; function locals are not definitions.
//! - `type X = ...` and `X: TypeAlias = ...` → `type`.
//! - `if`, `try`, `with`, `for`, `while`, `match` and decorators are looked
//!   through with the same qualifier: they do not open a scope.

use moat_protocol::limits::SIGNATURE_CHARS;
use moat_protocol::request::SymbolKind;
use tree_sitter::Node;

use super::{Cx, ScopeKind, Step, named_children};
use crate::symbols::collapse_whitespace;

/// The Python rule; see the module docs.
pub(super) fn visit(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    match node.kind() {
        "class_definition" => {
            let Some(name_node) = node.child_by_field_name("name") else {
                return Step::Skip;
            };
            let name = cx.text(name_node);
            cx.emit(name, name_node, None, SymbolKind::Class, |cx| {
                cx.header_to_field(node, "body")
            });
            Step::Enter(ScopeKind::Class, name.to_owned())
        }
        "function_definition" => {
            let Some(name_node) = node.child_by_field_name("name") else {
                return Step::Skip;
            };
            let name = cx.text(name_node);
            let kind = if cx.scope() == ScopeKind::Class {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            cx.emit(name, name_node, None, kind, |cx| {
                cx.header_to_field(node, "body")
            });
            Step::Enter(ScopeKind::Function, name.to_owned())
        }
        "expression_statement" => {
            if matches!(cx.scope(), ScopeKind::File | ScopeKind::Class) {
                for child in named_children(node) {
                    assignment(child, cx);
                }
            }
            // Expressions hold no definitions (a lambda has no name).
            Step::Skip
        }
        "type_alias_statement" => {
            if let Some(name_node) = node.child_by_field_name("left").and_then(first_identifier) {
                let name = cx.text(name_node);
                cx.emit(name, name_node, None, SymbolKind::Type, |cx| {
                    cx.snippet(node, node.end_byte())
                });
            }
            Step::Skip
        }
        "comment"
        | "import_statement"
        | "import_from_statement"
        | "future_import_statement"
        | "return_statement"
        | "pass_statement"
        | "break_statement"
        | "continue_statement"
        | "raise_statement"
        | "assert_statement"
        | "delete_statement"
        | "global_statement"
        | "nonlocal_statement"
        | "print_statement"
        | "exec_statement"
        | "decorator"
        | "parameters"
        | "argument_list" => Step::Skip,
        _ => Step::Descend,
    }
}

/// Emit the bare-name targets of an assignment chain `a = b: T = value`.
fn assignment(node: Node<'_>, cx: &mut Cx<'_>) {
    let mut current = Some(node);
    while let Some(assign) = current.filter(|n| n.kind() == "assignment") {
        if let Some(left) = assign
            .child_by_field_name("left")
            .filter(|l| l.kind() == "identifier")
        {
            let name = cx.text(left);
            let annotation = cx
                .field_text(assign, "type")
                .map(|t| collapse_whitespace(t, SIGNATURE_CHARS));
            let has_value = assign.child_by_field_name("right").is_some();
            let kind = match annotation.as_deref() {
                Some(a) if a == "TypeAlias" || a.ends_with(".TypeAlias") => SymbolKind::Type,
                _ => SymbolKind::Variable,
            };
            cx.emit(name, left, None, kind, |_| match (&annotation, has_value) {
                (Some(a), true) => format!("{name}: {a} = ..."),
                (Some(a), false) => format!("{name}: {a}"),
                (None, _) => format!("{name} = ..."),
            });
        }
        current = assign.child_by_field_name("right");
    }
}

/// The first identifier at or under `node` (`Alias` in `Alias[T]`), looking
/// a few levels down only.
fn first_identifier(node: Node<'_>) -> Option<Node<'_>> {
    let mut current = node;
    for _ in 0..8 {
        if current.kind() == "identifier" {
            return Some(current);
        }
        current = current.named_child(0)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use moat_protocol::response::{Definition, SymbolMethod};

    use super::*;
    use crate::symbols::{FileDefinitions, Language, Query, find_in_source};

    const SNIPPET: &str = r#""""Jobs."""
from typing import TypeAlias

MAX_RETRIES: int = 3
JobId: TypeAlias = int
type Callback[T] = Callable[[T], None]
first = second = "x"
a, b = 1, 2


class Runner(Base, metaclass=Meta):
    """Runs jobs."""

    default_timeout = 30

    def __init__(self, name: str, *args, retries: int = MAX_RETRIES, **options) -> None:
        local = 1
        self.name = name

    @property
    async def status(
        self,  # always first
        *,
        verbose: bool = False,
    ) -> "Status":
        def describe(value):
            return str(value)
        return describe(self)

    class Config:
        def load(self): ...


def schedule(runner: Runner, /, when: float, *jobs: "Job", **kw: Any) -> list[JobId]:
    def retry(job):
        def backoff(n):
            return 2 ** n
        return backoff
    return []


try:
    import fast
except ImportError:
    def fast_path(x):
        return x
"#;

    fn find(name: &str) -> FileDefinitions {
        find_in_source(
            Language::Python,
            "jobs.py",
            SNIPPET,
            &Query {
                name,
                exact: true,
                kind: None,
            },
        )
    }

    fn one(name: &str) -> Definition {
        let found = find(name);
        assert!(!found.unparseable);
        assert_eq!(
            found.definitions.len(),
            1,
            "{name}: {:?}",
            found.definitions
        );
        let definition = found.definitions.into_iter().next().expect("one");
        assert_eq!(definition.method, SymbolMethod::Parsed);
        assert_eq!(definition.language, "python");
        definition
    }

    fn check(name: &str, qualified: &str, kind: SymbolKind, line: u64, signature: &str) {
        let d = one(name);
        assert_eq!(
            (
                d.qualified_name.as_str(),
                d.kind,
                d.line,
                d.signature.as_str()
            ),
            (qualified, kind, line, signature),
            "{name}"
        );
    }

    #[test]
    fn a_class_and_its_header() {
        check(
            "Runner",
            "Runner",
            SymbolKind::Class,
            11,
            "class Runner(Base, metaclass=Meta)",
        );
        check(
            "Config",
            "Runner.Config",
            SymbolKind::Class,
            30,
            "class Config",
        );
    }

    #[test]
    fn methods_show_the_full_parameter_list() {
        check(
            "__init__",
            "Runner.__init__",
            SymbolKind::Method,
            16,
            "def __init__(self, name: str, *args, retries: int = MAX_RETRIES, **options) -> None",
        );
        check(
            "status",
            "Runner.status",
            SymbolKind::Method,
            21,
            "async def status(self, *, verbose: bool = False,) -> \"Status\"",
        );
        check(
            "load",
            "Runner.Config.load",
            SymbolKind::Method,
            31,
            "def load(self)",
        );
    }

    #[test]
    fn free_and_nested_functions_are_functions() {
        check(
            "schedule",
            "schedule",
            SymbolKind::Function,
            34,
            "def schedule(runner: Runner, /, when: float, *jobs: \"Job\", **kw: Any) -> list[JobId]",
        );
        check(
            "retry",
            "schedule.retry",
            SymbolKind::Function,
            35,
            "def retry(job)",
        );
        check(
            "backoff",
            "schedule.retry.backoff",
            SymbolKind::Function,
            36,
            "def backoff(n)",
        );
        check(
            "describe",
            "Runner.status.describe",
            SymbolKind::Function,
            26,
            "def describe(value)",
        );
        check(
            "fast_path",
            "fast_path",
            SymbolKind::Function,
            45,
            "def fast_path(x)",
        );
    }

    #[test]
    fn module_and_class_assignments_are_variables_and_locals_are_not() {
        check(
            "MAX_RETRIES",
            "MAX_RETRIES",
            SymbolKind::Variable,
            4,
            "MAX_RETRIES: int = ...",
        );
        check(
            "default_timeout",
            "Runner.default_timeout",
            SymbolKind::Variable,
            14,
            "default_timeout = ...",
        );
        check("first", "first", SymbolKind::Variable, 7, "first = ...");
        check("second", "second", SymbolKind::Variable, 7, "second = ...");
        assert!(find("local").definitions.is_empty());
        assert!(
            find("a").definitions.is_empty(),
            "tuple targets are not reported"
        );
        assert!(
            find("name").definitions.is_empty(),
            "attribute targets are not reported"
        );
    }

    #[test]
    fn type_aliases_are_types() {
        check(
            "JobId",
            "JobId",
            SymbolKind::Type,
            5,
            "JobId: TypeAlias = ...",
        );
        check(
            "Callback",
            "Callback",
            SymbolKind::Type,
            6,
            "type Callback[T] = Callable[[T], None]",
        );
    }

    #[test]
    fn imports_and_calls_are_not_definitions() {
        assert!(find("TypeAlias").definitions.is_empty());
        assert!(find("fast").definitions.is_empty());
        assert!(find("str").definitions.is_empty());
    }

    #[test]
    fn a_long_signature_is_cut_at_160_characters() {
        let params: Vec<String> = (0..40)
            .map(|i| format!("parameter_{i}: int = {i}"))
            .collect();
        let source = format!("def long_one({}):\n    pass\n", params.join(", "));
        let q = Query {
            name: "long_one",
            exact: true,
            kind: None,
        };
        let found = find_in_source(Language::Python, "l.py", &source, &q);
        let signature = &found.definitions[0].signature;
        assert_eq!(signature.chars().count(), SIGNATURE_CHARS);
        assert!(signature.starts_with("def long_one(parameter_0: int = 0, parameter_1"));
    }

    #[test]
    fn a_syntax_error_leaves_the_definitions_before_it_parsed() {
        let q = Query {
            name: "main",
            exact: true,
            kind: None,
        };
        let source = "def main():\n    return 1\n\nvalues = [1, 2\n\ndef other():\n    pass\n";
        let found = find_in_source(Language::Python, "bad.py", source, &q);
        assert!(!found.unparseable);
        assert_eq!(found.definitions.len(), 1);
        assert_eq!(found.definitions[0].method, SymbolMethod::Partial);
        // The grammar accepts Python 2 statements; they are not errors.
        let old = find_in_source(
            Language::Python,
            "old.py",
            "def main():\n    print 'hi'\n",
            &q,
        );
        assert!(!old.unparseable);
    }
}

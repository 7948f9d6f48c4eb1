//! Java definitions, from the tree-sitter-java grammar.
//!
//! - Classes, interfaces, enums, records and annotation types → `class`,
//!   nested ones qualified by their outer class (`Engine.Listener`), local
//!   classes by their method (`Engine.run.Step`).
//! - Methods, constructors (named after their class: `Engine.Engine`) and
//!   annotation elements → `method`.
//! - `static` fields and interface constants → `variable`, one per declared
//!   name; instance fields and locals are not reported. Enum constants are
//!   not reported.
//! - Java has no free functions, nested functions or type aliases.
//!
//! Signatures drop annotations and comments: `@Override public void run()`
//! reads `public void run()`.

use moat_protocol::request::SymbolKind;
use tree_sitter::Node;

use super::{Cx, ScopeKind, Step, field_children, has_child_kind, named_children};

/// The Java rule; see the module docs.
pub(super) fn visit(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    match node.kind() {
        "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "annotation_type_declaration" => {
            let Some(at) = node.child_by_field_name("name") else {
                return Step::Skip;
            };
            let name = cx.text(at);
            cx.emit(name, at, None, SymbolKind::Class, |cx| {
                cx.header_to_field(node, "body")
            });
            Step::Enter(ScopeKind::Class, name.to_owned())
        }
        "method_declaration"
        | "constructor_declaration"
        | "compact_constructor_declaration"
        | "annotation_type_element_declaration" => {
            let Some(at) = node.child_by_field_name("name") else {
                return Step::Skip;
            };
            let name = cx.text(at);
            cx.emit(name, at, None, SymbolKind::Method, |cx| {
                cx.header_to_field(node, "body")
            });
            Step::Enter(ScopeKind::Function, name.to_owned())
        }
        "field_declaration" | "constant_declaration" => {
            let is_static = node.kind() == "constant_declaration"
                || named_children(node)
                    .into_iter()
                    .any(|c| c.kind() == "modifiers" && has_child_kind(c, "static"));
            if cx.scope() == ScopeKind::Class && is_static {
                statics(node, cx);
            }
            // Initialisers (anonymous classes included) are not searched.
            Step::Skip
        }
        "line_comment"
        | "block_comment"
        | "package_declaration"
        | "import_declaration"
        | "modifiers"
        | "formal_parameters"
        | "enum_constant"
        | "string_literal" => Step::Skip,
        _ => Step::Descend,
    }
}

/// One `variable` per name a static field declaration declares.
fn statics(node: Node<'_>, cx: &mut Cx<'_>) {
    let declarators = field_children(node, "declarator");
    let Some(first) = declarators.first() else {
        return;
    };
    let type_end = first.start_byte();
    for declarator in &declarators {
        let Some(at) = declarator.child_by_field_name("name") else {
            continue;
        };
        let name = cx.text(at);
        cx.emit(name, at, None, SymbolKind::Variable, |cx| {
            format!("{} {name}", cx.header(node, type_end))
        });
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::symbols::Language;

    const SNIPPET: &str = r#"package com.example.engine;

import java.util.List;

/** Runs jobs. */
@Deprecated(since = "2")
public class Engine<T extends Job> extends Base implements Runnable {
    public static final int MAX_WORKERS = 8, MIN_WORKERS = 1;
    private final List<T> jobs;

    public Engine(List<T> jobs) {
        this.jobs = jobs;
    }

    @Override
    public synchronized void run() {
        class Step {
            void apply() {}
        }
        Runnable r = () -> {};
    }

    protected static <R> R submit(T job, /* unused */ int priority) throws InterruptedException {
        return null;
    }

    public interface Listener {
        int PRIORITY = 1;
        void onDone(Job job);
    }

    enum State { IDLE, RUNNING; boolean active() { return this == RUNNING; } }

    record Result(int code, String message) {}
}
"#;

    fn check(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        crate::symbols::testutil::assert_parsed(
            Language::Java,
            "src/Engine.java",
            SNIPPET,
            name,
            expected,
        );
    }

    #[test]
    fn classes_and_their_constructors() {
        check(
            "Engine",
            &[
                (
                    "Engine",
                    SymbolKind::Class,
                    7,
                    "public class Engine<T extends Job> extends Base implements Runnable",
                ),
                (
                    "Engine.Engine",
                    SymbolKind::Method,
                    11,
                    "public Engine(List<T> jobs)",
                ),
            ],
        );
        check(
            "Listener",
            &[(
                "Engine.Listener",
                SymbolKind::Class,
                27,
                "public interface Listener",
            )],
        );
        check(
            "State",
            &[("Engine.State", SymbolKind::Class, 32, "enum State")],
        );
        check(
            "Result",
            &[(
                "Engine.Result",
                SymbolKind::Class,
                34,
                "record Result(int code, String message)",
            )],
        );
        check(
            "Step",
            &[("Engine.run.Step", SymbolKind::Class, 17, "class Step")],
        );
    }

    #[test]
    fn methods_drop_annotations_and_comments_from_their_signatures() {
        check(
            "run",
            &[(
                "Engine.run",
                SymbolKind::Method,
                16,
                "public synchronized void run()",
            )],
        );
        check(
            "submit",
            &[(
                "Engine.submit",
                SymbolKind::Method,
                23,
                "protected static <R> R submit(T job, int priority) throws InterruptedException",
            )],
        );
        check(
            "apply",
            &[(
                "Engine.run.Step.apply",
                SymbolKind::Method,
                18,
                "void apply()",
            )],
        );
        check(
            "onDone",
            &[(
                "Engine.Listener.onDone",
                SymbolKind::Method,
                29,
                "void onDone(Job job)",
            )],
        );
        check(
            "active",
            &[(
                "Engine.State.active",
                SymbolKind::Method,
                32,
                "boolean active()",
            )],
        );
    }

    #[test]
    fn static_fields_and_constants_are_variables_and_the_rest_are_not() {
        check(
            "MAX_WORKERS",
            &[(
                "Engine.MAX_WORKERS",
                SymbolKind::Variable,
                8,
                "public static final int MAX_WORKERS",
            )],
        );
        check(
            "MIN_WORKERS",
            &[(
                "Engine.MIN_WORKERS",
                SymbolKind::Variable,
                8,
                "public static final int MIN_WORKERS",
            )],
        );
        check(
            "PRIORITY",
            &[(
                "Engine.Listener.PRIORITY",
                SymbolKind::Variable,
                28,
                "int PRIORITY",
            )],
        );
        check("jobs", &[]);
        check("r", &[]);
        check("IDLE", &[]);
    }
}

//! JavaScript and TypeScript definitions (tree-sitter-javascript, and
//! tree-sitter-typescript's TypeScript and TSX grammars; the node kinds they
//! share are read the same way).
//!
//! - `class` (also `abstract class`, a named class expression), TS
//!   `interface` and `enum` → `class`; class and interface bodies are
//!   scopes.
//! - `function` declarations (and TS overload or `declare` signatures) →
//!   `function`, nested ones qualified `outer.inner`.
//! - Class methods (getters, setters, constructors, `#private` ones), TS
//!   method signatures, methods and function-valued properties of an object
//!   literal bound to a name (`api.fetch`), and class fields holding a
//!   function (`onClick = () => {}`) → `method`.
//! - `static` class fields → `variable`; instance fields are not reported.
//! - `const`, `let` and `var` at module or namespace level → `binding` (one
//!   per declared name; destructuring patterns are not reported); inside
//!   functions they are locals.
//! - TS `type X = ...` → `type`; `namespace A.B { }` qualifies what is in it.
//!
//! Signatures include an `export`, `export default` or `declare` prefix;
//! decorators and comments are dropped.

use moat_protocol::request::SymbolKind;
use tree_sitter::Node;

use super::{Cx, ScopeKind, Step, has_child_kind, named_children};

/// The JavaScript/TypeScript rule; see the module docs.
pub(super) fn visit(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    match node.kind() {
        "export_statement" | "ambient_declaration" => Step::Wrap,
        "class_declaration" | "abstract_class_declaration" | "class" | "interface_declaration" => {
            let name = node.child_by_field_name("name");
            if let Some(at) = name {
                cx.emit(cx.text(at), at, None, SymbolKind::Class, |cx| {
                    cx.header_to_field(node, "body")
                });
            }
            Step::Enter(
                ScopeKind::Class,
                name.map_or_else(String::new, |n| cx.text(n).to_owned()),
            )
        }
        "enum_declaration" => {
            emit_named(node, cx, SymbolKind::Class, Some("body"));
            Step::Skip
        }
        "type_alias_declaration" => {
            emit_named(node, cx, SymbolKind::Type, None);
            Step::Skip
        }
        "function_declaration" | "generator_function_declaration" => {
            let Some(name) = emit_named(node, cx, SymbolKind::Function, Some("body")) else {
                return Step::Enter(ScopeKind::Function, String::new());
            };
            Step::Enter(ScopeKind::Function, name.to_owned())
        }
        "function_signature" => {
            emit_named(node, cx, SymbolKind::Function, None);
            Step::Skip
        }
        "method_definition" => {
            let Some(name) = emit_named(node, cx, SymbolKind::Method, Some("body")) else {
                return Step::Enter(ScopeKind::Function, String::new());
            };
            Step::Enter(ScopeKind::Function, name.to_owned())
        }
        "method_signature" | "abstract_method_signature" => {
            emit_named(node, cx, SymbolKind::Method, None);
            Step::Skip
        }
        "field_definition" | "public_field_definition" => class_field(node, cx),
        "lexical_declaration" | "variable_declaration" => {
            if cx.at_top_level() {
                bindings(node, cx);
            }
            Step::Descend
        }
        "variable_declarator" => {
            let name = node
                .child_by_field_name("name")
                .filter(|n| n.kind() == "identifier");
            match (
                name,
                node.child_by_field_name("value").and_then(scope_of_value),
            ) {
                (Some(name), Some(kind)) => Step::Enter(kind, cx.text(name).to_owned()),
                _ => Step::Descend,
            }
        }
        "pair" => pair(node, cx),
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            Step::Enter(ScopeKind::Function, String::new())
        }
        "internal_module" | "module" => {
            let name = cx
                .field_text(node, "name")
                .unwrap_or("")
                .trim_matches(['"', '\'']);
            Step::Enter(ScopeKind::Namespace, name.to_owned())
        }
        "comment" | "import_statement" | "string" | "template_string" | "regex" | "decorator"
        | "formal_parameters" | "type_annotation" => Step::Skip,
        _ => Step::Descend,
    }
}

/// Emit `node` under its `name` field with a header up to field `body` (or
/// the whole node); returns the name.
fn emit_named<'a>(
    node: Node<'_>,
    cx: &mut Cx<'a>,
    kind: SymbolKind,
    body: Option<&str>,
) -> Option<&'a str> {
    let at = node.child_by_field_name("name")?;
    let name = member_name(cx, at);
    cx.emit(name, at, None, kind, |cx| match body {
        Some(field) => cx.header_to_field(node, field),
        None => cx.header(node, node.end_byte()),
    });
    Some(name)
}

/// A member's name: quotes removed from `'quoted'()` methods.
fn member_name<'a>(cx: &Cx<'a>, at: Node<'_>) -> &'a str {
    let text = cx.text(at);
    if at.kind() == "string" {
        text.trim_matches(['"', '\''])
    } else {
        text
    }
}

fn is_function(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// The scope a value bound to a name opens: functions, objects, classes.
fn scope_of_value(value: Node<'_>) -> Option<ScopeKind> {
    if is_function(value) {
        Some(ScopeKind::Function)
    } else {
        match value.kind() {
            "object" => Some(ScopeKind::Object),
            "class" => Some(ScopeKind::Class),
            _ => None,
        }
    }
}

/// Header of a function value: `async (a, b) =>`, `function (a)`.
fn function_header(cx: &Cx<'_>, value: Node<'_>) -> String {
    let end = value
        .child_by_field_name("body")
        .map_or(value.end_byte(), |b| b.start_byte());
    cx.snippet(value, end)
}

/// A class field: a method when it holds a function, a variable when
/// `static`, nothing otherwise.
fn class_field(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    if cx.scope() != ScopeKind::Class {
        return Step::Skip;
    }
    let Some(at) = node
        .child_by_field_name("property")
        .or_else(|| node.child_by_field_name("name"))
    else {
        return Step::Skip;
    };
    let name = member_name(cx, at);
    match node
        .child_by_field_name("value")
        .filter(|v| is_function(*v))
    {
        Some(value) => {
            let end = value
                .child_by_field_name("body")
                .map_or(value.end_byte(), |b| b.start_byte());
            cx.emit(name, at, None, SymbolKind::Method, |cx| {
                cx.header(node, end)
            });
            Step::Enter(ScopeKind::Function, name.to_owned())
        }
        None => {
            if has_child_kind(node, "static") {
                cx.emit(name, at, None, SymbolKind::Variable, |cx| {
                    cx.header_to_field(node, "value")
                });
            }
            Step::Skip
        }
    }
}

/// `key: function () {}` or `key: () => {}` in an object bound to a name is
/// a method; `key: { ... }` is a nested object scope.
fn pair(node: Node<'_>, cx: &mut Cx<'_>) -> Step {
    if cx.scope() != ScopeKind::Object {
        return Step::Descend;
    }
    let (Some(key), Some(value)) = (
        node.child_by_field_name("key"),
        node.child_by_field_name("value"),
    ) else {
        return Step::Descend;
    };
    if !matches!(key.kind(), "property_identifier" | "string") {
        return Step::Descend;
    }
    let name = member_name(cx, key);
    if is_function(value) {
        let end = value
            .child_by_field_name("body")
            .map_or(value.end_byte(), |b| b.start_byte());
        cx.emit(name, key, None, SymbolKind::Method, |cx| {
            cx.snippet(node, end)
        });
        Step::Enter(ScopeKind::Function, name.to_owned())
    } else if value.kind() == "object" {
        Step::Enter(ScopeKind::Object, name.to_owned())
    } else {
        Step::Descend
    }
}

/// Each name a module-level `const`/`let`/`var` declares.
fn bindings(node: Node<'_>, cx: &mut Cx<'_>) {
    let declarators: Vec<Node<'_>> = named_children(node)
        .into_iter()
        .filter(|d| d.kind() == "variable_declarator")
        .collect();
    let Some(first) = declarators.first() else {
        return;
    };
    let prefix_end = first.start_byte();
    for declarator in &declarators {
        let Some(at) = declarator
            .child_by_field_name("name")
            .filter(|n| n.kind() == "identifier")
        else {
            continue;
        };
        let name = cx.text(at);
        let value = declarator.child_by_field_name("value");
        cx.emit(name, at, None, SymbolKind::Binding, |cx| {
            let prefix = cx.header(node, prefix_end);
            let end = value.map_or(declarator.end_byte(), |v| v.start_byte());
            let declared = cx.snippet(*declarator, end);
            match value.filter(|v| is_function(*v)) {
                Some(function) => {
                    format!("{prefix} {declared} = {}", function_header(cx, function))
                }
                None => format!("{prefix} {declared}"),
            }
        });
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::symbols::Language;

    const JAVASCRIPT: &str = r#"// Widgets.
import { render } from "./dom.js";

export const VERSION = "1.0";
let counter = 0, limit = 10;
var legacy;
const { a, b } = pair;

export class Widget extends Base {
  static registry = new Map();
  #secret = 1;
  onClick = (event) => {
    this.fire(event);
  };

  constructor(name, { size = 1, ...rest } = {}) {
    super(name);
  }

  async *items(from = 0) {
    function clamp(n) {
      return n;
    }
    yield clamp(from);
  }

  get size() { return this._size; }
}

export function createWidget(name, ...options) {
  function configure(widget) {
    return widget;
  }
  const local = 1;
  return configure(new Widget(name));
}

export default function () {}

export const api = {
  fetch(url) { return url; },
  post: async function (url, body) { return body; },
};

const buildWidget = async (name) => new Widget(name);
"#;

    const TYPESCRIPT: &str = r#"import type { Shape } from "./shape";

export interface Drawable<T> extends Shape {
  draw(ctx: CanvasRenderingContext2D): void;
  readonly name: string;
}

export type Point = { x: number; y: number };
type Id = string | number;

export enum Color { Red, Green = "green" }

@Component({ selector: "app-canvas" })
export abstract class Canvas<T extends Shape> implements Drawable<T> {
  static readonly DEFAULT_SIZE: number = 100;
  private shapes: T[] = [];

  constructor(private readonly id: Id) {}

  public abstract draw(ctx: CanvasRenderingContext2D): void;

  protected add(shape: T, at?: Point): this {
    const inner = (s: T): T => s;
    this.shapes.push(inner(shape));
    return this;
  }
}

export namespace Geometry.Shapes {
  export function area(p: Point): number {
    function square(n: number) {
      return n * n;
    }
    return square(p.x);
  }
  export const UNIT: Point = { x: 1, y: 1 };
}

declare function legacyDraw(id: Id): void;

export function overloaded(a: string): string;
export function overloaded(a: any): any {
  return a;
}
"#;

    fn check(lang: Language, source: &str, name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        crate::symbols::testutil::assert_parsed(lang, "src/widget.x", source, name, expected);
    }

    fn js(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        check(Language::JavaScript, JAVASCRIPT, name, expected);
    }

    fn ts(name: &str, expected: &[(&str, SymbolKind, u64, &str)]) {
        check(Language::TypeScript, TYPESCRIPT, name, expected);
    }

    #[test]
    fn javascript_classes_and_methods() {
        js(
            "Widget",
            &[(
                "Widget",
                SymbolKind::Class,
                9,
                "export class Widget extends Base",
            )],
        );
        js(
            "constructor",
            &[(
                "Widget.constructor",
                SymbolKind::Method,
                16,
                "constructor(name, { size = 1, ...rest } = {})",
            )],
        );
        js(
            "items",
            &[(
                "Widget.items",
                SymbolKind::Method,
                20,
                "async *items(from = 0)",
            )],
        );
        js(
            "size",
            &[("Widget.size", SymbolKind::Method, 27, "get size()")],
        );
        js(
            "onClick",
            &[(
                "Widget.onClick",
                SymbolKind::Method,
                12,
                "onClick = (event) =>",
            )],
        );
    }

    #[test]
    fn javascript_static_fields_are_variables_and_instance_fields_are_not() {
        js(
            "registry",
            &[(
                "Widget.registry",
                SymbolKind::Variable,
                10,
                "static registry",
            )],
        );
        js("#secret", &[]);
    }

    #[test]
    fn javascript_functions_nested_functions_and_object_methods() {
        js(
            "createWidget",
            &[(
                "createWidget",
                SymbolKind::Function,
                30,
                "export function createWidget(name, ...options)",
            )],
        );
        js(
            "configure",
            &[(
                "createWidget.configure",
                SymbolKind::Function,
                31,
                "function configure(widget)",
            )],
        );
        js(
            "clamp",
            &[(
                "Widget.items.clamp",
                SymbolKind::Function,
                21,
                "function clamp(n)",
            )],
        );
        js(
            "fetch",
            &[("api.fetch", SymbolKind::Method, 41, "fetch(url)")],
        );
        js(
            "post",
            &[(
                "api.post",
                SymbolKind::Method,
                42,
                "post: async function (url, body)",
            )],
        );
    }

    #[test]
    fn javascript_module_level_bindings() {
        js(
            "VERSION",
            &[("VERSION", SymbolKind::Binding, 4, "export const VERSION")],
        );
        js(
            "counter",
            &[("counter", SymbolKind::Binding, 5, "let counter")],
        );
        js("limit", &[("limit", SymbolKind::Binding, 5, "let limit")]);
        js(
            "legacy",
            &[("legacy", SymbolKind::Binding, 6, "var legacy")],
        );
        js(
            "api",
            &[("api", SymbolKind::Binding, 40, "export const api")],
        );
        js(
            "buildWidget",
            &[(
                "buildWidget",
                SymbolKind::Binding,
                45,
                "const buildWidget = async (name) =>",
            )],
        );
        js("local", &[]);
        js("a", &[]);
        js("render", &[]);
    }

    #[test]
    fn typescript_interfaces_enums_and_classes_are_classes() {
        ts(
            "Drawable",
            &[(
                "Drawable",
                SymbolKind::Class,
                3,
                "export interface Drawable<T> extends Shape",
            )],
        );
        ts(
            "Color",
            &[("Color", SymbolKind::Class, 11, "export enum Color")],
        );
        ts(
            "Canvas",
            &[(
                "Canvas",
                SymbolKind::Class,
                14,
                "export abstract class Canvas<T extends Shape> implements Drawable<T>",
            )],
        );
    }

    #[test]
    fn typescript_methods_and_signatures() {
        ts(
            "draw",
            &[
                (
                    "Drawable.draw",
                    SymbolKind::Method,
                    4,
                    "draw(ctx: CanvasRenderingContext2D): void",
                ),
                (
                    "Canvas.draw",
                    SymbolKind::Method,
                    20,
                    "public abstract draw(ctx: CanvasRenderingContext2D): void",
                ),
            ],
        );
        ts(
            "constructor",
            &[(
                "Canvas.constructor",
                SymbolKind::Method,
                18,
                "constructor(private readonly id: Id)",
            )],
        );
        ts(
            "add",
            &[(
                "Canvas.add",
                SymbolKind::Method,
                22,
                "protected add(shape: T, at?: Point): this",
            )],
        );
        ts("name", &[]);
        ts("shapes", &[]);
        ts("inner", &[]);
    }

    #[test]
    fn typescript_statics_types_namespaces_and_overloads() {
        ts(
            "DEFAULT_SIZE",
            &[(
                "Canvas.DEFAULT_SIZE",
                SymbolKind::Variable,
                15,
                "static readonly DEFAULT_SIZE: number",
            )],
        );
        ts(
            "Point",
            &[(
                "Point",
                SymbolKind::Type,
                8,
                "export type Point = { x: number; y: number }",
            )],
        );
        ts(
            "Id",
            &[("Id", SymbolKind::Type, 9, "type Id = string | number")],
        );
        ts(
            "area",
            &[(
                "Geometry.Shapes.area",
                SymbolKind::Function,
                30,
                "export function area(p: Point): number",
            )],
        );
        ts(
            "square",
            &[(
                "Geometry.Shapes.area.square",
                SymbolKind::Function,
                31,
                "function square(n: number)",
            )],
        );
        ts(
            "UNIT",
            &[(
                "Geometry.Shapes.UNIT",
                SymbolKind::Binding,
                36,
                "export const UNIT: Point",
            )],
        );
        ts(
            "legacyDraw",
            &[(
                "legacyDraw",
                SymbolKind::Function,
                39,
                "declare function legacyDraw(id: Id): void",
            )],
        );
        ts(
            "overloaded",
            &[
                (
                    "overloaded",
                    SymbolKind::Function,
                    41,
                    "export function overloaded(a: string): string",
                ),
                (
                    "overloaded",
                    SymbolKind::Function,
                    42,
                    "export function overloaded(a: any): any",
                ),
            ],
        );
    }
}

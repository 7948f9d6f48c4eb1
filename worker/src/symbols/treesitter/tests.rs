use super::super::{Query, find_in_source};
use super::*;
use tree_sitter::Parser;

#[test]
fn every_grammar_loads_into_this_tree_sitter() {
    let mut parser = Parser::new();
    for grammar in [
        Grammar::Python,
        Grammar::Rust,
        Grammar::Go,
        Grammar::JavaScript,
        Grammar::TypeScript,
        Grammar::Tsx,
        Grammar::Java,
        Grammar::C,
        Grammar::Cpp,
    ] {
        assert!(
            parser.set_language(&grammar.language()).is_ok(),
            "{grammar:?}"
        );
    }
}

#[test]
fn collapsed_text_drops_space_inside_brackets_and_trims_the_end() {
    let mut c = Collapsed::new(100);
    c.push("def f(\n    a,\n    b ,\n) :");
    assert_eq!(c.finish(), "def f(a, b,)");
}

#[test]
fn a_kind_filter_counts_the_kinds_it_leaves_out() {
    let source = "struct Limits;\nimpl Limits { fn limits() {} }\nfn Limits() {}\nstruct Other;\n";
    let q = Query {
        name: "Limits",
        exact: true,
        kind: Some(SymbolKind::Variable),
    };
    let found = find_in_source(Language::Rust, "src/lib.rs", source, &q);
    assert!(found.definitions.is_empty());
    assert_eq!(
        found.other_kinds.into_vec(),
        [(SymbolKind::Class, 1), (SymbolKind::Function, 1)]
    );
    // Without a filter nothing is left out, so nothing is counted.
    let q = Query { kind: None, ..q };
    let found = find_in_source(Language::Rust, "src/lib.rs", source, &q);
    assert_eq!(found.definitions.len(), 2);
    assert!(found.other_kinds.is_empty());
}

#[test]
fn a_c_header_that_is_really_cpp_is_parsed_with_the_cpp_grammar() {
    let source = "namespace app {\nclass Engine {\n public:\n  void start();\n};\n}\n";
    let q = Query {
        name: "Engine",
        exact: true,
        kind: None,
    };
    let found = find_in_source(Language::C, "include/engine.h", source, &q);
    assert!(!found.unparseable);
    assert_eq!(found.definitions.len(), 1);
    assert_eq!(found.definitions[0].language, "c");
    assert_eq!(found.definitions[0].qualified_name, "app.Engine");
}

#[test]
fn tsx_files_parse_with_the_tsx_grammar_and_ts_files_with_typescript() {
    let tsx = "export function App(): JSX.Element {\n  return <div className=\"x\">hi</div>;\n}\n";
    let q = Query {
        name: "App",
        exact: true,
        kind: None,
    };
    let found = find_in_source(Language::TypeScript, "src/App.tsx", tsx, &q);
    assert!(!found.unparseable);
    assert_eq!(found.definitions.len(), 1);
    // An angle-bracket cast is TypeScript, not TSX.
    let ts = "function App() { return <number>value; }\n";
    let found = find_in_source(Language::TypeScript, "src/app.ts", ts, &q);
    assert!(!found.unparseable);
    assert_eq!(found.definitions.len(), 1);
}

#[test]
fn a_grammar_language_without_a_parser_gets_no_grammars() {
    assert!(grammars(Language::Ruby, "a.rb").is_empty());
    assert_eq!(grammars(Language::TypeScript, "A.TSX")[0], Grammar::Tsx);
    assert_eq!(
        grammars(Language::TypeScript, "é.ts")[0],
        Grammar::TypeScript
    );
}

use super::*;

/// The demo project's `src/demo/core.py`.
const CORE_PY: &str = "'''Core module.'''\n\nTIMEOUT = 30\n\n\nclass Engine:\n    '''Does the work.'''\n\n    def start(self, name):\n        return name\n\n    async def stop(self):\n        return None\n\n\ndef build_engine(config):\n    return Engine()\n";
/// The demo project's `src/demo/widget.ts`.
const WIDGET_TS: &str = "export class Widget {\n  render() { return null; }\n}\n\nexport const buildWidget = () => new Widget();\n";
/// The demo project's `src/demo/broken.py`.
const BROKEN_PY: &str = "def unfinished(\n";

fn query(name: &str) -> Query<'_> {
    Query {
        name,
        exact: true,
        kind: None,
    }
}

fn core(q: &Query<'_>) -> FileDefinitions {
    find_in_source(Language::Python, "src/demo/core.py", CORE_PY, q)
}

#[test]
fn a_python_class_is_found_by_parsing() {
    let found = core(&query("Engine"));
    assert!(!found.unparseable);
    let class = found
        .definitions
        .iter()
        .find(|d| d.kind == SymbolKind::Class)
        .expect("a class");
    assert_eq!(class.method, SymbolMethod::Parsed);
    assert_eq!(class.path, "src/demo/core.py");
    assert_eq!(class.line, 6);
    assert_eq!(class.language, "python");
    assert_eq!(class.signature, "class Engine");
}

#[test]
fn a_method_is_distinguished_from_a_function() {
    let start = core(&query("start")).definitions;
    assert_eq!(start[0].kind, SymbolKind::Method);
    assert_eq!(start[0].qualified_name, "Engine.start");
    assert_eq!(start[0].line, 9);
    let build = core(&query("build_engine")).definitions;
    assert_eq!(build[0].kind, SymbolKind::Function);
    assert_eq!(build[0].qualified_name, "build_engine");
}

#[test]
fn an_async_method_is_found() {
    let stop = core(&query("stop")).definitions;
    assert!(
        stop[0].signature.contains("async def stop"),
        "{}",
        stop[0].signature
    );
    assert_eq!(stop[0].signature, "async def stop(self)");
}

#[test]
fn a_module_level_variable_is_found() {
    let timeout = core(&query("TIMEOUT")).definitions;
    assert_eq!(timeout.len(), 1);
    assert_eq!(timeout[0].kind, SymbolKind::Variable);
    assert_eq!(timeout[0].line, 3);
    assert_eq!(timeout[0].signature, "TIMEOUT = ...");
}

#[test]
fn a_kind_filter_keeps_only_that_kind() {
    let q = Query {
        name: "Engine",
        exact: false,
        kind: Some(SymbolKind::Class),
    };
    let found = core(&q).definitions;
    assert!(!found.is_empty());
    assert!(found.iter().all(|d| d.kind == SymbolKind::Class));
    let q = Query {
        name: "start",
        exact: true,
        kind: Some(SymbolKind::Function),
    };
    assert!(core(&q).definitions.is_empty());
}

#[test]
fn typescript_is_now_parsed_and_says_so() {
    let found = find_in_source(
        Language::TypeScript,
        "src/demo/widget.ts",
        WIDGET_TS,
        &query("Widget"),
    );
    assert!(!found.unparseable);
    assert_eq!(found.definitions.len(), 1);
    let widget = &found.definitions[0];
    assert_eq!(widget.language, "typescript");
    assert_eq!(widget.method, SymbolMethod::Parsed);
    assert_eq!(widget.kind, SymbolKind::Class);
    assert_eq!(widget.line, 1);
    assert_eq!(widget.signature, "export class Widget");
    let build = find_in_source(
        Language::TypeScript,
        "src/demo/widget.ts",
        WIDGET_TS,
        &query("buildWidget"),
    );
    assert_eq!(build.definitions[0].kind, SymbolKind::Binding);
    assert_eq!(
        build.definitions[0].signature,
        "export const buildWidget = () =>"
    );
}

#[test]
fn parsed_results_are_ranked_above_pattern_results() {
    let q = Query {
        name: "Engine",
        exact: false,
        kind: None,
    };
    let mut all = Vec::new();
    for (lang, path, source) in [
        (Language::Ruby, "a/engine.rb", "class Engine\nend\n"),
        (Language::Python, "src/demo/core.py", CORE_PY),
        (Language::Python, "src/demo/broken.py", "class Engine(\n"),
        (
            Language::TypeScript,
            "b/engine.ts",
            "export class Engine {}\n",
        ),
    ] {
        all.extend(find_in_source(lang, path, source, &q).definitions);
    }
    sort_definitions(&mut all);
    let order: Vec<(SymbolMethod, &str, u64)> = all
        .iter()
        .map(|d| (d.method, d.path.as_str(), d.line))
        .collect();
    assert_eq!(
        order,
        [
            (SymbolMethod::Parsed, "b/engine.ts", 1),
            (SymbolMethod::Parsed, "src/demo/core.py", 6),
            (SymbolMethod::Parsed, "src/demo/core.py", 16),
            (SymbolMethod::Pattern, "a/engine.rb", 1),
            (SymbolMethod::Pattern, "src/demo/broken.py", 1),
        ]
    );
}

#[test]
fn a_file_that_does_not_parse_falls_back_to_patterns_and_is_reported() {
    let found = find_in_source(
        Language::Python,
        "src/demo/broken.py",
        BROKEN_PY,
        &query("unfinished"),
    );
    assert!(found.unparseable);
    assert_eq!(found.definitions.len(), 1);
    let d = &found.definitions[0];
    assert_eq!(d.method, SymbolMethod::Pattern);
    assert_eq!(d.kind, SymbolKind::Function);
    assert_eq!(d.line, 1);
    assert_eq!(d.signature, "def unfinished");
}

#[test]
fn an_inexact_search_matches_substrings_and_finds_more() {
    let exact = core(&query("engine")).definitions.len();
    let loose = core(&Query {
        name: "engine",
        exact: false,
        kind: None,
    })
    .definitions;
    assert_eq!(exact, 0);
    let names: Vec<&str> = loose.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["Engine", "build_engine"]);
    assert!(loose.len() > exact);
}

#[test]
fn parsed_results_carry_the_parsed_method_and_pattern_results_the_pattern_method() {
    let q = Query {
        name: "e",
        exact: false,
        kind: None,
    };
    let parsed = core(&q);
    assert!(
        parsed
            .definitions
            .iter()
            .all(|d| d.method == SymbolMethod::Parsed)
    );
    let ruby = find_in_source(
        Language::Ruby,
        "a.rb",
        "class Engine\n  def reset\n  end\nend\n",
        &q,
    );
    assert!(!ruby.unparseable, "a pattern language is not unparseable");
    assert_eq!(ruby.definitions.len(), 2);
    assert!(
        ruby.definitions
            .iter()
            .all(|d| d.method == SymbolMethod::Pattern)
    );
}

#[test]
fn a_file_that_cannot_contain_the_name_is_not_parsed_or_reported() {
    let found = find_in_source(Language::Python, "b.py", BROKEN_PY, &query("Engine"));
    assert_eq!(found, FileDefinitions::default());
}

#[test]
fn names_inside_strings_and_comments_are_not_definitions_when_parsed() {
    let source = "# class Ghost:\ntext = 'def Ghost(): pass'\n";
    assert!(
        find_in_source(Language::Python, "g.py", source, &query("Ghost"))
            .definitions
            .is_empty()
    );
}

#[test]
fn an_empty_or_overlong_name_is_refused() {
    assert_eq!(
        CompiledQuery::new(&query("")).err(),
        Some(QueryError::EmptyName)
    );
    let long = "x".repeat(MAX_SYMBOL_CHARS + 1);
    assert!(matches!(
        CompiledQuery::new(&query(&long)),
        Err(QueryError::NameTooLong { .. })
    ));
    assert!(
        find_in_source(Language::Python, "a.py", "x = 1\n", &query(""))
            .definitions
            .is_empty()
    );
    let at_limit = "x".repeat(MAX_SYMBOL_CHARS);
    assert!(CompiledQuery::new(&query(&at_limit)).is_ok());
}

#[test]
fn regex_metacharacters_in_the_name_are_literal() {
    for name in ["a.b", "(x", "[", "*", "$x", "\\"] {
        let q = Query {
            name,
            exact: false,
            kind: None,
        };
        let compiled = CompiledQuery::new(&q).expect("compiles");
        let _ = compiled.find_in_source(Language::Ruby, "a.rb", "def ab\nend\n");
    }
    let q = query("a.b");
    let found = find_in_source(Language::Ruby, "a.rb", "def axb\nend\n", &q);
    assert!(found.definitions.is_empty());
}

#[test]
fn the_per_file_cap_keeps_the_first_definitions() {
    let source: String = (0..50)
        .map(|i| format!("def f{i}():\n    pass\n"))
        .collect();
    let q = Query {
        name: "f",
        exact: false,
        kind: None,
    };
    let compiled = CompiledQuery::new(&q)
        .expect("compiles")
        .with_max_results(10);
    let found = compiled.find_in_source(Language::Python, "a.py", &source);
    assert_eq!(found.definitions.len(), 10);
    assert_eq!(found.definitions[0].name, "f0");
    assert_eq!(found.definitions[9].name, "f9");
    let pattern = compiled.find_in_source(Language::Ruby, "a.rb", &source);
    assert_eq!(pattern.definitions.len(), 10);
    assert_eq!(pattern.definitions[9].line, 19);
}

#[test]
fn a_passed_deadline_abandons_the_parse() {
    let source = "def f():\n    pass\n".repeat(20_000);
    let q = query("f");
    let compiled = CompiledQuery::new(&q).expect("compiles");
    let past = Instant::now();
    let found = compiled.find_in_source_until(Language::Python, "a.py", &source, Some(past));
    assert!(found.timed_out);
    assert!(found.definitions.is_empty());
    let done = compiled.find_in_source_until(Language::Python, "a.py", &source, None);
    assert_eq!(
        done.definitions.len(),
        20_000.min(MAX_SEARCH_RESULTS_MAX as usize)
    );
}

#[test]
fn whitespace_collapses_and_cuts_at_the_limit() {
    assert_eq!(collapse_whitespace("  a \n\t b  c ", 100), "a b c");
    assert_eq!(collapse_whitespace("abcdef", 3), "abc");
    assert_eq!(collapse_whitespace("ab   cd", 3), "ab");
    assert_eq!(collapse_whitespace("", 3), "");
    assert_eq!(
        cut_signature("é".repeat(200)).chars().count(),
        SIGNATURE_CHARS
    );
}

#[test]
fn compiled_queries_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CompiledQuery>();
}

/// Hostile inputs: each must finish without panicking or blowing the
/// native stack (tests run on 2 MiB thread stacks). How long they take
/// is measured by the benchmarks, not asserted here.
mod hostile {
    use super::*;

    fn survives(label: &str, run: impl FnOnce() -> FileDefinitions) -> FileDefinitions {
        let _ = label;
        run()
    }

    fn loose(name: &str) -> Query<'_> {
        Query {
            name,
            exact: false,
            kind: None,
        }
    }

    #[test]
    fn brackets_nested_100_000_deep_in_every_parsed_language() {
        let depth = 100_000;
        let (open, close) = ("(".repeat(depth), ")".repeat(depth));
        let cases = [
            (
                Language::Python,
                format!("def nested():\n    return {open}1{close}\n"),
            ),
            (
                Language::JavaScript,
                format!("function nested() {{ return {open}1{close}; }}\n"),
            ),
            (
                Language::TypeScript,
                format!("function nested(): number {{ return {open}1{close}; }}\n"),
            ),
            (
                Language::Rust,
                format!("fn nested() -> u8 {{ {open}1{close} }}\n"),
            ),
            (
                Language::Go,
                format!("package p\nfunc nested() int {{ return {open}1{close} }}\n"),
            ),
            (
                Language::Java,
                format!("class A {{ int nested() {{ return {open}1{close}; }} }}\n"),
            ),
            (
                Language::C,
                format!("int nested(void) {{ return {open}1{close}; }}\n"),
            ),
            (
                Language::Cpp,
                format!("int nested() {{ return {open}1{close}; }}\n"),
            ),
        ];
        for (lang, source) in cases {
            let found = survives(lang.name(), || {
                find_in_source(lang, "deep", &source, &query("nested"))
            });
            assert!(!found.unparseable, "{}", lang.name());
            assert_eq!(found.definitions.len(), 1, "{}", lang.name());
        }
    }

    #[test]
    fn unbalanced_brackets_100_000_deep_fall_back_to_patterns() {
        let source = format!("def nested():\n    return {}\n", "[".repeat(100_000));
        let found = survives("unbalanced", || {
            find_in_source(Language::Python, "deep.py", &source, &query("nested"))
        });
        assert!(found.unparseable);
        assert_eq!(found.definitions.len(), 1);
        let source = format!("fn nested() {{ {} }}\n", "{".repeat(100_000));
        let found = survives("braces", || {
            find_in_source(Language::Rust, "deep.rs", &source, &query("nested"))
        });
        assert!(found.unparseable);
    }

    #[test]
    fn a_default_argument_nested_100_000_deep_keeps_the_signature_bounded() {
        let source = format!(
            "def f(a={}1{}):\n    pass\n",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let found = survives("signature", || {
            find_in_source(Language::Python, "sig.py", &source, &query("f"))
        });
        let signature = &found.definitions[0].signature;
        assert_eq!(signature.chars().count(), SIGNATURE_CHARS);
        assert!(signature.starts_with("def f(a=((((("));
    }

    #[test]
    fn a_5_mb_single_line_is_matched_with_patterns() {
        let line = "x = foo(a, b) + 1; ".repeat(5_000_000 / 19);
        let source = format!("{line}def target(): pass\n");
        assert!(source.len() > PARSE_MAX_BYTES);
        let found = survives("5 MB", || {
            find_in_source(Language::Python, "big.py", &source, &query("target"))
        });
        assert!(found.unparseable, "too large to parse: patterns, reported");
        assert_eq!(found.definitions.len(), 1);
        let found = survives("5 MB inexact", || {
            find_in_source(Language::Ruby, "big.rb", &source, &loose("a"))
        });
        assert_eq!(
            found.definitions.len(),
            1,
            "only `def target` (every form ran over 5 MB)"
        );
        let word = format!("def {}\n", "a".repeat(5_000_000));
        let found = survives("5 MB word", || {
            find_in_source(Language::Kotlin, "big.kt", &word, &loose("a"))
        });
        assert_eq!(found.definitions.len(), 1);
        assert_eq!(
            found.definitions[0].signature.chars().count(),
            SIGNATURE_CHARS
        );
    }

    #[test]
    fn a_1_mb_single_line_just_under_the_cap_is_parsed() {
        let line = "x = foo(a, b) + 1; ".repeat((PARSE_MAX_BYTES - 100) / 19);
        let source = format!("{line}\ndef target(): pass\n");
        assert!(source.len() <= PARSE_MAX_BYTES);
        let found = survives("1 MB", || {
            find_in_source(Language::Python, "big.py", &source, &query("target"))
        });
        assert!(!found.unparseable);
        assert_eq!(found.definitions[0].line, 2);
    }

    #[test]
    fn scopes_nested_past_the_depth_cap_are_not_searched() {
        let depth = 200;
        let mut source = String::new();
        for i in 0..depth {
            source.push_str(&format!("function f{i}() {{\n"));
        }
        source.push_str(&"}\n".repeat(depth));
        let found = survives("scopes", || {
            find_in_source(Language::JavaScript, "deep.js", &source, &loose("f"))
        });
        assert!(!found.unparseable);
        // f0 is at depth 0; f64 is found in the 64th scope, but its
        // own body would be the 65th and is not searched.
        assert_eq!(found.definitions.len(), MAX_SCOPE_DEPTH + 1);
        let deepest = &found.definitions[MAX_SCOPE_DEPTH];
        assert_eq!(deepest.name, "f64");
        assert_eq!(
            deepest.qualified_name.split('.').count(),
            MAX_SCOPE_DEPTH + 1
        );
    }

    #[test]
    fn a_hundred_thousand_definitions_stop_at_the_cap() {
        let source: String = (0..100_000)
            .map(|i| format!("def f{i}(): pass\n"))
            .collect();
        let found = survives("many", || {
            find_in_source(Language::Python, "many.py", &source, &loose("f"))
        });
        assert_eq!(found.definitions.len(), MAX_SEARCH_RESULTS_MAX as usize);
        let found = survives("many patterns", || {
            find_in_source(Language::Ruby, "many.rb", &source, &loose("f"))
        });
        assert_eq!(found.definitions.len(), MAX_SEARCH_RESULTS_MAX as usize);
    }

    #[test]
    fn a_megabyte_identifier_is_reported_without_trouble() {
        let name = "n".repeat(1_000_000);
        let source = format!("class {name}:\n    pass\n");
        let found = survives("identifier", || {
            find_in_source(Language::Python, "id.py", &source, &loose("nnn"))
        });
        assert_eq!(found.definitions.len(), 1);
        assert_eq!(
            found.definitions[0].signature.chars().count(),
            SIGNATURE_CHARS
        );
    }

    #[test]
    fn garbage_in_every_language_neither_panics_nor_hangs() {
        let tokens = [
            "(", "{", "def", " ", ":", "\n", "class", "[", ")", "<", "fn", "x", "'", "\"", "/*",
            "#",
        ];
        let garbage: String = (0..300_000usize)
            .map(|i| tokens[(i * 7919) % tokens.len()])
            .collect();
        for lang in Language::ALL {
            let found = survives(lang.name(), || {
                find_in_source(lang, "g", &garbage, &loose("x"))
            });
            // Garbage never parses cleanly: whatever is found is from a
            // partial tree or the patterns.
            assert!(
                found
                    .definitions
                    .iter()
                    .all(|d| d.method != SymbolMethod::Parsed),
                "{}",
                lang.name()
            );
        }
    }
}

//! `find_symbol` through the real binary: parsed and pattern definitions,
//! kinds and paths; TypeScript is parsed, a file path searches that file and
//! a missing directory is `not_found`, as in `search_code`.

use moat_tests::{Fixture, Mode, text};
use serde_json::json;

use super::tools_util::{
    defs, fenced, names, ok, ok_result, refused, schema_refused, start, start_with,
};

#[test]
fn a_class_is_parsed_at_line_6_in_both_modes() {
    let fx = Fixture::demo_project();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(&mut m, "find_symbol", json!({"symbol": "Engine"}));
        let fs = &r["structuredContent"];
        let d = &fs["definitions"][0];
        assert_eq!(d["kind"], "class", "{mode:?}: {fs}");
        assert_eq!(d["method"], "parsed");
        assert_eq!(d["path"], "src/demo/core.py");
        assert_eq!(d["line"], 6);
        assert_eq!(d["language"], "python");
        assert_eq!(d["qualified_name"], "Engine");
        assert_eq!(d["signature"], "class Engine");
        assert_eq!(fs["symbol"], "Engine");
        assert_eq!(fs["exact"], true);
        assert_eq!(fs["kind"], "any");
        let body = fenced(&r, "symbol-definitions");
        assert!(
            body.contains("src/demo/core.py:6  Engine  [class, parsed]  class Engine"),
            "{body}"
        );
    }
}

#[test]
fn a_method_is_qualified_and_a_function_is_not() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "start"}));
    let d = defs(&fs);
    assert_eq!(
        d,
        [(
            "Engine.start".to_owned(),
            "method".to_owned(),
            "parsed".to_owned(),
            "src/demo/core.py".to_owned(),
            10
        )],
        "{fs}"
    );
    assert_eq!(fs["definitions"][0]["name"], "start");
    assert_eq!(fs["definitions"][0]["signature"], "def start(self, name)");
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "build_engine"}));
    assert_eq!(
        defs(&fs),
        [(
            "build_engine".to_owned(),
            "function".to_owned(),
            "parsed".to_owned(),
            "src/demo/core.py".to_owned(),
            17
        )],
        "{fs}"
    );
}

#[test]
fn an_async_signature_says_async() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "stop"}));
    let d = &fs["definitions"][0];
    assert_eq!(d["signature"], "async def stop(self)", "{fs}");
    assert_eq!(d["kind"], "method");
    assert_eq!(d["line"], 13);
}

#[test]
fn a_module_variable_is_found() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "TIMEOUT"}));
    let d = &fs["definitions"][0];
    assert_eq!(d["kind"], "variable", "{fs}");
    assert_eq!(d["line"], 3);
    assert_eq!(d["path"], "src/demo/core.py");
    assert_eq!(fs["definition_count"], 1);
}

#[test]
fn the_kind_filter_applies() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(
        &mut m,
        "find_symbol",
        json!({"symbol": "Engine", "kind": "function"}),
    );
    assert_eq!(fs["definition_count"], 0, "{fs}");
    assert_eq!(fs["kind"], "function");
    let fs = ok(
        &mut m,
        "find_symbol",
        json!({"symbol": "Engine", "kind": "class"}),
    );
    assert_eq!(fs["definition_count"], 1, "{fs}");
    let fs = ok(
        &mut m,
        "find_symbol",
        json!({"symbol": "engine", "exact": false, "kind": "method"}),
    );
    assert!(defs(&fs).iter().all(|d| d.1 == "method"), "{fs}");
    let msg = schema_refused(
        &mut m,
        "find_symbol",
        json!({"symbol": "Engine", "kind": "struct"}),
        true,
    );
    assert!(msg.contains("kind"), "{msg}");
}

#[test]
fn a_kind_filter_that_finds_nothing_names_the_kinds_the_name_has() {
    let fx = Fixture::demo_project();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(
            &mut m,
            "find_symbol",
            json!({"symbol": "Engine", "kind": "function"}),
        );
        let fs = &r["structuredContent"];
        assert_eq!(fs["definition_count"], 0, "{mode:?}: {fs}");
        assert_eq!(fs["other_kinds"], json!({"class": 1}), "{mode:?}: {fs}");
        let summary = text(&r, 0);
        assert!(
            summary.contains("no function has this name, but these kinds do: class (1)")
                && summary.contains("without kind"),
            "{mode:?}: {summary}"
        );
        // A name that exists under no kind gets no hint, and a filter that
        // finds something carries no other kinds.
        let none = ok(
            &mut m,
            "find_symbol",
            json!({"symbol": "NoSuchNameAnywhere", "kind": "function"}),
        );
        assert!(none.get("other_kinds").is_none(), "{mode:?}: {none}");
        let found = ok(
            &mut m,
            "find_symbol",
            json!({"symbol": "Engine", "kind": "class"}),
        );
        assert!(found.get("other_kinds").is_none(), "{mode:?}: {found}");
    }
}

#[test]
fn the_other_kinds_are_all_counted_whatever_the_result_cap() {
    // Thirty classes and three constants of the name, a result cap of two:
    // the hint counts every one, not only what one answer could hold.
    let fx = Fixture::new();
    for i in 0..30 {
        fx.file(&format!("m{i:02}.py"), "class Widget:\n    pass\n");
    }
    fx.file("consts.rs", "const Widget: u8 = 1;\n");
    fx.file("more.go", "package m\nconst Widget = 1\nvar Widget2 = 2\n");
    fx.file("c.rs", "static Widget: u8 = 2;\n");
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[("MOAT_SANDBOX__MAX_SEARCH_RESULTS", "2")]);
        let fs = ok(
            &mut m,
            "find_symbol",
            json!({"symbol": "Widget", "kind": "method"}),
        );
        assert_eq!(fs["definition_count"], 0, "{mode:?}: {fs}");
        let others = fs["other_kinds"].as_object().expect("other kinds");
        assert_eq!(others["class"], 30, "{mode:?}: {fs}");
        let rest: u64 = others
            .iter()
            .filter(|(k, _)| *k != "class")
            .map(|(_, n)| n.as_u64().unwrap_or(0))
            .sum();
        assert_eq!(rest, 3, "{mode:?}: {fs}");
    }
}

#[test]
fn each_definition_is_named_as_its_language_names_it() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", "pub struct Limits;\npub trait Limits2 {}\n");
    fx.file("web/api.ts", "export interface Limits3 { a: number }\n");
    fx.file("cmd/main.go", "package main\nconst Limits4 = 1\n");
    fx.file("lib/x.rb", "class Limits5\nend\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let r = ok_result(
            &mut m,
            "find_symbol",
            json!({"symbol": "Limits", "exact": false}),
        );
        let fs = &r["structuredContent"];
        let mut seen: Vec<(String, String, String)> = fs["definitions"]
            .as_array()
            .expect("definitions")
            .iter()
            .map(|d| {
                (
                    d["name"].as_str().unwrap_or("").to_owned(),
                    d["kind"].as_str().unwrap_or("").to_owned(),
                    d["language_kind"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        seen.sort();
        let want = [
            ("Limits", "class", "struct"),
            ("Limits2", "class", "trait"),
            ("Limits3", "class", "interface"),
            ("Limits4", "variable", "const"),
            ("Limits5", "class", "class"),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
            .collect();
        assert_eq!(seen, want, "{mode:?}: {fs}");
        let body = fenced(&r, "symbol-definitions");
        assert!(
            body.contains("src/lib.rs:1  Limits  [struct, parsed]  pub struct Limits"),
            "{mode:?}: {body}"
        );
    }
}

#[test]
fn typescript_is_parsed() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "Widget"}));
    let d = &fs["definitions"][0];
    assert_eq!(d["kind"], "class", "{fs}");
    assert_eq!(d["method"], "parsed");
    assert_eq!(d["language"], "typescript");
    assert_eq!(d["path"], "src/demo/widget.ts");
    assert_eq!(d["line"], 1);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "buildWidget"}));
    let d = &fs["definitions"][0];
    assert_eq!(d["kind"], "binding", "{fs}");
    assert_eq!(d["method"], "parsed");
    assert_eq!(d["line"], 7);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "render"}));
    assert_eq!(
        fs["definitions"][0]["qualified_name"], "Widget.render",
        "{fs}"
    );
    // A name inside a string is not a definition.
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "widget"}));
    assert_eq!(fs["definition_count"], 0, "{fs}");
}

#[test]
fn parsed_definitions_are_ranked_first() {
    let fx = Fixture::demo_project();
    // Pattern-matched definitions of the same name, in paths that sort
    // before `src/`.
    fx.file("a_first/engine.rb", "class Engine\nend\n");
    fx.file("a_first/engine.kt", "class Engine {}\n");
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "Engine"}));
    let d = defs(&fs);
    assert_eq!(d.len(), 3, "{fs}");
    assert_eq!(d[0].2, "parsed", "{fs}");
    assert_eq!(d[0].3, "src/demo/core.py");
    assert_eq!(
        (d[1].2.as_str(), d[1].3.as_str()),
        ("pattern", "a_first/engine.kt")
    );
    assert_eq!(
        (d[2].2.as_str(), d[2].3.as_str()),
        ("pattern", "a_first/engine.rb")
    );
    assert_eq!(fs["parsed_count"], 1);
    assert_eq!(fs["pattern_count"], 2);
}

#[test]
fn an_unparseable_python_file_falls_back_to_patterns() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let r = ok_result(&mut m, "find_symbol", json!({"symbol": "unfinished"}));
    let fs = &r["structuredContent"];
    assert_eq!(
        fs["unparseable_files"],
        json!(["src/demo/broken.py"]),
        "{fs}"
    );
    let d = &fs["definitions"][0];
    assert_eq!(d["method"], "pattern");
    assert_eq!(d["kind"], "function");
    assert_eq!(d["line"], 1);
    assert!(
        text(&r, 0).contains("1 file did not parse and fell back to patterns"),
        "{}",
        text(&r, 0)
    );
}

#[test]
fn inexact_finds_more_and_the_counts_add_up() {
    let fx = Fixture::demo_project();
    let mut m = start(&fx.root, Mode::Confined);
    let exact = ok(&mut m, "find_symbol", json!({"symbol": "engine"}));
    assert_eq!(exact["definition_count"], 0, "{exact}");
    let loose = ok(
        &mut m,
        "find_symbol",
        json!({"symbol": "engine", "exact": false}),
    );
    let names: Vec<String> = defs(&loose).into_iter().map(|d| d.0).collect();
    for want in ["Engine", "build_engine", "test_engine_starts"] {
        assert!(names.contains(&want.to_owned()), "{want}: {names:?}");
    }
    assert_eq!(loose["exact"], false);
    for fs in [&exact, &loose] {
        let n = fs["definitions"].as_array().unwrap().len() as u64;
        assert_eq!(fs["definition_count"], n);
        assert_eq!(
            fs["parsed_count"].as_u64().unwrap() + fs["pattern_count"].as_u64().unwrap(),
            n,
            "{fs}"
        );
    }
    assert!(loose["files_scanned"].as_u64().unwrap() >= 6, "{loose}");
}

#[test]
fn a_file_path_searches_that_file_and_a_missing_directory_is_not_found() {
    let fx = Fixture::demo_project();
    fx.file("other/core.py", "class Engine:\n    pass\n");
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let fs = ok(
            &mut m,
            "find_symbol",
            json!({"symbol": "Engine", "path": "other/core.py"}),
        );
        assert_eq!(
            defs(&fs).iter().map(|d| d.3.as_str()).collect::<Vec<_>>(),
            ["other/core.py"],
            "{mode:?}: {fs}"
        );
        assert_eq!(fs["files_scanned"], 1);
        let fs = ok(
            &mut m,
            "find_symbol",
            json!({"symbol": "Engine", "path": "src"}),
        );
        assert_eq!(defs(&fs).len(), 1, "{mode:?}: {fs}");
        let (code, r) = refused(
            &mut m,
            "find_symbol",
            json!({"symbol": "Engine", "path": "no/such/dir"}),
        );
        assert_eq!(code, "not_found", "{mode:?}: {r}");
        let (code, _) = refused(
            &mut m,
            "find_symbol",
            json!({"symbol": "Engine", "path": "../outside"}),
        );
        assert_eq!(code, "outside_workspace");
        let (code, _) = refused(&mut m, "find_symbol", json!({"symbol": "   "}));
        assert_eq!(code, "not_found");
    }
}

#[test]
fn denied_and_skipped_files_hold_no_definitions() {
    let fx = Fixture::demo_project();
    fx.file("node_modules/pkg/engine.py", "class Engine:\n    pass\n");
    fx.file(".ssh/engine.py", "class Engine:\n    pass\n");
    fx.file("secrets/.env.py", "class Engine:\n    pass\n");
    let mut m = start(&fx.root, Mode::Confined);
    let fs = ok(&mut m, "find_symbol", json!({"symbol": "Engine"}));
    let paths: Vec<String> = defs(&fs).into_iter().map(|d| d.3).collect();
    assert_eq!(paths, ["src/demo/core.py"], "{fs}");
}

/// A C file the grammar reads only in part (macros it cannot expand leave
/// error nodes, as in most files of a kernel tree) still gives its
/// definitions from the tree: exact, marked `partial`, outside the error
/// nodes; a word in a comment is never a definition.
#[test]
fn definitions_come_from_a_partial_tree_outside_its_error_nodes() {
    let fx = Fixture::new();
    fx.file(
        "drivers/needle.c",
        "#include <linux/module.h>\n\
         /* needle_in_comment(void) is only mentioned here */\n\
         static DEFINE_MUTEX(needle_lock);\n\
         \n\
         int needle_after(struct device *dev, int x)\n\
         {\n\
         \treturn x;\n\
         }\n\
         \n\
         NEEDLE_BROKEN MACRO ( ; ] ;\n\
         \n\
         struct needle_state {\n\
         \tint count;\n\
         };\n\
         \n\
         unsigned long\n\
         needle_kr_style(void)\n\
         {\n\
         \treturn 0;\n\
         }\n",
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for (name, line, kind) in [
            ("needle_after", 5, "function"),
            ("needle_state", 12, "class"),
            ("needle_kr_style", 17, "function"),
        ] {
            let fs = ok(&mut m, "find_symbol", json!({"symbol": name}));
            let d = &fs["definitions"][0];
            assert_eq!(d["line"], line, "{mode:?} {name}: {fs}");
            assert_eq!(d["kind"], kind, "{mode:?} {name}: {fs}");
            assert_eq!(d["method"], "partial", "{mode:?} {name}: {fs}");
            assert_eq!(fs["partial_count"], 1, "{fs}");
            assert_eq!(fs["unparseable_files"], json!([]), "{fs}");
        }
        let fs = ok(
            &mut m,
            "find_symbol",
            json!({"symbol": "needle_in_comment"}),
        );
        assert_eq!(fs["definitions"], json!([]), "{mode:?}: {fs}");
        let o = ok(&mut m, "file_outline", json!({"path": "drivers/needle.c"}));
        assert_eq!(o["method"], "partial", "{o}");
        let names = names(&o, "items");
        for want in ["needle_after", "needle_state", "needle_kr_style"] {
            assert!(names.contains(&want), "{want} not in {names:?}");
        }
        assert!(!names.contains(&"needle_in_comment"), "{names:?}");
    }
}

#[test]
fn shell_functions_and_ruby_modules_are_found_and_comments_are_not_definitions() {
    let fx = Fixture::new();
    fx.file(
        "deploy.sh",
        "#!/bin/sh\n# rollback_all() { is only mentioned here\ndeploy_all() {\n  echo go\n}\n",
    );
    fx.file(
        "billing.rb",
        "# class GhostInvoice lives elsewhere\nmodule Billing\n  class Invoice\n  end\nend\n",
    );
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        for (name, path, line, kind) in [
            ("deploy_all", "deploy.sh", 3, "function"),
            ("Billing", "billing.rb", 2, "class"),
        ] {
            let fs = ok(&mut m, "find_symbol", json!({"symbol": name}));
            let d = &fs["definitions"][0];
            assert_eq!(d["path"], path, "{mode:?} {name}: {fs}");
            assert_eq!(d["line"], line, "{mode:?} {name}: {fs}");
            assert_eq!(d["kind"], kind, "{mode:?} {name}: {fs}");
        }
        for name in ["rollback_all", "GhostInvoice"] {
            let fs = ok(&mut m, "find_symbol", json!({"symbol": name}));
            assert_eq!(fs["definitions"], json!([]), "{mode:?} {name}: {fs}");
        }
        let o = ok(&mut m, "file_outline", json!({"path": "deploy.sh"}));
        let names = names(&o, "items");
        assert_eq!(names, ["deploy_all"], "{o}");
    }
}

/// C written as real trees write it: well-known functions called in many
/// files and defined in a few, definitions in the places C allows one,
/// loop macros that a parser reads as broken code.
fn c_tree() -> Fixture {
    let fx = Fixture::new();
    fx.file(
        "include/slab.h",
        "#ifndef SLAB_H\n#define SLAB_H\nstatic inline void *\nkmalloc(unsigned long n, int flags)\n{\n\treturn alloc(n, flags);\n}\n#define kfree_sensitive(p) kfree(p)\nstruct allocator {\n\tvoid *(*kmalloc_hook)(unsigned long);\n};\ntypedef struct {\n\tint a;\n} slab_t;\n#endif\n",
    );
    for i in 0..30 {
        fx.file(
            &format!("drivers/d{i:02}.c"),
            format!(
                "#include \"slab.h\"\n\nstatic int probe{i}(void)\n{{\n\tint cpu;\n\tvoid *p = kmalloc(8, 0);\n\n\tfor_each_possible_cpu(cpu) {{\n\t\tuse(kmalloc(cpu, 0));\n\t}}\n\tif (!p) {{\n\t\treturn -1;\n\t}}\n\tkfree(p);\n\treturn 0;\n}}\n"
            ),
        );
    }
    fx.file(
        "mm/slab.c",
        "void kfree(const void *p)\n{\n\tstruct local { int kfree_count; } l;\n\ttypedef int local_t;\n\trelease(p);\n}\n",
    );
    fx
}

/// `find_symbol` over a C tree answers with exactly the definitions each
/// file's outline lists for the name: a name called in every file is found
/// where it is defined (split declarations, macros, types in a function
/// body), and the argument of a loop macro, which the parser
/// reads as a function when it recovers from the macro's body, is not a
/// definition anywhere.
#[test]
fn c_definitions_are_found_where_they_stand_and_nowhere_else() {
    let fx = c_tree();
    for mode in Mode::BOTH {
        let mut m = start(&fx.root, mode);
        let line_of = |fs: &serde_json::Value| -> Vec<(String, u64)> {
            defs(fs).into_iter().map(|(_, _, _, p, l)| (p, l)).collect()
        };
        for (name, want) in [
            ("kmalloc", vec![("include/slab.h", 4)]),
            ("kfree_sensitive", vec![("include/slab.h", 8)]),
            ("slab_t", vec![("include/slab.h", 14)]),
            ("kfree", vec![("mm/slab.c", 1)]),
            ("local", vec![("mm/slab.c", 3)]),
            ("local_t", vec![("mm/slab.c", 4)]),
            ("probe7", vec![("drivers/d07.c", 3)]),
            ("cpu", vec![]),
        ] {
            let fs = ok(&mut m, "find_symbol", json!({"symbol": name}));
            let want: Vec<(String, u64)> =
                want.iter().map(|(p, l)| ((*p).to_owned(), *l)).collect();
            assert_eq!(line_of(&fs), want, "{mode:?} {name}: {fs}");
            assert_eq!(fs["files_scanned"], 32, "{mode:?} {name}: {fs}");
        }
        // Each file's outline and find_symbol agree, name by name.
        for path in ["include/slab.h", "mm/slab.c", "drivers/d03.c"] {
            let outline = ok(&mut m, "file_outline", json!({"path": path}));
            let items = outline["items"].as_array().cloned().unwrap_or_default();
            assert!(
                items.iter().all(|i| i["name"] != "cpu"),
                "{mode:?} {path}: {outline}"
            );
            for item in &items {
                let name = item["name"].as_str().unwrap_or_default();
                let fs = ok(&mut m, "find_symbol", json!({"symbol": name, "path": path}));
                assert!(
                    line_of(&fs).contains(&(path.to_owned(), item["line"].as_u64().unwrap_or(0))),
                    "{mode:?} {path} {name}: {fs} vs {outline}"
                );
            }
        }
    }
}

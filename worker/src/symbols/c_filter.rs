//! Whether a C file can define a name, decided by one pass over its text
//! instead of a parse.
//!
//! A well-known C function is named in thousands of files of a large tree,
//! nearly always as a call inside a function body; parsing every one of them
//! to find the few that define it is what makes `find_symbol` slow. A file
//! where no occurrence of a wanted name stands where a definition can stand
//! has no definition of it, by the parser or by the patterns, and is not
//! parsed. The test is a superset: an occurrence *may* be a definition, and
//! the file is parsed as before, when any of these holds:
//!
//! - it is code on a line that starts in the first column (top-level C is
//!   written so, whatever the braces counted before it say);
//! - it is not inside a function body: at file level, or directly inside a
//!   `struct`/`union`/`enum`/`class` body, an initialiser, a namespace or any
//!   brace that does not follow a `)` (member declarations are definitions),
//!   or in the body of a `struct`/`union`/`enum`/`class` written inside a
//!   function;
//! - the word before it, with only white space between, is one that opens a
//!   definition in any language the patterns know (`struct`, `enum`,
//!   `typedef`'s `type`, `fn`, `define`, ...), in code, comments or strings
//!   alike, since the patterns read all three;
//! - its line opens with a modifier the patterns read (`static`, `public`,
//!   ...);
//! - inside a function body: its statement holds `typedef` (`typedef
//!   struct { ... } name;` included), or it is followed by a parenthesised
//!   list and then `{` (a nested function).
//!
//! Braces are counted in code only (not in comments, strings, character
//! literals or preprocessor lines); after `#else`/`#elif` the count goes back
//! to where it was at the `#if`, and after `#endif` it is where the first
//! branch left it, so code written twice for two configurations counts once.
//! The same reading decides which definitions a C parse reports
//! (every [`places`] of its names): the grammar cannot expand macros, and reads some uses as
//! definitions (a loop macro's argument as a nested function). The property
//! test below checks, over generated C, that every definition an outline
//! reports is in a file this test keeps for its name.

use std::collections::HashSet;

/// Words after which a name may be a definition: every word a pattern form
/// puts before the name, and C's own.
const BEFORE_NAME: &[&[u8]] = &[
    b"struct",
    b"union",
    b"enum",
    b"class",
    b"interface",
    b"trait",
    b"protocol",
    b"function",
    b"func",
    b"fn",
    b"def",
    b"sub",
    b"proc",
    b"type",
    b"typedef",
    b"const",
    b"let",
    b"var",
    b"val",
    b"export",
    b"define",
    b"module",
    b"namespace",
];

/// Words that, opening a line, make the patterns read it as a declaration.
const LINE_MODIFIERS: &[&[u8]] = &[
    b"static",
    b"public",
    b"private",
    b"protected",
    b"async",
    b"override",
    b"export",
    b"const",
    b"let",
    b"var",
    b"val",
    b"module",
];

/// How far a nested function's parameter list is followed.
const MAX_PARAMS: usize = 4096;

/// What an open brace opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Brace {
    /// A function body or a block inside one.
    Body,
    /// Anything else: a struct, union, enum or class body, an initialiser, a
    /// namespace.
    Other,
}

/// Where the walk is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum In {
    Code,
    LineComment,
    BlockComment,
    Text(u8),
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Where definitions can stand: a name and its 1-based line.
pub(super) type Places = HashSet<(String, u64)>;

/// Each occurrence in `source` (C) of a name `wants` accepts that stands
/// where a definition can (see the module docs), with its line: a file
/// with none cannot define such a name, and a definition read from the
/// file's tree is kept only at one of these.
pub(super) fn places(source: &str, wants: &dyn Fn(&str) -> bool) -> Places {
    let mut found = Places::new();
    let bytes = source.as_bytes();
    let mut line: u64 = 1;
    let mut braces: Vec<Brace> = Vec::new();
    // Each open `#if`: the braces at it, and where its first branch left
    // them once another branch starts.
    let mut conditionals: Vec<(Vec<Brace>, Option<Vec<Brace>>)> = Vec::new();
    let mut state = In::Code;
    // Code bytes only: the last one that is not white space.
    let mut last_code = b';';
    // The last word, when only white space has followed it.
    let mut word_before: Option<&[u8]> = None;
    let mut line_indented = false;
    let mut line_modifier = false;
    let mut line_first_word = true;
    let mut directive = false;
    // The brace depth of the statement that holds a `typedef`, until that
    // statement ends (its body's braces do not end it: `} name;` is its).
    let mut typedef_at: Option<usize> = None;
    // A `struct`/`union`/`enum`/`class` keyword was read and no `{`, `;`,
    // `(`, `)` or `=` since: the next `{` opens its body, in a function
    // body too.
    let mut aggregate_next = false;
    let mut at = 0;
    let mut line_start = true;
    while at < bytes.len() {
        let b = bytes[at];
        if line_start {
            line_start = false;
            line_indented = b == b' ' || b == b'\t';
            line_modifier = false;
            line_first_word = true;
            if state == In::Code {
                let rest = &bytes[at..];
                let hash = rest.iter().position(|c| *c != b' ' && *c != b'\t');
                if let Some(h) = hash.filter(|h| rest[*h] == b'#') {
                    directive = true;
                    preprocess(&rest[h + 1..], &mut braces, &mut conditionals);
                }
            }
        }
        match state {
            In::LineComment | In::Text(_) if b == b'\n' => {
                // A string or line comment ends at the line's end unless the
                // line ends in a backslash.
                let continued = at > 0 && bytes[at - 1] == b'\\';
                if !continued {
                    state = In::Code;
                    directive = false;
                }
            }
            In::Text(_) if b == b'\\' => {
                // The escaped byte is skipped; an escaped line end still
                // starts a line.
                at += 1;
                if bytes.get(at) == Some(&b'\n') {
                    line += 1;
                }
            }
            In::Text(quote) if b == quote => state = In::Code,
            In::BlockComment if b == b'*' && bytes.get(at + 1) == Some(&b'/') => {
                state = In::Code;
                at += 1;
                word_before = None;
            }
            In::Code if b == b'\n' => {
                let continued = at > 0 && bytes[at - 1] == b'\\';
                if !(directive && continued) {
                    directive = false;
                }
            }
            In::Code if b == b'/' && bytes.get(at + 1) == Some(&b'/') => {
                state = In::LineComment;
                word_before = None;
                at += 1;
            }
            In::Code if b == b'/' && bytes.get(at + 1) == Some(&b'*') => {
                state = In::BlockComment;
                word_before = None;
                at += 1;
            }
            In::Code if (b == b'"' || b == b'\'') => {
                state = In::Text(b);
                last_code = b;
                word_before = None;
            }
            _ if is_word(b) => {
                let start = at;
                while at < bytes.len() && is_word(bytes[at]) {
                    at += 1;
                }
                let word = &bytes[start..at];
                let first_word = line_first_word;
                line_first_word = false;
                if first_word && LINE_MODIFIERS.contains(&word) {
                    line_modifier = true;
                }
                if !word[0].is_ascii_digit() {
                    let in_code = state == In::Code && !directive;
                    let in_body = braces.last() == Some(&Brace::Body);
                    let stands = |rest: &[u8]| {
                        line_modifier
                            || word_before.is_some_and(|w| BEFORE_NAME.contains(&w))
                            || (in_code
                                && (!line_indented
                                    || !in_body
                                    || typedef_at.is_some()
                                    || nested_function(rest)))
                            || (directive && word_before == Some(b"define".as_slice()))
                    };
                    for name in wanted(word, wants) {
                        if stands(&bytes[at..]) {
                            found.insert((name.to_owned(), line));
                        }
                    }
                }
                if state == In::Code && !directive {
                    if word == b"typedef" {
                        typedef_at = Some(braces.len());
                    }
                    if matches!(word, b"struct" | b"union" | b"enum" | b"class") {
                        aggregate_next = true;
                    }
                    last_code = b'a';
                }
                word_before = Some(word);
                continue;
            }
            _ if b == b' ' || b == b'\t' || b == b'\r' || b == b'\n' || b == b'\x0c' => {}
            In::Code if !directive => {
                word_before = None;
                line_first_word = false;
                match b {
                    b'{' => {
                        let kind = if aggregate_next {
                            Brace::Other
                        } else if braces.last() == Some(&Brace::Body) || last_code == b')' {
                            Brace::Body
                        } else {
                            Brace::Other
                        };
                        braces.push(kind);
                        aggregate_next = false;
                    }
                    b'}' => {
                        braces.pop();
                        if typedef_at.is_some_and(|depth| braces.len() < depth) {
                            typedef_at = None;
                        }
                        aggregate_next = false;
                    }
                    b';' => {
                        if typedef_at.is_some_and(|depth| braces.len() <= depth) {
                            typedef_at = None;
                        }
                        aggregate_next = false;
                    }
                    b'(' | b')' | b'=' => aggregate_next = false,
                    _ => {}
                }
                last_code = b;
            }
            _ => {
                word_before = None;
                line_first_word = false;
            }
        }
        if b == b'\n' {
            line_start = true;
            line += 1;
        }
        at += 1;
    }
    found
}

/// The word, and for a word holding non-ASCII bytes (some of which a parser
/// or a pattern may not count as word characters) each of its ASCII runs,
/// that `wants` accepts.
fn wanted<'w>(word: &'w [u8], wants: &dyn Fn(&str) -> bool) -> Vec<&'w str> {
    let whole = std::str::from_utf8(word).ok().filter(|w| wants(w));
    let runs = word
        .split(|b| !b.is_ascii())
        .filter(|run| !word.is_ascii() && !run.is_empty())
        .filter_map(|run| std::str::from_utf8(run).ok())
        .filter(|run| wants(run));
    whole.into_iter().chain(runs).collect()
}

/// Reads a preprocessor line after its `#`: conditionals move the brace
/// count as the module docs say.
fn preprocess(
    after_hash: &[u8],
    braces: &mut Vec<Brace>,
    conditionals: &mut Vec<(Vec<Brace>, Option<Vec<Brace>>)>,
) {
    let text = after_hash.trim_ascii_start();
    let end = text
        .iter()
        .position(|c| !c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    match &text[..end] {
        b"if" | b"ifdef" | b"ifndef" => conditionals.push((braces.clone(), None)),
        b"else" | b"elif" | b"elifdef" | b"elifndef" => {
            if let Some((at_if, first)) = conditionals.last_mut() {
                if first.is_none() {
                    *first = Some(braces.clone());
                }
                braces.clone_from(at_if);
            }
        }
        b"endif" => {
            if let Some((_, Some(first))) = conditionals.pop() {
                *braces = first;
            }
        }
        _ => {}
    }
}

/// Whether `rest` (what follows a name) is white space, a parenthesised
/// list and then `{`: a function defined where the name stands.
fn nested_function(rest: &[u8]) -> bool {
    let rest = rest.trim_ascii_start();
    if rest.first() != Some(&b'(') {
        return false;
    }
    let mut depth = 0_usize;
    for (i, &b) in rest.iter().enumerate().take(MAX_PARAMS) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return rest[i + 1..].trim_ascii_start().first() == Some(&b'{');
                }
            }
            b';' | b'{' | b'}' => return false,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::places;

    fn may(source: &str, name: &str) -> bool {
        !places(source, &|w| w == name).is_empty()
    }

    #[test]
    fn calls_inside_function_bodies_are_not_definitions() {
        let src = "#include <x.h>\n\nstatic int f(void)\n{\n\tvoid *p = kmalloc(8, GFP);\n\treturn g(kmalloc(1, 2));\n}\n";
        assert!(!may(src, "kmalloc"));
        assert!(may(src, "f"));
        let after_block = "int f(void)\n{\n\tif (a) {\n\t\tb();\n\t}\n\tkfree(p);\n}\n";
        assert!(!may(after_block, "kfree"));
        let in_macro =
            "#define RELEASE(p) kfree(p)\n#define LOCK(x) \\\n\tdo { mutex_lock(x); } while (0)\n";
        assert!(!may(in_macro, "kfree"));
        assert!(!may(in_macro, "mutex_lock"));
        assert!(may(in_macro, "RELEASE"));
    }

    #[test]
    fn every_place_a_definition_can_stand_is_kept() {
        let body = |inner: &str| format!("int f(void)\n{{\n{inner}\n}}\n");
        for (src, name) in [
            ("void *kmalloc(size_t n);\n".to_owned(), "kmalloc"),
            ("static inline void *\n  kmalloc(size_t n) { return 0; }\n".to_owned(), "kmalloc"),
            ("struct ops {\n\tint (*open)(void);\n};\n".to_owned(), "open"),
            (body("\tstruct local { int a; } x;"), "local"),
            (body("\ttypedef int local_t;"), "local_t"),
            (body("\ttypedef struct { int a; }\n\t\tlocal_t;"), "local_t"),
            (body("\tint inner(int a) { return a; }"), "inner"),
            (body("\t#define LOCAL 1"), "LOCAL"),
            (body("\tstatic int counter;"), "counter"),
            (body("\tstruct { int (*cb)(void); } ops;"), "cb"),
            (body("\t/* struct named in a comment */"), "named"),
            (body("\tconst char *s = \"enum quoted\";"), "quoted"),
            ("#ifdef A\nint f(int a) {\n#else\nint f(long a) {\n#endif\n\treturn 0;\n}\n  int later;\n".to_owned(), "later"),
            ("int a[] = {\n\tkmalloc,\n};\n".to_owned(), "kmalloc"),
        ] {
            assert!(may(&src, name), "{name} in {src:?}");
        }
    }

    #[test]
    fn braces_in_comments_strings_and_directives_do_not_count() {
        let src = "int f(void)\n{\n\t/* } */ s = \"}\"; c = '}';\n#define CLOSE }\n\tx = kmalloc(1);\n}\n";
        assert!(!may(src, "kmalloc"));
    }

    /// Pieces of C (and of what is not quite C) that real files hold, in
    /// which the names below are defined, called, mentioned and quoted.
    const PIECES: &[&str] = &[
        "static int kmalloc(int n)\n{\n\treturn n;\n}\n",
        "void *foo(void)\n{\n\treturn kmalloc(1);\n}\n",
        "\tx = kmalloc(foo(2));\n",
        "struct bar {\n\tint (*kmalloc)(int);\n\tint count;\n};\n",
        "typedef struct {\n\tint a;\n} foo_t;\n",
        "\ttypedef int bar_t;\n",
        "#define kmalloc(n) foo(n)\n",
        "#define BAR 1\n",
        "#ifdef CONFIG_X\nint foo(int a) {\n#else\nint foo(long a) {\n#endif\n",
        "#if 0\n}\n#endif\n",
        "}\n",
        "{\n",
        "/* struct kmalloc is described here\n   enum bar too */\n",
        "// fn foo in a line comment\n",
        "\tconst char *s = \"struct foo {\";\n",
        "\tchar c = '{';\n",
        "int bar = 3, kmalloc_count;\n",
        "\tstatic int bar;\n",
        "\tstruct foo_s { int kmalloc; } v;\n",
        "\tint nested(int a) { return a; }\n",
        "enum e { kmalloc_a, bar_b };\n",
        "int old(a, b)\n\tint a; char *b;\n{\n\treturn foo(a);\n}\n",
        "SYSCALL_DEFINE2(kmalloc, int, a, int, b)\n{\n\treturn 0;\n}\n",
        "\tlist_for_each_entry(foo, head, bar) {\n\t\tkmalloc(1);\n\t}\n",
        "\tif (x) {\n\t\tfoo(bar);\n\t} else {\n\t\tkmalloc(2);\n\t}\n",
        "static const struct ops bar_ops = {\n\t.open = kmalloc,\n\t.close = foo,\n};\n",
        "  int indented_top = 1;\n",
        "\\\n",
        "int x = sizeof(struct kmalloc);\n",
        "\treturn (struct foo){ .a = 1 };\n",
        "na\u{ef}ve_kmalloc(1);\n",
        "struct kmalloc\u{b7} *p;\n",
    ];

    fn names(defs: &[moat_protocol::response::Definition]) -> Vec<String> {
        defs.iter().map(|d| d.name.clone()).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Every definition the outline's query reports (parsed, from a
        /// partial tree, or by the patterns) is in a file the filter keeps
        /// for its name, asked exactly and by a part of it: `find_symbol`
        /// never passes over a file whose outline lists the name.
        #[test]
        fn every_definition_found_is_in_a_kept_file(
            pieces in proptest::collection::vec((0..PIECES.len(), proptest::prelude::any::<bool>()), 1..25)
        ) {
            let source: String = pieces
                .iter()
                .map(|(i, indent)| if *indent { format!("\t{}", PIECES[*i]) } else { PIECES[*i].to_owned() })
                .collect();
            let everything = super::super::CompiledQuery::everything(10_000).unwrap();
            let found = everything.find_in_source(super::super::Language::C, "a.c", &source);
            for name in names(&found.definitions) {
                proptest::prop_assert!(may(&source, &name), "{name} in {source:?}");
                let query = super::super::CompiledQuery::new(&super::super::Query {
                    name: &name[..name.len().min(3)],
                    exact: false,
                    kind: None,
                })
                .unwrap();
                proptest::prop_assert!(
                    !places(&source, &|w| query.matches_name(w)).is_empty(),
                    "part of {name} in {source:?}"
                );
            }
        }
    }
}

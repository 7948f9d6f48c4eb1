//! `find_symbol`'s engine: where is a name defined in one file's text?
//!
//! Pure functions over a `&str`; the worker does the walking, reading and
//! budgeting, then calls [`CompiledQuery::find_in_source`] once per file.
//!
//! # Two methods, and the result says which
//!
//! - **Parsed** (exact): Python, JavaScript, TypeScript, Go, Rust, Java, C and
//!   C++ are parsed with tree-sitter grammars. A definition found this way is
//!   a real definition: a name inside a string or a comment is never one, and
//!   the qualified name (`Engine.start`, `app.core.Engine.run`) comes from the
//!   syntax tree.
//! - **Pattern** (heuristic): Ruby, Kotlin, C#, PHP, Swift, shell and SQL are
//!   matched with five regular expressions, which may report false
//!   positives. A file of a parsed language that does not parse cleanly (the
//!   tree has an `ERROR` or `MISSING` node), or that is larger than
//!   [`PARSE_MAX_BYTES`], falls back to the patterns and is reported
//!   [`FileDefinitions::unparseable`], so the caller can list it.
//!
//! # Matching
//!
//! Exact: the definition's name equals the query. Inexact: the query is a
//! case-insensitive substring of the name (Unicode simple case folding, as
//! the `regex` crate does it). Qualified names are reported, not matched.
//!
//! A file in which the query text cannot occur at all (checked with one fast
//! literal search) is not parsed: it cannot hold a definition of the name,
//! and it is not reported unparseable even if it has syntax errors. That keeps
//! a query over thousands of files close to the cost of a text search.
//!
//! # Lines, names and signatures
//!
//! `line` is the line of the defined *name* (so a decorator, annotation or
//! `template <...>` line above it does not count). `qualified_name` is
//! dotted: enclosing classes, `impl` types, Go receivers, namespaces and
//! modules (Rust `mod`, TS `namespace`, C++ `namespace`), and enclosing
//! functions for nested definitions; a file-level name is unqualified.
//! Parsed signatures are the definition's header as written, up to its body
//! (`async def f(a, *args, b: int = 1, **kw) -> str`, `pub fn new(name: &str)
//! -> Self`, `export const f = (a) =>`), with comments, decorators and
//! annotations dropped, whitespace collapsed and cut to
//! [`SIGNATURE_CHARS`]; variables show no value (`TIMEOUT = ...`).
//!
//! # Kinds (judgment calls, per language)
//!
//! | Kind | Reported for |
//! |---|---|
//! | `class` | Python classes; Rust structs, enums, unions, traits; Go struct and interface types; JS/TS classes, TS interfaces and enums; Java classes, interfaces, enums, records, annotation types; C/C++ structs, unions, enums and classes that have a body |
//! | `function` | free functions, including functions nested in functions (qualified `outer.inner`); Rust `macro_rules!`; C function-like macros; TS overload and `declare` signatures |
//! | `method` | functions directly in a class body (Python), `impl`/trait bodies (Rust), Go methods (qualified by receiver type) and interface methods, JS/TS class and object-literal methods (and class fields holding a function), Java methods and constructors, C++ member functions declared or defined in a class and out-of-class `A::f` definitions |
//! | `variable` | module-level and class-body assignments to a bare name (Python; function locals are not definitions); Rust `const`/`static` items; Go package-level `const`/`var`; Java `static` fields and interface constants; C/C++ file- and namespace-level variables (not `extern`), `static` data members and object-like `#define`s; JS/TS `static` class fields |
//! | `type` | Python `type X = ...` and `X: TypeAlias = ...`; Rust `type` items and associated types; Go non-struct, non-interface type definitions and aliases; TS type aliases; C/C++ `typedef` and `using X = ...` |
//! | `binding` | JS/TS `const`/`let`/`var` at module or namespace level (locals are not reported) |
//!
//! Enum members, struct fields, instance fields and local variables are not
//! reported. Nested scopes deeper than [`MAX_SCOPE_DEPTH`] are not searched.
//!
//! # Hostile input
//!
//! Nothing here recurses: tree walks use an explicit stack, and signatures
//! are rendered with a bounded cursor walk. Files over [`PARSE_MAX_BYTES`]
//! are not parsed; a parse is abandoned (and the file falls back to
//! patterns) once the parser is recovering from an error in every version,
//! or when it runs past a time allowance of 50 ms + 2 µs a byte (tree-sitter's
//! error recovery can be quadratic on garbage); an optional deadline
//! interrupts a parse; the number of definitions kept per file is capped.
//! The pattern method uses the linear-time `regex` crate.

mod cfamily;
mod ecmascript;
mod go;
mod java;
mod language;
mod pattern;
mod python;
mod rust;
#[cfg(test)]
mod testutil;
mod treesitter;

use std::fmt;
use std::time::Instant;

use moat_protocol::limits::{
    MAX_PAGED_ITEMS, MAX_SEARCH_RESULTS_MAX, MAX_SYMBOL_CHARS, SIGNATURE_CHARS,
};
use moat_protocol::request::SymbolKind;
use moat_protocol::response::{Definition, SymbolMethod};
use regex::{Regex, RegexBuilder};

pub use language::Language;

/// Largest file (in bytes) that is parsed. Larger files of a parsed language
/// are matched with patterns and reported unparseable.
///
/// Why: tree-sitter parses ordinary code at roughly 10 MB/s, but adversarial
/// one-line files run several times slower and the tree costs tens of bytes
/// per node; 1 MiB (the default `max_file_bytes`) bounds one file's parse
/// to a fraction of a second and a few tens of MiB.
pub const PARSE_MAX_BYTES: usize = 1024 * 1024;

/// Deepest nesting of named scopes (classes, functions, namespaces, ...) that
/// is searched; definitions nested deeper are not reported. Real code stays
/// far below it; it bounds the qualified-name length on hostile input.
pub const MAX_SCOPE_DEPTH: usize = 64;

/// Largest compiled symbol regex, in bytes (the bound `search_code` uses).
/// The name is escaped, so this only bounds what a 200-character name, the
/// Unicode `\w` classes and case folding can add up to; it is never reached.
const REGEX_SIZE_LIMIT: usize = 4 * 1024 * 1024;
/// Largest lazy-DFA cache of one symbol regex, in bytes.
const REGEX_DFA_SIZE_LIMIT: usize = 8 * 1024 * 1024;

/// What to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query<'a> {
    /// The name (the worker strips surrounding whitespace first).
    pub name: &'a str,
    /// Exact name equality; else a case-insensitive substring.
    pub exact: bool,
    /// Only definitions of this kind; `None` = any.
    pub kind: Option<SymbolKind>,
}

/// The definitions found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDefinitions {
    /// In source order. Parsed definitions carry `method: parsed`; a file
    /// that fell back to patterns has only `method: pattern` ones.
    pub definitions: Vec<Definition>,
    /// A file of a parsed language that was matched with patterns instead:
    /// it has a syntax error, or it is larger than [`PARSE_MAX_BYTES`]. The
    /// caller lists it in `unparseable_files`.
    pub unparseable: bool,
    /// The deadline passed while parsing; `definitions` is empty and the
    /// caller should stop (see [`CompiledQuery::find_in_source_until`]).
    pub timed_out: bool,
    /// How many definitions of the name the file has under the kinds a kind
    /// filter left out (empty without a filter): an empty answer can then
    /// say what the name is instead of only "not found".
    pub other_kinds: KindCounts,
}

/// Definitions counted by kind, in [`SymbolKind`] order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindCounts(Vec<(SymbolKind, u64)>);

impl KindCounts {
    /// Count one definition of `kind`.
    pub fn add(&mut self, kind: SymbolKind) {
        self.add_n(kind, 1);
    }

    fn add_n(&mut self, kind: SymbolKind, n: u64) {
        match self.0.binary_search_by_key(&kind, |&(k, _)| k) {
            Ok(i) => {
                if let Some((_, count)) = self.0.get_mut(i) {
                    *count = count.saturating_add(n);
                }
            }
            Err(i) => self.0.insert(i, (kind, n)),
        }
    }

    /// Add every count of `other`.
    pub fn merge(&mut self, other: &KindCounts) {
        for &(kind, n) in &other.0 {
            self.add_n(kind, n);
        }
    }

    /// Whether nothing was counted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The counts, in [`SymbolKind`] order.
    #[must_use]
    pub fn into_vec(self) -> Vec<(SymbolKind, u64)> {
        self.0
    }
}

/// Why a [`Query`] cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// The name is empty.
    EmptyName,
    /// The name is longer than `limit` characters.
    NameTooLong {
        /// [`MAX_SYMBOL_CHARS`].
        limit: usize,
    },
    /// A pattern built from the name did not compile (the regex's message).
    Pattern(String),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::EmptyName => f.write_str("the symbol name is empty"),
            QueryError::NameTooLong { limit } => {
                write!(f, "the symbol name is longer than {limit} characters")
            }
            QueryError::Pattern(message) => write!(f, "the symbol pattern is invalid: {message}"),
        }
    }
}

impl std::error::Error for QueryError {}

/// A [`Query`] with its regular expressions compiled, to reuse across every
/// file of one `find_symbol` call. It is `Send + Sync`: share it between
/// walker threads by reference.
#[derive(Debug, Clone)]
pub struct CompiledQuery {
    name: String,
    exact: bool,
    kind: Option<SymbolKind>,
    /// Finds the query text anywhere in a file (case-insensitively when
    /// inexact); also decides inexact name matches, so the two agree.
    literal: Regex,
    patterns: pattern::PatternSet,
    max_results: usize,
    /// Every name matches (an outline, not a query).
    any_name: bool,
}

impl CompiledQuery {
    /// Compile a query: the name must be 1 to [`MAX_SYMBOL_CHARS`] characters.
    ///
    /// # Errors
    /// [`QueryError`] for an empty or over-long name.
    pub fn new(query: &Query<'_>) -> Result<CompiledQuery, QueryError> {
        if query.name.is_empty() {
            return Err(QueryError::EmptyName);
        }
        if query.name.chars().count() > MAX_SYMBOL_CHARS {
            return Err(QueryError::NameTooLong {
                limit: MAX_SYMBOL_CHARS,
            });
        }
        let literal = RegexBuilder::new(&regex::escape(query.name))
            .case_insensitive(!query.exact)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
            .build()
            .map_err(|e| QueryError::Pattern(e.to_string()))?;
        let patterns = pattern::PatternSet::new(query.name, query.exact)
            .map_err(|e| QueryError::Pattern(e.to_string()))?;
        Ok(CompiledQuery {
            name: query.name.to_owned(),
            exact: query.exact,
            kind: query.kind,
            literal,
            patterns,
            max_results: MAX_SEARCH_RESULTS_MAX as usize,
            any_name: false,
        })
    }

    /// The query every definition matches, whatever its name or kind: a
    /// file's outline.
    fn everything(max_results: usize) -> Result<CompiledQuery, QueryError> {
        let literal = Regex::new("").map_err(|e| QueryError::Pattern(e.to_string()))?;
        let patterns =
            pattern::PatternSet::any().map_err(|e| QueryError::Pattern(e.to_string()))?;
        Ok(CompiledQuery {
            name: String::new(),
            exact: true,
            kind: None,
            literal,
            patterns,
            max_results: max_results.max(1),
            any_name: true,
        })
    }

    /// Keep at most `max` definitions per file (default:
    /// [`MAX_SEARCH_RESULTS_MAX`]; ceiling: that plus the paging reach,
    /// [`MAX_PAGED_ITEMS`], so a later page still sees every definition
    /// before it); the first ones in source order are kept. Pass what the
    /// whole call can report (its page, the pages before it, and one more):
    /// a file can never contribute more.
    #[must_use]
    pub fn with_max_results(mut self, max: usize) -> CompiledQuery {
        let ceiling = MAX_SEARCH_RESULTS_MAX as usize + MAX_PAGED_ITEMS as usize + 1;
        self.max_results = max.clamp(1, ceiling);
        self
    }

    /// The name being looked for.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a definition called `name` matches (exact equality, or a
    /// case-insensitive substring).
    #[must_use]
    pub fn matches_name(&self, name: &str) -> bool {
        if self.any_name {
            true
        } else if self.exact {
            name == self.name
        } else {
            self.literal.is_match(name)
        }
    }

    /// Whether the query text occurs anywhere in `source` (a file where it
    /// does not cannot define the name).
    #[must_use]
    pub fn may_occur_in(&self, source: &str) -> bool {
        self.any_name || self.literal.is_match(source)
    }

    /// Whether the query's kind filter leaves out definitions of `kind`.
    fn filters_out(&self, kind: SymbolKind) -> bool {
        self.kind.is_some_and(|k| k != kind)
    }

    /// Whether a definition of this name and kind is wanted.
    fn wants(&self, name: &str, kind: SymbolKind) -> bool {
        self.kind.is_none_or(|k| k == kind) && self.matches_name(name)
    }

    /// The definitions in one file. `rel_path` is the workspace-relative
    /// POSIX path to put in each [`Definition`]; its suffix also picks the TSX
    /// grammar for `.tsx` files.
    #[must_use]
    pub fn find_in_source(&self, lang: Language, rel_path: &str, source: &str) -> FileDefinitions {
        self.find_in_source_until(lang, rel_path, source, None)
    }

    /// As [`find_in_source`](Self::find_in_source), but a parse still running
    /// at `deadline` is abandoned and the result is
    /// [`timed_out`](FileDefinitions::timed_out) with no definitions.
    #[must_use]
    pub fn find_in_source_until(
        &self,
        lang: Language,
        rel_path: &str,
        source: &str,
        deadline: Option<Instant>,
    ) -> FileDefinitions {
        if !self.may_occur_in(source) {
            return FileDefinitions::default();
        }
        let mut unparseable = false;
        if lang.is_parsed() {
            if source.len() <= PARSE_MAX_BYTES {
                match treesitter::extents(self, lang, rel_path, source, deadline) {
                    Ok((found, other_kinds)) => {
                        return FileDefinitions {
                            definitions: found
                                .into_iter()
                                .map(|(d, extent)| named(d, &extent, source).0)
                                .collect(),
                            unparseable: false,
                            timed_out: false,
                            other_kinds,
                        };
                    }
                    Err(treesitter::Outcome::TimedOut) => {
                        return FileDefinitions {
                            timed_out: true,
                            ..FileDefinitions::default()
                        };
                    }
                    Err(treesitter::Outcome::SyntaxError) => {}
                }
            }
            unparseable = true;
        }
        let mut other_kinds = KindCounts::default();
        let mut definitions = self
            .patterns
            .find(self, lang, rel_path, source, &mut other_kinds);
        for d in &mut definitions {
            pattern_kind(d).clone_into(&mut d.language_kind);
        }
        FileDefinitions {
            definitions,
            unparseable,
            timed_out: false,
            other_kinds,
        }
    }
}

/// The definitions of `query` in one file; see [`CompiledQuery`], which a
/// caller scanning many files should build once and reuse. A query that does
/// not compile (empty or over-long name) finds nothing.
#[must_use]
pub fn find_in_source(
    lang: Language,
    rel_path: &str,
    source: &str,
    query: &Query<'_>,
) -> FileDefinitions {
    match CompiledQuery::new(query) {
        Ok(compiled) => compiled.find_in_source(lang, rel_path, source),
        Err(_) => FileDefinitions::default(),
    }
}

/// One definition of a file's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineEntry {
    /// The definition as `find_symbol` reports it.
    pub definition: Definition,
    /// What the language calls it (`struct`, `trait`, `interface`, ...).
    pub kind: &'static str,
    /// 1-based last line (the first line when the method cannot tell).
    pub end_line: u64,
}

/// A file's outline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// Definitions in source order, at most the `max` asked for.
    pub entries: Vec<OutlineEntry>,
    /// The method used; `None` when the deadline passed during the parse.
    pub method: Option<SymbolMethod>,
    /// More than `max` definitions were found.
    pub truncated: bool,
}

/// Every definition in one file, by the parser where the language has one
/// and the file parses, else by the patterns (`find_symbol`'s two methods,
/// with the same kinds), each with what its language calls it and where it
/// ends.
#[must_use]
pub fn outline(
    lang: Language,
    rel_path: &str,
    source: &str,
    max: usize,
    deadline: Option<Instant>,
) -> Outline {
    let Ok(query) = CompiledQuery::everything(max.saturating_add(1)) else {
        return Outline::default();
    };
    let finish = |mut entries: Vec<OutlineEntry>, method| {
        let truncated = entries.len() > max;
        entries.truncate(max);
        Outline {
            entries,
            method: Some(method),
            truncated,
        }
    };
    if lang.is_parsed() && source.len() <= PARSE_MAX_BYTES {
        match treesitter::extents(&query, lang, rel_path, source, deadline) {
            Ok((found, _)) => {
                let entries = found
                    .into_iter()
                    .map(|(definition, extent)| {
                        let (definition, kind) = named(definition, &extent, source);
                        OutlineEntry {
                            kind,
                            end_line: extent.end_line.max(definition.line),
                            definition,
                        }
                    })
                    .collect();
                return finish(entries, SymbolMethod::Parsed);
            }
            Err(treesitter::Outcome::TimedOut) => return Outline::default(),
            Err(_) => {}
        }
    }
    let entries = query
        .patterns
        .find(&query, lang, rel_path, source, &mut KindCounts::default())
        .into_iter()
        .map(|mut definition| {
            let kind = pattern_kind(&definition);
            kind.clone_into(&mut definition.language_kind);
            OutlineEntry {
                kind,
                end_line: definition.line,
                definition,
            }
        })
        .collect();
    finish(entries, SymbolMethod::Pattern)
}

/// Whether each byte range of `source` is code rather than inside a string
/// or a comment, by the language's parser; `None` when it has none, the file
/// is too large to parse or does not parse cleanly, or the deadline passed.
#[must_use]
pub fn code_ranges(
    lang: Language,
    rel_path: &str,
    source: &str,
    ranges: &[std::ops::Range<usize>],
    deadline: Option<Instant>,
) -> Option<Vec<bool>> {
    if !lang.is_parsed() || source.len() > PARSE_MAX_BYTES {
        return None;
    }
    treesitter::code_ranges(lang, rel_path, source, ranges, deadline)
}

/// What the language calls a parsed definition, from the grammar's node
/// kind: `find_symbol`'s kinds are coarse (a Rust `struct` and a Java
/// `interface` are both `class` there); an outline names them as written.
/// `definition` with [`Definition::language_kind`] filled in from its
/// syntax node, and that word.
fn named(
    mut definition: Definition,
    extent: &treesitter::Extent,
    source: &str,
) -> (Definition, &'static str) {
    let word = language_kind(&extent.node_kind, definition.kind, source, &definition);
    word.clone_into(&mut definition.language_kind);
    (definition, word)
}

fn language_kind(
    node_kind: &str,
    kind: SymbolKind,
    source: &str,
    definition: &Definition,
) -> &'static str {
    let named = match node_kind {
        "struct_item" | "struct_specifier" => Some("struct"),
        "enum_item" | "enum_specifier" | "enum_declaration" => Some("enum"),
        "union_item" | "union_specifier" => Some("union"),
        "trait_item" => Some("trait"),
        "class_definition" | "class_declaration" | "class_specifier" | "class" => Some("class"),
        "abstract_class_declaration" => Some("abstract class"),
        "interface_declaration" => Some("interface"),
        "record_declaration" => Some("record"),
        "annotation_type_declaration" => Some("annotation type"),
        "constructor_declaration" => Some("constructor"),
        "const_item" | "const_spec" => Some("const"),
        "static_item" => Some("static"),
        "var_spec" => Some("var"),
        "macro_definition" | "preproc_def" | "preproc_function_def" => Some("macro"),
        "type_definition" => Some("typedef"),
        "alias_declaration" => Some("using"),
        "type_alias_declaration" => Some("type alias"),
        "field_declaration" if kind == SymbolKind::Variable => Some("field"),
        "lexical_declaration" | "variable_declaration" => {
            // `const`, `let` or `var`: the keyword the binding was written with.
            let at = source
                .lines()
                .nth(usize::try_from(definition.line.saturating_sub(1)).unwrap_or(usize::MAX))
                .unwrap_or("");
            ["const", "let", "var"]
                .into_iter()
                .find(|k| at.split(|c: char| !c.is_alphanumeric()).any(|w| w == *k))
        }
        "type_spec" => {
            let sig = definition.signature.as_str();
            if sig.contains(" struct") {
                Some("struct")
            } else if sig.contains(" interface") {
                Some("interface")
            } else {
                Some("type")
            }
        }
        _ => None,
    };
    named.unwrap_or(match kind {
        SymbolKind::Class => "class",
        SymbolKind::Function => "function",
        SymbolKind::Method => "method",
        SymbolKind::Variable => "variable",
        SymbolKind::Type => "type",
        SymbolKind::Binding => "binding",
    })
}

/// What a pattern-found definition is called: the keyword it was found by.
fn pattern_kind(definition: &Definition) -> &'static str {
    const KEYWORDS: [&str; 17] = [
        "class",
        "interface",
        "trait",
        "struct",
        "enum",
        "protocol",
        "function",
        "func",
        "fn",
        "def",
        "sub",
        "proc",
        "type",
        "const",
        "let",
        "var",
        "val",
    ];
    let words: Vec<&str> = definition
        .signature
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .collect();
    words
        .iter()
        .find_map(|w| KEYWORDS.iter().find(|k| *k == w).copied())
        .unwrap_or(definition.kind.as_str())
}

/// Sort one call's definitions for the answer: parsed before
/// pattern, then by path, then by line (stable, so a file's same-line
/// definitions keep their source order).
pub fn sort_definitions(definitions: &mut [Definition]) {
    definitions.sort_by(|a, b| {
        let rank = |d: &Definition| d.method != SymbolMethod::Parsed;
        (rank(a), &a.path, a.line).cmp(&(rank(b), &b.path, b.line))
    });
}

/// Collapse every run of whitespace in `text` to one space, trim the ends,
/// and keep at most `limit` characters. Stops reading once the limit is
/// reached, so a huge input costs no more than a short one.
fn collapse_whitespace(text: &str, limit: usize) -> String {
    let mut out = String::new();
    let mut count = 0usize;
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = count > 0;
            continue;
        }
        if pending_space {
            if count == limit {
                break;
            }
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        if count == limit {
            break;
        }
        out.push(c);
        count += 1;
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

/// Cut `text` to [`SIGNATURE_CHARS`] characters.
fn cut_signature(mut text: String) -> String {
    if let Some((index, _)) = text.char_indices().nth(SIGNATURE_CHARS) {
        text.truncate(index);
    }
    text
}

#[cfg(test)]
mod tests {
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
                "(", "{", "def", " ", ":", "\n", "class", "[", ")", "<", "fn", "x", "'", "\"",
                "/*", "#",
            ];
            let garbage: String = (0..300_000usize)
                .map(|i| tokens[(i * 7919) % tokens.len()])
                .collect();
            for lang in Language::ALL {
                let found = survives(lang.name(), || {
                    find_in_source(lang, "g", &garbage, &loose("x"))
                });
                assert_eq!(found.unparseable, lang.is_parsed(), "{}", lang.name());
            }
        }
    }
}

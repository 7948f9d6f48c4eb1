//! `find_symbol`'s engine: where is a name defined in one file's text?
//!
//! Pure functions over a `&str`; the worker does the walking, reading and
//! budgeting, then calls [`CompiledQuery::find_in_source_until`] once per file.
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
//!   positives.
//! - **Partial** (exact where it answers): a file of a parsed language whose
//!   tree has error nodes (a C file full of macros the grammar cannot
//!   expand) is read from that tree, passing over the error nodes: a
//!   definition outside them is as exact as in a clean tree, one inside them
//!   is not found. Only a file the parser gives up on (over its time
//!   allowance) or larger than [`PARSE_MAX_BYTES`] falls back to the
//!   patterns and is reported [`FileDefinitions::unparseable`], so the
//!   caller can list it.
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

mod c_filter;
mod language;
mod lexical;
mod pattern;
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
    #[cfg(test)]
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

    /// [`find_in_source_until`](Self::find_in_source_until) with no deadline.
    #[cfg(test)]
    #[must_use]
    pub fn find_in_source(&self, lang: Language, rel_path: &str, source: &str) -> FileDefinitions {
        self.find_in_source_until(lang, rel_path, source, None)
    }

    /// The definitions in one file. `rel_path` is the workspace-relative
    /// POSIX path to put in each [`Definition`]; its suffix also picks the TSX
    /// grammar for `.tsx` files. A parse still running at `deadline` is
    /// abandoned and the result is [`timed_out`](FileDefinitions::timed_out)
    /// with no definitions.
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
        // A C file where the name stands only where no definition can
        // (calls in function bodies, nearly always) is not parsed; where it
        // is, the same places keep its definitions.
        let places = (lang == Language::C && !self.any_name)
            .then(|| c_filter::places(source, &|name| self.matches_name(name)));
        if places.as_ref().is_some_and(c_filter::Places::is_empty) {
            return FileDefinitions::default();
        }
        let mut unparseable = false;
        if lang.is_parsed() {
            if source.len() <= PARSE_MAX_BYTES {
                match treesitter::extents(self, lang, rel_path, source, deadline, places.as_ref()) {
                    Ok(found) => {
                        let partial = found.partial;
                        let mut definitions: Vec<Definition> = found
                            .definitions
                            .into_iter()
                            .map(|(d, extent)| partially(named(d, &extent, source).0, partial))
                            .collect();
                        let other_kinds = found.other_kinds;
                        // Where the grammar read nothing, the patterns
                        // look (never at what the tree read, so never in
                        // its comments or strings).
                        let mut fell_back = false;
                        if !found.error_lines.is_empty() {
                            let mut ignored = KindCounts::default();
                            for mut d in
                                self.patterns
                                    .find(self, lang, rel_path, source, &mut ignored)
                            {
                                let inside = found
                                    .error_lines
                                    .iter()
                                    .any(|(a, b)| (*a..=*b).contains(&d.line));
                                let known = definitions
                                    .iter()
                                    .any(|t| t.line == d.line && t.name == d.name);
                                if inside && !known {
                                    pattern_kind(&d).clone_into(&mut d.language_kind);
                                    definitions.push(d);
                                    fell_back = true;
                                }
                            }
                            definitions.sort_by_key(|d| d.line);
                        }
                        return FileDefinitions {
                            definitions,
                            unparseable: fell_back,
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
#[cfg(test)]
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
    /// A group of definitions rather than one (a Rust `impl` block): no
    /// `find_symbol` kind counts it.
    pub group: bool,
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
        match treesitter::extents(&query, lang, rel_path, source, deadline, None) {
            Ok(found) => {
                let partial = found.partial;
                let entries = found
                    .definitions
                    .into_iter()
                    .map(|(definition, extent)| {
                        let (definition, kind) = named(definition, &extent, source);
                        OutlineEntry {
                            group: extent.node_kind == "impl_item",
                            kind,
                            end_line: extent.end_line.max(definition.line),
                            definition: partially(definition, partial),
                        }
                    })
                    .collect();
                let method = if partial {
                    SymbolMethod::Partial
                } else {
                    SymbolMethod::Parsed
                };
                return finish(entries, method);
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
                group: false,
            }
        })
        .collect();
    finish(entries, SymbolMethod::Pattern)
}

/// Whether each byte range of `source` (in ascending order) is code rather
/// than inside a string or a comment: for C and C++ by a lexer
/// ([`lexical`], which always answers), otherwise by the language's parser;
/// `None` when it has none, the file is too large to parse or does not
/// parse cleanly, or the deadline passed.
#[must_use]
pub fn code_ranges(
    lang: Language,
    rel_path: &str,
    source: &str,
    ranges: &[std::ops::Range<usize>],
    deadline: Option<Instant>,
) -> Option<Vec<bool>> {
    if matches!(lang, Language::C | Language::Cpp) {
        return Some(lexical::c_code_ranges(source, ranges));
    }
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
/// `definition`, marked as read from a partial tree when `partial`.
fn partially(mut definition: Definition, partial: bool) -> Definition {
    if partial {
        definition.method = SymbolMethod::Partial;
    }
    definition
}

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
        "impl_item" => Some("impl"),
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
        let rank = |d: &Definition| d.method == SymbolMethod::Pattern;
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
mod tests;

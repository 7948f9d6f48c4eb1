//! The parsed method: tree-sitter parsing, one walk of the tree, and the
//! shared machinery the per-language rules (this folder's `python.rs`,
//! `rust.rs`, `go.rs`, `ecmascript.rs`, `java.rs`, `cfamily.rs`) are written
//! against; they use it, and this file dispatches to them by grammar.
//!
//! # Flow
//!
//! 1. Parse with the language's grammar (a thread-local [`Parser`] is
//!    reused). The parse is abandoned as soon as every parse version is in
//!    error recovery (the tree would have an `ERROR` node) or the deadline
//!    passes. A finished tree with an `ERROR` or `MISSING` node anywhere is a
//!    syntax error too. C files that fail with the C grammar are retried
//!    with the C++ one (`.h` headers are often C++); TypeScript is tried with
//!    the TypeScript and the TSX grammar, in the order the suffix suggests.
//! 2. Walk the tree in document order with an explicit stack (no recursion:
//!    a 100,000-deep tree costs heap, not native stack). For each named node
//!    the language's `visit` function may emit definitions and says whether
//!    to skip the node's children, descend into them, or enter a new scope
//!    (class, function, namespace, ...), which extends qualified names.
//! 3. Signatures are the definition's header text (from its start to its
//!    body), comments and annotations removed, whitespace collapsed, cut to
//!    160 characters; rendering stops reading once it has enough text.

use std::time::Instant;

use moat_protocol::limits::SIGNATURE_CHARS;
use moat_protocol::request::SymbolKind;
use moat_protocol::response::{Definition, SymbolMethod};
use tree_sitter::{Node, Tree};

mod cfamily;
mod ecmascript;
mod go;
mod java;
mod parse;
mod python;
mod rust;

use super::{CompiledQuery, KindCounts, Language, MAX_SCOPE_DEPTH, c_filter, cut_signature};
use parse::{Parsed, parse};

/// Why a file gave no tree.
pub(crate) enum Outcome {
    /// The file has a syntax error in every grammar tried.
    SyntaxError,
    /// The deadline passed during the parse.
    TimedOut,
}

/// A grammar and the rules that read its trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grammar {
    Python,
    Rust,
    Go,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    C,
    Cpp,
}

/// A language's rule: look at one named node, maybe emit, say where to go.
type Visit = fn(Node<'_>, &mut Cx<'_>) -> Step;

impl Grammar {
    fn language(self) -> tree_sitter::Language {
        match self {
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
            Grammar::C => tree_sitter_c::LANGUAGE.into(),
            Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    fn visit(self) -> Visit {
        match self {
            Grammar::Python => python::visit,
            Grammar::Rust => rust::visit,
            Grammar::Go => go::visit,
            Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => ecmascript::visit,
            Grammar::Java => java::visit,
            Grammar::C | Grammar::Cpp => cfamily::visit,
        }
    }

    /// Node kinds left out of signatures (comments, annotations, decorators).
    fn skipped_in_signatures(self) -> &'static [&'static str] {
        match self {
            Grammar::Python | Grammar::Go | Grammar::C | Grammar::Cpp => &["comment"],
            Grammar::Rust => &["line_comment", "block_comment", "attribute_item"],
            Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => &["comment", "decorator"],
            Grammar::Java => &[
                "line_comment",
                "block_comment",
                "marker_annotation",
                "annotation",
            ],
        }
    }

    /// Node kinds shown as `{...}` in signatures (bodies inside a typedef).
    fn elided_in_signatures(self) -> &'static [&'static str] {
        match self {
            Grammar::C | Grammar::Cpp => &["field_declaration_list", "enumerator_list"],
            _ => &[],
        }
    }
}

/// The grammars to try for a language, in order.
fn grammars(lang: Language, rel_path: &str) -> &'static [Grammar] {
    match lang {
        Language::Python => &[Grammar::Python],
        Language::JavaScript => &[Grammar::JavaScript],
        Language::TypeScript => {
            let tsx = rel_path.len() >= 4
                && rel_path.is_char_boundary(rel_path.len() - 4)
                && rel_path[rel_path.len() - 4..].eq_ignore_ascii_case(".tsx");
            if tsx {
                &[Grammar::Tsx, Grammar::TypeScript]
            } else {
                &[Grammar::TypeScript, Grammar::Tsx]
            }
        }
        Language::Go => &[Grammar::Go],
        Language::Rust => &[Grammar::Rust],
        Language::Java => &[Grammar::Java],
        Language::C => &[Grammar::C, Grammar::Cpp],
        Language::Cpp => &[Grammar::Cpp],
        Language::Ruby
        | Language::Kotlin
        | Language::CSharp
        | Language::Php
        | Language::Swift
        | Language::Shell
        | Language::Sql => &[],
    }
}

/// Where a parsed definition ends and what its syntax node is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Extent {
    /// 1-based last line of the definition's node.
    pub(crate) end_line: u64,
    /// The grammar's kind of the node the definition was found at
    /// (`struct_item`, `class_declaration`, ...).
    pub(crate) node_kind: String,
}

/// What [`extents`] found in one file.
pub(crate) struct Found {
    /// The definitions, in source order, each with its [`Extent`].
    pub(crate) definitions: Vec<(Definition, Extent)>,
    /// Definitions of the name under the kinds the query left out.
    pub(crate) other_kinds: KindCounts,
    /// Read from a tree with error nodes: the definitions outside them.
    pub(crate) partial: bool,
    /// The lines (1-based, inclusive) of the outermost error nodes of a
    /// partial tree, where the grammar read nothing.
    pub(crate) error_lines: Vec<(u64, u64)>,
}

/// Parse `source` and collect the definitions `query` wants. A file that
/// parses with errors in every grammar tried (a C file full of macros the
/// grammar cannot expand is the common case) is read from the tree with the
/// least text inside error nodes: every definition outside them is as exact
/// as in a clean tree, and the answer says the tree was partial. `Err` says
/// why the file gave no tree at all (the parse ran over its allowance, or
/// the deadline passed).
pub(crate) fn extents(
    query: &CompiledQuery,
    lang: Language,
    rel_path: &str,
    source: &str,
    deadline: Option<Instant>,
    places: Option<&c_filter::Places>,
) -> Result<Found, Outcome> {
    let mut best: Option<(usize, Grammar, Tree)> = None;
    for &grammar in grammars(lang, rel_path) {
        match parse(grammar, source, deadline, true) {
            Parsed::Tree(tree) => {
                let mut cx = Cx::new(query, lang, rel_path, source, grammar);
                walk(&tree, grammar.visit(), &mut cx);
                let (mut definitions, other_kinds) = cx.finish();
                standing_only(lang, source, places, &mut definitions);
                return Ok(Found {
                    definitions,
                    other_kinds,
                    partial: false,
                    error_lines: Vec::new(),
                });
            }
            Parsed::Partial(tree) => {
                let errors: usize = errors(&tree).iter().map(|n| n.byte_range().len()).sum();
                if best.as_ref().is_none_or(|(b, _, _)| errors < *b) {
                    best = Some((errors, grammar, tree));
                }
            }
            Parsed::Error => {}
            Parsed::TimedOut => return Err(Outcome::TimedOut),
        }
    }
    let Some((_, grammar, tree)) = best else {
        return Err(Outcome::SyntaxError);
    };
    let mut cx = Cx::new(query, lang, rel_path, source, grammar);
    walk(&tree, grammar.visit(), &mut cx);
    let (mut definitions, other_kinds) = cx.finish();
    standing_only(lang, source, places, &mut definitions);
    let error_lines = errors(&tree)
        .iter()
        .map(|n| {
            let line = |row: usize| u64::try_from(row).unwrap_or(u64::MAX).saturating_add(1);
            (line(n.start_position().row), line(n.end_position().row))
        })
        .collect();
    Ok(Found {
        definitions,
        other_kinds,
        partial: true,
        error_lines,
    })
}

/// Keeps, of a C file's definitions, those whose name stands where a
/// definition can (`c_filter`; `places` when the caller has them already): a macro the grammar cannot expand makes it
/// read uses as definitions, with or without error nodes (a loop macro
/// `for_each_cpu(cpu) { ... }` in a function body parses as a nested
/// function named `cpu`).
fn standing_only(
    lang: Language,
    source: &str,
    places: Option<&c_filter::Places>,
    definitions: &mut Vec<(Definition, Extent)>,
) {
    if lang != Language::C || definitions.is_empty() {
        return;
    }
    let found;
    let places = if let Some(known) = places {
        known
    } else {
        let names: std::collections::HashSet<&str> =
            definitions.iter().map(|(d, _)| d.name.as_str()).collect();
        found = c_filter::places(source, &|w| names.contains(w));
        &found
    };
    definitions.retain(|(d, _)| places.contains(&(d.name.clone(), d.line)));
}

/// The outermost error nodes of `tree`.
fn errors(tree: &Tree) -> Vec<Node<'_>> {
    let mut found = Vec::new();
    let mut stack = vec![tree.root_node()];
    let mut cursor = tree.walk();
    while let Some(node) = stack.pop() {
        if node.is_error() {
            found.push(node);
            continue;
        }
        if !node.has_error() {
            continue;
        }
        cursor.reset(node);
        if cursor.goto_first_child() {
            loop {
                stack.push(cursor.node());
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
    }
    found
}

/// Whether each byte range of `source` lies in code rather than inside a
/// string or a comment, by the language's parser: `None` when the language
/// has none or the file does not parse cleanly (or the deadline passed).
///
/// A range is outside code when a node containing it is a comment or a
/// string literal, unless a nearer one is an interpolation back into code
/// (`${x}` in a template string, `{x}` in an f-string).
pub(crate) fn code_ranges(
    lang: Language,
    rel_path: &str,
    source: &str,
    ranges: &[std::ops::Range<usize>],
    deadline: Option<Instant>,
) -> Option<Vec<bool>> {
    for &grammar in grammars(lang, rel_path) {
        match parse(grammar, source, deadline, false) {
            Parsed::Tree(tree) => {
                let root = tree.root_node();
                return Some(
                    ranges
                        .iter()
                        .map(|r| {
                            root.descendant_for_byte_range(r.start, r.end)
                                .is_none_or(in_code)
                        })
                        .collect(),
                );
            }
            Parsed::Partial(_) | Parsed::Error => {}
            Parsed::TimedOut => return None,
        }
    }
    None
}

/// Whether `node` is code: no ancestor (itself included) up to the nearest
/// interpolation is a comment, a string or a character literal.
fn in_code(node: Node<'_>) -> bool {
    let mut at = Some(node);
    while let Some(n) = at {
        let kind = n.kind();
        if matches!(
            kind,
            "interpolation" | "template_substitution" | "format_expression"
        ) {
            return true;
        }
        if kind.contains("comment")
            || kind.contains("string")
            || kind == "char_literal"
            || kind == "character_literal"
            || kind == "rune_literal"
            || kind == "heredoc_body"
            || kind == "text_block"
            || kind == "regex"
        {
            return false;
        }
        at = n.parent();
    }
    true
}

/// What the walk does after visiting a node.
pub(crate) enum Step {
    /// Do not look inside this node.
    Skip,
    /// Visit the children in the same scope.
    Descend,
    /// Visit the children in the same scope, and let signatures of
    /// definitions directly inside start at this node (`export`, `declare`,
    /// `template <...>` prefixes).
    Wrap,
    /// Visit the children in a new scope of this kind and name (an empty
    /// name adds nothing to qualified names, e.g. an anonymous function).
    Enter(ScopeKind, String),
}

/// What kind of scope definitions are in; decides method vs function and
/// whether a variable is module-level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    /// The file itself.
    File,
    /// A namespace or module block (C++ `namespace`, Rust `mod`, TS `namespace`).
    Namespace,
    /// A class, struct, interface or trait body.
    Class,
    /// A Rust `impl` block.
    Impl,
    /// A JavaScript object literal bound to a name.
    Object,
    /// A function, method or lambda body.
    Function,
}

struct Scope {
    name: String,
    kind: ScopeKind,
    parent: usize,
    depth: usize,
}

/// The walk's state, as the per-language rules see it.
pub(crate) struct Cx<'a> {
    /// The file's text.
    pub(crate) src: &'a str,
    query: &'a CompiledQuery,
    lang: Language,
    rel_path: &'a str,
    grammar: Grammar,
    scopes: Vec<Scope>,
    current: usize,
    outer: Option<Node<'a>>,
    /// The node being visited (a definition emitted now ends where it does).
    visiting: Option<Node<'a>>,
    found: Vec<(usize, Definition, (Extent, u16))>,
    /// Definitions of the name under a kind the query filtered out.
    other_kinds: KindCounts,
}

impl<'a> Cx<'a> {
    fn new(
        query: &'a CompiledQuery,
        lang: Language,
        rel_path: &'a str,
        src: &'a str,
        grammar: Grammar,
    ) -> Self {
        Cx {
            src,
            query,
            lang,
            rel_path,
            grammar,
            scopes: vec![Scope {
                name: String::new(),
                kind: ScopeKind::File,
                parent: 0,
                depth: 0,
            }],
            current: 0,
            outer: None,
            visiting: None,
            found: Vec::new(),
            other_kinds: KindCounts::default(),
        }
    }

    /// The kind of the scope the visited node is in.
    pub(crate) fn scope(&self) -> ScopeKind {
        self.scopes
            .get(self.current)
            .map_or(ScopeKind::File, |s| s.kind)
    }

    /// Whether the visited node is at module level (the file or a namespace).
    pub(crate) fn at_top_level(&self) -> bool {
        matches!(self.scope(), ScopeKind::File | ScopeKind::Namespace)
    }

    /// The text of `node` (empty if out of range, which cannot happen for a
    /// tree of this source).
    pub(crate) fn text(&self, node: Node<'_>) -> &'a str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// The text of `node`'s field `field`.
    pub(crate) fn field_text(&self, node: Node<'_>, field: &str) -> Option<&'a str> {
        node.child_by_field_name(field).map(|n| self.text(n))
    }

    /// Whether the walk builds an outline (every definition, and the
    /// groups an outline shows its items under, such as Rust `impl` blocks)
    /// rather than answers a query.
    pub(crate) fn is_outline(&self) -> bool {
        self.query.any_name
    }

    /// Whether a definition of this name and kind is wanted (cheap: check
    /// before building anything).
    pub(crate) fn wants(&self, name: &str, kind: SymbolKind) -> bool {
        self.query.wants(name, kind)
    }

    /// Record a definition named `name` (its line is `at`'s), qualified by
    /// the enclosing scopes, then `prefix` (a Go receiver, a C++ `A::`
    /// qualifier), if the query wants it. `signature` is only called then.
    pub(crate) fn emit(
        &mut self,
        name: &str,
        at: Node<'_>,
        prefix: Option<&str>,
        kind: SymbolKind,
        signature: impl FnOnce(&Self) -> String,
    ) {
        if name.is_empty() || self.is_full() {
            return;
        }
        if !self.wants(name, kind) {
            if self.query.filters_out(kind) && self.query.matches_name(name) {
                self.other_kinds.add(kind);
            }
            return;
        }
        let signature = cut_signature(signature(self));
        let mut parts: Vec<&str> = Vec::new();
        let mut index = self.current;
        while index != 0 {
            let Some(scope) = self.scopes.get(index) else {
                break;
            };
            if !scope.name.is_empty() {
                parts.push(&scope.name);
            }
            index = scope.parent;
        }
        parts.reverse();
        if let Some(prefix) = prefix.filter(|p| !p.is_empty()) {
            parts.push(prefix);
        }
        parts.push(name);
        let definition = Definition {
            name: name.to_owned(),
            qualified_name: parts.join("."),
            kind,
            line: u64::try_from(at.start_position().row)
                .unwrap_or(u64::MAX)
                .saturating_add(1),
            signature,
            path: self.rel_path.to_owned(),
            language: self.lang.name().to_owned(),
            method: SymbolMethod::Parsed,
            language_kind: String::new(),
        };
        let (end, node_kind) = self
            .visiting
            .map_or((at.end_position().row, at.kind_id()), |n| {
                (n.end_position().row, n.kind_id())
            });
        let extent = Extent {
            end_line: u64::try_from(end).unwrap_or(u64::MAX).saturating_add(1),
            node_kind: String::new(),
        };
        let node_kind = (extent, node_kind);
        self.found.push((at.start_byte(), definition, node_kind));
    }

    fn is_full(&self) -> bool {
        self.found.len() >= self.query.max_results
    }

    /// The header of a definition: from its start (or the start of an
    /// enclosing `export`/`template` wrapper) to byte `end`, usually the
    /// start of its body.
    pub(crate) fn header(&self, node: Node<'_>, end: usize) -> String {
        match self
            .outer
            .filter(|outer| outer.start_byte() <= node.start_byte())
        {
            Some(outer) => self.render(outer, end),
            None => self.render(node, end),
        }
    }

    /// The header of a definition up to its field `body` (or its end).
    pub(crate) fn header_to_field(&self, node: Node<'_>, field: &str) -> String {
        let end = node
            .child_by_field_name(field)
            .map_or(node.end_byte(), |b| b.start_byte());
        self.header(node, end)
    }

    /// `node`'s own text up to byte `end`, ignoring any wrapper.
    pub(crate) fn snippet(&self, node: Node<'_>, end: usize) -> String {
        self.render(node, end)
    }

    /// Render the source of `node` up to byte `end`: comments and
    /// annotations dropped, typedef bodies elided, whitespace collapsed,
    /// trailing `: { = ; ,` trimmed, cut to the signature cap. Reads only as
    /// far as the cap needs.
    fn render(&self, node: Node<'_>, end: usize) -> String {
        let start = node.start_byte();
        let end = end.min(node.end_byte()).max(start);
        let skipped = self.grammar.skipped_in_signatures();
        let elided = self.grammar.elided_in_signatures();
        let mut out = Collapsed::new(SIGNATURE_CHARS + 8);
        let mut pos = start;
        let mut cursor = node.walk();
        'walk: loop {
            let n = cursor.node();
            if n.start_byte() >= end || out.is_full() {
                break;
            }
            let kind = n.kind();
            let descend = if skipped.contains(&kind) || elided.contains(&kind) {
                out.push(self.src.get(pos..n.start_byte()).unwrap_or(""));
                if elided.contains(&kind) {
                    out.push(" {...} ");
                }
                pos = pos.max(n.end_byte());
                false
            } else if n.child_count() == 0 {
                let stop = n.end_byte().min(end);
                if stop > pos {
                    out.push(self.src.get(pos..stop).unwrap_or(""));
                    pos = stop;
                }
                false
            } else {
                true
            };
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        if !out.is_full() && pos < end {
            out.push(self.src.get(pos..end).unwrap_or(""));
        }
        out.finish()
    }

    fn finish(mut self) -> (Vec<(Definition, Extent)>, KindCounts) {
        self.found.sort_by_key(|(offset, _, _)| *offset);
        self.found.truncate(self.query.max_results);
        let language = self.grammar.language();
        let found = self
            .found
            .into_iter()
            .map(|(_, d, (mut e, id))| {
                language
                    .node_kind_for_id(id)
                    .unwrap_or("")
                    .clone_into(&mut e.node_kind);
                (d, e)
            })
            .collect();
        (found, self.other_kinds)
    }
}

/// Walk the tree in document order, without recursion.
fn walk<'t>(tree: &'t Tree, visit: Visit, cx: &mut Cx<'t>) {
    struct Frame<'t> {
        node: Node<'t>,
        scope: usize,
        outer: Option<Node<'t>>,
    }
    let mut stack = vec![Frame {
        node: tree.root_node(),
        scope: 0,
        outer: None,
    }];
    let mut cursor = tree.walk();
    let mut children: Vec<Node<'_>> = Vec::new();
    while let Some(frame) = stack.pop() {
        if cx.is_full() {
            break;
        }
        if frame.node.is_error() {
            // Text the grammar could not read: nothing in it is taken as a
            // definition (it may be a macro's arguments, or half of one).
            continue;
        }
        cx.current = frame.scope;
        cx.outer = frame.outer;
        cx.visiting = Some(frame.node);
        let (scope, outer) = match visit(frame.node, cx) {
            Step::Skip => continue,
            Step::Descend => (frame.scope, None),
            Step::Wrap => (frame.scope, Some(frame.outer.unwrap_or(frame.node))),
            Step::Enter(kind, name) => {
                let depth = cx.scopes.get(frame.scope).map_or(0, |s| s.depth) + 1;
                if depth > MAX_SCOPE_DEPTH {
                    continue;
                }
                cx.scopes.push(Scope {
                    name,
                    kind,
                    parent: frame.scope,
                    depth,
                });
                (cx.scopes.len() - 1, None)
            }
        };
        children.clear();
        cursor.reset(frame.node);
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() {
                    children.push(child);
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        stack.extend(
            children
                .drain(..)
                .rev()
                .map(|node| Frame { node, scope, outer }),
        );
    }
}

/// The named children of `node`, in order.
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Whether `node` has a direct child (named or not) of kind `kind`, such as
/// the `static` keyword.
pub(crate) fn has_child_kind(node: Node<'_>, kind: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|c| c.kind() == kind)
}

/// The children of `node` in field `field`, in order.
pub(crate) fn field_children<'t>(node: Node<'t>, field: &str) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children_by_field_name(field, &mut cursor).collect()
}

/// A whitespace-collapsing string builder that stops at a character limit.
struct Collapsed {
    out: String,
    chars: usize,
    limit: usize,
    pending_space: bool,
}

impl Collapsed {
    fn new(limit: usize) -> Self {
        Collapsed {
            out: String::new(),
            chars: 0,
            limit,
            pending_space: false,
        }
    }

    fn is_full(&self) -> bool {
        self.chars >= self.limit
    }

    fn push(&mut self, text: &str) {
        for c in text.chars() {
            if self.is_full() {
                return;
            }
            if c.is_whitespace() {
                self.pending_space = self.chars > 0;
                continue;
            }
            if self.pending_space {
                self.pending_space = false;
                // No space just inside brackets: `(\n  a,\n)` reads `(a,)`.
                let after_open = self.out.ends_with(['(', '[']);
                if !after_open && !matches!(c, ')' | ']' | ',') {
                    self.out.push(' ');
                    self.chars += 1;
                }
            }
            self.out.push(c);
            self.chars += 1;
        }
    }

    fn finish(self) -> String {
        let trimmed = self.out.trim_end_matches([' ', ':', '{', '=', ';', ',']);
        cut_signature(trimmed.to_owned())
    }
}

#[cfg(test)]
mod tests;

//! The "pattern" method: five regular expressions that recognise
//! common definition forms in any language.
//!
//! Used for the languages without a parser (Ruby, Kotlin, C#, PHP, Swift,
//! shell, SQL) and for files of parsed languages that do not parse. Results
//! may be false positives (a definition inside a comment or a string), which
//! is why they carry `method: pattern`.
//!
//! The five forms of every language, tried in this order, multi-line:
//! 1. `class`: `class|interface|trait|struct|enum|protocol`, whitespace, name;
//! 2. `function`: `function|func|fn|def|sub|proc`, whitespace, name;
//! 3. `method`: at a line start, modifiers (`public|private|protected|static|
//!    async|override`), a type token, the name, then `(`;
//! 4. `type`: `type`, whitespace, name;
//! 5. `binding`: at a line start, optional `export`, `const|let|var|val`,
//!    the name, then `:` or `=`.
//!
//! and the forms of one language that the five do not cover: a Ruby
//! `module` (a class), a shell function written `name() {` (a function).
//!
//! A match that starts after a line comment's opener on its line (`#` in
//! the languages whose comments start so, `//` in the C family, `--` in
//! SQL) or on a line that continues a block comment (`*`, `/*`) is a word in
//! a comment, not a definition, and is not reported.
//!
//! Exact mode inserts the escaped name, case-sensitively; inexact mode
//! inserts `\w*name\w*`, case-insensitively. The reported line is the line
//! of the *name* (a leading `^\s*` can start a match on an earlier blank
//! line), and results are in source order (forms break ties) rather than
//! grouped by form. Matches are not de-duplicated across forms: a line that
//! two forms recognise is reported once per form.
//!
//! The `regex` crate matches in linear time, so no input can make these
//! expressions backtrack; each is compiled once per query.

use moat_protocol::limits::SIGNATURE_CHARS;
use moat_protocol::request::SymbolKind;
use moat_protocol::response::{Definition, SymbolMethod};
use regex::{Regex, RegexBuilder};

use super::{CompiledQuery, KindCounts, Language, collapse_whitespace};

/// The forms: kind, the template with `{symbol}` where the name goes, and
/// the languages it applies to (empty: every language).
const FORMS: [(SymbolKind, &str, &[Language]); 7] = [
    (
        SymbolKind::Class,
        r"\b(?:class|interface|trait|struct|enum|protocol)\s+(?P<name>{symbol})\b",
        &[],
    ),
    (
        SymbolKind::Function,
        r"\b(?:function|func|fn|def|sub|proc)\s+(?P<name>{symbol})\b",
        &[],
    ),
    (
        SymbolKind::Method,
        r"^\s*(?:(?:public|private|protected|static|async|override)\s+)+[\w<>\[\],.?]+\s+(?P<name>{symbol})\s*\(",
        &[],
    ),
    (SymbolKind::Type, r"\btype\s+(?P<name>{symbol})\b", &[]),
    (
        SymbolKind::Binding,
        r"^\s*(?:export\s+)?(?:const|let|var|val)\s+(?P<name>{symbol})\s*[:=]",
        &[],
    ),
    (
        SymbolKind::Class,
        r"^\s*module\s+(?:\w+::)*(?P<name>{symbol})\b",
        &[Language::Ruby],
    ),
    (
        SymbolKind::Function,
        r"^\s*(?P<name>{symbol})\s*\(\s*\)\s*\{?\s*$",
        &[Language::Shell],
    ),
];

/// The forms compiled for one name.
#[derive(Debug, Clone)]
pub(crate) struct PatternSet {
    forms: Vec<(SymbolKind, Regex, &'static [Language])>,
}

impl PatternSet {
    /// Compile the forms for `name`.
    pub(crate) fn new(name: &str, exact: bool) -> Result<PatternSet, regex::Error> {
        let escaped = regex::escape(name);
        let fragment = if exact {
            escaped
        } else {
            format!(r"\w*{escaped}\w*")
        };
        PatternSet::with_fragment(&fragment, !exact)
    }

    /// Compile the forms with `fragment` where the name goes.
    fn with_fragment(fragment: &str, case_insensitive: bool) -> Result<PatternSet, regex::Error> {
        let forms = FORMS
            .iter()
            .map(|&(kind, template, languages)| {
                let pattern = template.replace("{symbol}", fragment);
                RegexBuilder::new(&pattern)
                    .multi_line(true)
                    .case_insensitive(case_insensitive)
                    .size_limit(super::REGEX_SIZE_LIMIT)
                    .dfa_size_limit(super::REGEX_DFA_SIZE_LIMIT)
                    .build()
                    .map(|regex| (kind, regex, languages))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PatternSet { forms })
    }

    /// The forms for any name (a file's outline): any word.
    pub(crate) fn any() -> Result<PatternSet, regex::Error> {
        PatternSet::with_fragment(r"\w+", false)
    }

    /// The definitions the forms find in `source`, in source order, at most
    /// `query.max_results` of them. Forms of a kind the query filters out
    /// are run too, only to count their matches of the name in `other_kinds`.
    pub(crate) fn find(
        &self,
        query: &CompiledQuery,
        lang: Language,
        rel_path: &str,
        source: &str,
        other_kinds: &mut KindCounts,
    ) -> Vec<Definition> {
        // (byte offset of the name, form index, definition)
        let mut found: Vec<(usize, usize, Definition)> = Vec::new();
        for (form, (kind, regex, languages)) in self.forms.iter().enumerate() {
            if !languages.is_empty() && !languages.contains(&lang) {
                continue;
            }
            if query.filters_out(*kind) {
                for captures in regex.captures_iter(source) {
                    if captures.name("name").is_some_and(|name| {
                        query.matches_name(name.as_str()) && !in_comment(lang, source, name.start())
                    }) {
                        other_kinds.add(*kind);
                    }
                }
                continue;
            }
            let mut line = 1u64;
            let mut counted_to = 0usize;
            let mut kept = 0usize;
            for captures in regex.captures_iter(source) {
                let (Some(whole), Some(name)) = (captures.get(0), captures.name("name")) else {
                    continue;
                };
                if !query.matches_name(name.as_str()) || in_comment(lang, source, name.start()) {
                    continue;
                }
                line += count_newlines(&source[counted_to..name.start()]);
                counted_to = name.start();
                found.push((
                    name.start(),
                    form,
                    Definition {
                        name: name.as_str().to_owned(),
                        qualified_name: name.as_str().to_owned(),
                        kind: *kind,
                        line,
                        signature: collapse_whitespace(whole.as_str(), SIGNATURE_CHARS),
                        path: rel_path.to_owned(),
                        language: lang.name().to_owned(),
                        method: SymbolMethod::Pattern,
                        language_kind: String::new(),
                    },
                ));
                kept += 1;
                if kept >= query.max_results {
                    break;
                }
            }
        }
        found.sort_by_key(|&(offset, form, _)| (offset, form));
        found.truncate(query.max_results);
        found
            .into_iter()
            .map(|(_, _, definition)| definition)
            .collect()
    }
}

/// Whether the byte at `at` is in a comment, as far as its own line tells:
/// after a line comment's opener, or on a line that continues a block
/// comment. A `#` that opens a C preprocessor directive is not a comment.
fn in_comment(lang: Language, source: &str, at: usize) -> bool {
    let line_start = source[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &source[line_start..at];
    let lead = before.trim_start();
    let hash = matches!(
        lang,
        Language::Python | Language::Ruby | Language::Shell | Language::Php
    );
    let slashes = !matches!(
        lang,
        Language::Python | Language::Ruby | Language::Shell | Language::Sql
    );
    (hash && before.contains('#'))
        || (slashes && (before.contains("//") || lead.starts_with("/*") || lead.starts_with('*')))
        || (lang == Language::Sql && before.contains("--"))
}

fn count_newlines(text: &str) -> u64 {
    text.bytes().filter(|&b| b == b'\n').count() as u64
}

#[cfg(test)]
mod tests {
    use super::super::Query;
    use super::*;

    fn find(lang: Language, source: &str, name: &str, exact: bool) -> Vec<Definition> {
        let query = CompiledQuery::new(&Query {
            name,
            exact,
            kind: None,
        })
        .expect("compiles");
        query
            .patterns
            .find(&query, lang, "f", source, &mut KindCounts::default())
    }

    fn summary(found: &[Definition]) -> Vec<(SymbolKind, u64, &str)> {
        found
            .iter()
            .map(|d| (d.kind, d.line, d.signature.as_str()))
            .collect()
    }

    #[test]
    fn shell_functions_and_ruby_modules_are_definitions_words_in_comments_are_not() {
        let shell = "#!/bin/sh\ndeploy_all() {\n  :\n}\nfunction other {\n  :\n}\n# helper() {\n";
        assert_eq!(
            summary(&find(Language::Shell, shell, "deploy_all", true)),
            [(SymbolKind::Function, 2, "deploy_all() {")]
        );
        assert!(find(Language::Shell, shell, "helper", true).is_empty());
        let ruby = "# class Fake in a comment\nmodule Billing::Core\n  class Invoice\n  end\nend\n";
        assert_eq!(
            summary(&find(Language::Ruby, ruby, "Core", true)),
            [(SymbolKind::Class, 2, "module Billing::Core")]
        );
        assert!(find(Language::Ruby, ruby, "Fake", true).is_empty());
        // The language's own forms stay with it: `module` is not a Swift class.
        assert!(find(Language::Swift, "module Billing\n", "Billing", true).is_empty());
        let kotlin = "// class Ghost\n/*\n * class Phantom\n */\nclass Real\n";
        assert!(find(Language::Kotlin, kotlin, "Ghost", true).is_empty());
        assert!(find(Language::Kotlin, kotlin, "Phantom", true).is_empty());
        assert_eq!(find(Language::Kotlin, kotlin, "Real", true).len(), 1);
    }

    #[test]
    fn every_form_compiles_for_awkward_names() {
        for name in [
            "x",
            "a.b",
            "(",
            "\\d",
            "é",
            "名前",
            &"n".repeat(200),
            &"ǅſK".repeat(66),
        ] {
            for exact in [true, false] {
                assert!(PatternSet::new(name, exact).is_ok(), "{name}");
            }
        }
    }

    #[test]
    fn each_form_reports_its_kind() {
        let source = "class Thing\nfunc Thing()\n  public static Thing Thing(int a)\ntype Thing struct\nexport const Thing = 1\n";
        let found = find(Language::Kotlin, source, "Thing", true);
        assert_eq!(
            summary(&found),
            [
                (SymbolKind::Class, 1, "class Thing"),
                (SymbolKind::Function, 2, "func Thing"),
                (SymbolKind::Method, 3, "public static Thing Thing("),
                (SymbolKind::Type, 4, "type Thing"),
                (SymbolKind::Binding, 5, "export const Thing ="),
            ]
        );
    }

    #[test]
    fn the_line_is_the_line_of_the_name_not_of_leading_blank_lines() {
        let found = find(
            Language::CSharp,
            "\n\n\n    public void Run()\n",
            "Run",
            true,
        );
        assert_eq!(
            summary(&found),
            [(SymbolKind::Method, 4, "public void Run(")]
        );
    }

    #[test]
    fn matches_are_not_deduplicated_across_forms() {
        // One line that both the function form and the method form match:
        // reported twice, in form order.
        let found = find(Language::Swift, "public static fn X()\n", "X", true);
        assert_eq!(
            summary(&found),
            [
                (SymbolKind::Function, 1, "fn X"),
                (SymbolKind::Method, 1, "public static fn X(")
            ]
        );
    }

    #[test]
    fn exact_is_case_sensitive_and_whole_word() {
        let source = "def runner\ndef Run\ndef run\n";
        let found = find(Language::Ruby, source, "run", true);
        assert_eq!(summary(&found), [(SymbolKind::Function, 3, "def run")]);
    }

    #[test]
    fn inexact_is_case_insensitive_and_takes_the_whole_word() {
        let source = "def runner\ndef Run\ndef other\n";
        let found = find(Language::Ruby, source, "RUN", false);
        let names: Vec<&str> = found.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["runner", "Run"]);
    }

    #[test]
    fn signatures_collapse_whitespace_and_are_cut() {
        let name = "n".repeat(200);
        let source = format!("class\n\n   {name}\n");
        let found = find(Language::Php, &source, &name, true);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].line, 3);
        assert_eq!(found[0].signature.chars().count(), SIGNATURE_CHARS);
        assert!(found[0].signature.starts_with("class nnn"));
    }

    #[test]
    fn a_kind_filter_skips_the_other_forms() {
        let query = CompiledQuery::new(&Query {
            name: "X",
            exact: true,
            kind: Some(SymbolKind::Type),
        })
        .expect("compiles");
        let mut others = KindCounts::default();
        let found = query.patterns.find(
            &query,
            Language::Go,
            "f",
            "class X\ntype X int\nfunc X() {}\nclass Y\n",
            &mut others,
        );
        assert_eq!(summary(&found), [(SymbolKind::Type, 2, "type X")]);
        // The skipped forms are counted, for the name only.
        assert_eq!(
            others.into_vec(),
            [(SymbolKind::Class, 1), (SymbolKind::Function, 1)]
        );
    }
}

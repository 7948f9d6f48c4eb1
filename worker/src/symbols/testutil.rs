//! Test support shared by the per-language parser tests.

use moat_protocol::request::SymbolKind;
use moat_protocol::response::SymbolMethod;

use super::{Language, Query, find_in_source};

/// One expected definition: qualified name, kind, line, signature.
pub(crate) type Expected<'a> = (&'a str, SymbolKind, u64, &'a str);

/// Assert that `source` (a `lang` file) parses and that the exact-name query
/// `name` finds exactly `expected`, in order, all by the parser.
#[track_caller]
pub(crate) fn assert_parsed(
    lang: Language,
    path: &str,
    source: &str,
    name: &str,
    expected: &[Expected<'_>],
) {
    let found = find_in_source(
        lang,
        path,
        source,
        &Query {
            name,
            exact: true,
            kind: None,
        },
    );
    assert!(!found.unparseable, "{name}: the file did not parse");
    assert!(
        found
            .definitions
            .iter()
            .all(|d| d.method == SymbolMethod::Parsed && d.language == lang.name()),
        "{name}: {:?}",
        found.definitions
    );
    let got: Vec<Expected<'_>> = found
        .definitions
        .iter()
        .map(|d| {
            (
                d.qualified_name.as_str(),
                d.kind,
                d.line,
                d.signature.as_str(),
            )
        })
        .collect();
    assert_eq!(got, expected, "{name}");
}

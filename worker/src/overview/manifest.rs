//! What a dependency manifest declares, for `project_overview`.
//!
//! Shallow on purpose: a project's name, version and the
//! *names* of its direct dependencies, never a resolved graph (that would
//! need the network). Four manifests are understood:
//!
//! | File | Declares |
//! |---|---|
//! | `pyproject.toml` | `[project]` `name`, `version`, `requires-python`, and the names in `dependencies` (each requirement cut at the first of `< > = ! ~ [ ; ( @`, space or tab; empties dropped; sorted, de-duplicated) |
//! | `package.json` | `name`, `version`, the keys of `dependencies` and of `scripts`, sorted; the `workspaces` patterns (a list, or `{packages: [...]}`) |
//! | `Cargo.toml` | `[package]` `name` and `version`, the keys of `[dependencies]`, sorted; the `[workspace] members` patterns |
//! | `go.mod` | the `module` path, the `go` version, and every required module path, sorted and de-duplicated |
//!
//! The other [`MANIFESTS`] are listed by the overview but declare nothing.
//! Workspace member patterns are given as written; the overview resolves
//! them to the member directories its walk found ([`resolve_members`]).
//!
//! A value of the wrong type (`name = 5`, a `dependencies` string) is treated
//! as absent, not as an error; text that does not parse gives
//! [`Declares::ParseError`] with a short lower-case message that quotes no
//! file content beyond the parser's own words. Nothing here panics: the
//! TOML and JSON parsers bound their nesting depth.
//!
//! `go.mod` is read by hand. A single-line `require path v1.2.3` counts too,
//! as does every line of a `require ( ... )` block; `// indirect`
//! requirements are kept (they are real requirements of the build); lines of
//! `replace`, `exclude`, `retract`, `tool` and `godebug` blocks are not
//! dependencies.

use moat_protocol::response::Declares;
use toml::{Table, Value};

/// The manifests the overview looks for, directly in the surveyed
/// directory, in this order (16 names).
pub const MANIFESTS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "requirements.txt",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "CMakeLists.txt",
    "Makefile",
    "Dockerfile",
    "docker-compose.yml",
    "docker-compose.yaml",
];

/// Longest [`Declares::ParseError`] message, in characters.
pub const PARSE_ERROR_CHARS: usize = 200;

/// What the manifest `file_name` declares, given its text (the caller reads
/// at most `OVERVIEW_MAX_FILE_BYTES` of a regular file). `None` for a
/// manifest that declares nothing moat understands (`Makefile`, ...), and for
/// empty text.
#[must_use]
pub fn declares(file_name: &str, content: &str) -> Option<Declares> {
    if content.is_empty() {
        return None;
    }
    match file_name {
        "pyproject.toml" => Some(pyproject(content)),
        "package.json" => Some(package_json(content)),
        "Cargo.toml" => Some(cargo(content)),
        "go.mod" => Some(go_mod(content)),
        _ => None,
    }
}

fn pyproject(content: &str) -> Declares {
    let document = match toml::from_str::<Table>(content) {
        Ok(document) => document,
        Err(error) => return toml_error(content, &error),
    };
    let project = document.get("project").and_then(Value::as_table);
    let field = |key: &str| {
        project
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut dependencies: Vec<String> = project
        .and_then(|p| p.get("dependencies"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(requirement_name)
                .collect()
        })
        .unwrap_or_default();
    dependencies.retain(|name| !name.is_empty());
    dependencies.sort();
    dependencies.dedup();
    Declares::Pyproject {
        name: field("name"),
        version: field("version"),
        requires_python: field("requires-python"),
        dependencies,
    }
}

/// The distribution name of a PEP 508 requirement: `httpx>=0.28` → `httpx`,
/// `uvicorn[standard]` → `uvicorn`, `pkg @ https://...` → `pkg`.
fn requirement_name(requirement: &str) -> String {
    let requirement = requirement.trim_start();
    let end = requirement
        .find(['<', '>', '=', '!', '~', '[', ';', ' ', '\t', '(', '@'])
        .unwrap_or(requirement.len());
    requirement[..end].to_owned()
}

fn package_json(content: &str) -> Declares {
    let document = match serde_json::from_str::<serde_json::Value>(content) {
        Ok(document) => document,
        Err(error) => return parse_error(&error.to_string()),
    };
    let Some(object) = document.as_object() else {
        return parse_error("package.json is not an object");
    };
    let string = |key: &str| {
        object
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let keys = |key: &str| -> Vec<String> {
        let mut keys: Vec<String> = object
            .get(key)
            .and_then(serde_json::Value::as_object)
            .map(|map| map.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    };
    // `"workspaces": ["packages/*"]`, or Yarn's `{"packages": [...]}`.
    let workspaces = match object.get("workspaces") {
        Some(serde_json::Value::Object(o)) => o.get("packages"),
        other => other,
    };
    Declares::PackageJson {
        name: string("name"),
        version: string("version"),
        dependencies: keys("dependencies"),
        scripts: keys("scripts"),
        workspaces: workspaces
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The member directories `patterns` name (relative to the manifest's
/// directory, globs allowed, a leading `./` ignored), among `dirs` (the
/// directories holding a manifest of the same kind, relative to the same
/// directory): each pattern's matches, or the pattern itself when it is
/// no glob or matches none; sorted and de-duplicated.
#[must_use]
pub fn resolve_members(patterns: &[String], dirs: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for pattern in patterns {
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher());
        let before = out.len();
        if let Ok(glob) = glob {
            out.extend(dirs.iter().filter(|d| glob.is_match(d.as_str())).cloned());
        }
        if out.len() == before && !pattern.is_empty() {
            out.push(pattern.to_owned());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn cargo(content: &str) -> Declares {
    let document = match toml::from_str::<Table>(content) {
        Ok(document) => document,
        Err(error) => return toml_error(content, &error),
    };
    let package = document.get("package").and_then(Value::as_table);
    // `version.workspace = true` is a table, not a version: absent.
    let field = |key: &str| {
        package
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut dependencies: Vec<String> = document
        .get("dependencies")
        .and_then(Value::as_table)
        .map(|table| table.keys().cloned().collect())
        .unwrap_or_default();
    dependencies.sort();
    let workspace_members = document
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Declares::Cargo {
        name: field("name"),
        version: field("version"),
        dependencies,
        workspace_members,
    }
}

/// Which kind of `( ... )` block a go.mod line is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GoBlock {
    Module,
    Require,
    Other,
}

fn go_mod(content: &str) -> Declares {
    let mut name: Option<String> = None;
    let mut go_version: Option<String> = None;
    let mut dependencies: Vec<String> = Vec::new();
    let mut block: Option<GoBlock> = None;
    for raw in content.lines() {
        // Module paths and versions cannot contain `//`, so this only cuts
        // comments (`// indirect` included).
        let line = raw.split_once("//").map_or(raw, |(code, _)| code).trim();
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = tokens.first() else {
            continue;
        };
        if let Some(kind) = block {
            if first.starts_with(')') {
                block = None;
                continue;
            }
            match kind {
                GoBlock::Require if tokens.len() >= 2 => {
                    dependencies.push(unquote(first).to_owned())
                }
                GoBlock::Module if name.is_none() => name = Some(unquote(first).to_owned()),
                _ => {}
            }
            continue;
        }
        let opens_block = tokens.get(1).is_some_and(|t| t.starts_with('('));
        match first {
            "module" if opens_block => block = Some(GoBlock::Module),
            "module" => name = tokens.get(1).map(|t| unquote(t).to_owned()),
            "go" => go_version = tokens.get(1).map(|t| (*t).to_owned()),
            "require" if opens_block => block = Some(GoBlock::Require),
            "require" if tokens.len() >= 3 => dependencies.push(unquote(tokens[1]).to_owned()),
            _ if opens_block => block = Some(GoBlock::Other),
            _ => {}
        }
    }
    dependencies.retain(|d| !d.is_empty());
    dependencies.sort();
    dependencies.dedup();
    Declares::GoMod {
        name,
        go_version,
        dependencies,
    }
}

/// go.mod allows quoted module paths: `"example.com/m"` or `` `m` ``.
fn unquote(token: &str) -> &str {
    token.trim_matches(['"', '`'])
}

/// `toml parse error at line L, column C: <message>`, without the source
/// excerpt the crate's own Display would include.
fn toml_error(content: &str, error: &toml::de::Error) -> Declares {
    let message = match error.span() {
        Some(span) => {
            let before = content.get(..span.start).unwrap_or(content);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!(
                "toml parse error at line {line}, column {column}: {}",
                error.message()
            )
        }
        None => format!("toml parse error: {}", error.message()),
    };
    parse_error(&message)
}

/// A [`Declares::ParseError`]: lower-cased, whitespace collapsed, at most
/// [`PARSE_ERROR_CHARS`] characters.
fn parse_error(message: &str) -> Declares {
    let mut out = String::new();
    for word in message.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    if let Some((cut, _)) = out.char_indices().nth(PARSE_ERROR_CHARS) {
        out.truncate(cut);
    }
    Declares::ParseError(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error_of(declared: Option<Declares>) -> String {
        match declared {
            Some(Declares::ParseError(message)) => message,
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_manifest_list_has_sixteen_names_four_understood() {
        assert_eq!(MANIFESTS.len(), 16);
        assert_eq!(MANIFESTS[0], "pyproject.toml");
        assert_eq!(MANIFESTS[15], "docker-compose.yaml");
        for name in MANIFESTS {
            let understood = matches!(
                *name,
                "pyproject.toml" | "package.json" | "Cargo.toml" | "go.mod"
            );
            assert_eq!(declares(name, "x").is_some(), understood, "{name}");
        }
    }

    #[test]
    fn pyproject() {
        let text = "[project]\nname = \"x\"\nversion = \"1\"\nrequires-python = \">=3.12\"\ndependencies = [\"httpx>=0.28\", \"structlog\", \"uvicorn[standard]>=0.40\"]\n";
        assert_eq!(
            declares("pyproject.toml", text),
            Some(Declares::Pyproject {
                name: Some("x".into()),
                version: Some("1".into()),
                requires_python: Some(">=3.12".into()),
                dependencies: strings(&["httpx", "structlog", "uvicorn"]),
            })
        );
    }

    // The demo project's pyproject, as the integration tests see it.
    #[test]
    fn the_fixture_pyproject_declares_demo_1_2_3() {
        let text = "[project]\nname = \"demo\"\nversion = \"1.2.3\"\nrequires-python = \">=3.12\"\ndependencies = [\"httpx>=0.28\", \"structlog\"]\n";
        let Some(Declares::Pyproject {
            name,
            version,
            dependencies,
            ..
        }) = declares("pyproject.toml", text)
        else {
            panic!("not a pyproject summary");
        };
        assert_eq!(name.as_deref(), Some("demo"));
        assert_eq!(version.as_deref(), Some("1.2.3"));
        assert_eq!(dependencies, strings(&["httpx", "structlog"]));
    }

    #[test]
    fn pyproject_requirement_names_are_cut_at_any_specifier() {
        let text = "[project]\ndependencies = [\"b ; python_version<'3.11'\", \"a(>=1)\", \"c @ https://x/c.whl\", \"a!=2\", \"d~=1\", \"\", \"  e\", 5]\n";
        let Some(Declares::Pyproject {
            dependencies, name, ..
        }) = declares("pyproject.toml", text)
        else {
            panic!("not a pyproject summary");
        };
        assert_eq!(dependencies, strings(&["a", "b", "c", "d", "e"]));
        assert_eq!(name, None);
    }

    #[test]
    fn a_malformed_pyproject_reports_the_error() {
        let message = parse_error_of(declares("pyproject.toml", "[project\n"));
        assert_eq!(
            message,
            "toml parse error at line 1, column 9: unclosed table, expected `]`"
        );
    }

    #[test]
    fn wrong_types_are_absent_not_errors() {
        let text = "project = \"oops\"\n";
        assert_eq!(
            declares("pyproject.toml", text),
            Some(Declares::Pyproject {
                name: None,
                version: None,
                requires_python: None,
                dependencies: vec![]
            })
        );
        let text = "[project]\nname = 5\ndependencies = \"httpx\"\n";
        let Some(Declares::Pyproject {
            name, dependencies, ..
        }) = declares("pyproject.toml", text)
        else {
            panic!("not a pyproject summary");
        };
        assert_eq!((name, dependencies), (None, vec![]));
    }

    #[test]
    fn package_json() {
        let text = r#"{"name": "web", "version": "2.0.0", "dependencies": {"react": "^19", "next": "^15"}, "scripts": {"build": "next build", "dev": "next dev"}}"#;
        assert_eq!(
            declares("package.json", text),
            Some(Declares::PackageJson {
                name: Some("web".into()),
                version: Some("2.0.0".into()),
                dependencies: strings(&["next", "react"]),
                scripts: strings(&["build", "dev"]),
                workspaces: vec![],
            })
        );
    }

    #[test]
    fn a_malformed_package_json_reports_the_error() {
        assert_eq!(
            parse_error_of(declares("package.json", "{oops")),
            "key must be a string at line 1 column 2"
        );
        assert!(!parse_error_of(declares("package.json", "{not json")).is_empty());
    }

    #[test]
    fn a_package_json_that_is_not_an_object() {
        assert_eq!(
            parse_error_of(declares("package.json", "[1, 2]")),
            "package.json is not an object"
        );
    }

    #[test]
    fn package_json_fields_of_the_wrong_type_are_absent() {
        let text = r#"{"name": 1, "dependencies": ["a"], "scripts": null}"#;
        assert_eq!(
            declares("package.json", text),
            Some(Declares::PackageJson {
                name: None,
                version: None,
                dependencies: vec![],
                scripts: vec![],
                workspaces: vec![],
            })
        );
    }

    #[test]
    fn cargo() {
        let text = "[package]\nname = \"crate\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\ntokio = \"1\"\n";
        assert_eq!(
            declares("Cargo.toml", text),
            Some(Declares::Cargo {
                name: Some("crate".into()),
                version: Some("0.1.0".into()),
                dependencies: strings(&["serde", "tokio"]),
                workspace_members: vec![],
            })
        );
    }

    #[test]
    fn a_workspace_inherited_cargo_version_is_absent() {
        let text = "[package]\nname = \"moat-worker\"\nversion.workspace = true\n[dependencies]\nregex = { workspace = true }\n";
        assert_eq!(
            declares("Cargo.toml", text),
            Some(Declares::Cargo {
                name: Some("moat-worker".into()),
                version: None,
                dependencies: strings(&["regex"]),
                workspace_members: vec![],
            })
        );
    }

    #[test]
    fn workspace_members_are_declared_and_resolved() {
        let Some(Declares::Cargo {
            workspace_members, ..
        }) = declares(
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/*\", \"./tools/x/\", \"gone\"]\n",
        )
        else {
            panic!("not a Cargo summary");
        };
        assert_eq!(
            workspace_members,
            strings(&["crates/*", "./tools/x/", "gone"])
        );
        let dirs = strings(&["crates/a", "crates/b", "crates/a/nested", "tools/x"]);
        assert_eq!(
            resolve_members(&workspace_members, &dirs),
            strings(&["crates/a", "crates/b", "gone", "tools/x"])
        );
        for text in [
            r#"{"workspaces": ["packages/*"]}"#,
            r#"{"workspaces": {"packages": ["packages/*"]}}"#,
        ] {
            let Some(Declares::PackageJson { workspaces, .. }) = declares("package.json", text)
            else {
                panic!("not a package.json summary");
            };
            assert_eq!(workspaces, strings(&["packages/*"]), "{text}");
        }
    }

    #[test]
    fn a_malformed_cargo_reports_the_error() {
        let message = parse_error_of(declares("Cargo.toml", "[package\n"));
        assert!(
            message.starts_with("toml parse error at line 1"),
            "{message}"
        );
    }

    #[test]
    fn go_mod() {
        let text = "module example.com/thing\n\ngo 1.23\n\nrequire (\n\tgithub.com/pkg/errors v0.9.1\n\tgolang.org/x/sync v0.8.0\n)\n";
        assert_eq!(
            declares("go.mod", text),
            Some(Declares::GoMod {
                name: Some("example.com/thing".into()),
                go_version: Some("1.23".into()),
                dependencies: strings(&["github.com/pkg/errors", "golang.org/x/sync"]),
            })
        );
    }

    // Single-line requires count; indirect ones are kept;
    // replace/exclude/retract lines are not requirements.
    #[test]
    fn go_mod_single_line_requires_and_other_blocks() {
        let text = "\
module \"example.com/app\" // the app

go 1.22
toolchain go1.22.4

require golang.org/x/text v0.14.0
require example.com/local v0.0.0 // indirect

require (
\tgithub.com/a/b v1.0.0 // indirect
\tgithub.com/a/b v1.0.0
\t\"example.com/quoted\" v1.2.3
)

replace (
\tgithub.com/old/x => github.com/new/x v1.1.0
)
replace github.com/c/d => ../d
exclude github.com/e/f v1.0.0
retract [v1.0.0, v1.0.5]
";
        assert_eq!(
            declares("go.mod", text),
            Some(Declares::GoMod {
                name: Some("example.com/app".into()),
                go_version: Some("1.22".into()),
                dependencies: strings(&[
                    "example.com/local",
                    "example.com/quoted",
                    "github.com/a/b",
                    "golang.org/x/text",
                ]),
            })
        );
    }

    #[test]
    fn a_go_mod_without_directives_declares_nothing_known() {
        assert_eq!(
            declares("go.mod", "// just a comment\n"),
            Some(Declares::GoMod {
                name: None,
                go_version: None,
                dependencies: vec![]
            })
        );
    }

    #[test]
    fn manifests_that_declare_nothing_and_empty_text_give_none() {
        assert_eq!(declares("Makefile", "all:\n\ttrue\n"), None);
        assert_eq!(declares("pyproject.toml", ""), None);
        assert_eq!(declares("unknown.toml", "[x]"), None);
    }

    #[test]
    fn hostile_nesting_is_a_parse_error_not_a_crash() {
        let deep = format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            declares("pyproject.toml", &deep),
            Some(Declares::ParseError(_))
        ));
        let dotted = format!("{} = 1\n", vec!["a"; 100_000].join("."));
        assert!(matches!(
            declares("Cargo.toml", &dotted),
            Some(Declares::ParseError(_))
        ));
        let json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            declares("package.json", &json),
            Some(Declares::ParseError(_))
        ));
    }

    #[test]
    fn parse_error_messages_are_lower_case_collapsed_and_bounded() {
        let Declares::ParseError(message) =
            parse_error(&format!("Bad   THING\n{}", "x".repeat(500)))
        else {
            panic!("not a parse error");
        };
        assert!(message.starts_with("bad thing x"));
        assert_eq!(message.chars().count(), PARSE_ERROR_CHARS);
        let long_line = format!("name = \"{}\n", "é".repeat(300));
        let message = parse_error_of(declares("Cargo.toml", &long_line));
        assert!(message.chars().count() <= PARSE_ERROR_CHARS);
        assert!(!message.contains("ééé"), "no source excerpt: {message}");
    }
}

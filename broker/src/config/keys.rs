//! Unknown names: the check of the file's tables and keys, and the guess
//! of the known name most likely meant, for the file and the environment.

use serde_json::{Map, Value};

use super::error::{ConfigError, KeyError};
use super::fields::{FIELDS, env_name, env_names, is_section, sections};

/// The known names that `wrong` most likely meant: one written with other
/// underscores, else the closest within a few edits (a third of the name at
/// most), else none. Several only when they are equally close.
pub(super) fn closest<'k>(wrong: &str, known: &[&'k str]) -> Vec<&'k str> {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let squashed = squash(wrong);
    let same: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| squash(k) == squashed)
        .collect();
    if !same.is_empty() {
        return same;
    }
    let lower = wrong.to_lowercase();
    let limit = (lower.chars().count() / 3).clamp(1, 3);
    let scored: Vec<(usize, &str)> = known
        .iter()
        .map(|k| (strsim::levenshtein(&lower, &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= limit)
        .collect();
    let Some(best) = scored.iter().map(|(d, _)| *d).min() else {
        return Vec::new();
    };
    scored
        .into_iter()
        .filter(|(d, _)| *d == best)
        .map(|(_, k)| k)
        .collect()
}

/// The fields called `name`, or whose name ends in `_<name>`
/// (`token` → `bearer_token`), or which are a near spelling of it, as
/// `(section, field)`.
fn fields_named(name: &str) -> Vec<(&'static str, &'static str)> {
    let name = name.to_lowercase();
    let exact: Vec<(&'static str, &'static str)> = FIELDS
        .iter()
        .filter(|(_, f, _)| *f == name || f.ends_with(&format!("_{name}")))
        .map(|(s, f, _)| (*s, *f))
        .collect();
    if !exact.is_empty() || name.is_empty() {
        return exact;
    }
    let names: Vec<&str> = FIELDS.iter().map(|(_, f, _)| *f).collect();
    let close = closest(&name, &names);
    FIELDS
        .iter()
        .filter(|(_, f, _)| close.contains(f))
        .map(|(s, f, _)| (*s, *f))
        .collect()
}

/// Whether Kubernetes would have set `key` for a Service whose name starts
/// with `moat` (service links: `MOAT_SERVICE_HOST`, `MOAT_PORT_8080_TCP`, …).
fn is_service_link(key: &str) -> bool {
    key.ends_with("_SERVICE_HOST")
        || key.contains("_SERVICE_PORT")
        || key.ends_with("_PORT")
        || (key.contains("_PORT_")
            && (key.contains("_TCP") || key.contains("_UDP") || key.contains("_SCTP")))
}

/// The error for an unknown `MOAT_*` variable (`key` is upper-case):
/// the name, the variable most likely meant, and for a name Kubernetes
/// injects, how to stop it.
pub(super) fn unknown_variable(key: &str) -> ConfigError {
    let known: Vec<String> = env_names().collect();
    let known_refs: Vec<&str> = known.iter().map(String::as_str).collect();
    let mut guesses: Vec<String> = closest(key, &known_refs)
        .into_iter()
        .map(str::to_owned)
        .collect();
    if guesses.is_empty() {
        // The field's name without its section (`MOAT_WORKSPACE`,
        // `MOAT_LOG_LEVEL`), or with a section that is misspelt.
        let rest = key.strip_prefix("MOAT_").unwrap_or(key);
        let field = rest.rsplit_once("__").map_or(rest, |(_, f)| f);
        guesses = fields_named(field)
            .into_iter()
            .map(|(s, f)| env_name(s, f))
            .collect();
    }
    ConfigError::UnknownVariable {
        name: key.to_owned(),
        guesses,
        service_link: is_service_link(key),
    }
}

/// Refuse an unknown table or key in the file, naming it with its table and
/// the key most likely meant (the file path is added by the caller).
pub(super) fn check_file_keys(tree: &Map<String, Value>) -> Result<(), KeyError> {
    let sections = sections();
    for (top, value) in tree {
        if top == "environment" {
            continue;
        }
        if !sections.contains(&top.as_str()) {
            let mut guesses: Vec<String> = closest(top, &sections)
                .into_iter()
                .map(|s| format!("[{s}]"))
                .collect();
            if closest(top, &["environment"]).len() == 1 {
                guesses.push("environment".into());
            }
            if guesses.is_empty() {
                guesses = fields_named(top)
                    .into_iter()
                    .map(|(s, f)| format!("{f}` in `[{s}]"))
                    .collect();
            }
            return Err(if value.is_object() {
                KeyError::UnknownTable {
                    table: top.clone(),
                    guesses,
                }
            } else {
                KeyError::UnknownTopLevelKey {
                    key: top.clone(),
                    guesses,
                }
            });
        }
        let Value::Object(fields) = value else {
            continue;
        };
        check_table_keys(top, fields)?;
    }
    Ok(())
}

/// Refuse an unknown key of the table `top` (`http`, `http.oauth`), and
/// of the known tables nested in it.
fn check_table_keys(top: &str, fields: &Map<String, Value>) -> Result<(), KeyError> {
    for (field, value) in fields {
        let nested = format!("{top}.{field}");
        if is_section(&nested) {
            match value {
                Value::Object(inner) => {
                    check_table_keys(&nested, inner)?;
                    continue;
                }
                _ => {
                    return Err(KeyError::NotATable {
                        table: nested,
                        value: value.clone(),
                    });
                }
            }
        }
        if FIELDS.iter().any(|(s, f, _)| *s == top && f == field) {
            continue;
        }
        let here: Vec<&str> = FIELDS
            .iter()
            .filter(|(s, _, _)| *s == top)
            .map(|(_, f, _)| *f)
            .collect();
        let mut guesses: Vec<String> = closest(field, &here)
            .into_iter()
            .map(str::to_owned)
            .collect();
        if guesses.is_empty() {
            guesses = FIELDS
                .iter()
                .filter(|(s, f, _)| f == field && *s != top)
                .map(|(s, f, _)| format!("{f}` in `[{s}]"))
                .collect();
        }
        return Err(KeyError::UnknownKey {
            key: field.clone(),
            table: top.to_owned(),
            guesses,
        });
    }
    Ok(())
}

//! The layers: the file, then the environment over it, each key and type
//! checked, into the raw (unvalidated) tree.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::Sources;
use super::error::{ConfigError, FileError};
use super::fields::{FIELDS, Kind, is_section, kind_name, parse_env};
use super::http::RawHttp;
use super::keys::{check_file_keys, unknown_variable};
use super::observability::RawObservability;
use super::sandbox::RawSandbox;
use super::security::RawSecurity;
use super::server::RawServer;

/// The whole configuration as given.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    pub(super) environment: Option<String>,
    #[serde(default)]
    pub(super) server: RawServer,
    #[serde(default)]
    pub(super) sandbox: RawSandbox,
    #[serde(default)]
    pub(super) security: RawSecurity,
    #[serde(default)]
    pub(super) http: RawHttp,
    #[serde(default)]
    pub(super) observability: RawObservability,
}

/// File, then environment, type-checked, into the raw (unvalidated) tree.
pub(super) fn load_raw(sources: &Sources) -> Result<Raw, ConfigError> {
    let mut tree = Map::new();
    if let Some(path) = &sources.file {
        tree = read_file(path, sources.cwd.as_deref()).map_err(|problem| ConfigError::File {
            path: path.display().to_string(),
            problem,
        })?;
    }
    overlay_env(&mut tree, &sources.env)?;
    check_types(&tree)?;
    serde_json::from_value(Value::Object(tree)).map_err(ConfigError::Deserialize)
}

/// The file as a tree, its keys checked and its relative paths anchored.
fn read_file(path: &Path, cwd: Option<&Path>) -> Result<Map<String, Value>, FileError> {
    let text = std::fs::read_to_string(path).map_err(FileError::Read)?;
    let parsed: toml::Table = toml::from_str(&text).map_err(FileError::Toml)?;
    let Value::Object(mut tree) = serde_json::to_value(parsed).map_err(FileError::Tree)? else {
        return Ok(Map::new());
    };
    check_file_keys(&tree)?;
    anchor_file_paths(&mut tree, path, cwd)?;
    Ok(tree)
}

fn overlay_env(tree: &mut Map<String, Value>, env: &[(String, String)]) -> Result<(), ConfigError> {
    let mut ours: BTreeMap<String, &str> = BTreeMap::new();
    for (k, v) in env {
        let upper = k.to_uppercase();
        if upper.starts_with("MOAT_") {
            ours.insert(upper, v.as_str());
        }
    }
    for (key, value) in ours {
        if key == "MOAT_ENVIRONMENT" {
            tree.insert("environment".into(), Value::String(value.to_owned()));
            continue;
        }
        let known = key
            .strip_prefix("MOAT_")
            .and_then(|r| r.rsplit_once("__"))
            .map(|(s, f)| (s.to_lowercase().replace("__", "."), f.to_lowercase()))
            .and_then(|(s, f)| {
                FIELDS
                    .iter()
                    .find(|(fs, ff, _)| *fs == s && *ff == f)
                    .map(|(_, _, kind)| (s, f, kind))
            });
        let Some((section, field, kind)) = known else {
            return Err(unknown_variable(&key));
        };
        let parsed = parse_env(*kind, value).ok_or_else(|| ConfigError::BadVariable {
            name: key.clone(),
            value: value.to_owned(),
            kind: kind_name(*kind),
        })?;
        let mut table = &mut *tree;
        for part in section.split('.') {
            let entry = table
                .entry(part.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(m) = entry else {
                return Err(ConfigError::VariableSectionNotTable(key));
            };
            table = m;
        }
        table.insert(field, parsed);
    }
    Ok(())
}

/// A relative `sandbox.workspace` in the file names a directory relative to
/// the file, not to wherever moat was started: it is joined to the file's
/// directory here. (`~` and `~/…` are expanded later, as everywhere.)
pub(super) fn anchor_file_paths(
    tree: &mut Map<String, Value>,
    file: &Path,
    cwd: Option<&Path>,
) -> Result<(), FileError> {
    let Some(Value::String(ws)) = tree
        .get_mut("sandbox")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.get_mut("workspace"))
    else {
        return Ok(());
    };
    if ws.trim().is_empty() {
        return Err(FileError::EmptyWorkspace);
    }
    if ws == "~" || ws.starts_with("~/") || Path::new(ws.as_str()).is_absolute() {
        return Ok(());
    }
    let dir = file.parent().unwrap_or_else(|| Path::new(""));
    let dir = match cwd {
        Some(cwd) if dir.is_relative() => cwd.join(dir),
        _ => dir.to_path_buf(),
    };
    let joined = dir.join(ws.as_str());
    let Some(joined) = joined.to_str() else {
        return Err(FileError::DirectoryNotUtf8);
    };
    *ws = joined.to_owned();
    Ok(())
}

/// Refuse a value of the wrong type, naming its key (the deserialiser's own
/// message does not say which key it was reading). Unknown keys are left to
/// the deserialiser, which names them.
fn check_types(tree: &Map<String, Value>) -> Result<(), ConfigError> {
    for (section, value) in tree {
        if section == "environment" {
            if !value.is_string() {
                return Err(ConfigError::WrongType {
                    key: "environment".into(),
                    wanted: "a string",
                    value: value.clone(),
                });
            }
            continue;
        }
        check_table_types(section, value)?;
    }
    Ok(())
}

/// [`check_types`] for the table `section` (`http`, `http.oauth`) and the
/// known tables nested in it.
fn check_table_types(section: &str, value: &Value) -> Result<(), ConfigError> {
    let Value::Object(fields) = value else {
        if is_section(section) {
            return Err(ConfigError::NotATable {
                table: section.to_owned(),
                value: value.clone(),
            });
        }
        return Ok(());
    };
    for (field, v) in fields {
        let nested = format!("{section}.{field}");
        if is_section(&nested) {
            check_table_types(&nested, v)?;
            continue;
        }
        let Some((_, _, kind)) = FIELDS.iter().find(|(s, f, _)| *s == section && f == field) else {
            continue;
        };
        let (ok, wanted) = match kind {
            Kind::Str => (v.is_string(), "a string"),
            Kind::Int => (v.is_u64(), "a non-negative integer"),
            Kind::Float => (v.is_number(), "a number"),
            Kind::Bool => (v.is_boolean(), "true or false"),
            Kind::List => (
                v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                "a list of strings",
            ),
            Kind::Strings => (
                v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                "a string or a list of strings",
            ),
        };
        if !ok {
            return Err(ConfigError::WrongType {
                key: format!("{section}.{field}"),
                wanted,
                value: v.clone(),
            });
        }
    }
    Ok(())
}

//! A small JSON Schema (2020-12) validator for the schemas moat itself
//! publishes: `type`, `properties`, `required`, `additionalProperties: false`,
//! `items`, `minItems`, `maxItems`, `minimum`, `maximum`, `minLength`,
//! `maxLength`, `pattern`, `enum`; annotation keywords (`title`,
//! `description`, `default`, `$schema`) are ignored. Any other keyword in a
//! schema is refused when the validator is built, so a schema can never
//! silently promise a check that is not made.
//!
//! Errors read `<path> <detail>` with the path rooted at `arguments`
//! (`arguments.file_glob[2] must be at most 200 characters`). Lengths count
//! Unicode code points; `pattern` is an unanchored search (anchor with `^…$`).
//! A JSON `5.0` is not an integer. Instances nested deeper than
//! [`MAX_DEPTH`] are refused.

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

/// Deepest nesting of an instance (and of a schema) accepted.
pub const MAX_DEPTH: usize = 12;

const KNOWN: &[&str] = &[
    "$schema",
    "title",
    "description",
    "default",
    "examples",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "enum",
];

/// Why a schema cannot be checked: a keyword this validator does not know,
/// or a malformed one (a bug in a published schema, caught at start-up).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("schema nests deeper than the limit")]
    TooDeep,
    /// A schema that is not a JSON object.
    #[error("a schema must be an object")]
    NotAnObject,
    /// A keyword outside the supported set.
    #[error("unsupported schema keyword '{0}'")]
    UnsupportedKeyword(String),
    /// A `pattern` that is not a string.
    #[error("pattern must be a string")]
    PatternNotAString,
    /// A `pattern` that does not compile.
    #[error("bad pattern {pattern:?}: {source}")]
    BadPattern {
        /// The pattern.
        pattern: String,
        /// The compiler's complaint.
        source: regex::Error,
    },
    /// A `properties` that is not an object.
    #[error("properties must be an object")]
    PropertiesNotAnObject,
}

/// The first way an instance fails its schema, worded for the client:
/// `<path> <detail>`, the path rooted at `arguments`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidArgument {
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("{path} nests deeper than {MAX_DEPTH} levels")]
    TooDeep {
        /// Where.
        path: String,
    },
    /// Not of the schema's `type`.
    #[error("{path} must be {} {expected}, not {found}", article(.expected))]
    WrongType {
        /// Where.
        path: String,
        /// The schema's type.
        expected: String,
        /// What the value is, with its article.
        found: &'static str,
    },
    /// Not among the schema's `enum`.
    #[error("{path} must be one of {options}")]
    NotOneOf {
        /// Where.
        path: String,
        /// The allowed values, as JSON, comma-separated.
        options: String,
    },
    /// Fewer items than `minItems`.
    #[error("{path} must have at least {min} item(s)")]
    TooFewItems {
        /// Where.
        path: String,
        /// The bound.
        min: u64,
    },
    /// More items than `maxItems`.
    #[error("{path} must have at most {max} item(s)")]
    TooManyItems {
        /// Where.
        path: String,
        /// The bound.
        max: u64,
    },
    /// `required` properties absent.
    #[error("{path} is missing required property: {missing}")]
    MissingRequired {
        /// Where.
        path: String,
        /// The absent names, sorted, comma-separated.
        missing: String,
    },
    /// Properties outside `properties` with `additionalProperties: false`.
    #[error("{path} does not accept: {extra}")]
    NotAccepted {
        /// Where.
        path: String,
        /// Up to five of the extra names, sorted, comma-separated.
        extra: String,
    },
    /// Shorter than `minLength`.
    #[error("{path} must be at least {min} character(s)")]
    TooShort {
        /// Where.
        path: String,
        /// The bound.
        min: u64,
    },
    /// Longer than `maxLength`.
    #[error("{path} must be at most {max} characters")]
    TooLong {
        /// Where.
        path: String,
        /// The bound.
        max: u64,
    },
    /// No match for `pattern`.
    #[error("{path} does not match the pattern {pattern}")]
    NoMatch {
        /// Where.
        path: String,
        /// The pattern.
        pattern: String,
    },
    /// Below `minimum`.
    #[error("{path} must be at least {min}")]
    BelowMinimum {
        /// Where.
        path: String,
        /// The bound, as written in the schema.
        min: String,
    },
    /// Above `maximum`.
    #[error("{path} must be at most {max}")]
    AboveMaximum {
        /// Where.
        path: String,
        /// The bound, as written in the schema.
        max: String,
    },
}

/// A validator with every `pattern` of its schemas compiled once.
#[derive(Debug, Default)]
pub struct Validator {
    patterns: HashMap<String, Regex>,
}

impl Validator {
    /// Check `schemas` use only supported keywords and compile their patterns.
    pub fn new<'a>(schemas: impl IntoIterator<Item = &'a Value>) -> Result<Validator, SchemaError> {
        let mut v = Validator::default();
        for s in schemas {
            v.prepare(s, 0)?;
        }
        Ok(v)
    }

    fn prepare(&mut self, schema: &Value, depth: usize) -> Result<(), SchemaError> {
        if depth > MAX_DEPTH {
            return Err(SchemaError::TooDeep);
        }
        let Value::Object(obj) = schema else {
            return Err(SchemaError::NotAnObject);
        };
        for (k, v) in obj {
            if !KNOWN.contains(&k.as_str()) {
                return Err(SchemaError::UnsupportedKeyword(k.clone()));
            }
            match k.as_str() {
                "pattern" => {
                    let p = v.as_str().ok_or(SchemaError::PatternNotAString)?;
                    let re = Regex::new(p).map_err(|source| SchemaError::BadPattern {
                        pattern: p.to_owned(),
                        source,
                    })?;
                    self.patterns.insert(p.to_owned(), re);
                }
                "properties" => {
                    for sub in v
                        .as_object()
                        .ok_or(SchemaError::PropertiesNotAnObject)?
                        .values()
                    {
                        self.prepare(sub, depth + 1)?;
                    }
                }
                "items" => self.prepare(v, depth + 1)?,
                "additionalProperties" if !v.is_boolean() => self.prepare(v, depth + 1)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Validate `instance` against `schema`; the first failure is returned.
    pub fn validate(&self, schema: &Value, instance: &Value) -> Result<(), InvalidArgument> {
        self.check(schema, instance, "arguments", 0)
    }

    fn check(
        &self,
        schema: &Value,
        v: &Value,
        path: &str,
        depth: usize,
    ) -> Result<(), InvalidArgument> {
        if depth > MAX_DEPTH {
            return Err(InvalidArgument::TooDeep { path: path.into() });
        }
        let Some(s) = schema.as_object() else {
            return Ok(());
        };
        if let Some(t) = s.get("type").and_then(Value::as_str)
            && !type_matches(t, v)
        {
            return Err(InvalidArgument::WrongType {
                path: path.into(),
                expected: t.into(),
                found: type_name(v),
            });
        }
        if let Some(Value::Array(options)) = s.get("enum")
            && !options.contains(v)
        {
            let list: Vec<String> = options.iter().map(Value::to_string).collect();
            return Err(InvalidArgument::NotOneOf {
                path: path.into(),
                options: list.join(", "),
            });
        }
        match v {
            Value::String(text) => self.check_string(s, text, path)?,
            Value::Number(n) => check_number(s, n, path)?,
            Value::Array(items) => {
                if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                    && (items.len() as u64) < min
                {
                    return Err(InvalidArgument::TooFewItems {
                        path: path.into(),
                        min,
                    });
                }
                if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                    && items.len() as u64 > max
                {
                    return Err(InvalidArgument::TooManyItems {
                        path: path.into(),
                        max,
                    });
                }
                if let Some(item_schema) = s.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.check(item_schema, item, &format!("{path}[{i}]"), depth + 1)?;
                    }
                }
            }
            Value::Object(obj) => {
                let props = s.get("properties").and_then(Value::as_object);
                if let Some(Value::Array(req)) = s.get("required") {
                    let mut missing: Vec<&str> = req
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|k| !obj.contains_key(*k))
                        .collect();
                    if !missing.is_empty() {
                        missing.sort_unstable();
                        return Err(InvalidArgument::MissingRequired {
                            path: path.into(),
                            missing: missing.join(", "),
                        });
                    }
                }
                if s.get("additionalProperties") == Some(&Value::Bool(false)) {
                    let mut extra: Vec<&str> = obj
                        .keys()
                        .map(String::as_str)
                        .filter(|k| !props.is_some_and(|p| p.contains_key(*k)))
                        .collect();
                    if !extra.is_empty() {
                        extra.sort_unstable();
                        extra.truncate(5);
                        return Err(InvalidArgument::NotAccepted {
                            path: path.into(),
                            extra: extra.join(", "),
                        });
                    }
                }
                if let Some(props) = props {
                    for (k, sub) in props {
                        if let Some(val) = obj.get(k) {
                            self.check(sub, val, &format!("{path}.{k}"), depth + 1)?;
                        }
                    }
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
        Ok(())
    }

    fn check_string(
        &self,
        s: &serde_json::Map<String, Value>,
        text: &str,
        path: &str,
    ) -> Result<(), InvalidArgument> {
        let needs_len = s.contains_key("minLength") || s.contains_key("maxLength");
        let len = if needs_len {
            text.chars().count() as u64
        } else {
            0
        };
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            return Err(InvalidArgument::TooShort {
                path: path.into(),
                min,
            });
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            return Err(InvalidArgument::TooLong {
                path: path.into(),
                max,
            });
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            // Patterns were compiled in `new`; an unknown one means a schema
            // not given to `new`, which is a programming error: refuse.
            let ok = self.patterns.get(p).is_some_and(|re| re.is_match(text));
            if !ok {
                return Err(InvalidArgument::NoMatch {
                    path: path.into(),
                    pattern: p.into(),
                });
            }
        }
        Ok(())
    }
}

fn check_number(
    s: &serde_json::Map<String, Value>,
    n: &serde_json::Number,
    path: &str,
) -> Result<(), InvalidArgument> {
    let x = n.as_f64().unwrap_or(f64::NAN);
    if let Some(min) = s.get("minimum").and_then(Value::as_f64)
        && (x.is_nan() || x < min)
    {
        return Err(InvalidArgument::BelowMinimum {
            path: path.into(),
            min: fmt_num(min),
        });
    }
    if let Some(max) = s.get("maximum").and_then(Value::as_f64)
        && (x.is_nan() || x > max)
    {
        return Err(InvalidArgument::AboveMaximum {
            path: path.into(),
            max: fmt_num(max),
        });
    }
    Ok(())
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => false,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a non-integer number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn article(t: &str) -> &'static str {
    if matches!(t, "object" | "array" | "integer") {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "maxLength": 5},
                "n": {"type": "integer", "minimum": 1, "maximum": 10},
                "flag": {"type": "boolean"},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "rev": {"type": "string", "pattern": "^[a-z]+$"},
                "globs": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 3}},
                "inner": {"type": "object", "properties": {"n": {"type": "integer"}}}
            }
        })
    }

    fn check(v: Value) -> Result<(), String> {
        let s = schema();
        Validator::new([&s])
            .unwrap()
            .validate(&s, &v)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn accepts_valid() {
        check(json!({"path": "ab", "n": 3, "flag": true, "kind": "a", "rev": "x", "globs": ["a"]}))
            .unwrap();
    }

    #[test]
    fn names_the_field() {
        assert_eq!(
            check(json!({})).unwrap_err(),
            "arguments is missing required property: path"
        );
        assert_eq!(
            check(json!({"path": "a", "pth": 1})).unwrap_err(),
            "arguments does not accept: pth"
        );
        assert!(
            check(json!({"path": "abcdef"}))
                .unwrap_err()
                .starts_with("arguments.path must be at most 5")
        );
        assert!(
            check(json!({"path": "a", "n": 5.0}))
                .unwrap_err()
                .contains("arguments.n must be an integer")
        );
        assert!(
            check(json!({"path": "a", "n": true}))
                .unwrap_err()
                .contains("not a boolean")
        );
        assert!(
            check(json!({"path": "a", "n": 0}))
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(
            check(json!({"path": "a", "n": 11}))
                .unwrap_err()
                .contains("at most 10")
        );
        assert!(
            check(json!({"path": "a", "kind": "c"}))
                .unwrap_err()
                .contains("one of")
        );
        assert!(
            check(json!({"path": "a", "rev": "A"}))
                .unwrap_err()
                .starts_with("arguments.rev")
        );
        assert!(
            check(json!({"path": "a", "globs": ["a", "b", "c"]}))
                .unwrap_err()
                .contains("at most 2")
        );
        assert!(
            check(json!({"path": "a", "globs": ["abcd"]}))
                .unwrap_err()
                .starts_with("arguments.globs[0]")
        );
        assert!(
            check(json!({"path": "a", "inner": {"n": "x"}}))
                .unwrap_err()
                .starts_with("arguments.inner.n")
        );
        // Code points, not bytes.
        check(json!({"path": "ééééé"})).unwrap();
    }

    #[test]
    fn refuses_unknown_keywords_and_deep_instances() {
        let s = json!({"type": "object", "allOf": []});
        assert!(
            Validator::new([&s])
                .unwrap_err()
                .to_string()
                .contains("allOf")
        );
        let mut deep = json!(1);
        for _ in 0..50 {
            deep = json!({ "x": deep });
        }
        let s = json!({"type": "object", "properties": {"x": {}}});
        let v = Validator::new([&s]).unwrap();
        // The schema does not descend; the instance is still bounded where it does.
        assert!(v.validate(&s, &deep).is_ok());
        let nested = json!({"type": "object", "properties": {"x": {"type": "object", "properties": {"x": {}}}}});
        assert!(
            Validator::new([&nested])
                .unwrap()
                .validate(&nested, &deep)
                .is_ok()
        );
    }
}

//! Every way the configuration can be refused. The text of each is what the
//! operator reads on stderr (after `error: `), so it names the setting, the
//! layer it came from when that helps, and what would be accepted.

use serde_json::Value;

use crate::config::oauth::OauthError;

/// A configuration error (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read or parsed, or holds an unknown key.
    #[error("configuration file {path}: {problem}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        problem: FileError,
    },
    /// A `MOAT_*` variable that names no setting.
    #[error(
        "unknown configuration variable {name}{}{}",
        did_you_mean(.guesses),
        if *.service_link { SERVICE_LINK_REMEDY } else { "" }
    )]
    UnknownVariable {
        /// The variable, upper-case.
        name: String,
        /// The variables most likely meant.
        guesses: Vec<String>,
        /// Whether Kubernetes sets a variable of this name for a Service.
        service_link: bool,
    },
    /// A `MOAT_*` variable whose value is not of its setting's kind.
    #[error("{name}={value:?} is not a valid {kind}")]
    BadVariable {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
        /// What the setting takes.
        kind: &'static str,
    },
    /// A `MOAT_*` variable whose section the file set to something else
    /// than a table.
    #[error("{0}: its section is not a table")]
    VariableSectionNotTable(String),
    /// A value of the wrong type.
    #[error("{key} must be {wanted}, not {value}")]
    WrongType {
        /// The setting (`section.field`, or `environment`).
        key: String,
        /// The type it takes.
        wanted: &'static str,
        /// The value given.
        value: Value,
    },
    /// A known section given as something else than a table.
    #[error("[{table}] must be a table, not {value}")]
    NotATable {
        /// The section (`http.oauth`).
        table: String,
        /// The value given.
        value: Value,
    },
    /// The layers, type-checked, still do not make a configuration.
    #[error("configuration: {0}")]
    Deserialize(serde_json::Error),
    /// A choice given empty.
    #[error("{key} is empty: give one of {wanted}, or leave it out for the default")]
    EmptyChoice {
        /// The setting.
        key: String,
        /// Its choices, comma-separated.
        wanted: String,
    },
    /// A choice that is none of its values.
    #[error("{key} must be one of {wanted}, not {value:?}{}", did_you_mean(.guesses))]
    NotAChoice {
        /// The setting.
        key: String,
        /// Its choices, comma-separated.
        wanted: String,
        /// The value given.
        value: String,
        /// The choices most likely meant.
        guesses: Vec<String>,
    },
    /// A number out of its bounds.
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
    /// A duration in seconds out of its bounds.
    #[error("{key} must be between {min} and {max}, not {value}")]
    SecondsOutOfBounds {
        /// The setting.
        key: &'static str,
        /// Smallest accepted, in seconds.
        min: f64,
        /// Largest accepted, in seconds.
        max: f64,
        /// The value given.
        value: f64,
    },
    /// A text longer (or shorter) than its bounds.
    #[error(
        "{key} must be {} characters",
        if *.min == 0 { format!("at most {max}") } else { format!("{min} to {max}") }
    )]
    Length {
        /// The setting.
        key: &'static str,
        /// Fewest characters.
        min: u64,
        /// Most characters.
        max: u64,
    },
    /// A setting given empty where a value is needed.
    #[error("{key} is empty: {remedy}")]
    Empty {
        /// The setting.
        key: &'static str,
        /// What to give instead.
        remedy: &'static str,
    },
    /// `sandbox.mode = confined` where there is no confinement.
    #[error("sandbox.mode = confined needs Linux; use in-process")]
    ConfinedNeedsLinux,
    /// `http.auth = bearer` without a token.
    #[error("http.auth is bearer but http.bearer_token is empty: set MOAT_HTTP__BEARER_TOKEN")]
    BearerWithoutToken,
    /// `observability.metrics_addr` that is not `IP:PORT`.
    #[error(
        "observability.metrics_addr {0:?} is not an address: give IP:PORT \
         (127.0.0.1:9464, [::1]:9464; port 0 = any free port), or leave it out for no \
         metrics listener"
    )]
    MetricsAddr(String),
    /// `[http.oauth]` refused.
    #[error(transparent)]
    Oauth(#[from] OauthError),
    /// The workspace cannot be served.
    #[error("the workspace cannot be served: {0}")]
    Workspace(String),
    /// Production invariants violated.
    #[error("refusing to start in production with this configuration:\n{}", .0.iter().map(|v| format!("  - {v}")).collect::<Vec<_>>().join("\n"))]
    Production(Vec<String>),
}

/// What Kubernetes does, and how to stop it, for a variable it injects.
const SERVICE_LINK_REMEDY: &str = " (Kubernetes sets MOAT_SERVICE_HOST, MOAT_PORT, … in every pod \
     for a Service named moat or moat-…: set enableServiceLinks: false in the pod spec)";

/// A number outside its bounds (inclusive).
#[derive(Debug, thiserror::Error)]
#[error("{key} must be between {min} and {max}, not {value}")]
pub struct OutOfBounds {
    /// The setting.
    pub key: &'static str,
    /// Smallest accepted.
    pub min: u64,
    /// Largest accepted.
    pub max: u64,
    /// The value given.
    pub value: u64,
}

/// What is wrong with the configuration file (its path is added by
/// [`ConfigError::File`]).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// It cannot be read.
    #[error("{0}")]
    Read(std::io::Error),
    /// It is not TOML.
    #[error("{}", .0.message())]
    Toml(toml::de::Error),
    /// It cannot be held as a tree of values.
    #[error("{0}")]
    Tree(serde_json::Error),
    /// It holds an unknown table or key.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// `sandbox.workspace` is empty.
    #[error(
        "`workspace` in [sandbox] is empty: give the directory to serve (a relative path is \
         read from this file's directory), or leave the key out"
    )]
    EmptyWorkspace,
    /// A relative `sandbox.workspace` cannot be joined to the file's
    /// directory.
    #[error(
        "the file's directory is not valid UTF-8, so the relative `workspace` in [sandbox] \
         cannot be read from it: give an absolute path"
    )]
    DirectoryNotUtf8,
}

/// An unknown table or key in the file, with the names most likely meant.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// A top-level table that is no section.
    #[error("unknown table [{table}]{}", did_you_mean(.guesses))]
    UnknownTable {
        /// The table.
        table: String,
        /// What it most likely meant.
        guesses: Vec<String>,
    },
    /// A top-level key that is neither a section nor `environment`.
    #[error("unknown top-level key `{key}`{}", did_you_mean(.guesses))]
    UnknownTopLevelKey {
        /// The key.
        key: String,
        /// What it most likely meant.
        guesses: Vec<String>,
    },
    /// A key its table does not have.
    #[error("unknown key `{key}` in [{table}]{}", did_you_mean(.guesses))]
    UnknownKey {
        /// The key.
        key: String,
        /// Its table (`http.oauth`).
        table: String,
        /// What it most likely meant.
        guesses: Vec<String>,
    },
    /// A known nested table given as a value.
    #[error("[{table}] must be a table, not {value}")]
    NotATable {
        /// The table (`http.oauth`).
        table: String,
        /// The value given.
        value: Value,
    },
}

/// `; did you mean `A`?` (or `A` or `B`), or nothing.
fn did_you_mean(candidates: &[String]) -> String {
    match candidates {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!(
            "; did you mean {}?",
            many.iter()
                .take(3)
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

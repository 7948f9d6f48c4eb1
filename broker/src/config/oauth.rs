//! `[http.oauth]`: the settings of the OAuth 2.1 resource server, read and
//! bounded here so that the configuration (`config/http.rs`) only hands the
//! raw table over. Its numeric bounds are `moat_protocol::limits`'s, as
//! every other setting's.
//!
//! Every value is checked at start-up, in every environment: an `auth =
//! "oauth"` without an issuer, an audience or a key source cannot admit
//! anyone, so it is a configuration error, not a production warning.

use std::path::PathBuf;

use serde::Deserialize;

use moat_protocol::limits;

use super::{OutOfBounds, bounded};

/// The default scope a token must carry.
pub const DEFAULT_SCOPE: &str = "moat:read";
/// Most issuers accepted.
pub const MAX_ISSUERS: usize = 16;
/// Longest URI (issuer, audience, URLs) accepted, in characters.
pub const MAX_URI_CHARS: usize = 512;
/// Longest scope accepted, in characters.
pub const MAX_SCOPE_CHARS: usize = 128;

/// Why a URI setting is refused; each names the setting and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    /// Empty or longer than [`MAX_URI_CHARS`].
    #[error("{name} must be 1 to {MAX_URI_CHARS} characters")]
    Length {
        /// The setting.
        name: String,
    },
    /// With a fragment, a space or a control character.
    #[error(
        "{name} {value:?} must be an absolute URI without a fragment, spaces or control characters"
    )]
    Characters {
        /// The setting.
        name: String,
        /// The value given.
        value: String,
    },
    /// Not a URI with a scheme and an authority.
    #[error("{name} {value:?} is not an absolute URI")]
    NotAbsolute {
        /// The setting.
        name: String,
        /// The value given.
        value: String,
    },
    /// Neither `https` nor `http`.
    #[error("{name} {value:?} must start with https://")]
    Scheme {
        /// The setting.
        name: String,
        /// The value given.
        value: String,
    },
    /// Without a host.
    #[error("{name} {value:?} has no host")]
    NoHost {
        /// The setting.
        name: String,
        /// The value given.
        value: String,
    },
    /// With `user@`.
    #[error("{name} {value:?} must not carry user information")]
    UserInfo {
        /// The setting.
        name: String,
        /// The value given.
        value: String,
    },
}

/// Why `[http.oauth]` is refused; each names the setting.
#[derive(Debug, thiserror::Error)]
pub enum OauthError {
    /// No issuer.
    #[error(
        "http.oauth.issuer is not set: give the authorization server's issuer \
         (MOAT_HTTP__OAUTH__ISSUER), one or a comma-separated list"
    )]
    NoIssuer,
    /// More than [`MAX_ISSUERS`].
    #[error("http.oauth.issuer lists {0} issuers; at most {MAX_ISSUERS}")]
    TooManyIssuers(usize),
    /// A URI setting refused.
    #[error(transparent)]
    Uri(#[from] UriError),
    /// No audience.
    #[error(
        "http.oauth.audience is not set: give this server's resource URI, e.g. \
         https://moat.example.com/mcp (MOAT_HTTP__OAUTH__AUDIENCE)"
    )]
    NoAudience,
    /// A required scope that is not one scope token.
    #[error(
        "http.oauth.required_scope {0:?} must be one scope: 1 to {MAX_SCOPE_CHARS} visible \
         ASCII characters, no spaces, quotes or backslashes"
    )]
    Scope(String),
    /// Both `jwks_path` and `jwks_url`.
    #[error("http.oauth.jwks_path and http.oauth.jwks_url are both set: give one key source")]
    TwoKeySources,
    /// Neither `jwks_path` nor `jwks_url`.
    #[error(
        "http.oauth has no key source: set jwks_url (MOAT_HTTP__OAUTH__JWKS_URL) or \
         jwks_path (MOAT_HTTP__OAUTH__JWKS_PATH)"
    )]
    NoKeySource,
    /// A plain-http `jwks_url` to another host than loopback.
    #[error(
        "http.oauth.jwks_url {0:?} must use https (plain http only to a loopback \
         address)"
    )]
    PlainHttpKeys(String),
    /// A metadata URL that cannot be quoted in `WWW-Authenticate`.
    #[error("http.oauth.resource_metadata_url must not contain quotes or backslashes")]
    QuotedMetadataUrl,
    /// A number out of its bounds.
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
}

/// One string or a list of them (`issuer`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// `issuer = "https://id.example"`.
    One(String),
    /// `issuer = ["https://a", "https://b"]`.
    Many(Vec<String>),
}

/// `[http.oauth]` as written (unvalidated).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOauth {
    issuer: Option<OneOrMany>,
    audience: Option<String>,
    required_scope: Option<String>,
    jwks_path: Option<String>,
    jwks_url: Option<String>,
    leeway_seconds: Option<u64>,
    jwks_min_refresh_seconds: Option<u64>,
    jwks_refresh_seconds: Option<u64>,
    resource_metadata_url: Option<String>,
}

/// Where the signing keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A JWKS file, read once at start-up (and again, rate-limited, on an
    /// unknown `kid`).
    Path(PathBuf),
    /// A JWKS URL the broker fetches (https; http only to loopback).
    Url(String),
}

/// `[http.oauth]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OauthConfig {
    /// Accepted `iss` values (exact).
    pub issuers: Vec<String>,
    /// The resource URI: `aud` must name it, and it is the metadata's
    /// `resource`.
    pub audience: String,
    /// The scope a token must carry.
    pub required_scope: String,
    /// The signing keys' source.
    pub keys: KeySource,
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    pub leeway_seconds: u64,
    /// Least time between two refreshes of the JWKS caused by an unknown
    /// `kid`, in seconds.
    pub jwks_min_refresh_seconds: u64,
    /// How often the JWKS is read again regardless of tokens, in seconds.
    pub jwks_refresh_seconds: u64,
    /// Where the protected-resource metadata is published (given, or
    /// derived from the audience as RFC 9728 says).
    pub resource_metadata_url: String,
}

/// An absolute URI's parts moat needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// `https` or `http`.
    pub https: bool,
    /// Host without brackets.
    pub host: String,
    /// Port, explicit or the scheme's.
    pub port: u16,
    /// Path and query, `/` when empty.
    pub path_and_query: String,
}

/// Whether `host` is a loopback name or address.
#[must_use]
pub fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Parse an absolute `http`/`https` URI without a fragment or user info.
///
/// # Errors
///
/// A message naming `name` and what is wrong.
pub fn parse_uri(name: &str, value: &str) -> Result<Parsed, UriError> {
    if value.is_empty() || value.chars().count() > MAX_URI_CHARS {
        return Err(UriError::Length { name: name.into() });
    }
    if value.contains('#') || value.chars().any(|c| c.is_control() || c == ' ') {
        return Err(UriError::Characters {
            name: name.into(),
            value: value.into(),
        });
    }
    let uri: hyper::Uri = value.parse().map_err(|_| UriError::NotAbsolute {
        name: name.into(),
        value: value.into(),
    })?;
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => {
            return Err(UriError::Scheme {
                name: name.into(),
                value: value.into(),
            });
        }
    };
    let authority = uri.authority().ok_or_else(|| UriError::NoHost {
        name: name.into(),
        value: value.into(),
    })?;
    if authority.as_str().contains('@') {
        return Err(UriError::UserInfo {
            name: name.into(),
            value: value.into(),
        });
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    if host.is_empty() {
        return Err(UriError::NoHost {
            name: name.into(),
            value: value.into(),
        });
    }
    let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
    let path_and_query = uri
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let path_and_query = if path_and_query.is_empty() {
        "/".to_owned()
    } else {
        path_and_query
    };
    Ok(Parsed {
        https,
        host,
        port,
        path_and_query,
    })
}

/// The RFC 9728 metadata URL of `resource`: the well-known name inserted
/// between the authority and the path (`https://h/mcp` →
/// `https://h/.well-known/oauth-protected-resource/mcp`).
#[must_use]
pub fn derived_metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let path = path.split('?').next().unwrap_or("").trim_end_matches('/');
    format!("{scheme}://{authority}/.well-known/oauth-protected-resource{path}")
}

/// A scope token (RFC 6749 §3.3): visible ASCII but `"` and `\`.
fn scope_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_SCOPE_CHARS
        && s.bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
}

/// The numeric bounds of `[http.oauth]`, checked wherever the table is
/// set, even when `http.auth` is not `oauth` (so a bad value is never
/// silently carried until the mode is switched).
///
/// # Errors
///
/// The first value out of its bounds.
pub fn check_bounds(raw: &RawOauth) -> Result<(), OutOfBounds> {
    bounded(&limits::OAUTH_LEEWAY_SECONDS, raw.leeway_seconds)?;
    bounded(
        &limits::OAUTH_JWKS_MIN_REFRESH_SECONDS,
        raw.jwks_min_refresh_seconds,
    )?;
    bounded(
        &limits::OAUTH_JWKS_REFRESH_SECONDS,
        raw.jwks_refresh_seconds,
    )?;
    Ok(())
}

/// Validate `[http.oauth]` for `auth = "oauth"`.
///
/// # Errors
///
/// A message naming the setting that is missing, out of bounds or
/// malformed.
pub fn validate(raw: RawOauth) -> Result<OauthConfig, OauthError> {
    let issuers = match raw.issuer {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    };
    let issuers: Vec<String> = issuers
        .into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    if issuers.is_empty() {
        return Err(OauthError::NoIssuer);
    }
    if issuers.len() > MAX_ISSUERS {
        return Err(OauthError::TooManyIssuers(issuers.len()));
    }
    for i in &issuers {
        parse_uri("http.oauth.issuer", i)?;
    }
    let audience = raw
        .audience
        .map(|a| a.trim().to_owned())
        .unwrap_or_default();
    if audience.is_empty() {
        return Err(OauthError::NoAudience);
    }
    parse_uri("http.oauth.audience", &audience)?;
    let required_scope = raw
        .required_scope
        .map_or_else(|| DEFAULT_SCOPE.to_owned(), |s| s.trim().to_owned());
    if !scope_ok(&required_scope) {
        return Err(OauthError::Scope(required_scope));
    }
    let path = raw
        .jwks_path
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty());
    let url = raw
        .jwks_url
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty());
    let keys = match (path, url) {
        (Some(_), Some(_)) => {
            return Err(OauthError::TwoKeySources);
        }
        (None, None) => {
            return Err(OauthError::NoKeySource);
        }
        (Some(p), None) => KeySource::Path(PathBuf::from(p)),
        (None, Some(u)) => {
            let parsed = parse_uri("http.oauth.jwks_url", &u)?;
            if !parsed.https && !is_loopback(&parsed.host) {
                return Err(OauthError::PlainHttpKeys(u));
            }
            KeySource::Url(u)
        }
    };
    let resource_metadata_url = match raw
        .resource_metadata_url
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
    {
        Some(u) => {
            parse_uri("http.oauth.resource_metadata_url", &u)?;
            u
        }
        None => derived_metadata_url(&audience),
    };
    if resource_metadata_url.contains('"') || resource_metadata_url.contains('\\') {
        return Err(OauthError::QuotedMetadataUrl);
    }
    Ok(OauthConfig {
        issuers,
        audience,
        required_scope,
        keys,
        leeway_seconds: bounded(&limits::OAUTH_LEEWAY_SECONDS, raw.leeway_seconds)?,
        jwks_min_refresh_seconds: bounded(
            &limits::OAUTH_JWKS_MIN_REFRESH_SECONDS,
            raw.jwks_min_refresh_seconds,
        )?,
        jwks_refresh_seconds: bounded(
            &limits::OAUTH_JWKS_REFRESH_SECONDS,
            raw.jwks_refresh_seconds,
        )?,
        resource_metadata_url,
    })
}

/// The production invariants of an OAuth configuration: nothing but
/// https to the outside.
#[must_use]
pub fn production_violations(c: &OauthConfig) -> Vec<String> {
    let mut v = Vec::new();
    if let KeySource::Url(u) = &c.keys
        && u.starts_with("http://")
    {
        v.push(format!(
            "MOAT_HTTP__OAUTH__JWKS_URL is {u}: plain http is for tests; use https"
        ));
    }
    if !c.audience.starts_with("https://") {
        v.push(format!(
            "MOAT_HTTP__OAUTH__AUDIENCE is {}: the resource URI must use https",
            c.audience
        ));
    }
    for i in &c.issuers {
        if !i.starts_with("https://") {
            v.push(format!(
                "MOAT_HTTP__OAUTH__ISSUER {i} does not use https: an issuer is an https URL"
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{assert_deployable, manifest_env};

    fn raw(f: impl FnOnce(&mut RawOauth)) -> RawOauth {
        let mut r = RawOauth {
            issuer: Some(OneOrMany::One("https://id.example".into())),
            audience: Some("https://moat.example/mcp".into()),
            jwks_url: Some("https://id.example/jwks".into()),
            ..RawOauth::default()
        };
        f(&mut r);
        r
    }

    #[test]
    fn defaults_and_derived_metadata_url() {
        let c = validate(raw(|_| {})).unwrap();
        assert_eq!(c.required_scope, "moat:read");
        assert_eq!(c.leeway_seconds, 60);
        assert_eq!(
            c.resource_metadata_url,
            "https://moat.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            derived_metadata_url("https://h:8443"),
            "https://h:8443/.well-known/oauth-protected-resource"
        );
        assert!(production_violations(&c).is_empty());
    }

    fn load_file(text: &str) -> Result<crate::config::Config, String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("moat.toml");
        std::fs::write(&file, text).unwrap();
        let sources = crate::config::Sources {
            file: Some(file),
            env: Vec::new(),
            workspace_flag: Some(dir.path().to_path_buf()),
            cwd: None,
        };
        crate::config::load(&sources, crate::config::Transport::Http, false)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_table_is_read_from_the_file_its_keys_named_and_typed() {
        let c = load_file(
            "[http]\nauth = \"OAUTH\"\n[http.oauth]\nissuer = [\"https://a.test\", \"https://b.test\"]\n\
             audience = \"https://moat.test/mcp\"\njwks_path = \"/k.json\"\nleeway_seconds = 5\n",
        )
        .unwrap();
        assert_eq!(c.http.auth, crate::config::HttpAuth::Oauth);
        let o = c.http.oauth.unwrap();
        assert_eq!(o.issuers, ["https://a.test", "https://b.test"]);
        assert_eq!(o.keys, KeySource::Path("/k.json".into()));
        assert_eq!(o.leeway_seconds, 5);
        for (text, says) in [
            (
                "[http.oauth]\nisuer = \"x\"\n",
                "unknown key `isuer` in [http.oauth]; did you mean `issuer`?",
            ),
            (
                "[http]\njwks_url = \"x\"\n",
                "did you mean `jwks_url` in `[http.oauth]`?",
            ),
            (
                "[http.oauth]\nleeway_seconds = \"x\"\n",
                "http.oauth.leeway_seconds must be a non-negative integer",
            ),
            (
                "[http.oauth]\nissuer = 3\n",
                "http.oauth.issuer must be a string or a list of strings",
            ),
            ("[http]\noauth = 3\n", "[http.oauth] must be a table"),
            ("[http]\nauth = \"oath\"\n", "did you mean `oauth`?"),
            ("[http]\nauth = \"bearer\"\n", "http.bearer_token is empty"),
        ] {
            let e = load_file(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        // Without `auth`, a token still means bearer; with none, no auth.
        let c = load_file("[http]\nbearer_token = \"t0k\"\n").unwrap();
        assert_eq!(c.http.auth, crate::config::HttpAuth::Bearer);
        assert_eq!(
            load_file("").unwrap().http.auth,
            crate::config::HttpAuth::None
        );
    }

    #[test]
    fn the_kubernetes_oauth_example_is_complete_ships_no_secret_and_passes_production() {
        let k8s = include_str!("../../../docs/deploy/kubernetes-oauth.yaml");
        assert_deployable(k8s);
        assert!(k8s.contains("mountPath: /workspace"));
        assert!(!k8s.contains("secretKeyRef"));
        assert_eq!(
            manifest_env(k8s, "MOAT_HTTP__AUTH").as_deref(),
            Some("oauth")
        );
        let c = validate(RawOauth {
            issuer: manifest_env(k8s, "MOAT_HTTP__OAUTH__ISSUER").map(OneOrMany::One),
            audience: manifest_env(k8s, "MOAT_HTTP__OAUTH__AUDIENCE"),
            required_scope: manifest_env(k8s, "MOAT_HTTP__OAUTH__REQUIRED_SCOPE"),
            jwks_url: manifest_env(k8s, "MOAT_HTTP__OAUTH__JWKS_URL"),
            ..RawOauth::default()
        })
        .unwrap();
        assert!(production_violations(&c).is_empty());
    }

    #[test]
    fn every_value_is_bounded() {
        let bad: Vec<(RawOauth, &str)> = vec![
            (raw(|r| r.issuer = None), "issuer is not set"),
            (raw(|r| r.audience = None), "audience is not set"),
            (raw(|r| r.jwks_url = None), "no key source"),
            (raw(|r| r.jwks_path = Some("/k.json".into())), "both set"),
            (
                raw(|r| r.jwks_url = Some("http://id.example/jwks".into())),
                "must use https",
            ),
            (
                raw(|r| r.jwks_url = Some("ftp://id.example/jwks".into())),
                "https://",
            ),
            (raw(|r| r.leeway_seconds = Some(301)), "between 0 and 300"),
            (raw(|r| r.required_scope = Some("a b".into())), "one scope"),
            (
                raw(|r| r.audience = Some("https://h/mcp#x".into())),
                "fragment",
            ),
            (raw(|r| r.audience = Some("a".repeat(600))), "1 to 512"),
            (
                raw(|r| r.issuer = Some(OneOrMany::Many(vec!["https://a".into(); 17]))),
                "at most 16",
            ),
        ];
        for (r, wanted) in bad {
            let e = validate(r).unwrap_err().to_string();
            assert!(e.contains(wanted), "{e} does not say {wanted}");
        }
        let c = validate(raw(|r| r.jwks_url = Some("http://127.0.0.1:9/jwks".into()))).unwrap();
        assert_eq!(production_violations(&c).len(), 1);
    }
}

//! The OAuth 2.1 resource server of the HTTP transport (`http.auth =
//! "oauth"`): access tokens are JWTs, checked here before a request reaches
//! the server core.
//!
//! # What a token must be
//!
//! At most [`MAX_TOKEN_BYTES`] (longer: refused before any parsing), three
//! base64url parts, a header whose `alg` is RS256, ES256 or EdDSA (never
//! `none`, never an HMAC: a public key used as an HMAC secret cannot forge
//! a token) and equal to the algorithm of the JWK its `kid` names (the
//! algorithm is the key's, not the token's), no `crit`, a valid signature,
//! an `iss` that is **one string** equal to one of the configured issuers
//! (RFC 7519 §4.1.1: a StringOrURI, never a list), an `aud` naming the
//! configured audience (RFC 8707: a token minted for another resource is
//! refused), an `exp` (required) and `nbf` (when present) within
//! `leeway_seconds`, an `iat` (when present) a number not later than now
//! plus the leeway (a token issued in the future is refused), a `sub`, and
//! the required scope in `scope` (space-separated) or `scp` (a list or a
//! string).
//!
//! # Answers
//!
//! A missing token: 401 `WWW-Authenticate: Bearer resource_metadata="…"`.
//! An invalid one: 401 with `error="invalid_token"` added. A valid token
//! without the scope: 403 `error="insufficient_scope", scope="…"`. The
//! token is never logged, echoed or forwarded; the failure reason (a fixed
//! word) is what is logged and counted.
//!
//! # Verified tokens are remembered
//!
//! A client sends the same token with every request until it expires, and
//! checking a signature costs far more than the rest of a small tool call.
//! So an admitted token's SHA-256 (never the token) is kept with its
//! subject and `exp`, for at most [`MAX_CACHED`] tokens: the same bytes are
//! admitted again without a signature check until `exp` (plus the leeway)
//! passes or the JWKS is refreshed. The configuration cannot change while
//! moat runs, so every other check would give the same answer. Refused
//! tokens are not remembered.
//!
//! Signatures are checked one at a time: a flood of forged tokens (each
//! costing a signature check) then takes at most one runtime thread, and
//! callers whose token is remembered, who need no check, keep the rest.

pub mod fetch;
pub mod jwks;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hyper::header::HeaderValue;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::config::oauth as settings;
use settings::OauthConfig;

/// Longest token accepted, in bytes; a longer one is refused unparsed.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Longest `sub` kept for the audit trail, in characters.
pub const MAX_SUBJECT_CHARS: usize = 256;
/// Most verified tokens remembered at once.
pub const MAX_CACHED: usize = 4096;
/// The RFC 9728 well-known path.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Why a request was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token (401, no error code).
    Missing,
    /// A token that is not valid (401 `invalid_token`), with the reason
    /// counted in the metrics.
    Invalid(&'static str),
    /// A valid token without the required scope (403).
    InsufficientScope,
}

impl Refusal {
    /// The metrics' and the log's reason.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Missing => "token_missing",
            Refusal::Invalid(r) => r,
            Refusal::InsufficientScope => "insufficient_scope",
        }
    }
}

/// The claims moat reads beyond those `jsonwebtoken` checks.
#[derive(Deserialize)]
struct Claims {
    exp: Option<Value>,
    iss: Option<Value>,
    iat: Option<Value>,
    sub: Option<Value>,
    scope: Option<Value>,
    scp: Option<Value>,
}

/// The part of a JWT header read before the signature is checked.
#[derive(Deserialize)]
struct RawHeader {
    alg: Option<Value>,
    kid: Option<Value>,
    crit: Option<Value>,
}

/// The checker, built once at start-up.
pub struct Validator {
    config: OauthConfig,
    keys: Arc<jwks::Keys>,
    challenge_missing: HeaderValue,
    challenge_invalid: HeaderValue,
    challenge_scope: HeaderValue,
    metadata: Value,
    metadata_paths: Vec<String>,
    verified: Mutex<HashMap<[u8; 32], Verified>>,
    /// One signature check at a time.
    verifying: tokio::sync::Semaphore,
}

/// An admitted token, remembered by its digest.
struct Verified {
    subject: String,
    exp: u64,
    generation: u64,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why the OAuth checker cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum OauthError {
    /// The keys cannot be loaded or hold no usable key.
    #[error(transparent)]
    Keys(#[from] jwks::JwksError),
    /// A configured URL cannot be put in a `WWW-Authenticate` header.
    #[error("http.oauth: a URL is not a valid header value")]
    HeaderValue,
    /// `doctor`'s runtime to load the keys in.
    #[error("{0}")]
    Runtime(std::io::Error),
}

fn header_value(s: &str) -> Result<HeaderValue, OauthError> {
    HeaderValue::from_str(s).map_err(|_| OauthError::HeaderValue)
}

impl Validator {
    /// Load the keys (the file, or one fetch of the URL) and build the
    /// checker.
    ///
    /// # Errors
    ///
    /// The keys cannot be loaded or hold no usable key.
    pub async fn load(config: &OauthConfig) -> Result<Validator, OauthError> {
        let initial = jwks::load(&config.keys).await?;
        let validator = Self::with_keys(config, initial)?;
        jwks::Keys::refresh_every(
            &validator.keys,
            Duration::from_secs(config.jwks_refresh_seconds),
        );
        Ok(validator)
    }

    fn with_keys(config: &OauthConfig, initial: jwks::KeySet) -> Result<Validator, OauthError> {
        let meta = &config.resource_metadata_url;
        let keys = Arc::new(jwks::Keys::new(
            config.keys.clone(),
            initial,
            Duration::from_secs(config.jwks_min_refresh_seconds),
        ));
        Ok(Validator {
            challenge_missing: header_value(&format!("Bearer resource_metadata=\"{meta}\""))?,
            challenge_invalid: header_value(&format!(
                "Bearer error=\"invalid_token\", resource_metadata=\"{meta}\""
            ))?,
            challenge_scope: header_value(&format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{meta}\"",
                config.required_scope
            ))?,
            metadata: json!({
                "resource": config.audience,
                "authorization_servers": config.issuers,
                "scopes_supported": [config.required_scope],
                "bearer_methods_supported": ["header"],
            }),
            metadata_paths: {
                let mut paths = vec![METADATA_PATH.to_owned(), format!("{METADATA_PATH}/mcp")];
                if let Ok(p) = settings::parse_uri("resource_metadata_url", meta) {
                    let path = p.path_and_query.split('?').next().unwrap_or("").to_owned();
                    if !paths.contains(&path) {
                        paths.push(path);
                    }
                }
                paths
            },
            config: config.clone(),
            keys,
            verified: Mutex::new(HashMap::new()),
            verifying: tokio::sync::Semaphore::new(1),
        })
    }

    /// The RFC 9728 document.
    #[must_use]
    pub fn metadata(&self) -> &Value {
        &self.metadata
    }

    /// Whether `path` is where the metadata is served: the well-known
    /// path alone, followed by `/mcp` (RFC 9728's form for the `/mcp`
    /// resource), or the path of `resource_metadata_url`.
    #[must_use]
    pub fn is_metadata_path(&self, path: &str) -> bool {
        self.metadata_paths.iter().any(|p| p == path)
    }

    /// The `WWW-Authenticate` value for `r`.
    #[must_use]
    pub fn challenge(&self, r: Refusal) -> HeaderValue {
        match r {
            Refusal::Missing => self.challenge_missing.clone(),
            Refusal::Invalid(_) => self.challenge_invalid.clone(),
            Refusal::InsufficientScope => self.challenge_scope.clone(),
        }
    }

    /// The subject of a token admitted before and still valid (its `exp`
    /// not passed, the keys not read again since): what [`Validator::check`]
    /// would answer, at the cost of one hash and one lookup, with no
    /// signature checked. `None` for every other header.
    #[must_use]
    pub fn known(&self, authorization: Option<&[u8]>) -> Option<String> {
        let token = bearer_value(authorization).ok()?;
        self.remembered(&Sha256::digest(token.as_bytes()).into())
    }

    /// Judge an `Authorization` header value; the token's subject, escaped
    /// and cut at [`MAX_SUBJECT_CHARS`], when it is admitted.
    ///
    /// # Errors
    ///
    /// Why it is not admitted.
    pub async fn check(&self, authorization: Option<&[u8]>) -> Result<String, Refusal> {
        let token = bearer_value(authorization)?;
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(subject) = self.remembered(&digest) {
            return Ok(subject);
        }
        let (alg, kid) = read_header(token)?;
        let key = match self.keys.find(kid.as_deref()).await {
            jwks::Lookup::Found(k) => k,
            jwks::Lookup::Unknown => return Err(Refusal::Invalid("unknown_kid")),
        };
        let generation = self.keys.generation();
        if key.alg != alg {
            return Err(Refusal::Invalid("alg"));
        }
        let mut v = Validation::new(alg);
        v.leeway = self.config.leeway_seconds;
        v.validate_exp = true;
        v.validate_nbf = true;
        v.validate_aud = true;
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.set_issuer(&self.config.issuers);
        v.set_audience(&[&self.config.audience]);
        let data = {
            let _one = self
                .verifying
                .acquire()
                .await
                .map_err(|_| Refusal::Invalid("bad_signature"))?;
            jsonwebtoken::decode::<Claims>(token, &key.decoding, &v)
                .map_err(|e| Refusal::Invalid(reason_of(e.kind())))?
        };
        let claims = data.claims;
        // One string, equal to a configured issuer: the library also takes
        // a list whose members include one.
        match &claims.iss {
            Some(Value::String(iss)) if self.config.issuers.iter().any(|i| i == iss) => {}
            _ => return Err(Refusal::Invalid("bad_issuer")),
        }
        match &claims.iat {
            None => {}
            Some(Value::Number(iat)) => {
                let latest = unix_now().saturating_add(self.config.leeway_seconds);
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "seconds since 1970 are far below 2^52"
                )]
                let latest = latest as f64;
                if iat.as_f64().is_none_or(|iat| iat > latest) {
                    return Err(Refusal::Invalid("not_yet_valid"));
                }
            }
            Some(_) => return Err(Refusal::Invalid("malformed")),
        }
        let Some(Value::String(sub)) = claims
            .sub
            .filter(|s| s.as_str().is_some_and(|s| !s.is_empty()))
        else {
            return Err(Refusal::Invalid("malformed"));
        };
        if !has_scope(
            claims.scope.as_ref(),
            claims.scp.as_ref(),
            &self.config.required_scope,
        ) {
            return Err(Refusal::InsufficientScope);
        }
        let subject = subject_text(&sub);
        if let Some(exp) = claims.exp.as_ref().and_then(Value::as_f64) {
            self.remember(digest, &subject, exp, generation);
        }
        Ok(subject)
    }

    /// The subject of a token admitted before, still within its `exp` and
    /// verified under the keys now installed.
    fn remembered(&self, digest: &[u8; 32]) -> Option<String> {
        let mut cache = self.verified.lock().ok()?;
        let hit = cache.get(digest)?;
        if hit.generation == self.keys.generation()
            && unix_now() <= hit.exp.saturating_add(self.config.leeway_seconds)
        {
            return Some(hit.subject.clone());
        }
        cache.remove(digest);
        None
    }

    fn remember(&self, digest: [u8; 32], subject: &str, exp: f64, generation: u64) {
        let Ok(mut cache) = self.verified.lock() else {
            return;
        };
        if cache.len() >= MAX_CACHED {
            let now = unix_now();
            let leeway = self.config.leeway_seconds;
            let current = self.keys.generation();
            cache.retain(|_, v| v.generation == current && now <= v.exp.saturating_add(leeway));
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a past or absurd exp only shortens what is remembered"
        )]
        let exp = exp.max(0.0) as u64;
        cache.insert(
            digest,
            Verified {
                subject: subject.to_owned(),
                exp,
                generation,
            },
        );
    }
}

/// `moat doctor`'s check: load the keys once, as start-up would (one
/// fetch of the URL), and say how many usable keys were found where.
///
/// # Errors
///
/// Why the keys cannot be loaded.
pub fn probe_keys(config: &OauthConfig) -> Result<String, OauthError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(OauthError::Runtime)?;
    let set = rt.block_on(jwks::load(&config.keys))?;
    let from = match &config.keys {
        settings::KeySource::Path(p) => p.display().to_string(),
        settings::KeySource::Url(u) => u.clone(),
    };
    let refused = match set.refused() {
        [] => String::new(),
        r => format!("; refused: {}", r.join(", ")),
    };
    Ok(format!("{} usable from {from}{refused}", set.len()))
}

/// The algorithm and `kid` of a token's header, read before anything else:
/// an algorithm other than the three is refused here, whatever the keys.
fn read_header(token: &str) -> Result<(Algorithm, Option<String>), Refusal> {
    let mut parts = token.split('.');
    let (Some(head), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::Invalid("malformed"));
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .map_err(|_| Refusal::Invalid("malformed"))?;
    let header: RawHeader =
        serde_json::from_slice(&bytes).map_err(|_| Refusal::Invalid("malformed"))?;
    if header.crit.is_some() {
        return Err(Refusal::Invalid("malformed"));
    }
    let alg = match header.alg.as_ref().and_then(Value::as_str) {
        Some("RS256") => Algorithm::RS256,
        Some("ES256") => Algorithm::ES256,
        Some("EdDSA") => Algorithm::EdDSA,
        Some(_) => return Err(Refusal::Invalid("alg")),
        None => return Err(Refusal::Invalid("malformed")),
    };
    let kid = match header.kid {
        None => None,
        Some(Value::String(k)) if k.chars().count() <= jwks::MAX_KID_CHARS => Some(k),
        Some(Value::String(_)) => return Err(Refusal::Invalid("unknown_kid")),
        Some(_) => return Err(Refusal::Invalid("malformed")),
    };
    Ok((alg, kid))
}

/// The bounded reason of a `jsonwebtoken` failure.
fn reason_of(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidSignature
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat => "bad_signature",
        ErrorKind::ExpiredSignature => "expired",
        ErrorKind::ImmatureSignature => "not_yet_valid",
        ErrorKind::InvalidIssuer => "bad_issuer",
        ErrorKind::InvalidAudience => "bad_audience",
        ErrorKind::InvalidAlgorithm
        | ErrorKind::InvalidAlgorithmName
        | ErrorKind::UnsupportedAlgorithm
        | ErrorKind::MissingAlgorithm => "alg",
        _ => "malformed",
    }
}

/// Whether `scope` (space-separated) or `scp` (a list, or a string) holds
/// `wanted`.
/// The token of a `Bearer` `Authorization` value, at most
/// [`MAX_TOKEN_BYTES`] long.
fn bearer_value(authorization: Option<&[u8]>) -> Result<&str, Refusal> {
    let token = authorization
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(|h| h.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, value)| value.trim())
        .ok_or(Refusal::Missing)?;
    if token.len() > MAX_TOKEN_BYTES {
        return Err(Refusal::Invalid("too_large"));
    }
    Ok(token)
}

fn has_scope(scope: Option<&Value>, scp: Option<&Value>, wanted: &str) -> bool {
    let in_text = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.split(' ').any(|w| w == wanted))
    };
    scope.is_some_and(in_text)
        || scp.is_some_and(|v| {
            in_text(v)
                || v.as_array()
                    .is_some_and(|a| a.iter().any(|s| s.as_str() == Some(wanted)))
        })
}

/// A subject as the audit trail keeps it: escaped (no control or invisible
/// character left raw) and cut at [`MAX_SUBJECT_CHARS`].
fn subject_text(sub: &str) -> String {
    let escaped = crate::content::fence::escape_for_prose(sub);
    match escaped.char_indices().nth(MAX_SUBJECT_CHARS) {
        Some((at, _)) => format!("{}…[cut]", &escaped[..at]),
        None => escaped.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_is_read_from_scope_or_scp() {
        let s = |v: Value| Some(v);
        assert!(has_scope(
            s(json!("a moat:read b")).as_ref(),
            None,
            "moat:read"
        ));
        assert!(!has_scope(
            s(json!("moat:readx")).as_ref(),
            None,
            "moat:read"
        ));
        assert!(has_scope(
            None,
            s(json!(["x", "moat:read"])).as_ref(),
            "moat:read"
        ));
        assert!(!has_scope(None, None, "moat:read"));
        assert!(!has_scope(
            s(json!(["moat:read"])).as_ref(),
            None,
            "moat:read"
        ));
    }

    #[test]
    fn the_header_is_judged_before_any_key() {
        let enc =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let tok = |h: Value| format!("{}.{}.sig", enc(&h), enc(&json!({})));
        assert_eq!(
            read_header(&tok(json!({"alg": "none"}))),
            Err(Refusal::Invalid("alg"))
        );
        assert_eq!(
            read_header(&tok(json!({"alg": "HS256", "kid": "k"}))),
            Err(Refusal::Invalid("alg"))
        );
        assert_eq!(
            read_header(&tok(json!({"alg": "RS256", "crit": ["x"]}))),
            Err(Refusal::Invalid("malformed"))
        );
        assert_eq!(read_header("a.b"), Err(Refusal::Invalid("malformed")));
        assert_eq!(
            read_header(&tok(json!({"alg": "ES256", "kid": "k1"}))),
            Ok((Algorithm::ES256, Some("k1".into())))
        );
    }

    #[test]
    fn a_subject_is_escaped_and_cut() {
        assert!(!subject_text("a\u{1b}[31mb").contains('\u{1b}'));
        assert!(subject_text(&"x".repeat(1000)).chars().count() < 300);
    }
}

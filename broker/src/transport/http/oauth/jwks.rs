//! The signing keys: a JWKS read from a file or fetched from a URL by the
//! broker (never by a worker), cached, and refreshed when a token names a
//! `kid` the cache does not hold, and every `http.oauth.jwks_refresh_seconds`
//! whatever the tokens say: a key the authorization server withdrew (rotated
//! out, or compromised) stops being accepted at the next periodic refresh,
//! and tokens admitted under it are checked again.
//!
//! A refresh is single-flight and rate-limited: at most one per
//! `http.oauth.jwks_min_refresh_seconds`, and a token with an unknown `kid`
//! that arrives while one is running, or too soon after the last, is
//! refused at once rather than waiting. So a burst of tokens with random
//! `kid`s costs the JWKS server one request per interval, and callers whose
//! `kid` is cached never wait for a refresh (they read the cache only). A
//! refresh that fails (the server down, slow past the time limit, or
//! answering more than the size limit or no usable key) keeps the cached
//! keys.
//!
//! Only keys moat can check are kept: `RSA` (RS256) of at least
//! [`MIN_RSA_BITS`] bits, `EC` on P-256 (ES256) and `OKP` on Ed25519
//! (EdDSA), with `use` absent or `sig`, and an `alg` absent or matching the
//! key type. Symmetric (`oct`) keys are never kept: a token's algorithm is
//! taken from the key, never from the token. A shorter RSA key is refused
//! (RFC 7518 §3.3: a key of 2048 bits or more MUST be used with RS256; a
//! 1024-bit modulus can be factored by a well-funded attacker), and named in
//! the start-up error when no key is left, and by `moat doctor`.
//!
//! A refresh that finds the same keys installs nothing: tokens admitted
//! before stay remembered (a flood of unknown `kid`s does not make every
//! good caller's token be checked again).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::fetch;
use crate::config::oauth::KeySource;

/// Largest JWKS document read, from a file or a URL.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
/// Time allowed for one JWKS fetch, connection and body included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Most keys kept from one document.
const MAX_KEYS: usize = 64;
/// Longest `kid` kept or looked up.
pub const MAX_KID_CHARS: usize = 256;
/// Smallest RSA modulus kept, in bits.
pub const MIN_RSA_BITS: usize = 2048;

/// One usable key.
pub struct Key {
    /// The one algorithm this key verifies.
    pub alg: Algorithm,
    /// The key.
    pub decoding: DecodingKey,
}

/// The keys of one JWKS document.
#[derive(Default)]
pub struct KeySet {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`, used only for tokens without one.
    anonymous: Vec<Arc<Key>>,
    /// The keys refused for their strength, each named (`kid` and why).
    refused: Vec<String>,
    /// A digest of the document's usable keys, to tell a refresh that
    /// changed nothing.
    fingerprint: [u8; 32],
}

impl KeySet {
    /// How many usable keys it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_kid.len() + self.anonymous.len()
    }

    /// Whether it holds no usable key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys refused for their strength, each named.
    #[must_use]
    pub fn refused(&self) -> &[String] {
        &self.refused
    }

    /// The key for a token's `kid`; a token without one may use the only
    /// key of the set that has none.
    fn get(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        match kid {
            Some(k) => self.by_kid.get(k).cloned(),
            None if self.anonymous.len() == 1 => self.anonymous.first().cloned(),
            None => None,
        }
    }
}

/// The algorithm of a JWK moat can use, if it is one.
fn algorithm_of(jwk: &Jwk) -> Option<Algorithm> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    let (alg, declared) = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => (Algorithm::RS256, KeyAlgorithm::RS256),
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => {
            (Algorithm::ES256, KeyAlgorithm::ES256)
        }
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            (Algorithm::EdDSA, KeyAlgorithm::EdDSA)
        }
        _ => return None,
    };
    match &jwk.common.key_algorithm {
        None => Some(alg),
        Some(a) if *a == declared => Some(alg),
        Some(_) => None,
    }
}

/// The size of an RSA key's modulus in bits, from its base64url `n`.
fn rsa_bits(n: &str) -> usize {
    use base64::Engine as _;
    let Ok(bytes) =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(n.trim_end_matches('='))
    else {
        return 0;
    };
    let significant: &[u8] = match bytes.iter().position(|b| *b != 0) {
        Some(i) => &bytes[i..],
        None => return 0,
    };
    (significant.len() - 1) * 8 + (8 - significant[0].leading_zeros() as usize)
}

/// Why a key set cannot be had; a file's error names the file, a URL's
/// the URL.
#[derive(Debug, thiserror::Error)]
pub enum JwksError {
    /// The document is over [`MAX_JWKS_BYTES`].
    #[error("the JWKS is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    /// The document is not JSON.
    #[error("the JWKS is not JSON")]
    NotJson,
    /// The document has no `keys` list.
    #[error("the JWKS has no \"keys\" list")]
    NoKeys,
    /// None of the keys is one a token may be signed with.
    #[error(
        "the JWKS holds no usable key (RSA of at least {MIN_RSA_BITS} bits, P-256 or Ed25519, for signatures){}",
        refused_text(.0)
    )]
    NoUsableKey(Vec<String>),
    /// The file cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The configured file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is over [`MAX_JWKS_BYTES`].
    #[error("{}: the JWKS is larger than {MAX_JWKS_BYTES} bytes", path.display())]
    FileTooLarge {
        /// The configured file.
        path: PathBuf,
    },
    /// The URL cannot be fetched.
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
}

fn refused_text(refused: &[String]) -> String {
    if refused.is_empty() {
        String::new()
    } else {
        format!("; refused: {}", refused.join(", "))
    }
}

/// Parse a JWKS document, keeping the usable keys (others are skipped).
///
/// # Errors
///
/// The document is not a JSON object with a `keys` list.
pub fn parse(bytes: &[u8]) -> Result<KeySet, JwksError> {
    if bytes.len() > MAX_JWKS_BYTES {
        return Err(JwksError::TooLarge);
    }
    let doc: Value = serde_json::from_slice(bytes).map_err(|_| JwksError::NotJson)?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or(JwksError::NoKeys)?;
    let mut set = KeySet::default();
    let mut digest = Sha256::new();
    for k in keys {
        if set.len() >= MAX_KEYS {
            break;
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(k.clone()) else {
            continue;
        };
        let Some(alg) = algorithm_of(&jwk) else {
            continue;
        };
        if let AlgorithmParameters::RSA(p) = &jwk.algorithm {
            let bits = rsa_bits(&p.n);
            if bits < MIN_RSA_BITS {
                let kid = jwk.common.key_id.as_deref().unwrap_or("(no kid)");
                let kid: String = kid.chars().take(64).collect();
                set.refused.push(format!(
                    "{kid:?}: RSA key of {bits} bits, under {MIN_RSA_BITS}"
                ));
                continue;
            }
        }
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let key = Arc::new(Key { alg, decoding });
        digest.update(k.to_string().as_bytes());
        digest.update([0]);
        match jwk.common.key_id {
            Some(kid) if kid.chars().count() <= MAX_KID_CHARS => {
                set.by_kid.entry(kid).or_insert(key);
            }
            Some(_) => {}
            None => set.anonymous.push(key),
        }
    }
    set.fingerprint = digest.finalize().into();
    Ok(set)
}

/// Read the keys from `source` once.
///
/// # Errors
///
/// The file cannot be read, the URL cannot be fetched, or the document
/// holds no usable key.
pub async fn load(source: &KeySource) -> Result<KeySet, JwksError> {
    let bytes = match source {
        KeySource::Path(p) => read_file(p)?,
        KeySource::Url(u) => fetch::get(u, MAX_JWKS_BYTES, FETCH_TIMEOUT).await?,
    };
    let set = parse(&bytes)?;
    if set.is_empty() {
        return Err(JwksError::NoUsableKey(set.refused));
    }
    Ok(set)
}

fn read_file(p: &Path) -> Result<Vec<u8>, JwksError> {
    use std::io::Read as _;
    let read_error = |source| JwksError::Read {
        path: p.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(p).map_err(read_error)?;
    let mut bytes = Vec::new();
    f.take(MAX_JWKS_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() > MAX_JWKS_BYTES {
        return Err(JwksError::FileTooLarge {
            path: p.to_path_buf(),
        });
    }
    Ok(bytes)
}

/// The cached keys and their refresh.
pub struct Keys {
    source: KeySource,
    current: RwLock<Arc<KeySet>>,
    /// When the last refresh started; held while one runs.
    last_refresh: tokio::sync::Mutex<Option<Instant>>,
    min_interval: Duration,
    /// Bumped each time a new set is installed.
    generation: AtomicU64,
}

/// What a look-up found.
pub enum Lookup {
    /// The key.
    Found(Arc<Key>),
    /// No key for this `kid`, even after a refresh (or none was allowed).
    Unknown,
}

impl Keys {
    /// Keys loaded at start-up from `source`.
    #[must_use]
    pub fn new(source: KeySource, initial: KeySet, min_interval: Duration) -> Keys {
        Keys {
            source,
            current: RwLock::new(Arc::new(initial)),
            last_refresh: tokio::sync::Mutex::new(None),
            min_interval,
            generation: AtomicU64::new(0),
        }
    }

    /// Which key set is installed: a token verified under an earlier one
    /// is verified again (its key may have been withdrawn).
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn cached(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        self.current.read().ok().and_then(|s| s.get(kid))
    }

    /// The key for `kid`: from the cache, or after one refresh when the
    /// rate limit allows it and no other refresh is running.
    pub async fn find(&self, kid: Option<&str>) -> Lookup {
        if let Some(k) = self.cached(kid) {
            return Lookup::Found(k);
        }
        if self.refresh().await
            && let Some(k) = self.cached(kid)
        {
            return Lookup::Found(k);
        }
        Lookup::Unknown
    }

    /// Read the keys again every `every`, for as long as `keys` is in use
    /// (the task holds no strong reference, so it ends with the validator).
    /// A periodic refresh obeys the same rate limit and single flight as
    /// one caused by an unknown `kid`; one that fails keeps the cached keys.
    pub fn refresh_every(keys: &Arc<Keys>, every: Duration) {
        let keys = Arc::downgrade(keys);
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + every;
            let mut tick = tokio::time::interval_at(start, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(keys) = keys.upgrade() else { break };
                keys.refresh().await;
            }
        });
    }

    /// Fetch the keys again if allowed; whether a new set was installed.
    async fn refresh(&self) -> bool {
        let Ok(mut last) = self.last_refresh.try_lock() else {
            return false;
        };
        if last.is_some_and(|t| t.elapsed() < self.min_interval) {
            return false;
        }
        *last = Some(Instant::now());
        match load(&self.source).await {
            Ok(set) => {
                tracing::info!(keys = set.len(), "oauth.jwks_refreshed");
                if let Ok(mut cur) = self.current.write() {
                    if cur.fingerprint == set.fingerprint {
                        // The same keys: what was admitted under them stays.
                        return false;
                    }
                    *cur = Arc::new(set);
                    self.generation.fetch_add(1, Ordering::SeqCst);
                }
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "oauth.jwks_refresh_failed");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_signature_keys_of_the_three_algorithms_are_kept() {
        let doc = serde_json::json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "ed"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "enc", "use": "enc"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "wrong-alg", "alg": "RS256"},
            {"kty": "weird", "kid": "x"},
        ]});
        let set = parse(doc.to_string().as_bytes()).unwrap();
        assert_eq!(set.len(), 1);
        assert!(
            set.get(Some("ed"))
                .is_some_and(|k| k.alg == Algorithm::EdDSA)
        );
        assert!(set.get(Some("hmac")).is_none());
        assert!(parse(b"[]").is_err());
        assert!(parse(&vec![b' '; MAX_JWKS_BYTES + 1]).is_err());
    }
}

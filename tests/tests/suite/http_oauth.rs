//! `http.auth = "oauth"`: the broker as an OAuth 2.1 resource server,
//! through real sockets. Keys are made with `/usr/bin/openssl` for each
//! test and tokens are signed with it too (never with the library the
//! broker checks them with); the JWKS is served by a small HTTP server in
//! the test that can also be down, slow or huge.
//!
//! Every outcome is driven: valid tokens of the three algorithms (and the
//! audit's caller is the token's `sub`), expired, not yet valid, another
//! issuer, another audience, a bad signature, a missing or oversized or
//! malformed token, a missing scope (403), `none` and HS256 signed with the
//! public key, an unknown `kid` and a rotated JWKS, a burst of random
//! `kid`s (one fetch per interval), the JWKS server down, slow or huge
//! (cached keys keep working), the RFC 9728 documents, start-up refusals,
//! the JWKS over TLS (a certificate the system's roots do not vouch for is
//! refused), a withdrawn key refused after the periodic refresh, new and
//! remembered tokens admitted at once during a flood of paced refusals on
//! new connections, and no token ever in the logs.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use moat_tests::http::{HttpMoat, Req, Resp, exchange, modern_call};
use moat_tests::{Fixture, Mode, Options, Run, run_moat};

use super::util::eventually;
use serde_json::{Value, json};

const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "https://moat.test/mcp";
const META: &str = "https://moat.test/.well-known/oauth-protected-resource/mcp";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Run `/usr/bin/openssl ARGS` with `input` on stdin; its stdout.
fn openssl(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("/usr/bin/openssl")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run /usr/bin/openssl");
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A DER ECDSA signature as JWS wants it: `r || s`, 32 bytes each.
fn ecdsa_raw(der: &[u8]) -> Vec<u8> {
    let int = |at: usize| -> (Vec<u8>, usize) {
        assert_eq!(der[at], 0x02);
        let len = der[at + 1] as usize;
        let v = &der[at + 2..at + 2 + len];
        let v: Vec<u8> = v.iter().copied().skip_while(|b| *b == 0).collect();
        let mut out = vec![0u8; 32 - v.len()];
        out.extend(v);
        (out, at + 2 + len)
    };
    let (mut r, next) = int(2);
    let (s, _) = int(next);
    r.extend(s);
    r
}

/// A signing key made by openssl, with its public JWK.
struct Signer {
    alg: &'static str,
    kid: String,
    pem: PathBuf,
    jwk: Value,
}

impl Signer {
    fn new(dir: &Path, alg: &'static str, kid: &str) -> Signer {
        Signer::with_rsa_bits(dir, alg, kid, 2048)
    }

    /// A signer whose RSA key (for RS256) has `bits` bits.
    fn with_rsa_bits(dir: &Path, alg: &'static str, kid: &str, bits: u32) -> Signer {
        let pem = dir.join(format!("{kid}.pem"));
        let p = pem.to_str().unwrap();
        let jwk = match alg {
            "RS256" => {
                openssl(
                    &[
                        "genpkey",
                        "-algorithm",
                        "RSA",
                        "-pkeyopt",
                        &format!("rsa_keygen_bits:{bits}"),
                        "-out",
                        p,
                    ],
                    b"",
                );
                let out = String::from_utf8(openssl(&["rsa", "-in", p, "-noout", "-modulus"], b""))
                    .unwrap();
                let hex = out.trim().trim_start_matches("Modulus=");
                let n: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64(&n), "e": "AQAB"})
            }
            "ES256" => {
                openssl(
                    &[
                        "genpkey",
                        "-algorithm",
                        "EC",
                        "-pkeyopt",
                        "ec_paramgen_curve:P-256",
                        "-out",
                        p,
                    ],
                    b"",
                );
                let der = openssl(&["pkey", "-in", p, "-pubout", "-outform", "DER"], b"");
                let point = &der[der.len() - 64..];
                json!({"kty": "EC", "crv": "P-256", "kid": kid, "x": b64(&point[..32]), "y": b64(&point[32..])})
            }
            _ => {
                openssl(&["genpkey", "-algorithm", "ed25519", "-out", p], b"");
                let der = openssl(&["pkey", "-in", p, "-pubout", "-outform", "DER"], b"");
                json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "x": b64(&der[der.len() - 32..])})
            }
        };
        Signer {
            alg,
            kid: kid.to_owned(),
            pem,
            jwk,
        }
    }

    fn sign(&self, input: &[u8]) -> Vec<u8> {
        let p = self.pem.to_str().unwrap();
        match self.alg {
            "RS256" => openssl(&["dgst", "-sha256", "-sign", p], input),
            "ES256" => ecdsa_raw(&openssl(&["dgst", "-sha256", "-sign", p], input)),
            _ => {
                let msg = self.pem.with_extension("msg");
                std::fs::write(&msg, input).unwrap();
                openssl(
                    &[
                        "pkeyutl",
                        "-sign",
                        "-inkey",
                        p,
                        "-rawin",
                        "-in",
                        msg.to_str().unwrap(),
                    ],
                    b"",
                )
            }
        }
    }

    /// A token with `header` and `claims`, signed by this key.
    fn token_with(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let sig = self.sign(input.as_bytes());
        format!("{input}.{}", b64(&sig))
    }

    fn header(&self) -> Value {
        json!({"alg": self.alg, "kid": self.kid, "typ": "at+jwt"})
    }

    /// A token with the usual claims changed by `edit`.
    fn token(&self, edit: impl FnOnce(&mut Value)) -> String {
        let mut c = claims();
        edit(&mut c);
        self.token_with(&self.header(), &c)
    }
}

/// Claims that pass every check.
fn claims() -> Value {
    let t = now();
    json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": "user-7",
        "exp": t + 600, "nbf": t - 10, "iat": t - 10,
        "scope": "openid moat:read",
    })
}

/// What the JWKS server does with the next request.
#[derive(Clone)]
enum Serve {
    Keys(String),
    /// The connection is closed without an answer.
    Down,
    /// No answer for a long time.
    Slow,
    /// 1 MiB of body, declared in `Content-Length` or not.
    Huge {
        declared: bool,
    },
}

struct JwksServer {
    addr: SocketAddr,
    mode: Arc<Mutex<Serve>>,
    hits: Arc<AtomicUsize>,
}

fn jwks(signers: &[&Signer]) -> String {
    json!({"keys": signers.iter().map(|s| s.jwk.clone()).collect::<Vec<_>>()}).to_string()
}

impl JwksServer {
    fn start(doc: String) -> JwksServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mode = Arc::new(Mutex::new(Serve::Keys(doc)));
        let hits = Arc::new(AtomicUsize::new(0));
        let (m, h) = (Arc::clone(&mode), Arc::clone(&hits));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let serve = m.lock().unwrap().clone();
                let h = Arc::clone(&h);
                std::thread::spawn(move || answer(stream, &serve, &h));
            }
        });
        JwksServer { addr, mode, hits }
    }

    fn url(&self) -> String {
        format!("http://{}/jwks.json", self.addr)
    }

    fn set(&self, serve: Serve) {
        *self.mode.lock().unwrap() = serve;
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn answer(mut s: TcpStream, serve: &Serve, hits: &AtomicUsize) {
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match moat_tests::http::read_some(&mut s, &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    hits.fetch_add(1, Ordering::SeqCst);
    match serve {
        Serve::Keys(doc) => {
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{doc}",
                doc.len()
            );
        }
        Serve::Down => {}
        Serve::Slow => std::thread::sleep(Duration::from_secs(20)),
        Serve::Huge { declared } => {
            let body = format!("{{\"keys\":[],\"pad\":\"{}\"}}", "x".repeat(1 << 20));
            let length = if *declared {
                format!("Content-Length: {}\r\n", body.len())
            } else {
                String::new()
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}Connection: close\r\n\r\n"
            );
            let _ = s.write_all(body.as_bytes());
        }
    }
}

/// The environment of an OAuth broker whose keys come from `jwks` (a URL
/// or, without `http://` or `https://`, a file).
fn oauth_env(jwks: &str) -> Vec<(String, String)> {
    let source = if jwks.starts_with("http://") || jwks.starts_with("https://") {
        "MOAT_HTTP__OAUTH__JWKS_URL"
    } else {
        "MOAT_HTTP__OAUTH__JWKS_PATH"
    };
    [
        ("MOAT_HTTP__AUTH", "OAuth"),
        (
            "MOAT_HTTP__OAUTH__ISSUER",
            "https://other-issuer.test, https://issuer.test",
        ),
        ("MOAT_HTTP__OAUTH__AUDIENCE", AUDIENCE),
        (source, jwks),
        ("MOAT_SANDBOX__WORKERS", "1"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

fn broker(jwks: &str, extra: &[(&str, &str)]) -> (Fixture, HttpMoat) {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let mut o = Options::new(Mode::InProcess);
    o.env.extend(oauth_env(jwks));
    for (k, v) in extra {
        o = o.env(k, *v);
    }
    let s = HttpMoat::start(&fx.root, &o);
    (fx, s)
}

fn call() -> Req {
    Req::mcp(&modern_call(1, "read_file", json!({"path": "a.txt"})))
}

#[track_caller]
fn assert_ok(r: &Resp) {
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(r.json()["result"]["isError"], false, "{r}");
}

/// A 401 for an invalid token, logged with `reason` as the broker's
/// `seen`-th refusal (counted here).
#[track_caller]
fn assert_invalid(s: &HttpMoat, r: &Resp, reason: &str, seen: &mut usize) {
    *seen += 1;
    assert_eq!(r.status, 401, "{reason}: {r}");
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Bearer error=\"invalid_token\", resource_metadata=\"{META}\"").as_str()),
        "{reason}: {r}"
    );
    assert_eq!(r.json(), json!({"error": "unauthorised"}), "{r}");
    let refused = s.wait_events("http.refused", *seen);
    assert_eq!(
        refused.get(*seen - 1).map(|e| e["reason"].clone()),
        Some(json!(reason)),
        "{}",
        s.stderr()
    );
}

/// No token was ever written to the broker's stderr, whole or its
/// signature alone.
#[track_caller]
fn assert_never_logged(s: &HttpMoat, tokens: &[&str]) {
    let stderr = s.stderr();
    for t in tokens {
        assert!(!stderr.contains(t), "a token reached the logs:\n{stderr}");
        if let Some(sig) = t.rsplit('.').next().filter(|sig| sig.len() > 16) {
            assert!(
                !stderr.contains(sig),
                "a signature reached the logs:\n{stderr}"
            );
        }
    }
}

/// A scrape of the broker's metrics listener (started with
/// `MOAT_OBSERVABILITY__METRICS_ADDR=127.0.0.1:0`).
fn metrics_scrape(s: &HttpMoat) -> String {
    let addr: SocketAddr = s
        .wait_events("metrics.listening", 1)
        .first()
        .and_then(|v| v["addr"].as_str()?.parse().ok())
        .unwrap();
    exchange(
        addr,
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap()
    .text()
}

/// The value of `moat_http_auth_failures_total{reason}` in a scrape.
fn failures(scrape: &str, reason: &str) -> f64 {
    let prefix = format!("moat_http_auth_failures_total{{reason=\"{reason}\"}} ");
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

#[test]
fn valid_tokens_of_each_algorithm_are_admitted_and_audited_with_their_subject() {
    let dir = tempfile::tempdir().unwrap();
    let rs = Signer::new(dir.path(), "RS256", "rs-1");
    let es = Signer::new(dir.path(), "ES256", "es-1");
    let ed = Signer::new(dir.path(), "EdDSA", "ed-1");
    let server = JwksServer::start(jwks(&[&rs, &es, &ed]));
    let (_fx, s) = broker(&server.url(), &[]);
    let mut tokens = Vec::new();
    for (signer, sub) in [(&rs, "alice"), (&es, "bob"), (&ed, "carol\u{1b}[31m")] {
        let t = signer.token(|c| c["sub"] = json!(sub));
        assert_ok(&s.send(&call().bearer(&t)));
        tokens.push(t);
    }
    // `scp` as a list stands for `scope`; `aud` may be a list naming moat.
    let t = ed.token(|c| {
        c.as_object_mut().unwrap().remove("scope");
        c["scp"] = json!(["moat:read"]);
        c["aud"] = json!(["https://elsewhere.test", AUDIENCE]);
    });
    assert_ok(&s.send(&call().bearer(&t)));
    tokens.push(t);
    let callers: Vec<Value> = s
        .wait_events("audit", 4)
        .iter()
        .map(|e| e["caller"].clone())
        .collect();
    assert_eq!(callers.len(), 4, "{}", s.stderr());
    assert_eq!(&callers[..2], &[json!("alice"), json!("bob")]);
    // A control character in `sub` is escaped, never raw.
    let carol = callers[2].as_str().unwrap();
    assert!(
        carol.starts_with("carol") && !carol.contains('\u{1b}'),
        "{carol}"
    );
    assert_eq!(callers[3], json!("user-7"));
    assert_eq!(server.hits(), 1, "the JWKS is fetched once, at start-up");
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    assert_never_logged(&s, &refs);
}

#[test]
fn every_invalid_token_is_401_invalid_token_with_a_counted_reason() {
    let dir = tempfile::tempdir().unwrap();
    let rs = Signer::new(dir.path(), "RS256", "rs-1");
    let forger = Signer::new(dir.path(), "RS256", "rs-1-forged");
    let server = JwksServer::start(jwks(&[&rs]));
    let (_fx, s) = broker(
        &server.url(),
        &[("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0")],
    );
    let t = now();
    let forged = forger.token_with(&rs.header(), &claims());
    let cases: Vec<(&str, String)> = vec![
        ("expired", rs.token(|c| c["exp"] = json!(t - 120))),
        ("not_yet_valid", rs.token(|c| c["nbf"] = json!(t + 3600))),
        (
            "bad_issuer",
            rs.token(|c| c["iss"] = json!("https://evil.test")),
        ),
        // RFC 8707: a token minted for another resource.
        (
            "bad_audience",
            rs.token(|c| c["aud"] = json!("https://other.test/mcp")),
        ),
        ("bad_signature", forged),
        (
            "malformed",
            rs.token(|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
        ),
        ("malformed", "not-a-jwt".to_owned()),
        (
            "too_large",
            rs.token(|c| c["pad"] = json!("x".repeat(9 * 1024))),
        ),
    ];
    let mut seen = 0;
    for (reason, token) in &cases {
        let r = s.send(&call().bearer(token));
        assert_invalid(&s, &r, reason, &mut seen);
    }
    // Within the leeway (60 s) an expired token still passes.
    assert_ok(&s.send(&call().bearer(&rs.token(|c| c["exp"] = json!(t - 5)))));
    assert_eq!(
        s.wait_events("tool.call", 1).len(),
        1,
        "a refused token reached a tool"
    );
    let scrape = metrics_scrape(&s);
    for reason in [
        "expired",
        "not_yet_valid",
        "bad_issuer",
        "bad_audience",
        "bad_signature",
        "too_large",
    ] {
        assert_eq!(failures(&scrape, reason), 1.0, "{reason}: {scrape}");
    }
    assert_eq!(failures(&scrape, "malformed"), 2.0, "{scrape}");
    let tokens: Vec<&str> = cases.iter().map(|(_, t)| t.as_str()).collect();
    assert_never_logged(&s, &tokens);
}

#[test]
fn a_missing_token_is_401_with_the_metadata_url_and_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let rs = Signer::new(dir.path(), "RS256", "rs-1");
    let server = JwksServer::start(jwks(&[&rs]));
    let (_fx, s) = broker(&server.url(), &[]);
    for r in [
        s.send(&call()),
        s.send(&call().set_header("Authorization", "Basic dXNlcjpwdw==")),
    ] {
        assert_eq!(r.status, 401, "{r}");
        assert_eq!(
            r.header("www-authenticate"),
            Some(format!("Bearer resource_metadata=\"{META}\"").as_str()),
            "{r}"
        );
    }
}

#[test]
fn a_valid_token_without_the_scope_is_403_insufficient_scope() {
    let dir = tempfile::tempdir().unwrap();
    let es = Signer::new(dir.path(), "ES256", "es-1");
    let server = JwksServer::start(jwks(&[&es]));
    let (_fx, s) = broker(&server.url(), &[]);
    let tokens = [
        es.token(|c| c["scope"] = json!("openid moat:write")),
        es.token(|c| {
            c.as_object_mut().unwrap().remove("scope");
        }),
        es.token(|c| c["scope"] = json!(["moat:read"])),
    ];
    for t in &tokens {
        let r = s.send(&call().bearer(t));
        assert_eq!(r.status, 403, "{r}");
        assert_eq!(
            r.header("www-authenticate"),
            Some(
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"moat:read\", resource_metadata=\"{META}\""
                )
                .as_str()
            ),
            "{r}"
        );
    }
    let reasons: Vec<Value> = s
        .wait_events("http.refused", 3)
        .iter()
        .map(|e| e["reason"].clone())
        .collect();
    assert_eq!(reasons, vec![json!("insufficient_scope"); 3]);
    // Another required scope is what the challenge names.
    drop(s);
    let (_fx2, s) = broker(
        &server.url(),
        &[("MOAT_HTTP__OAUTH__REQUIRED_SCOPE", "repo:read")],
    );
    let r = s.send(&call().bearer(&es.token(|_| {})));
    assert_eq!(r.status, 403, "{r}");
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("scope=\"repo:read\""),
        "{r}"
    );
    assert_ok(&s.send(&call().bearer(&es.token(|c| c["scope"] = json!("repo:read")))));
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    assert_never_logged(&s, &refs);
}

#[test]
fn algorithm_confusion_is_refused_none_hmac_with_the_public_key_and_a_mismatched_alg() {
    let dir = tempfile::tempdir().unwrap();
    let rs = Signer::new(dir.path(), "RS256", "rs-1");
    let ed = Signer::new(dir.path(), "EdDSA", "ed-1");
    let server = JwksServer::start(jwks(&[&rs, &ed]));
    let (_fx, s) = broker(&server.url(), &[]);
    let body = b64(claims().to_string().as_bytes());
    // `none`: no signature at all.
    let none = format!("{}.{body}.", b64(br#"{"alg":"none","kid":"rs-1"}"#));
    // HS256 keyed with the RSA public key as published (PEM and JWK text):
    // the confusion that lets anyone holding the public key sign.
    let public_pem = openssl(&["pkey", "-in", rs.pem.to_str().unwrap(), "-pubout"], b"");
    let mut hmacs = Vec::new();
    for secret in [public_pem.clone(), rs.jwk.to_string().into_bytes()] {
        let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        let input = format!(
            "{}.{body}",
            b64(br#"{"alg":"HS256","kid":"rs-1","typ":"JWT"}"#)
        );
        let mac = openssl(
            &[
                "mac",
                "-digest",
                "SHA256",
                "-macopt",
                &format!("hexkey:{hex}"),
                "-binary",
                "-in",
                "/dev/stdin",
                "HMAC",
            ],
            input.as_bytes(),
        );
        hmacs.push(format!("{input}.{}", b64(&mac)));
    }
    // A real EdDSA signature presented under the RSA key's kid.
    let mismatched = ed.token_with(&json!({"alg": "EdDSA", "kid": "rs-1"}), &claims());
    let mut seen = 0;
    for t in [&none, &hmacs[0], &hmacs[1], &mismatched] {
        let r = s.send(&call().bearer(t));
        assert_invalid(&s, &r, "alg", &mut seen);
    }
    // RS256 claimed over an Ed25519 key.
    let claimed = rs.token_with(&json!({"alg": "RS256", "kid": "ed-1"}), &claims());
    assert_invalid(&s, &s.send(&call().bearer(&claimed)), "alg", &mut seen);
    assert_ok(&s.send(&call().bearer(&rs.token(|_| {}))));
    assert_eq!(s.wait_events("tool.call", 1).len(), 1);
}

#[test]
fn an_unknown_kid_refreshes_the_jwks_and_a_rotated_key_then_works() {
    let dir = tempfile::tempdir().unwrap();
    let old = Signer::new(dir.path(), "ES256", "2026-old");
    let new = Signer::new(dir.path(), "ES256", "2026-new");
    let server = JwksServer::start(jwks(&[&old]));
    let (_fx, s) = broker(
        &server.url(),
        &[("MOAT_HTTP__OAUTH__JWKS_MIN_REFRESH_SECONDS", "1")],
    );
    let old_token = old.token(|_| {});
    assert_ok(&s.send(&call().bearer(&old_token)));
    assert_ok(&s.send(&call().bearer(&old_token)));
    assert_eq!(server.hits(), 1, "a cached kid never fetches");
    let t = new.token(|_| {});
    // Not published yet: one refresh, still unknown.
    let mut seen = 0;
    assert_invalid(&s, &s.send(&call().bearer(&t)), "unknown_kid", &mut seen);
    assert_eq!(server.hits(), 2, "start-up and one refresh");
    // Rotated (the old key withdrawn): once the interval has passed, the
    // next unknown kid refreshes again and the token is admitted.
    server.set(Serve::Keys(jwks(&[&new])));
    std::thread::sleep(Duration::from_millis(1100));
    assert_ok(&s.send(&call().bearer(&t)));
    assert_eq!(server.hits(), 3);
    assert_ok(&s.send(&call().bearer(&new.token(|c| c["sub"] = json!("other")))));
    assert_eq!(server.hits(), 3, "a cached kid never fetches");
    // A token admitted under the withdrawn key is not admitted again, even
    // the very same bytes that were admitted before the rotation.
    assert_invalid(
        &s,
        &s.send(&call().bearer(&old_token)),
        "unknown_kid",
        &mut seen,
    );
    assert_eq!(s.wait_events("oauth.jwks_refreshed", 2).len(), 2);
}

#[test]
fn a_burst_of_random_kids_fetches_the_jwks_at_most_once_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let a = Signer::new(dir.path(), "EdDSA", "a");
    let b = Signer::new(dir.path(), "EdDSA", "b");
    let server = JwksServer::start(jwks(&[&a]));
    let (_fx, s) = broker(&server.url(), &[]);
    // Rotated before any request: the first unknown kid refreshes.
    server.set(Serve::Keys(jwks(&[&a, &b])));
    assert_ok(&s.send(&call().bearer(&b.token(|_| {}))));
    assert_eq!(server.hits(), 2);
    let threads: Vec<_> = (0..24)
        .map(|i| {
            let t = a.token_with(
                &json!({"alg": "EdDSA", "kid": format!("random-{i}")}),
                &claims(),
            );
            let addr = s.addr;
            std::thread::spawn(move || call().bearer(&t).send(addr).unwrap().status)
        })
        .collect();
    for th in threads {
        assert_eq!(th.join().unwrap(), 401);
    }
    assert_eq!(server.hits(), 2, "the burst reached the JWKS server");
    assert_ok(&s.send(&call().bearer(&a.token(|_| {}))));
    assert_ok(&s.send(&call().bearer(&b.token(|_| {}))));
}

#[test]
fn with_the_jwks_server_down_slow_or_huge_cached_keys_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let known = Signer::new(dir.path(), "EdDSA", "known");
    let unknown = Signer::new(dir.path(), "EdDSA", "unknown");
    for serve in [
        Serve::Down,
        Serve::Huge { declared: true },
        Serve::Huge { declared: false },
        Serve::Slow,
    ] {
        let server = JwksServer::start(jwks(&[&known]));
        let (_fx, s) = broker(&server.url(), &[]);
        server.set(serve.clone());
        let t = unknown.token(|_| {});
        let addr = s.addr;
        let refused = std::thread::spawn(move || call().bearer(&t).send(addr).unwrap());
        // While that refresh is under way (the request has reached the
        // JWKS server), a caller with a cached kid is served.
        while server.hits() < 2 {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_ok(&s.send(&call().bearer(&known.token(|_| {}))));
        let r = refused.join().unwrap();
        assert_invalid(&s, &r, "unknown_kid", &mut 0);
        assert_eq!(
            s.wait_events("oauth.jwks_refresh_failed", 1).len(),
            1,
            "{}",
            s.stderr()
        );
        assert_ok(&s.send(&call().bearer(&known.token(|_| {}))));
    }
}

#[test]
fn the_protected_resource_metadata_is_served_without_a_token_only_with_oauth() {
    let dir = tempfile::tempdir().unwrap();
    let ed = Signer::new(dir.path(), "EdDSA", "ed-1");
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&[&ed])).unwrap();
    let (_fx, s) = broker(file.to_str().unwrap(), &[]);
    let expected = json!({
        "resource": AUDIENCE,
        "authorization_servers": ["https://other-issuer.test", ISSUER],
        "scopes_supported": ["moat:read"],
        "bearer_methods_supported": ["header"],
    });
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}: {r}");
        assert_eq!(r.json(), expected, "{path}");
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    assert_eq!(
        s.get("/.well-known/oauth-protected-resource/other").status,
        404
    );
    // The file source admits its tokens.
    assert_ok(&s.send(&call().bearer(&ed.token(|_| {}))));
    // Not served by a bearer-token server.
    let fx = Fixture::new();
    let bearer = HttpMoat::start(
        &fx.root,
        &Options::new(Mode::InProcess).env("MOAT_HTTP__BEARER_TOKEN", "b-token-for-tests-1f2e3d4c"),
    );
    assert_eq!(
        bearer.get("/.well-known/oauth-protected-resource").status,
        404
    );
    assert_eq!(
        bearer
            .get("/.well-known/oauth-protected-resource/mcp")
            .status,
        404
    );
}

/// `moat serve --transport http` on `root` with the keys from `jwks`
/// refuses to start for want of usable keys, saying `says`, and never
/// listens; its run, for further checks.
#[track_caller]
fn assert_keys_unavailable(root: &str, jwks: &str, says: &str) -> Run {
    let env: Vec<(String, String)> = oauth_env(jwks)
        .into_iter()
        .chain([("MOAT_HTTP__PORT".to_owned(), "0".to_owned())])
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = run_moat(["serve", "--transport", "http", "--workspace", root], &env);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(
        run.stderr.contains("http.oauth_keys_unavailable") && run.stderr.contains(says),
        "{run}"
    );
    assert!(!run.stderr.contains("http.listening"), "{run}");
    run
}

#[test]
fn start_up_refuses_an_unusable_jwks_and_an_incomplete_oauth_table() {
    let fx = Fixture::new();
    let root = fx.root.to_str().unwrap();
    let missing = fx.root.join("nowhere.json");
    let no_keys = fx.file("empty.json", r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#);
    for (path, says) in [
        (missing.to_str().unwrap(), "nowhere.json"),
        (no_keys.to_str().unwrap(), "no usable key"),
    ] {
        assert_keys_unavailable(root, path, says);
    }
    let server = JwksServer::start(jwks(&[]));
    for (drop_key, says) in [
        ("MOAT_HTTP__OAUTH__ISSUER", "MOAT_HTTP__OAUTH__ISSUER"),
        ("MOAT_HTTP__OAUTH__AUDIENCE", "MOAT_HTTP__OAUTH__AUDIENCE"),
        ("MOAT_HTTP__OAUTH__JWKS_URL", "no key source"),
    ] {
        let env: Vec<(String, String)> = oauth_env(&server.url())
            .into_iter()
            .filter(|(k, _)| k != drop_key)
            .collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let run = run_moat(["serve", "--transport", "http", "--workspace", root], &env);
        assert_eq!(run.code, Some(2), "{run}");
        assert!(run.stderr.contains(says), "{says}: {run}");
    }
    // A misspelt key is named with the one meant.
    let run = run_moat(
        ["serve", "--transport", "http", "--workspace", root],
        &[("MOAT_HTTP__OAUTH__ISUER", ISSUER)],
    );
    assert_eq!(run.code, Some(2), "{run}");
    assert!(run.stderr.contains("MOAT_HTTP__OAUTH__ISSUER"), "{run}");
    // Plain http to anything but loopback, and a leeway past five minutes.
    for (k, v, says) in [
        (
            "MOAT_HTTP__OAUTH__JWKS_URL",
            "http://issuer.test/jwks",
            "https",
        ),
        (
            "MOAT_HTTP__OAUTH__LEEWAY_SECONDS",
            "301",
            "between 0 and 300",
        ),
    ] {
        let mut env = oauth_env(&server.url());
        env.retain(|(name, _)| name != k);
        env.push((k.to_owned(), v.to_owned()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let run = run_moat(["serve", "--transport", "http", "--workspace", root], &env);
        assert_eq!(run.code, Some(2), "{run}");
        assert!(run.stderr.contains(says), "{says}: {run}");
    }
}

#[test]
fn doctor_checks_the_oauth_settings_and_fetches_the_jwks_once() {
    let dir = tempfile::tempdir().unwrap();
    let ed = Signer::new(dir.path(), "EdDSA", "ed-1");
    let es = Signer::new(dir.path(), "ES256", "es-1");
    let server = JwksServer::start(jwks(&[&ed, &es]));
    let fx = Fixture::new();
    let root = fx.root.to_str().unwrap();
    let env: Vec<(String, String)> = oauth_env(&server.url())
        .into_iter()
        .chain([("MOAT_SANDBOX__MODE".to_owned(), "in-process".to_owned())])
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let args = [
        "doctor",
        "--transport",
        "http",
        "--json",
        "--workspace",
        root,
    ];
    let run = run_moat(args, &env);
    assert_eq!(run.code, Some(0), "{run}");
    let d: Value = serde_json::from_str(&run.stdout).unwrap();
    let checks = &d["checks"];
    assert_eq!(checks["http_auth"], "oauth", "{run}");
    assert_eq!(checks["oauth_audience"], AUDIENCE, "{run}");
    assert_eq!(checks["oauth_metadata"], META, "{run}");
    assert_eq!(
        checks["oauth_keys"],
        format!("2 usable from {}", server.url()),
        "{run}"
    );
    assert_eq!(server.hits(), 1);
    // The JWKS server down: doctor says so and fails.
    server.set(Serve::Down);
    let run = run_moat(args, &env);
    assert_eq!(run.code, Some(1), "{run}");
    let d: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        d["checks"]["oauth_keys"]
            .as_str()
            .unwrap()
            .starts_with("FAILED: "),
        "{run}"
    );
    assert_eq!(d["ready"], false, "{run}");
}

/// An HTTPS server on loopback for the files of `dir`, with `dir/leaf.pem`
/// and `dir/leaf.key` (Python's TLS server, so the client side is the
/// broker's own TLS code alone); killed when dropped.
struct TlsServer {
    child: std::process::Child,
    port: u16,
}

impl TlsServer {
    fn start(dir: &Path) -> TlsServer {
        let script = "import http.server, ssl, sys\n\
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
            ctx.load_cert_chain('leaf.pem', 'leaf.key')\n\
            class Quiet(http.server.SimpleHTTPRequestHandler):\n\
            \x20   def log_message(self, *a): pass\n\
            srv = http.server.HTTPServer(('127.0.0.1', 0), Quiet)\n\
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n\
            print(srv.server_address[1], flush=True)\n\
            srv.serve_forever()\n";
        let mut child = Command::new("python3")
            .args(["-c", script])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run python3");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("port: {line:?}"));
        TlsServer { child, port }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_jwks_is_fetched_over_tls_and_a_certificate_the_roots_do_not_vouch_for_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |name: &str| d.join(name).to_str().unwrap().to_owned();
    // A CA of the test's own, and a server certificate for 127.0.0.1 it signs.
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    let (ca_key, ca_pem) = (p("ca.key"), p("ca.pem"));
    ca.extend([
        "-keyout",
        &ca_key,
        "-out",
        &ca_pem,
        "-days",
        "2",
        "-subj",
        "/CN=moat test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(&ca, b"");
    let mut csr = vec!["req"];
    csr.extend(ec);
    let (leaf_key, leaf_csr, leaf_pem) = (p("leaf.key"), p("leaf.csr"), p("leaf.pem"));
    csr.extend([
        "-keyout",
        &leaf_key,
        "-out",
        &leaf_csr,
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(&csr, b"");
    std::fs::write(
        d.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let ext = p("leaf.ext");
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            &leaf_csr,
            "-CA",
            &ca_pem,
            "-CAkey",
            &ca_key,
            "-set_serial",
            "7",
            "-days",
            "2",
            "-extfile",
            &ext,
            "-out",
            &leaf_pem,
        ],
        b"",
    );
    let ed = Signer::new(d, "EdDSA", "ed-tls");
    std::fs::write(d.join("jwks.json"), jwks(&[&ed])).unwrap();
    let server = TlsServer::start(d);
    let url = format!("https://127.0.0.1:{}/jwks.json", server.port);

    // Trusted through the roots the operator names: the keys are fetched
    // over TLS and a token signed with them is admitted.
    let (_fx, s) = broker(&url, &[("SSL_CERT_FILE", &ca_pem)]);
    assert_ok(&s.send(&call().bearer(&ed.token(|_| {}))));
    drop(s);

    // With the system's roots alone the certificate is not vouched for:
    // start-up refuses, naming the JWKS and the certificate.
    let fx = Fixture::new();
    let run = assert_keys_unavailable(fx.root.to_str().unwrap(), &url, &url);
    assert!(run.stderr.to_lowercase().contains("certificate"), "{run}");
}

#[test]
fn a_key_withdrawn_from_the_jwks_is_refused_after_the_periodic_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let old = Signer::new(dir.path(), "EdDSA", "ed-old");
    let new = Signer::new(dir.path(), "ES256", "es-new");
    let server = JwksServer::start(jwks(&[&old, &new]));
    let (_fx, s) = broker(
        &server.url(),
        &[
            ("MOAT_HTTP__OAUTH__JWKS_REFRESH_SECONDS", "1"),
            ("MOAT_HTTP__OAUTH__JWKS_MIN_REFRESH_SECONDS", "1"),
        ],
    );
    let (old_token, new_token) = (old.token(|_| {}), new.token(|_| {}));
    assert_ok(&s.send(&call().bearer(&old_token)));
    assert_ok(&s.send(&call().bearer(&new_token)));
    // The authorization server withdraws the old key. No token names an
    // unknown `kid`, so only the periodic refresh can learn of it.
    server.set(Serve::Keys(jwks(&[&new])));
    let fetched = server.hits();
    assert!(
        eventually(Duration::from_secs(10), || server.hits() >= fetched + 2),
        "the JWKS was not read again on its own ({} fetches)\n{}",
        server.hits(),
        s.stderr()
    );
    // The token admitted under the old key (and remembered) is refused
    // now; the one signed with the key still published is admitted.
    let r = s.send(&call().bearer(&old_token));
    assert_eq!(r.status, 401, "{r}\n{}", s.stderr());
    assert_ok(&s.send(&call().bearer(&new_token)));
    assert!(
        s.stderr().contains("oauth.jwks_refreshed"),
        "{}",
        s.stderr()
    );
}

#[test]
fn during_a_flood_of_bad_tokens_on_new_connections_a_new_valid_token_is_admitted() {
    let dir = tempfile::tempdir().unwrap();
    let key = Signer::new(dir.path(), "EdDSA", "k");
    let forger = Signer::new(dir.path(), "EdDSA", "forger");
    let path = dir.path().join("jwks.json");
    std::fs::write(&path, jwks(&[&key])).unwrap();
    // Refusals beyond one a second are held for a minute: far beyond the
    // harness's wait for an answer, so a good caller held among them fails.
    let (_fx, s) = broker(
        path.to_str().unwrap(),
        &[
            ("MOAT_HTTP__MAX_CONNECTIONS", "8"),
            ("MOAT_HTTP__AUTH_FAILURES_PER_SECOND", "1"),
            ("MOAT_HTTP__AUTH_FAILURE_PAUSE_MS", "60000"),
            ("MOAT_OBSERVABILITY__METRICS_ADDR", "127.0.0.1:0"),
        ],
    );
    let remembered = key.token(|_| {});
    assert_ok(&s.send(&call().bearer(&remembered)));
    let forged: Vec<String> = (0..16)
        .map(|i| {
            let mut c = claims();
            c["sub"] = json!(format!("forged-{i}"));
            forger.token_with(&key.header(), &c)
        })
        .collect();
    // The flood: bad tokens on new connections, as fast as slots are given,
    // from four senders, for as long as the test runs.
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let senders: Vec<_> = (0..4)
        .map(|i| {
            let (addr, running) = (s.addr, Arc::clone(&running));
            let forged = forged.clone();
            std::thread::spawn(move || {
                let mut held = Vec::new();
                let mut n = i;
                while running.load(Ordering::SeqCst) {
                    let req = call().bearer(&forged[n % forged.len()]).to_bytes(addr);
                    if let Ok(mut c) = TcpStream::connect(addr) {
                        let _ = c.write_all(&req);
                        held.push(c);
                    }
                    if held.len() > 32 {
                        held.remove(0);
                    }
                    n += 4;
                    std::thread::sleep(Duration::from_millis(15));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    // Every slot is held by a paced refusal now. New tokens never admitted
    // before, and the remembered one, are each answered.
    for i in 0..4 {
        let fresh = key.token(|c| c["sub"] = json!(format!("new-{i}")));
        assert_ok(&s.send(&call().bearer(&fresh)));
        assert_ok(&s.send(&call().bearer(&remembered)));
    }
    running.store(false, Ordering::SeqCst);
    for t in senders {
        t.join().unwrap();
    }
    let scrape = metrics_scrape(&s);
    assert!(
        scrape
            .lines()
            .any(|l| l.starts_with("moat_http_auth_paused_total ") && !l.ends_with(" 0")),
        "the flood was never paced: {scrape}"
    );
}

#[test]
fn an_rsa_key_under_2048_bits_is_refused_at_load_and_doctor_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let weak = Signer::with_rsa_bits(dir.path(), "RS256", "weak-1024", 1024);
    let strong = Signer::new(dir.path(), "RS256", "strong-2048");
    let fx = Fixture::new();
    let root = fx.root.to_str().unwrap();
    // Only a weak key: start-up is refused, naming it.
    let only_weak = dir.path().join("weak.json");
    std::fs::write(&only_weak, jwks(&[&weak])).unwrap();
    let run = assert_keys_unavailable(root, only_weak.to_str().unwrap(), "1024 bits");
    assert!(run.stderr.contains("weak-1024"), "{run}");
    // doctor says the same.
    let env: Vec<(String, String)> = oauth_env(only_weak.to_str().unwrap())
        .into_iter()
        .chain([("MOAT_SANDBOX__MODE".to_owned(), "in-process".to_owned())])
        .collect();
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let args = [
        "doctor",
        "--transport",
        "http",
        "--json",
        "--workspace",
        root,
    ];
    let run = run_moat(args, &env_ref);
    assert_eq!(run.code, Some(1), "{run}");
    let d: Value = serde_json::from_str(&run.stdout).unwrap();
    let keys = d["checks"]["oauth_keys"].as_str().unwrap_or("");
    assert!(
        keys.contains("FAILED") && keys.contains("weak-1024") && keys.contains("1024 bits"),
        "{run}"
    );
    // Beside a strong key: served, the weak one refused and named by doctor.
    let both = dir.path().join("both.json");
    std::fs::write(&both, jwks(&[&weak, &strong])).unwrap();
    let env: Vec<(String, String)> = oauth_env(both.to_str().unwrap())
        .into_iter()
        .chain([("MOAT_SANDBOX__MODE".to_owned(), "in-process".to_owned())])
        .collect();
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = run_moat(args, &env_ref);
    let d: Value = serde_json::from_str(&run.stdout).unwrap();
    let keys = d["checks"]["oauth_keys"].as_str().unwrap_or("");
    assert!(
        keys.starts_with("1 usable") && keys.contains("weak-1024"),
        "{run}"
    );
    let (_fx, s) = broker(both.to_str().unwrap(), &[]);
    let mut seen = 0;
    assert_invalid(
        &s,
        &s.send(&call().bearer(&weak.token(|_| {}))),
        "unknown_kid",
        &mut seen,
    );
    assert_ok(&s.send(&call().bearer(&strong.token(|_| {}))));
}

#[test]
fn an_issuer_must_be_one_string_equal_to_a_configured_one() {
    let dir = tempfile::tempdir().unwrap();
    let key = Signer::new(dir.path(), "EdDSA", "k");
    let path = dir.path().join("jwks.json");
    std::fs::write(&path, jwks(&[&key])).unwrap();
    let (_fx, s) = broker(path.to_str().unwrap(), &[]);
    let mut seen = 0;
    for iss in [
        json!([ISSUER]),
        json!([ISSUER, "https://other-issuer.test"]),
        json!(["https://evil.test", ISSUER]),
        json!(format!("{ISSUER}/")),
    ] {
        let t = key.token(|c| c["iss"] = iss.clone());
        assert_invalid(&s, &s.send(&call().bearer(&t)), "bad_issuer", &mut seen);
    }
    // Either configured issuer, as a string, is admitted.
    for iss in [ISSUER, "https://other-issuer.test"] {
        assert_ok(&s.send(&call().bearer(&key.token(|c| c["iss"] = json!(iss)))));
    }
}

#[test]
fn a_token_issued_in_the_future_beyond_the_leeway_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = Signer::new(dir.path(), "ES256", "k");
    let path = dir.path().join("jwks.json");
    std::fs::write(&path, jwks(&[&key])).unwrap();
    let (_fx, s) = broker(
        path.to_str().unwrap(),
        &[("MOAT_HTTP__OAUTH__LEEWAY_SECONDS", "60")],
    );
    let mut seen = 0;
    let t = now();
    for iat in [t + 3600, t + 600] {
        let token = key.token(|c| c["iat"] = json!(iat));
        assert_invalid(
            &s,
            &s.send(&call().bearer(&token)),
            "not_yet_valid",
            &mut seen,
        );
    }
    let token = key.token(|c| c["iat"] = json!("yesterday"));
    assert_invalid(&s, &s.send(&call().bearer(&token)), "malformed", &mut seen);
    // Within the leeway, in the past, or absent: admitted.
    for edit in [json!(t + 20), json!(t - 3600)] {
        assert_ok(&s.send(&call().bearer(&key.token(|c| c["iat"] = edit.clone()))));
    }
    assert_ok(&s.send(&call().bearer(&key.token(|c| {
        c.as_object_mut().unwrap().remove("iat");
    }))));
}

#[cfg(unix)]
#[test]
fn production_refuses_a_jwks_or_configuration_file_others_can_write_naming_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let key = Signer::new(dir.path(), "EdDSA", "k");
    let fx = Fixture::new();
    let root = fx.root.to_str().unwrap();
    let jwks_file = dir.path().join("jwks.json");
    std::fs::write(&jwks_file, jwks(&[&key])).unwrap();
    let config = dir.path().join("moat.toml");
    std::fs::write(&config, "[server]\nname = \"moat\"\n").unwrap();
    let run_with = |jwks_mode: u32, config_mode: u32| {
        std::fs::set_permissions(&jwks_file, std::fs::Permissions::from_mode(jwks_mode)).unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(config_mode)).unwrap();
        let env: Vec<(String, String)> = oauth_env(jwks_file.to_str().unwrap())
            .into_iter()
            .chain([
                ("MOAT_ENVIRONMENT".to_owned(), "production".to_owned()),
                ("MOAT_HTTP__PORT".to_owned(), "0".to_owned()),
            ])
            .collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run_moat(
            [
                "doctor",
                "--transport",
                "http",
                "--config",
                config.to_str().unwrap(),
                "--workspace",
                root,
            ],
            &env,
        )
    };
    let jwks_named = jwks_file.display().to_string();
    let config_named = config.display().to_string();
    let run = run_with(0o666, 0o600);
    assert!(
        run.stdout.contains(&jwks_named) || run.stderr.contains(&jwks_named),
        "{run}"
    );
    assert!(
        run.stderr.contains("writable") || run.stdout.contains("writable"),
        "{run}"
    );
    assert_ne!(run.code, Some(0), "{run}");
    let run = run_with(0o600, 0o620);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains(&config_named) && all.contains("writable"),
        "{run}"
    );
    assert_ne!(run.code, Some(0), "{run}");
    // Owner-only: neither is named.
    let run = run_with(0o600, 0o600);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(!all.contains("writable by its group"), "{run}");
    // And serve refuses to start.
    std::fs::set_permissions(&jwks_file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let env: Vec<(String, String)> = oauth_env(jwks_file.to_str().unwrap())
        .into_iter()
        .chain([
            ("MOAT_ENVIRONMENT".to_owned(), "production".to_owned()),
            ("MOAT_HTTP__PORT".to_owned(), "0".to_owned()),
        ])
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = run_moat(["serve", "--transport", "http", "--workspace", root], &env);
    assert_eq!(run.code, Some(2), "{run}");
    assert!(run.stderr.contains(&jwks_named), "{run}");
    assert!(!run.stderr.contains("http.listening"), "{run}");
}

//! One bounded HTTP GET for the JWKS: https with the system's root
//! certificates (plain http only to loopback, refused earlier by the
//! configuration otherwise), at most `max_bytes` of body, all within
//! `timeout` (connection, TLS, headers and body together). No redirects are
//! followed and nothing but the answer's body is read.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper::{Request, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

use crate::config::oauth::{is_loopback, parse_uri};

/// Why the TLS client cannot be set up (kept with the configuration it
/// failed to build, so it is the same error on every fetch).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TlsError {
    /// The system has no root certificates.
    #[error("no CA certificates found on this system for the JWKS URL")]
    NoRoots,
    /// The TLS library refused its own defaults.
    #[error("TLS set-up: {0}")]
    Setup(rustls::Error),
}

/// Why a GET failed; the text names the URL (never the body).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The TLS client cannot be set up.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The URL cannot be read (the configuration's own wording).
    #[error("{0}")]
    Url(String),
    /// Plain http to a host that is not loopback.
    #[error("{url}: plain http is allowed only to loopback")]
    PlainHttp {
        /// The URL.
        url: String,
    },
    /// No complete answer in time.
    #[error("{url}: no complete answer within {ms} ms")]
    Timeout {
        /// The URL.
        url: String,
        /// The time allowed.
        ms: u128,
    },
    /// The TCP connection.
    #[error("{url}: connect: {source}")]
    Connect {
        /// The URL.
        url: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The host is not a name TLS can check.
    #[error("{url}: not a valid TLS server name")]
    ServerName {
        /// The URL.
        url: String,
    },
    /// The TLS handshake.
    #[error("{url}: TLS: {source}")]
    Handshake {
        /// The URL.
        url: String,
        /// What the handshake said.
        source: std::io::Error,
    },
    /// The HTTP exchange.
    #[error("{url}: {source}")]
    Http {
        /// The URL.
        url: String,
        /// What the client said.
        source: hyper::Error,
    },
    /// The request could not be built.
    #[error("{url}: {source}")]
    Request {
        /// The URL.
        url: String,
        /// What the builder said.
        source: hyper::http::Error,
    },
    /// An answer other than 200.
    #[error("{url}: answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// A declared length over the bound.
    #[error("{url}: the answer is larger than {max_bytes} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The bound.
        max_bytes: usize,
    },
    /// A body over the bound, or one that broke off.
    #[error("{url}: the answer is larger than {max_bytes} bytes or broken")]
    TooLargeOrBroken {
        /// The URL.
        url: String,
        /// The bound.
        max_bytes: usize,
    },
}

/// The TLS client configuration, built once.
fn tls() -> Result<Arc<rustls::ClientConfig>, TlsError> {
    static TLS: OnceLock<Result<Arc<rustls::ClientConfig>, TlsError>> = OnceLock::new();
    TLS.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        for cert in found.certs {
            let _ = roots.add(cert);
        }
        if roots.is_empty() {
            return Err(TlsError::NoRoots);
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Arc::new(config))
    })
    .clone()
}

/// GET `url`; the body when the answer is 200 and at most `max_bytes`.
///
/// # Errors
///
/// A message saying what failed (never the body).
pub async fn get(url: &str, max_bytes: usize, timeout: Duration) -> Result<Vec<u8>, FetchError> {
    match tokio::time::timeout(timeout, get_unbounded_in_time(url, max_bytes)).await {
        Ok(r) => r,
        Err(_) => Err(FetchError::Timeout {
            url: url.to_owned(),
            ms: timeout.as_millis(),
        }),
    }
}

async fn get_unbounded_in_time(url: &str, max_bytes: usize) -> Result<Vec<u8>, FetchError> {
    let parsed = parse_uri("jwks_url", url).map_err(|e| FetchError::Url(e.to_string()))?;
    if !parsed.https && !is_loopback(&parsed.host) {
        return Err(FetchError::PlainHttp {
            url: url.to_owned(),
        });
    }
    let tcp = TcpStream::connect((parsed.host.as_str(), parsed.port))
        .await
        .map_err(|source| FetchError::Connect {
            url: url.to_owned(),
            source,
        })?;
    let _ = tcp.set_nodelay(true);
    let authority = if (parsed.https && parsed.port == 443) || (!parsed.https && parsed.port == 80)
    {
        parsed.host.clone()
    } else if parsed.host.contains(':') {
        format!("[{}]:{}", parsed.host, parsed.port)
    } else {
        format!("{}:{}", parsed.host, parsed.port)
    };
    if parsed.https {
        let name = rustls::pki_types::ServerName::try_from(parsed.host.clone()).map_err(|_| {
            FetchError::ServerName {
                url: url.to_owned(),
            }
        })?;
        let tls = tokio_rustls::TlsConnector::from(tls()?)
            .connect(name, tcp)
            .await
            .map_err(|source| FetchError::Handshake {
                url: url.to_owned(),
                source,
            })?;
        exchange(tls, url, &authority, &parsed.path_and_query, max_bytes).await
    } else {
        exchange(tcp, url, &authority, &parsed.path_and_query, max_bytes).await
    }
}

async fn exchange<S>(
    io: S,
    url: &str,
    authority: &str,
    path: &str,
    max_bytes: usize,
) -> Result<Vec<u8>, FetchError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(64 * 1024)
        .handshake::<_, Empty<Bytes>>(TokioIo::new(io))
        .await
        .map_err(|source| FetchError::Http {
            url: url.to_owned(),
            source,
        })?;
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    let request = Request::get(path)
        .header(header::HOST, authority)
        .header(header::ACCEPT, "application/json, application/jwk-set+json")
        .header(
            header::USER_AGENT,
            concat!("moat/", env!("CARGO_PKG_VERSION")),
        )
        .body(Empty::new())
        .map_err(|source| FetchError::Request {
            url: url.to_owned(),
            source,
        })?;
    let result = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|source| FetchError::Http {
                url: url.to_owned(),
                source,
            })?;
        if response.status() != StatusCode::OK {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status: response.status().as_u16(),
            });
        }
        let declared = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > max_bytes as u64) {
            return Err(FetchError::TooLarge {
                url: url.to_owned(),
                max_bytes,
            });
        }
        let body = Limited::new(response.into_body(), max_bytes)
            .collect()
            .await
            .map_err(|_| FetchError::TooLargeOrBroken {
                url: url.to_owned(),
                max_bytes,
            })?;
        Ok(body.to_bytes().to_vec())
    }
    .await;
    driver.abort();
    result
}

//! Who may call `POST /mcp`: the static bearer token or an OAuth access
//! token, with refusals paced so that a flood of bad credentials costs its
//! sender time rather than the server's processors.
//!
//! Refusing a request is cheap but not free: the request is parsed, logged
//! and counted, and with OAuth a token naming a known key costs a signature
//! check. A client sending thousands of bad tokens a second would take the
//! processors from the callers whose tokens are good. So refusals have a
//! budget, `http.auth_failures_per_second` (a bucket that refills at that
//! rate and holds one second's worth). Within it, a refusal is answered at
//! once. Beyond it, a refusal is answered only after
//! `http.auth_failure_pause_ms`.
//!
//! Every credential is judged at once, whatever the budget: the static
//! token, a remembered OAuth token (one hash and a look-up) and a new OAuth
//! token (its signature checked, one check at a time) alike. Only the
//! *refusal* waits. So a caller whose credentials are good is never held
//! by a flood of bad ones, and a sender of bad ones gets one check per
//! connection per pause: each connection carries one request at a time.
//!
//! A held connection does no work and is the first to be shed when every
//! connection slot is taken ([`crate::slots`]); a connection that has
//! carried an admitted request is the last. So holding refusals cannot keep
//! good callers from connecting. The number of connections is bounded by
//! `http.max_connections`. Setting the pause to 0 turns pacing off.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::Response;
use hyper::StatusCode;
use hyper::header::{self, HeaderValue};

use super::oauth;
use super::{Body, State, plain_error};
use crate::slots::{Slot, Waiting};

/// The refusal budget and the pause beyond it.
#[derive(Debug)]
pub(super) struct Pacer {
    per_second: f64,
    pause: Duration,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Pacer {
    pub(super) fn new(per_second: u64, pause: Duration) -> Pacer {
        // Budgets are at most 100,000 a second: exact as an f64.
        #[expect(clippy::cast_precision_loss, reason = "bounded well below 2^52")]
        let per_second = per_second.max(1) as f64;
        Pacer {
            per_second,
            pause,
            bucket: Mutex::new(Bucket {
                tokens: per_second,
                at: Instant::now(),
            }),
        }
    }

    /// Runs `f` on the bucket refilled to now; a poisoned lock counts as a
    /// spent budget.
    fn with_bucket(&self, f: impl FnOnce(&mut Bucket) -> bool) -> bool {
        let Ok(mut bucket) = self.bucket.lock() else {
            return false;
        };
        let now = Instant::now();
        let elapsed = now.duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.per_second);
        bucket.at = now;
        f(&mut bucket)
    }

    /// Counts one refusal against the budget; `false` when it is over.
    fn take(&self) -> bool {
        self.pause.is_zero()
            || self.with_bucket(|b| {
                if b.tokens >= 1.0 {
                    b.tokens -= 1.0;
                    true
                } else {
                    false
                }
            })
    }
}

/// The connection a request came on: its slot, so that it can be held
/// sheddable or marked as having carried an admitted request, and its
/// outbox, where the bytes held for it are counted.
pub(super) struct Conn<'a> {
    pub(super) slot: &'a Arc<Slot>,
    pub(super) waiting: &'a Waiting,
    pub(super) outbox: &'a Arc<super::output::Outbox>,
}

impl Conn<'_> {
    /// Waits `pause` with the connection marked held (first to be shed).
    async fn pause(&self, pause: Duration) {
        crate::metrics::auth_paused();
        self.waiting.hold(self.slot);
        tokio::time::sleep(pause).await;
        self.waiting.busy(self.slot);
    }
}

/// The caller's OAuth subject (`None` without OAuth) when `authorization`
/// is admitted; otherwise the refusal to answer, after its pause if the
/// budget is spent.
pub(super) async fn admit(
    st: &State,
    authorization: Option<&[u8]>,
    conn: &Conn<'_>,
) -> Result<Option<String>, Response<Body>> {
    if let Some(token) = &st.token {
        if token.accepts(authorization) {
            conn.slot.authenticated();
            return Ok(None);
        }
        let reason = if authorization.is_some() {
            "token_rejected"
        } else {
            "token_missing"
        };
        let paused = pace(st, conn).await;
        let mut r = refusal(StatusCode::UNAUTHORIZED, reason, "unauthorised", paused);
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Err(r);
    }
    let Some(o) = &st.oauth else {
        conn.slot.authenticated();
        return Ok(None);
    };
    let judged = match o.known(authorization) {
        Some(subject) => Ok(subject),
        None => o.check(authorization).await,
    };
    match judged {
        Ok(subject) => {
            conn.slot.authenticated();
            Ok(Some(subject))
        }
        Err(r) => {
            let paused = pace(st, conn).await;
            Err(oauth_refusal(o, r, paused))
        }
    }
}

/// Counts a refusal and holds it if it is over the budget; the pause it
/// waited, if any.
async fn pace(st: &State, conn: &Conn<'_>) -> Option<Duration> {
    if st.pacer.take() {
        return None;
    }
    conn.pause(st.pacer.pause).await;
    Some(st.pacer.pause)
}

/// An authentication refusal, logged once as `http.refused` with its fixed
/// reason (and the pause it waited), counted by that reason.
fn refusal(
    status: StatusCode,
    reason: &'static str,
    message: &str,
    paused: Option<Duration>,
) -> Response<Body> {
    crate::metrics::auth_failure(reason);
    let paused_ms = paused.map_or(0, |p| u64::try_from(p.as_millis()).unwrap_or(u64::MAX));
    tracing::warn!(status = status.as_u16(), reason, paused_ms, "http.refused");
    plain_error(status, message)
}

/// 401 or 403 for a request the OAuth checker did not admit, with its
/// challenge; never the token.
fn oauth_refusal(
    o: &oauth::Validator,
    r: oauth::Refusal,
    paused: Option<Duration>,
) -> Response<Body> {
    let (status, message) = match r {
        oauth::Refusal::InsufficientScope => (StatusCode::FORBIDDEN, "insufficient scope"),
        oauth::Refusal::Missing | oauth::Refusal::Invalid(_) => {
            (StatusCode::UNAUTHORIZED, "unauthorised")
        }
    };
    let mut response = refusal(status, r.reason(), message, paused);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, o.challenge(r));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_one_seconds_worth_and_refills_at_its_rate() {
        let p = Pacer::new(3, Duration::from_millis(500));
        assert!(p.take() && p.take() && p.take());
        assert!(!p.take());
        std::thread::sleep(Duration::from_millis(400));
        // 0.4 s at 3 a second: one more.
        assert!(p.take());
        assert!(!p.take());
    }

    #[test]
    fn a_zero_pause_never_paces() {
        let p = Pacer::new(1, Duration::ZERO);
        for _ in 0..10 {
            assert!(p.take());
        }
    }
}

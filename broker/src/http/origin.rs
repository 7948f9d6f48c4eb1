//! `Origin` and `Host` allow-lists (browser and DNS-rebinding defence).
//!
//! * `Origin`: absent is allowed (non-browser clients); present must equal one
//!   of `http.allowed_origins` exactly, or be the server's own origin when it
//!   is bound to loopback (`http://127.0.0.1:<port>`, `http://localhost:<port>`:
//!   a page there would be moat itself, which serves no pages). Every other
//!   browser origin is refused, including other ports on localhost.
//! * `Host`: when bound to a loopback address, only loopback names
//!   (`localhost`, `127.0.0.1`, `[::1]`) are accepted, plus
//!   `http.allowed_hosts`; when bound to a specific address, that address
//!   plus `allowed_hosts`; when bound to every interface, `allowed_hosts` if
//!   any are configured (otherwise the bearer token is the defence and start-up
//!   logs a warning). A rebinding page reaches the server with its own domain
//!   in `Host`, which is refused.

use std::net::{IpAddr, SocketAddr};

/// The compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    origins: Vec<String>,
    hosts: Vec<String>,
    bound: SocketAddr,
}

impl Policy {
    /// Build the policy for a server bound at `bound`.
    #[must_use]
    pub fn new(origins: &[String], hosts: &[String], bound: SocketAddr) -> Policy {
        Policy {
            origins: origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_owned())
                .collect(),
            hosts: hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
            bound,
        }
    }

    /// Whether the `Origin` header (if any) is allowed.
    #[must_use]
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
        match origin {
            None => true,
            Some(o) => {
                let o = o.trim().trim_end_matches('/');
                self.origins.iter().any(|a| a == o) || self.is_own_loopback_origin(o)
            }
        }
    }

    fn is_own_loopback_origin(&self, origin: &str) -> bool {
        if !self.bound.ip().is_loopback() {
            return false;
        }
        let Some(authority) = origin.strip_prefix("http://") else {
            return false;
        };
        let lower = authority.to_ascii_lowercase();
        let (name, port) = split_host_port(&lower);
        port == Some(self.bound.port())
            && (name == "localhost" || name.parse::<IpAddr>().is_ok_and(|a| a.is_loopback()))
    }

    /// Whether the Host check is active at all.
    #[must_use]
    pub fn checks_host(&self) -> bool {
        !self.bound.ip().is_unspecified() || !self.hosts.is_empty()
    }

    /// Whether the `Host` header is allowed.
    #[must_use]
    pub fn host_allowed(&self, host: Option<&str>) -> bool {
        if !self.checks_host() {
            return true;
        }
        let Some(host) = host.map(|h| h.trim().to_ascii_lowercase()) else {
            return false;
        };
        if self.hosts.contains(&host) {
            return true;
        }
        let (name, port) = split_host_port(&host);
        if port.is_some_and(|p| p != self.bound.port()) {
            return false;
        }
        if self.hosts.iter().any(|a| a == name) {
            return true;
        }
        let ip = self.bound.ip();
        if ip.is_loopback() {
            return matches!(name, "localhost" | "127.0.0.1" | "::1" | "[::1]")
                || name.parse::<IpAddr>().is_ok_and(|a| a.is_loopback());
        }
        if ip.is_unspecified() {
            return false;
        }
        name.trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|a| a == ip)
    }
}

fn split_host_port(h: &str) -> (&str, Option<u16>) {
    if let Some(rest) = h.strip_prefix('[') {
        // [v6]:port
        if let Some((addr, port)) = rest.split_once("]:") {
            return (addr, port.parse().ok().or(Some(0)));
        }
        return (rest.trim_end_matches(']'), None);
    }
    match h.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => (name, port.parse().ok().or(Some(0))),
        _ => (h, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Policy {
        Policy::new(
            &["https://app.example".into()],
            &[],
            "127.0.0.1:8080".parse().unwrap(),
        )
    }

    #[test]
    fn origins_are_exact() {
        let p = loopback();
        assert!(p.origin_allowed(None));
        assert!(p.origin_allowed(Some("https://app.example")));
        assert!(!p.origin_allowed(Some("https://app.example.evil")));
        assert!(!p.origin_allowed(Some("http://app.example")));
        let none = Policy::new(&[], &[], "127.0.0.1:1".parse().unwrap());
        assert!(!none.origin_allowed(Some("http://localhost")));
        assert!(!none.origin_allowed(Some("http://localhost:3000")));
        assert!(none.origin_allowed(Some("http://localhost:1")));
        assert!(none.origin_allowed(Some("http://127.0.0.1:1")));
        assert!(!none.origin_allowed(Some("https://127.0.0.1:1")));
        let public = Policy::new(&[], &[], "0.0.0.0:1".parse().unwrap());
        assert!(!public.origin_allowed(Some("http://127.0.0.1:1")));
    }

    #[test]
    fn rebinding_hosts_are_refused() {
        let p = loopback();
        assert!(p.host_allowed(Some("127.0.0.1:8080")));
        assert!(p.host_allowed(Some("localhost:8080")));
        assert!(p.host_allowed(Some("localhost")));
        assert!(p.host_allowed(Some("[::1]:8080")));
        assert!(!p.host_allowed(Some("evil.example:8080")));
        assert!(!p.host_allowed(Some("localhost:9999")));
        assert!(!p.host_allowed(None));
        let any = Policy::new(&[], &[], "0.0.0.0:8080".parse().unwrap());
        assert!(!any.checks_host());
        assert!(any.host_allowed(Some("moat.internal")));
        let named = Policy::new(
            &[],
            &["moat.internal".into()],
            "0.0.0.0:8080".parse().unwrap(),
        );
        assert!(named.host_allowed(Some("moat.internal:8080")));
        assert!(!named.host_allowed(Some("evil.example")));
    }
}

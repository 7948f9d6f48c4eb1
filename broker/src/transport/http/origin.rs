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
//!
//! Both checks judge one well-formed value. A value that is not one (bytes
//! outside visible ASCII, a `Host` that is not `host[:port]`) is refused
//! before it gets here ([`origin_syntax_ok`], [`parse_host`]); so is a header
//! sent twice. A check that let through what it cannot read would fail open.

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
        let Some((name, port)) = parse_host(&lower) else {
            return false;
        };
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
        let Some((name, port)) = parse_host(&host) else {
            return false;
        };
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

/// Whether `origin` can be judged: non-empty and visible ASCII only
/// (`!`..=`~`). A serialised origin (`scheme://host[:port]`, or `null`) has no
/// space, tab, control byte or non-ASCII byte; one that does is refused, never
/// read as absent.
#[must_use]
pub fn origin_syntax_ok(origin: &str) -> bool {
    !origin.is_empty() && origin.bytes().all(|b| b.is_ascii_graphic())
}

/// `host[:port]` as sent in `Host` or an absolute-form target, split into the
/// name and the port; `None` if it is not exactly that. The name is an IP
/// literal in brackets (`[::1]`, returned without them) or letters, digits,
/// `-`, `.`, `_` and `~` (no user information, percent-encoding or
/// sub-delimiters: names the allow-lists could be made to misread); the port,
/// if a `:` is present, is 1 to 5 digits within `u16`.
#[must_use]
pub fn parse_host(h: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if let Some(rest) = h.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        addr.parse::<std::net::Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (addr, port)
    } else {
        let (name, port) = match h.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (h, None),
        };
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
        if !name_ok {
            return None;
        }
        (name, port)
    };
    let port = match port {
        None => None,
        Some(p) if (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().ok()?)
        }
        Some(_) => return None,
    };
    Some((name, port))
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
        // What cannot be parsed is refused, never matched loosely.
        assert!(!p.host_allowed(Some("localhost:8080x")));
        assert!(!p.host_allowed(Some("user@localhost:8080")));
    }

    #[test]
    fn origins_outside_visible_ascii_cannot_be_judged() {
        assert!(origin_syntax_ok("https://app.example"));
        assert!(origin_syntax_ok("null"));
        for bad in [
            "",
            "https://caf\u{e9}.example",
            "https://app\t.example",
            "https://a.example https://b.example",
            "https://app.\u{1}example",
            "https://app.example\u{7f}",
        ] {
            assert!(!origin_syntax_ok(bad), "{bad:?}");
        }
    }

    #[test]
    fn hosts_parse_only_as_one_host_and_port() {
        assert_eq!(parse_host("localhost"), Some(("localhost", None)));
        assert_eq!(
            parse_host("127.0.0.1:8080"),
            Some(("127.0.0.1", Some(8080)))
        );
        assert_eq!(parse_host("[::1]:8080"), Some(("::1", Some(8080))));
        assert_eq!(parse_host("[::1]"), Some(("::1", None)));
        assert_eq!(
            parse_host("moat_x.internal~1"),
            Some(("moat_x.internal~1", None))
        );
        for bad in [
            "",
            ":8080",
            "localhost:",
            "localhost:8080x",
            "localhost:99999",
            "localhost:000000",
            "localhost:+80",
            "a:1:2",
            "user@localhost",
            "localhost/mcp",
            "localhost,evil.example",
            "local host",
            "lo%63alhost",
            "loc\u{e9}alhost",
            "[::1",
            "[::1]8080",
            "[::1]:",
            "[evil.example]",
            "[v1.x]",
            "::1",
        ] {
            assert_eq!(parse_host(bad), None, "{bad:?}");
        }
    }
}

//! Which URLs and addresses an outbound call may reach. Two kinds of place are reachable: the
//! public internet, over `https` only, and the loopback services the owner's own network
//! configuration names (the local sandbox's PDS, PLC and peers, by port), over `http` or
//! `https`. A URL is checked before the request is sent and at every redirect; the name in it
//! is checked again on every address it resolves to, when the connection is made.
//!
//! A sandbox may also name an **ingress**: a dispatcher on a loopback port that serves every
//! `*.localhost` name over plain HTTP, routing by the `Host` header (the public market's test
//! peer works this way). Calls to such names are then made to the ingress, never elsewhere.
//!
//! Invariants: a peer can never widen the policy (only the owner's configuration adds
//! loopback ports); a name other than `localhost` that resolves to a non-public address is
//! refused whatever the port (DNS rebinding cannot reach the owner's machine or network).

use std::collections::BTreeSet;
use std::net::IpAddr;

use url::{Host, Url};

use crate::address::non_public;

/// Why a URL or an address may not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target} may not be reached: {reason}")]
pub struct Refused {
    /// The URL or address, cut to a readable length.
    pub target: String,
    /// Which rule refused it.
    pub reason: String,
}

impl Refused {
    fn new(target: &str, reason: impl Into<String>) -> Self {
        Self {
            target: shorten(target),
            reason: reason.into(),
        }
    }
}

/// The policy's refusal among `error` and its causes: a refusal met when the connection was
/// made (a resolved address the policy forbids) reaches the caller inside the client's error.
pub fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(refused) = error.downcast_ref::<Refused>() {
            return Some(refused);
        }
        cause = error.source();
    }
    None
}

/// What the owner's network configuration lets outbound calls reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetPolicy {
    loopback_ports: BTreeSet<u16>,
    any_loopback_port: bool,
    ingress: Option<u16>,
}

impl NetPolicy {
    /// The public network: `https` to public addresses only.
    pub fn public() -> Self {
        Self::default()
    }

    /// This policy, also reaching the loopback service at `url`'s port (the owner's sandbox
    /// configuration names its PDS, PLC and peers this way; a peer's answer never does). A URL
    /// that is not on loopback opens nothing: `https://example.com` must not open port 443 of
    /// this machine.
    #[must_use]
    pub fn with_loopback_service(mut self, url: &Url) -> Self {
        let on_loopback = url.host().is_some_and(|host| is_loopback_host(&host));
        if let Some(port) = url.port_or_known_default().filter(|_| on_loopback) {
            self.loopback_ports.insert(port);
        }
        self
    }

    /// This policy, also reaching the loopback service on `port`.
    #[must_use]
    pub fn with_loopback_port(mut self, port: u16) -> Self {
        self.loopback_ports.insert(port);
        self
    }

    /// This policy, reaching every loopback port: only for the sandbox's own peers (the local
    /// bidder and gateway, which follow service references the tests name on loopback); the
    /// app never uses it (`clippy.toml` refuses it elsewhere).
    #[must_use]
    pub fn with_any_loopback_port(mut self) -> Self {
        self.any_loopback_port = true;
        self
    }

    /// This policy, reaching every `*.localhost` name through the ingress dispatcher on the
    /// loopback `port` (plain HTTP, routed by `Host`).
    #[must_use]
    pub fn with_localhost_ingress(mut self, port: u16) -> Self {
        self.ingress = Some(port);
        self
    }

    /// The loopback port serving `host` when it is a `*.localhost` name and the configuration
    /// names an ingress.
    pub fn ingress_for(&self, host: &str) -> Option<u16> {
        self.ingress.filter(|_| is_ingress_name(host))
    }

    /// The loopback ports the configuration names.
    pub fn loopback_ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.loopback_ports.iter().copied()
    }

    /// Whether a call to `url` may be made (its scheme, host and port; the addresses its name
    /// resolves to are checked at connect time by [`NetPolicy::check_resolved`]).
    pub fn check_url(&self, url: &Url) -> Result<(), Refused> {
        let refuse = |reason: &str| Err(Refused::new(url.as_str(), reason));
        let secure = match url.scheme() {
            "https" | "wss" => true,
            "http" | "ws" => false,
            _ => return refuse("only http(s) and ws(s) URLs are called"),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return refuse("a URL with credentials in it is never called");
        }
        let Some(host) = url.host() else {
            return refuse("it names no host");
        };
        if let Host::Domain(name) = &host
            && self.ingress_for(name).is_some()
        {
            return Ok(());
        }
        if is_loopback_host(&host) {
            let port = url.port_or_known_default().unwrap_or(0);
            return if self.any_loopback_port || self.loopback_ports.contains(&port) {
                Ok(())
            } else {
                refuse("a loopback address not named by the network configuration")
            };
        }
        if let Some(reason) = literal_ip(&host).and_then(non_public) {
            return refuse(&format!("it is {reason}"));
        }
        if !secure {
            return refuse("only https reaches the network");
        }
        Ok(())
    }

    /// Whether `name` may be reached at `ip`, one of the addresses it resolved to.
    pub fn check_resolved(&self, name: &str, ip: IpAddr) -> Result<(), Refused> {
        let Some(reason) = non_public(ip) else {
            return Ok(());
        };
        let configured_loopback = ip.is_loopback()
            && ((is_loopback_name(name)
                && (self.any_loopback_port || !self.loopback_ports.is_empty()))
                || self.ingress_for(name).is_some());
        if configured_loopback {
            Ok(())
        } else {
            Err(Refused::new(
                &format!("{name} ({ip})"),
                format!("it resolves to {reason}"),
            ))
        }
    }
}

fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => is_loopback_name(name) || is_ingress_name(name),
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
    }
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
}

/// A name under `.localhost` (RFC 6761: always this machine), other than `localhost` itself.
fn is_ingress_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.len() > ".localhost".len() && name.ends_with(".localhost")
}

fn literal_ip(host: &Host<&str>) -> Option<IpAddr> {
    match host {
        Host::Domain(_) => None,
        Host::Ipv4(ip) => Some(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => Some(IpAddr::V6(*ip)),
    }
}

/// A peer's URL as it may appear in a message: at most 200 bytes, cut on a char boundary.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a URL")
    }

    #[test]
    fn the_public_policy_calls_only_https_to_names_and_public_addresses() {
        let public = NetPolicy::public();
        assert!(public.check_url(&url("https://bsky.social/xrpc/x")).is_ok());
        assert!(public.check_url(&url("https://1.1.1.1/")).is_ok());
        for refused in [
            "http://bsky.social/",
            "https://127.0.0.1/",
            "https://localhost/",
            "http://localhost:2583/",
            "https://169.254.169.254/latest/meta-data",
            "https://[::ffff:127.0.0.1]/",
            "https://10.0.0.1/",
            "https://user:pw@bsky.social/",
            "file:///etc/passwd",
            "ftp://example.com/",
        ] {
            assert!(public.check_url(&url(refused)).is_err(), "{refused}");
        }
    }

    #[test]
    fn the_sandbox_reaches_only_the_loopback_ports_its_configuration_names() {
        let sandbox = NetPolicy::public().with_loopback_service(&url("http://localhost:2583"));
        assert!(
            sandbox
                .check_url(&url("http://localhost:2583/xrpc/x"))
                .is_ok()
        );
        assert!(sandbox.check_url(&url("http://127.0.0.1:2583/")).is_ok());
        assert!(sandbox.check_url(&url("http://[::1]:2583/")).is_ok());
        let other = sandbox
            .check_url(&url("http://127.0.0.1:2584/"))
            .unwrap_err();
        assert!(
            other
                .reason
                .contains("not named by the network configuration")
        );
        assert!(sandbox.check_url(&url("http://localhost/")).is_err());
        assert!(sandbox.check_url(&url("http://169.254.169.254/")).is_err());
    }

    #[test]
    fn a_service_off_loopback_opens_no_loopback_port() {
        let policy = NetPolicy::public().with_loopback_service(&url("https://example.com/x"));
        assert!(policy.check_url(&url("https://127.0.0.1/")).is_err());
        assert!(policy.check_url(&url("https://localhost:443/")).is_err());
        assert!(policy.check_url(&url("https://example.com/y")).is_ok());
    }

    #[test]
    fn only_localhost_may_resolve_to_loopback_and_only_in_a_sandbox() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let sandbox = NetPolicy::public().with_loopback_port(2583);
        assert!(sandbox.check_resolved("localhost", loopback).is_ok());
        let rebound = sandbox
            .check_resolved("evil.example", loopback)
            .unwrap_err();
        assert_eq!(rebound.reason, "it resolves to a loopback address");
        assert!(
            NetPolicy::public()
                .check_resolved("localhost", loopback)
                .is_err()
        );
        let metadata: IpAddr = "169.254.169.254".parse().unwrap();
        assert!(sandbox.check_resolved("localhost", metadata).is_err());
        assert!(
            sandbox
                .check_resolved("example.com", "93.184.216.34".parse().unwrap())
                .is_ok()
        );
    }

    #[test]
    fn an_ingress_serves_localhost_names_only_when_the_configuration_names_it() {
        let name = url("https://did-key-zq3sh.localhost/xrpc/x");
        assert!(NetPolicy::public().check_url(&name).is_err());
        let sandbox = NetPolicy::public().with_localhost_ingress(7801);
        assert!(sandbox.check_url(&name).is_ok());
        assert_eq!(sandbox.ingress_for("did-key-zq3sh.localhost"), Some(7801));
        assert_eq!(sandbox.ingress_for("localhost"), None);
        assert_eq!(sandbox.ingress_for("evil.localhost.example"), None);
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(
            sandbox
                .check_resolved("did-key-zq3sh.localhost", loopback)
                .is_ok()
        );
        assert!(sandbox.check_url(&url("http://localhost:7801/")).is_err());
    }

    #[test]
    fn a_long_url_is_cut_in_a_refusal() {
        let long = format!("https://10.0.0.1/{}", "a".repeat(5000));
        let refused = NetPolicy::public().check_url(&url(&long)).unwrap_err();
        assert!(refused.target.len() <= 204);
    }
}

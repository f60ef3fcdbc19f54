//! [`Outbound`]: the one HTTP client every call to another party goes through (the PDS, the
//! PLC, DID documents, handles, OAuth servers, bidders, grant endpoints, the gateway). It is
//! built once from the owner's [`NetPolicy`] and handed down; nothing else builds a client.
//!
//! What it enforces: the URL of every request and of every redirect hop is checked
//! ([`NetPolicy::check_url`]); every name is resolved by our resolver, which keeps only the
//! addresses the policy allows, so the connection is made only to a checked IP (a name that
//! later resolves elsewhere — DNS rebinding — is checked again); at most [`MAX_REDIRECTS`]
//! hops; a connect timeout and a total timeout on every call, body included; no proxy from the
//! environment (a proxy would resolve names where we cannot check them).

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Method, RequestBuilder};
use url::Url;

use crate::policy::{NetPolicy, Refused};

/// Redirect hops followed at most.
pub const MAX_REDIRECTS: usize = 3;
/// How long a connection may take to open.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a whole call may take, answer included, unless the caller sets a shorter one.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(60);

/// Name resolution, as the client sees it: the system's resolver in the product; tests give
/// their own to play a DNS that answers with addresses a peer chose.
pub trait Dns: Send + Sync + fmt::Debug + 'static {
    /// The addresses `name` resolves to.
    fn lookup(
        &self,
        name: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;
}

/// The operating system's resolver (`getaddrinfo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemDns;

impl Dns for SystemDns {
    fn lookup(
        &self,
        name: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        let target = format!("{name}:0");
        Box::pin(async move {
            let addresses = tokio::net::lookup_host(target).await?;
            Ok(addresses.map(|address| address.ip()).collect())
        })
    }
}

/// The client every outbound call goes through.
#[derive(Clone)]
pub struct Outbound {
    client: reqwest::Client,
    policy: Arc<NetPolicy>,
    dns: Arc<dyn Dns>,
    /// Requests and connections made through this client and its clones.
    made: Arc<AtomicU64>,
}

impl fmt::Debug for Outbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbound")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Outbound {
    /// A client under `policy`, resolving names with the system's resolver.
    pub fn new(policy: NetPolicy) -> Self {
        Self::with_dns(policy, Arc::new(SystemDns))
    }

    /// A client under `policy`, resolving names with `dns`.
    #[allow(
        clippy::disallowed_methods,
        reason = "the one HTTP client, built here under the policy"
    )]
    pub fn with_dns(policy: NetPolicy, dns: Arc<dyn Dns>) -> Self {
        let policy = Arc::new(policy);
        let redirects = Arc::clone(&policy);
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(TOTAL_TIMEOUT)
            .dns_resolver(Arc::new(CheckedResolver {
                policy: Arc::clone(&policy),
                dns: Arc::clone(&dns),
            }))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() > MAX_REDIRECTS {
                    return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
                }
                match redirects.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(refused) => attempt.error(format!("a redirect to {refused}")),
                }
            }))
            .build()
            .expect("a client with rustls and our resolver builds");
        Self {
            client,
            policy,
            dns,
            made: Arc::default(),
        }
    }

    /// How many requests (and WebSocket connections) this client and its clones have made
    /// so far: what an idle app must not add to.
    pub fn made(&self) -> u64 {
        self.made.load(Ordering::SeqCst)
    }

    /// The policy calls are made under.
    pub fn policy(&self) -> &NetPolicy {
        &self.policy
    }

    /// A `method` request to `url`, if the policy lets it be made (a `*.localhost` name the
    /// policy serves through an ingress is sent there as plain HTTP, its name kept as `Host`).
    pub fn request(&self, method: Method, url: impl AsRef<str>) -> Result<RequestBuilder, Refused> {
        let url = checked(&self.policy, url.as_ref())?;
        self.made.fetch_add(1, Ordering::SeqCst);
        Ok(self
            .client
            .request(method, through_ingress(&self.policy, url)))
    }

    /// A GET request to `url`, if the policy lets it be made.
    pub fn get(&self, url: impl AsRef<str>) -> Result<RequestBuilder, Refused> {
        self.request(Method::GET, url)
    }

    /// A POST request to `url`, if the policy lets it be made.
    pub fn post(&self, url: impl AsRef<str>) -> Result<RequestBuilder, Refused> {
        self.request(Method::POST, url)
    }

    /// The addresses a connection to `url` (a WebSocket, say) may be made to, checked like
    /// every HTTP call: the URL first, then each resolved address.
    pub async fn socket_addresses(&self, url: &Url) -> Result<Vec<SocketAddr>, Refused> {
        self.policy.check_url(url)?;
        let host = url
            .host_str()
            .ok_or_else(|| refused_name(url.as_str(), "it names no host"))?;
        let port = self
            .policy
            .ingress_for(host)
            .or(url.port_or_known_default())
            .unwrap_or(443);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ips = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => lookup(&self.policy, self.dns.as_ref(), host)
                .await
                .map_err(|error| refused_name(host, &format!("it does not resolve: {error}")))?,
        };
        let allowed = allowed_addresses(&self.policy, host, &ips)?;
        Ok(allowed
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

/// Why a socket could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SocketError {
    /// The policy forbids the place.
    #[error(transparent)]
    Refused(#[from] Refused),
    /// No allowed address answered in time.
    #[error("{0}")]
    Unreachable(String),
}

impl Outbound {
    /// A TCP connection to `url`'s host and port (for a WebSocket), made only to an address the
    /// policy allows, within [`CONNECT_TIMEOUT`].
    #[allow(
        clippy::disallowed_methods,
        reason = "the one TCP connect, to addresses the policy allowed"
    )]
    pub async fn connect_tcp(&self, url: &Url) -> Result<tokio::net::TcpStream, SocketError> {
        let addresses = self.socket_addresses(url).await?;
        self.made.fetch_add(1, Ordering::SeqCst);
        let connecting = tokio::net::TcpStream::connect(addresses.as_slice());
        match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(error)) => Err(SocketError::Unreachable(error.to_string())),
            Err(_) => Err(SocketError::Unreachable("timed out".to_owned())),
        }
    }
}

/// `url` as it is sent: to the ingress's port over plain HTTP when the policy serves its name
/// through one, else unchanged.
fn through_ingress(policy: &NetPolicy, mut url: Url) -> Url {
    let Some(port) = url.host_str().and_then(|host| policy.ingress_for(host)) else {
        return url;
    };
    let scheme = if url.scheme() == "wss" || url.scheme() == "ws" {
        "ws"
    } else {
        "http"
    };
    // Both always succeed on a URL with a host.
    let _ = url.set_scheme(scheme);
    let _ = url.set_port(Some(port));
    url
}

fn checked(policy: &NetPolicy, url: &str) -> Result<Url, Refused> {
    let parsed =
        Url::parse(url).map_err(|error| refused_name(url, &format!("not a URL: {error}")))?;
    policy.check_url(&parsed)?;
    Ok(parsed)
}

fn refused_name(target: &str, reason: &str) -> Refused {
    Refused {
        target: crate::policy::shorten(target),
        reason: reason.to_owned(),
    }
}

/// The addresses of `ips` the policy lets `name` be reached at; an error naming the first
/// refusal when none is left.
fn allowed_addresses(
    policy: &NetPolicy,
    name: &str,
    ips: &[IpAddr],
) -> Result<Vec<IpAddr>, Refused> {
    let mut first_refusal = None;
    let mut allowed = Vec::new();
    for ip in ips {
        match policy.check_resolved(name, *ip) {
            Ok(()) => allowed.push(*ip),
            Err(refused) => {
                first_refusal.get_or_insert(refused);
            }
        }
    }
    match (allowed.is_empty(), first_refusal) {
        (false, _) => Ok(allowed),
        (true, Some(refused)) => Err(refused),
        (true, None) => Err(refused_name(name, "it resolves to no address")),
    }
}

/// The addresses of `name`: the loopback address for a name the ingress serves (such names
/// need no DNS), else what `dns` answers.
async fn lookup(policy: &NetPolicy, dns: &dyn Dns, name: &str) -> std::io::Result<Vec<IpAddr>> {
    if policy.ingress_for(name).is_some() {
        return Ok(vec![IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)]);
    }
    dns.lookup(name).await
}

/// reqwest's resolver hook: the addresses a connection is made to, filtered by the policy.
#[derive(Debug)]
struct CheckedResolver {
    policy: Arc<NetPolicy>,
    dns: Arc<dyn Dns>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (policy, dns) = (Arc::clone(&self.policy), Arc::clone(&self.dns));
        Box::pin(async move {
            let name = name.as_str().to_owned();
            let ips = lookup(&policy, dns.as_ref(), &name).await?;
            let allowed = allowed_addresses(&policy, &name, &ips)?;
            let addresses: Addrs = Box::new(allowed.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addresses)
        })
    }
}

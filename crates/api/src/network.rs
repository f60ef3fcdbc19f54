//! Which network the app talks to. The **local sandbox** (what `cargo xtask run` starts: a
//! real PDS and PLC on loopback) is described by the harness's ready line, handed to the app in
//! `SWDESK_SANDBOX`; without it the app talks to the public atproto network, presenting the
//! hosted client metadata document (`SWDESK_CLIENT_ID` overrides its URL; in the sandbox it
//! presents that document instead of the development client id, as a release build does).
//!
//! Invariants: a sandbox never reaches beyond loopback (its handles resolve through its own
//! PDS, its DIDs through its own PLC); sessions of different networks live in different
//! keychain entries (the network's [`Network::keychain_name`]).

use std::time::Duration;

use serde::Deserialize;
use swdesk_atproto::identity::{IdentityConfig, loopback_web_did_port};
use swdesk_atproto::{ClientKind, OAuthConfig};
use swdesk_market::OfferingSource;
use swdesk_net::{NetPolicy, Outbound};
use url::Url;

/// The variable that carries the sandbox's ready line.
pub const SANDBOX_ENV: &str = "SWDESK_SANDBOX";
/// The variable that overrides the hosted client metadata URL.
pub const CLIENT_ID_ENV: &str = "SWDESK_CLIENT_ID";
/// Where the production client metadata document is hosted.
pub const DEFAULT_CLIENT_ID: &str = "https://desk.socialweb.computer/oauth-client-metadata.json";
/// How long the owner has to finish signing in in the browser.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// An account the sandbox made for trying the app, shown on the sign-in screen.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DemoAccount {
    /// Its handle.
    pub handle: String,
    /// Its password (a sandbox password, made up on this machine).
    pub password: String,
}

/// What the sandbox harness prints when ready (the fields the app needs).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SandboxLine {
    pds_url: Url,
    plc_url: Url,
    #[serde(default)]
    accounts: Vec<DemoAccount>,
    /// The sandbox's cluster gateway (`did:web:localhost%3A<port>`), when one runs.
    #[serde(default)]
    gateway_did: Option<String>,
    /// The accounts of the sandbox's bidders (there is no relay to find their offerings).
    #[serde(default)]
    bidder_dids: Vec<String>,
    /// The sandbox bidders' market services (`did:web:localhost%3A<port>`): the loopback ports
    /// the app may call them on.
    #[serde(default)]
    bidder_services: Vec<String>,
    /// The loopback port of the public market peer's dispatcher, which serves its
    /// `https://did-key-….localhost` services (`cargo xtask run --public-market`).
    #[serde(default)]
    market_ingress_port: Option<u16>,
    /// The keychain entry to keep the session in, instead of one per sandbox port (each window
    /// of the end-to-end suite has its own, so one test's session never leaks into the next).
    #[serde(default)]
    keychain: Option<String>,
}

/// The relay whose `listReposByCollection` finds the public market's offerings, from
/// `SWDESK_MARKET_RELAY`; without it the public network's contracts wait, saying so.
fn market_relay() -> Option<OfferingSource> {
    let relay = std::env::var(MARKET_RELAY_ENV).ok()?;
    match Url::parse(&relay) {
        Ok(url) => Some(OfferingSource::Relay(url)),
        Err(error) => {
            tracing::warn!(%error, "{MARKET_RELAY_ENV} is not a URL; the market stays unconnected");
            None
        }
    }
}

/// The variable naming the relay that finds the market's offerings.
pub const MARKET_RELAY_ENV: &str = "SWDESK_MARKET_RELAY";

/// The network the app talks to.
#[derive(Debug, Clone)]
pub struct Network {
    /// Shown in Settings.
    pub display_name: String,
    /// Names its keychain entry.
    pub keychain_name: String,
    /// How sign-in is done.
    pub oauth: OAuthConfig,
    /// The sandbox's demo account, if any.
    pub demo: Option<DemoAccount>,
    /// The cluster gateway's DID (its endpoint comes from its DID document), if the network
    /// has one.
    pub gateway_did: Option<String>,
    /// Where the compute market's offerings are found, if the network has a market.
    pub market: Option<OfferingSource>,
    /// The one client every call to another party goes through, under this network's policy
    /// ([`Network::net_policy`]); clones share it.
    pub outbound: Outbound,
}

/// The network description could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// `SWDESK_SANDBOX` is not a ready line.
    #[error(
        "{SANDBOX_ENV} does not describe a sandbox ({0}); start the app with `cargo xtask run`"
    )]
    Sandbox(String),
    /// `SWDESK_CLIENT_ID` is not a URL.
    #[error("{CLIENT_ID_ENV} is not an https URL: {0}")]
    ClientId(String),
}

impl Network {
    /// The network the environment names: the sandbox when `SWDESK_SANDBOX` is set.
    pub fn from_env() -> Result<Self, NetworkError> {
        let client_id = std::env::var(CLIENT_ID_ENV).ok();
        match std::env::var(SANDBOX_ENV) {
            Ok(line) => {
                let mut sandbox = Self::sandbox(&line)?;
                if let Some(text) = client_id {
                    let client_id = hosted_client_id(&text)?;
                    sandbox.oauth.client = ClientKind::Hosted { client_id };
                }
                Ok(sandbox)
            }
            Err(_) => Self::public(client_id.as_deref()),
        }
    }

    /// The local sandbox described by the harness's ready line.
    pub fn sandbox(ready_line: &str) -> Result<Self, NetworkError> {
        let line: SandboxLine = serde_json::from_str(ready_line)
            .map_err(|error| NetworkError::Sandbox(error.to_string()))?;
        let peers: Vec<String> = line
            .gateway_did
            .iter()
            .chain(&line.bidder_dids)
            .chain(&line.bidder_services)
            .cloned()
            .collect();
        let identity = IdentityConfig::sandbox(line.plc_url, line.pds_url.clone());
        let outbound = Outbound::new(sandbox_policy(&identity, &peers, line.market_ingress_port));
        Ok(Self {
            display_name: "Local sandbox".to_owned(),
            keychain_name: line.keychain.unwrap_or_else(|| {
                format!(
                    "sandbox-{}",
                    line.pds_url.port_or_known_default().unwrap_or(0)
                )
            }),
            oauth: OAuthConfig {
                identity,
                client: ClientKind::Loopback,
                callback_timeout: SIGN_IN_TIMEOUT,
            },
            demo: line.accounts.into_iter().next(),
            gateway_did: line.gateway_did,
            market: (!line.bidder_dids.is_empty())
                .then_some(OfferingSource::Repos(line.bidder_dids)),
            outbound,
        })
    }

    /// The public atproto network, presenting the client metadata at `client_id` (or ours).
    pub fn public(client_id: Option<&str>) -> Result<Self, NetworkError> {
        let client_id = hosted_client_id(client_id.unwrap_or(DEFAULT_CLIENT_ID))?;
        Ok(Self {
            display_name: "atproto network".to_owned(),
            keychain_name: "public".to_owned(),
            oauth: OAuthConfig {
                identity: IdentityConfig::public(),
                client: ClientKind::Hosted { client_id },
                callback_timeout: SIGN_IN_TIMEOUT,
            },
            demo: None,
            gateway_did: Some(swdesk_gateway::DEFAULT_GATEWAY_DID.to_owned()),
            market: market_relay(),
            outbound: Outbound::new(NetPolicy::public()),
        })
    }
}

/// A hosted client metadata document's URL: https only.
fn hosted_client_id(text: &str) -> Result<Url, NetworkError> {
    Url::parse(text)
        .ok()
        .filter(|url| url.scheme() == "https")
        .ok_or_else(|| NetworkError::ClientId(text.to_owned()))
}

/// The sandbox's policy: the public network, plus on loopback its PLC and PDS, the peers its
/// ready line names (`did:web:localhost%3A<port>`) and the public market peer's `*.localhost`
/// ingress when it runs: the owner's configuration, never a peer's answer, opens a loopback
/// port.
fn sandbox_policy(identity: &IdentityConfig, peers: &[String], ingress: Option<u16>) -> NetPolicy {
    let policy = peers
        .iter()
        .filter_map(|did| loopback_web_did_port(did))
        .fold(identity.net_policy(), NetPolicy::with_loopback_port);
    match ingress {
        Some(port) => policy.with_localhost_ingress(port),
        None => policy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"pdsUrl":"http://localhost:2583","plcUrl":"http://localhost:2582","serviceDid":"did:web:localhost","adminPassword":"x","dataDirectory":"/tmp/s","accounts":[{"handle":"demo.test","did":"did:plc:abc","password":"demo-pw"}]}"#;

    #[test]
    fn a_ready_line_describes_a_loopback_sandbox_with_its_demo_account() {
        let network = Network::sandbox(LINE).unwrap();
        assert_eq!(network.display_name, "Local sandbox");
        assert_eq!(network.keychain_name, "sandbox-2583");
        assert_eq!(network.oauth.client, ClientKind::Loopback);
        assert!(network.oauth.identity.allow_http_localhost);
        assert_eq!(
            network.demo,
            Some(DemoAccount {
                handle: "demo.test".into(),
                password: "demo-pw".into()
            })
        );
    }

    #[test]
    fn the_sandbox_reaches_on_loopback_only_the_services_its_ready_line_names() {
        let line = LINE.replace(
            r#""accounts""#,
            r#""gatewayDid":"did:web:localhost%3A7001","bidderDids":["did:plc:b"],"bidderServices":["did:web:localhost%3A7002"],"accounts""#,
        );
        let network = Network::sandbox(&line).unwrap();
        let ports: Vec<u16> = network.outbound.policy().loopback_ports().collect();
        assert_eq!(ports, vec![2582, 2583, 7001, 7002]);
        let peer = Url::parse("https://did-key-z.localhost/xrpc/x").unwrap();
        assert!(network.outbound.policy().check_url(&peer).is_err());
        let with_peer = line.replace(r#""accounts""#, r#""marketIngressPort":7801,"accounts""#);
        let network = Network::sandbox(&with_peer).unwrap();
        assert_eq!(
            network.outbound.policy().ingress_for("did-key-z.localhost"),
            Some(7801)
        );
        let public = Network::public(None).unwrap();
        assert_eq!(public.outbound.policy().loopback_ports().count(), 0);
        let metadata = Url::parse("http://localhost:2583/").unwrap();
        assert!(public.outbound.policy().check_url(&metadata).is_err());
    }

    #[test]
    fn the_public_network_presents_a_hosted_https_client_id() {
        let network = Network::public(None).unwrap();
        assert_eq!(
            network.oauth.client,
            ClientKind::Hosted {
                client_id: Url::parse(DEFAULT_CLIENT_ID).unwrap()
            }
        );
        assert!(!network.oauth.identity.allow_http_localhost);
        assert!(matches!(
            Network::public(Some("http://insecure.example")),
            Err(NetworkError::ClientId(_))
        ));
        assert!(matches!(
            Network::sandbox("not json"),
            Err(NetworkError::Sandbox(_))
        ));
    }
}

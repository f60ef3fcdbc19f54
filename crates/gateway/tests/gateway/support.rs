//! What the tests share beyond the test kit (the sandbox, an owner signed in through Chromium,
//! waiting with a deadline): a sandbox gateway of the test's own with fast timings and its own
//! account, and the owner's client of it.

use std::time::Duration;
use swdesk_net::Outbound;

use swdesk_atproto::Agent;
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_devnet::Account;
use swdesk_gateway::{GatewayClient, GatewayClientConfig};
use swdesk_sandbox_gateway::{Config, GatewayAccount, RunningGateway, Timings};
use swdesk_testkit::Sandbox;
use url::Url;

/// The sandbox and one gateway.
#[derive(Debug)]
pub struct World {
    pub sandbox: Sandbox,
    pub gateway: RunningGateway,
    pub config: Config,
}

impl World {
    /// A gateway with the defaults and fast timings.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// A gateway configured by `adjust`.
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> Self {
        let sandbox = Sandbox::start().await;
        let account = GatewayAccount::create(&sandbox.pds, "gw")
            .await
            .expect("the gateway account is created");
        let mut config = Config::new(sandbox.identity.clone(), account, Timings::fast());
        adjust(&mut config);
        let gateway = swdesk_sandbox_gateway::start(config.clone())
            .await
            .expect("the gateway starts");
        Self {
            sandbox,
            gateway,
            config,
        }
    }

    /// Stops the gateway and starts a fresh one (empty state) on the same port and DID.
    pub async fn restart_gateway(self) -> Self {
        let Self {
            sandbox,
            gateway,
            config,
        } = self;
        let mut same_port = config.clone();
        same_port.port = gateway.url.port().unwrap();
        gateway.stop().await;
        let fresh = swdesk_sandbox_gateway::start(same_port)
            .await
            .expect("the gateway restarts");
        Self {
            sandbox,
            gateway: fresh,
            config,
        }
    }

    pub fn identity(&self) -> IdentityConfig {
        self.config.identity.clone()
    }

    pub fn pds_url(&self) -> Url {
        self.config.account.pds_url.clone()
    }

    /// A fresh account, signed in through Chromium, with a client of this world's gateway.
    pub async fn owner(&self, prefix: &str) -> Owner {
        let swdesk_testkit::Owner { account, agent, .. } = self.sandbox.owner(prefix).await;
        let client = self.client(agent.clone());
        Owner {
            account,
            agent,
            client,
        }
    }

    /// A client of this world's gateway for `agent`.
    pub fn client(&self, agent: Agent) -> GatewayClient {
        let identity = self.identity();
        let policy = identity
            .net_policy()
            .with_loopback_service(&self.gateway.url);
        let resolver = Resolver::new(identity, Outbound::new(policy));
        GatewayClient::new(
            GatewayClientConfig {
                did: self.gateway.did.clone(),
                resolver,
            },
            agent,
        )
    }
}

/// A signed-in owner.
#[derive(Debug)]
pub struct Owner {
    pub account: Account,
    pub agent: Agent,
    pub client: GatewayClient,
}

impl Owner {
    /// A raw service-auth token from the owner's PDS for `lxm` at `aud`.
    pub async fn mint(&self, aud: &str, lxm: &str) -> String {
        let request = XrpcRequest::query(
            "com.atproto.server.getServiceAuth",
            vec![("aud", aud.to_owned()), ("lxm", lxm.to_owned())],
        );
        let answer = self
            .agent
            .call(&request)
            .await
            .expect("the PDS mints a token");
        answer["token"].as_str().unwrap().to_owned()
    }
}

/// Polls `check` until it answers `Some`, failing the test after 20 s.
pub async fn eventually<T>(what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
    swdesk_testkit::eventually(what, Duration::from_secs(20), check).await
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

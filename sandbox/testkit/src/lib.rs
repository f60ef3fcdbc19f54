//! What every test suite shares, so that a suite's own `support.rs` holds only what is its own:
//! the local sandbox (its PDS and PLC, one per `cargo xtask test` run through
//! `SWDESK_SANDBOX_PDS`, or started here) with the identity configuration that reaches it
//! ([`Sandbox`]); an owner signed in through Chromium as a person would ([`Sandbox::owner`],
//! [`browser`]); a sandbox bidder's configuration with an account of its own
//! ([`bidder_config`]); the mail the PDS sends an account ([`Sandbox::next_mail`]);
//! unauthenticated reads of any repo ([`public`]); a store on a throwaway
//! file ([`store_file`]); waiting with a deadline on tokio's clock ([`wait`]); and sandboxes
//! kept in a directory, alone or behind a fault proxy ([`kept`]).
//!
//! Test support only: product crates take it as a dev-dependency, never more (the layout check
//! holds them to it).

pub mod browser;
pub mod kept;
pub mod public;
pub mod wait;

use std::sync::Arc;

use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::keychain::{MemoryStore, SessionStore};
use swdesk_atproto::{Agent, ClientKind, OAuthClient, OAuthConfig};
use swdesk_devnet::{Account, Mail, SandboxPds};
use swdesk_net::Outbound;
use swdesk_store::Store;
use tempfile::TempDir;
use url::Url;

pub use browser::Chromium;
pub use wait::eventually;

/// How long a mail from the PDS may take to reach the sandbox's mailbox.
pub const MAIL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// How long a sign-in waits for Chromium to finish the authorization page.
const CALLBACK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);

/// The local sandbox as a test sees it: the PDS (and its PLC) and the identity configuration
/// that resolves and reaches them.
#[derive(Debug)]
pub struct Sandbox {
    /// The PDS and PLC.
    pub pds: SandboxPds,
    /// Resolves DIDs at the sandbox's PLC and reaches its PDS.
    pub identity: IdentityConfig,
}

impl Sandbox {
    /// The run's sandbox (`SWDESK_SANDBOX_PDS`), or one of this process's own.
    ///
    /// # Panics
    /// When no sandbox answers and none can start: the message says what to do.
    pub async fn start() -> Self {
        let pds = SandboxPds::from_env_or_start().await.expect(
            "the sandbox PDS starts (run `cargo xtask test`, or npm ci in sandbox/devnet/pds)",
        );
        let identity = swdesk_sandbox_peer::sandbox_identity(&pds).expect("the sandbox's URLs");
        Self { pds, identity }
    }

    /// The PDS's URL.
    pub fn pds_url(&self) -> Url {
        Url::parse(&self.pds.info().pds_url).expect("the PDS's URL")
    }

    /// A fresh account named from `prefix`.
    pub async fn account(&self, prefix: &str) -> Account {
        self.pds
            .create_account(prefix)
            .await
            .expect("an account is created")
    }

    /// The outbound client of the sandbox's network policy, also reaching the loopback `ports`
    /// (peers a test started; nothing else on loopback is reachable).
    pub fn outbound_reaching(&self, ports: &[u16]) -> Outbound {
        let policy = ports
            .iter()
            .fold(self.identity.net_policy(), |policy, port| {
                policy.with_loopback_port(*port)
            });
        Outbound::new(policy)
    }

    /// A resolver of the sandbox, also reaching the loopback `ports`.
    pub fn resolver_reaching(&self, ports: &[u16]) -> Resolver {
        Resolver::new(self.identity.clone(), self.outbound_reaching(ports))
    }

    /// A native-app sign-in client calling through `outbound`, opening `browser`, keeping the
    /// session in `store`.
    pub fn oauth_client(
        &self,
        outbound: Outbound,
        browser: Arc<dyn swdesk_atproto::Browser>,
        store: Arc<dyn SessionStore>,
    ) -> OAuthClient {
        let config = OAuthConfig {
            identity: self.identity.clone(),
            client: ClientKind::Loopback,
            callback_timeout: CALLBACK_TIMEOUT,
        };
        OAuthClient::new(config, outbound, browser, store)
    }

    /// The mail the PDS sends `account` after the `seen` it had already sent, once it arrives
    /// (the owner's inbox: a PLC operation's code is read off it).
    ///
    /// # Panics
    /// When none arrives within [`MAIL_TIMEOUT`].
    pub async fn next_mail(&self, account: &Account, seen: usize) -> Mail {
        let address = account.email();
        eventually("the PDS's mail", MAIL_TIMEOUT, async || {
            let mails = self
                .pds
                .mails_to(&address)
                .expect("the mailbox is readable");
            mails.into_iter().nth(seen)
        })
        .await
    }

    /// The configuration of a sandbox bidder with a fresh account of its own on this sandbox
    /// ([`bidder_config`]).
    pub async fn bidder_config(
        &self,
        prefix: &str,
        behaviour: swdesk_sandbox_bidder::Behaviour,
    ) -> swdesk_sandbox_bidder::Config {
        bidder_config(&self.pds, &self.identity, prefix, behaviour).await
    }

    /// A fresh account named from `prefix`, signed in through Chromium approving, its session
    /// in memory.
    pub async fn owner(&self, prefix: &str) -> Owner {
        self.owner_asking(prefix, &[]).await
    }

    /// A fresh account named from `prefix`, signed in through Chromium approving the usual
    /// scopes and the `extra` ones (`identity:*` to publish the market key).
    pub async fn owner_asking(&self, prefix: &str, extra: &[&str]) -> Owner {
        let account = self.account(prefix).await;
        let session = Arc::new(MemoryStore::default());
        let agent = self.sign_in_asking(&account, session.clone(), extra).await;
        Owner {
            account,
            agent,
            session,
        }
    }

    /// `account` signed in through Chromium approving, its session kept in `store`.
    ///
    /// # Panics
    /// When the sign-in fails: it is a test's setup.
    pub async fn sign_in(&self, account: &Account, store: Arc<dyn SessionStore>) -> Agent {
        self.sign_in_asking(account, store, &[]).await
    }

    /// `account` signed in as [`Self::sign_in`] does, asking for the `extra` scopes too.
    ///
    /// # Panics
    /// When the sign-in fails: it is a test's setup.
    pub async fn sign_in_asking(
        &self,
        account: &Account,
        store: Arc<dyn SessionStore>,
        extra: &[&str],
    ) -> Agent {
        let browser = Chromium::approving(account);
        let agent = self
            .oauth_client(self.outbound_reaching(&[]), browser.clone(), store)
            .sign_in_asking(&account.handle, extra)
            .await
            .expect("sign-in succeeds");
        browser
            .outcome()
            .await
            .expect("Chromium finished the authorization page");
        agent
    }
}

/// A signed-in owner.
#[derive(Debug)]
pub struct Owner {
    /// The account on the sandbox PDS.
    pub account: Account,
    /// Its agent.
    pub agent: Agent,
    /// Where its session lives (in memory): a process of its own can be handed a copy.
    pub session: Arc<MemoryStore>,
}

/// The configuration of a sandbox bidder with a fresh account (named from `prefix`) on `pds`,
/// resolving identities as `identity` says, behaving as told: a test adjusts it and starts the
/// bidder.
pub async fn bidder_config(
    pds: &SandboxPds,
    identity: &IdentityConfig,
    prefix: &str,
    behaviour: swdesk_sandbox_bidder::Behaviour,
) -> swdesk_sandbox_bidder::Config {
    let account = swdesk_sandbox_bidder::BidderAccount::create(pds, prefix)
        .await
        .expect("the bidder's account is created");
    let mut config = swdesk_sandbox_bidder::Config::new(identity.clone(), account);
    config.behaviour = behaviour;
    config
}

/// A store on a new file in a throwaway directory, which goes when the guard drops.
pub fn store_file() -> (TempDir, Store) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::open(dir.path().join("objects.sqlite")).expect("the store opens");
    (dir, store)
}

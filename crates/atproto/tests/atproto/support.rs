//! What the integration tests share: the sandbox PDS (one per `cargo xtask test` run, shared
//! through `SWDESK_SANDBOX_PDS`), a fresh account per test, a keychain entry per test, and the
//! browsers a test can hand to sign-in: Chromium playing the owner, or a tampering one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use swdesk_atproto::identity::IdentityConfig;
use swdesk_atproto::keychain::{Keychain, SessionStore};
use swdesk_atproto::{Browser, ClientKind, OAuthClient, OAuthConfig};
use swdesk_devnet::{Account, Decision, SandboxPds};
use tokio::task::JoinHandle;
use url::Url;

/// A test's view of the sandbox.
#[derive(Debug)]
pub struct Sandbox {
    pub pds: SandboxPds,
}

impl Sandbox {
    pub async fn new() -> Self {
        Self {
            pds: SandboxPds::from_env_or_start().await.expect(
                "the sandbox PDS starts (run `cargo xtask test`, or npm ci in sandbox/devnet/pds)",
            ),
        }
    }

    pub async fn account(&self, prefix: &str) -> Account {
        self.pds
            .create_account(prefix)
            .await
            .expect("an account is created")
    }

    pub fn pds_url(&self) -> Url {
        Url::parse(&self.pds.info().pds_url).unwrap()
    }

    pub fn identity_config(&self) -> IdentityConfig {
        IdentityConfig::sandbox(
            Url::parse(&self.pds.info().plc_url).unwrap(),
            self.pds_url(),
        )
    }

    /// The outbound client of the sandbox's network policy.
    pub fn outbound(&self) -> swdesk_net::Outbound {
        self.outbound_reaching(&[])
    }

    /// The outbound client of the sandbox's policy, also reaching these loopback `ports` (the
    /// services a test serves itself).
    pub fn outbound_reaching(&self, ports: &[u16]) -> swdesk_net::Outbound {
        let policy = ports
            .iter()
            .fold(self.identity_config().net_policy(), |policy, port| {
                policy.with_loopback_port(*port)
            });
        swdesk_net::Outbound::new(policy)
    }

    /// A sign-in client that opens `browser` and keeps the session in `store`.
    pub fn client(&self, browser: Arc<dyn Browser>, store: Arc<dyn SessionStore>) -> OAuthClient {
        self.client_with(self.outbound(), browser, store)
    }

    /// A sign-in client as [`Sandbox::client`], calling through `outbound`.
    pub fn client_with(
        &self,
        outbound: swdesk_net::Outbound,
        browser: Arc<dyn Browser>,
        store: Arc<dyn SessionStore>,
    ) -> OAuthClient {
        let config = OAuthConfig {
            identity: self.identity_config(),
            client: ClientKind::Loopback,
            callback_timeout: Duration::from_secs(90),
        };
        OAuthClient::new(config, outbound, browser, store)
    }
}

/// A keychain entry of this test's own (the real Secret Service).
pub fn keychain(test: &str) -> Arc<Keychain> {
    let network = format!("test-{test}-{}", std::process::id());
    let keychain = Keychain::open(&network).expect(
        "the Secret Service answers (run under `cargo xtask test`, which starts gnome-keyring)",
    );
    keychain.delete().unwrap();
    Arc::new(keychain)
}

/// Chromium playing the owner: signs in as `account` and decides.
#[derive(Debug)]
pub struct Chromium {
    account: Account,
    decision: Decision,
    run: Mutex<Option<JoinHandle<Result<(), String>>>>,
}

impl Chromium {
    pub fn new(account: &Account, decision: Decision) -> Arc<Self> {
        Arc::new(Self {
            account: account.clone(),
            decision,
            run: Mutex::new(None),
        })
    }

    /// What the browser run ended with (call after sign-in returned).
    pub async fn outcome(&self) -> Result<(), String> {
        let run = self
            .run
            .lock()
            .unwrap()
            .take()
            .expect("the browser was opened");
        run.await.unwrap()
    }
}

impl Browser for Chromium {
    fn open(&self, url: &Url) -> Result<(), String> {
        let (url, account, decision) = (url.to_string(), self.account.clone(), self.decision);
        let run =
            tokio::spawn(async move { swdesk_devnet::authorize(&url, &account, decision).await });
        *self.run.lock().unwrap() = Some(run);
        Ok(())
    }
}

/// A browser that skips the page and calls the app's redirect with a forged query.
#[derive(Debug)]
pub struct Forger {
    pub query: &'static str,
}

impl Browser for Forger {
    fn open(&self, url: &Url) -> Result<(), String> {
        // The loopback client id carries the redirect URI.
        let client_id = url
            .query_pairs()
            .find(|(name, _)| name == "client_id")
            .map(|(_, value)| value.into_owned())
            .ok_or("no client_id")?;
        let redirect = Url::parse(&client_id)
            .map_err(|e| e.to_string())?
            .query_pairs()
            .find(|(name, _)| name == "redirect_uri")
            .map(|(_, value)| value.into_owned())
            .ok_or("no redirect_uri")?;
        let target = format!("{redirect}?{}", self.query);
        tokio::spawn(async move { reqwest::get(target).await.map(|_| ()) });
        Ok(())
    }
}

/// Signs `account` in through Chromium and returns the agent (the common first step).
pub async fn signed_in(
    sandbox: &Sandbox,
    account: &Account,
    store: Arc<dyn SessionStore>,
) -> swdesk_atproto::Agent {
    let browser = Chromium::new(account, Decision::Approve);
    let client = sandbox.client(browser.clone(), store);
    let agent = client.sign_in(&account.handle).await;
    browser
        .outcome()
        .await
        .expect("Chromium finished the authorization page");
    agent.expect("sign-in succeeds")
}

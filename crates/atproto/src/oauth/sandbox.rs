//! Sign-in for other crates' tests on the local sandbox network: [`ApprovingBrowser`] opens
//! the authorization page in headless Chromium as an account and approves, as the owner would
//! (`swdesk_devnet::authorize`), and [`sign_in_approving`] runs the whole native-app flow with
//! it. Test support only (the `test-support` feature): never in the product.

use std::sync::Arc;
use std::time::Duration;
use swdesk_net::Outbound;

use swdesk_devnet::{Account as SandboxAccount, Decision};
use url::Url;

use super::{Browser, ClientKind, OAuthClient, OAuthConfig};
use crate::agent::Agent;
use crate::identity::IdentityConfig;
use crate::keychain::SessionStore;

/// How long a test's sign-in waits for Chromium to finish the page.
const CALLBACK_TIMEOUT: Duration = Duration::from_secs(90);

/// Headless Chromium signing in as the account and approving.
#[derive(Debug, Clone)]
pub struct ApprovingBrowser(pub SandboxAccount);

impl Browser for ApprovingBrowser {
    fn open(&self, url: &Url) -> Result<(), String> {
        let (url, account) = (url.to_string(), self.0.clone());
        tokio::spawn(
            async move { swdesk_devnet::authorize(&url, &account, Decision::Approve).await },
        );
        Ok(())
    }
}

/// `account` signed in as a loopback native app, its session kept in `store`.
///
/// # Panics
/// When the sign-in fails: it is a test's setup.
pub async fn sign_in_approving(
    identity: IdentityConfig,
    account: &SandboxAccount,
    store: Arc<dyn SessionStore>,
) -> Agent {
    let http = Outbound::new(identity.net_policy());
    let config = OAuthConfig {
        identity,
        client: ClientKind::Loopback,
        callback_timeout: CALLBACK_TIMEOUT,
    };
    let browser = Arc::new(ApprovingBrowser(account.clone()));
    OAuthClient::new(config, http, browser, store)
        .sign_in(&account.handle)
        .await
        .expect("sign-in succeeds")
}

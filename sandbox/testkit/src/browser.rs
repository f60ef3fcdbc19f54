//! Chromium playing the owner at the sandbox PDS's authorization page: it signs in as an
//! account and approves or denies (`swdesk_devnet::authorize`), then follows the redirect back
//! to the app, as a person in their system browser would. A test hands it to sign-in as the
//! [`Browser`] and may ask afterwards how the page went.

use std::sync::{Arc, Mutex};

use swdesk_atproto::Browser;
use swdesk_devnet::{Account, Decision};
use tokio::task::JoinHandle;
use url::Url;

/// Chromium playing the owner: signs in as the account and decides.
#[derive(Debug)]
pub struct Chromium {
    account: Account,
    decision: Decision,
    run: Mutex<Option<JoinHandle<Result<(), String>>>>,
}

impl Chromium {
    /// Chromium signing in as `account` and deciding `decision`.
    pub fn new(account: &Account, decision: Decision) -> Arc<Self> {
        Arc::new(Self {
            account: account.clone(),
            decision,
            run: Mutex::new(None),
        })
    }

    /// Chromium signing in as `account` and approving.
    pub fn approving(account: &Account) -> Arc<Self> {
        Self::new(account, Decision::Approve)
    }

    /// What the page's run ended with (ask after sign-in returned).
    ///
    /// # Panics
    /// When no page was opened.
    pub async fn outcome(&self) -> Result<(), String> {
        let run = self
            .run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .expect("the browser was opened");
        run.await.map_err(|error| error.to_string())?
    }
}

impl Browser for Chromium {
    fn open(&self, url: &Url) -> Result<(), String> {
        let (url, account, decision) = (url.to_string(), self.account.clone(), self.decision);
        let run =
            tokio::spawn(async move { swdesk_devnet::authorize(&url, &account, decision).await });
        *self
            .run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(run);
        Ok(())
    }
}

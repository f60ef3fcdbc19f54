//! What the integration tests share beyond the test kit (the sandbox, Chromium playing the
//! owner): a keychain entry per test, and a browser that tampers with the redirect.

use std::sync::Arc;

use swdesk_atproto::Browser;
use swdesk_atproto::keychain::{Keychain, SessionStore};
use url::Url;

/// A keychain entry of this test's own (the real Secret Service).
pub fn keychain(test: &str) -> Arc<Keychain> {
    let network = format!("test-{test}-{}", std::process::id());
    let keychain = Keychain::open(&network).expect(
        "the Secret Service answers (run under `cargo xtask test`, which starts gnome-keyring)",
    );
    keychain.delete().unwrap();
    Arc::new(keychain)
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

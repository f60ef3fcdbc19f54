//! What the integration tests share beyond the test kit (the sandbox, Chromium playing the
//! owner): a keychain entry per test, and a browser that forges a redirect before the owner's.

use std::sync::{Arc, Mutex};

use swdesk_atproto::Browser;
use swdesk_atproto::keychain::{Keychain, ProfileSession, SessionStore};
use swdesk_testkit::Chromium;
use url::Url;

/// A keychain of this test's own (the real Secret Service): a network name no other test uses.
pub fn open_keychain(test: &str) -> Keychain {
    let network = format!("test-{test}-{}", std::process::id());
    Keychain::open(&network).expect(
        "the Secret Service answers (run under `cargo xtask test`, which starts gnome-keyring)",
    )
}

/// A data directory of this test's own, kept for the run (its lock file outlives the test).
pub fn data_dir(test: &str) -> std::path::PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("swdesk-{test}-"))
        .tempdir()
        .unwrap()
        .keep()
}

/// The session entry of a profile of this test's own, empty.
pub fn keychain(test: &str) -> Arc<ProfileSession> {
    let session = open_keychain(test).session_of(&data_dir(test));
    session.delete().unwrap();
    Arc::new(session)
}

/// A browser that first calls the app's redirect with a forged query (another program on the
/// machine), then lets Chromium open the page for the owner.
#[derive(Debug)]
pub struct Forger {
    query: &'static str,
    then: Arc<Chromium>,
    answered: Arc<Mutex<Option<u16>>>,
}

impl Forger {
    /// Forges `query`, then hands the page to `then`.
    pub fn new(query: &'static str, then: Arc<Chromium>) -> Arc<Self> {
        Arc::new(Self {
            query,
            then,
            answered: Arc::default(),
        })
    }

    /// The HTTP status the app answered the forged redirect with.
    pub fn answered(&self) -> Option<u16> {
        *self.answered.lock().unwrap()
    }
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
        let (page, then, answered) = (url.clone(), self.then.clone(), self.answered.clone());
        tokio::spawn(async move {
            let status = reqwest::get(target).await.map(|answer| answer.status());
            *answered.lock().unwrap() = status.ok().map(|status| status.as_u16());
            then.open(&page)
        });
        Ok(())
    }
}

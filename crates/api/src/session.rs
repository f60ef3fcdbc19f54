//! The owner's session as the app sees it: signed out, signing in (waiting for the browser),
//! or signed in. [`Sessions`] restores the keychain's session once (checking with the PDS that
//! it still holds), runs one sign-in at a time (a new one, or a cancel, stops the one waiting),
//! and signs out.
//!
//! Invariants: the state only moves forward from a sign-in that is still the current attempt
//! (a cancelled or superseded attempt changes nothing when it ends); a session ends only when
//! its authorization server says the grant is gone (at restore or later, [`Agent::ended`]):
//! then it is forgotten and the owner is told, and the account's local declarations stay. No
//! network, a busy or failing server, an expired access token that cannot be refreshed now:
//! the session is kept (offline is not signed out).

use crate::error_code::ErrorCode;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use swdesk_atproto::keychain::{Keychain, KeychainError, SessionStore};
use swdesk_atproto::oauth::{AppLinkError, AppLinks};
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_atproto::{Account, Agent, Browser, ClientKind, OAuthClient, OAuthError};
use tokio::sync::OnceCell;
use tokio::task::AbortHandle;

use crate::network::Network;

/// What the window shows about the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionView {
    /// Nobody is signed in; `notice` says why, when a session just ended.
    SignedOut {
        /// Why the owner is signed out, when it was not their choice.
        notice: Option<String>,
    },
    /// A sign-in waits for the browser.
    SigningIn {
        /// The handle or DID being signed in.
        input: String,
    },
    /// Signed in.
    SignedIn(Account),
}

/// Why a session action failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The OS keychain is not there.
    #[error(transparent)]
    Keychain(#[from] KeychainError),
    /// Sign-in failed.
    #[error(transparent)]
    SignIn(OAuthError),
    /// The sign-in was cancelled (by the owner, or by a newer sign-in).
    #[error("the sign-in was cancelled")]
    Cancelled,
    /// Someone is signed in already.
    #[error("{0} is signed in; sign out first")]
    AlreadySignedIn(String),
    /// Nobody is signed in (a step that needs the session).
    #[error("sign in first")]
    SignedOut,
    /// Signed out locally, but the server did not confirm the revocation.
    #[error("signed out on this device, but the server could not revoke the session: {0}")]
    NotRevoked(OAuthError),
}

impl SessionError {
    /// A stable code for the window to branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Keychain(_) => ErrorCode::Keychain,
            Self::SignIn(error) => ErrorCode::of_sign_in(error),
            Self::Cancelled => ErrorCode::Cancelled,
            Self::AlreadySignedIn(_) => ErrorCode::AlreadySignedIn,
            Self::NotRevoked(_) => ErrorCode::NotRevoked,
            Self::SignedOut => ErrorCode::SignedOut,
        }
    }
}

#[derive(Debug)]
enum State {
    SignedOut {
        notice: Option<String>,
    },
    SigningIn {
        attempt: u64,
        input: String,
        abort: AbortHandle,
    },
    SignedIn(Agent),
}

/// Where sessions are kept: the OS keychain (opened on first use, off the start-up path), or
/// a store given by the caller.
#[derive(Debug)]
enum StoreSource {
    /// The session entry of the profile whose data directory this is.
    Keychain(PathBuf),
    Given(Result<Arc<dyn SessionStore>, KeychainError>),
}

/// The session of one network.
#[derive(Debug)]
pub struct Sessions {
    network: Network,
    browser: Arc<dyn Browser>,
    source: StoreSource,
    client: OnceCell<Result<OAuthClient, KeychainError>>,
    /// The app's sign-in links the shell hands over, for a sign-in that returns through one.
    app_links: AppLinks,
    state: Mutex<State>,
    attempts: Mutex<u64>,
    restored: OnceCell<()>,
}

/// The scopes sign-in asks the owner's server for, one per item, in the order asked: shown
/// before the browser opens, so the owner knows what they approve. (A server that knows no
/// granular scopes is asked for `transition:generic` instead; the account shows what was granted.)
pub fn requested_scopes() -> Vec<String> {
    swdesk_atproto::oauth::scope::granular()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

impl Sessions {
    /// Sessions of `network` for the profile whose data directory is `data_dir`, kept in the
    /// OS keychain under that directory and the account, signing in through `browser`.
    pub fn new(network: Network, browser: Arc<dyn Browser>, data_dir: PathBuf) -> Self {
        Self::from_source(network, browser, StoreSource::Keychain(data_dir))
    }

    /// Sessions kept in `store` (a keychain entry of the caller's, or its failure to open).
    pub fn with_store(
        network: Network,
        browser: Arc<dyn Browser>,
        store: Result<Arc<dyn SessionStore>, KeychainError>,
    ) -> Self {
        Self::from_source(network, browser, StoreSource::Given(store))
    }

    fn from_source(network: Network, browser: Arc<dyn Browser>, source: StoreSource) -> Self {
        Self {
            network,
            browser,
            source,
            client: OnceCell::new(),
            app_links: AppLinks::new(),
            state: Mutex::new(State::SignedOut { notice: None }),
            attempts: Mutex::new(0),
            restored: OnceCell::new(),
        }
    }

    /// The owner's browser (sign-in pages, and the links the desk opens for the owner).
    pub(crate) fn browser(&self) -> &dyn Browser {
        self.browser.as_ref()
    }

    /// The sign-in client, its store opened on first use.
    async fn client(&self) -> Result<OAuthClient, KeychainError> {
        let opened = self
            .client
            .get_or_init(|| async {
                let store = match &self.source {
                    StoreSource::Given(store) => store.clone(),
                    StoreSource::Keychain(data_dir) => {
                        open_keychain(self.network.keychain_name.clone(), data_dir.clone()).await
                    }
                };
                let (oauth, browser) = (self.network.oauth.clone(), self.browser.clone());
                store.map(|store| {
                    OAuthClient::new(oauth, self.network.outbound.clone(), browser, store)
                })
            })
            .await;
        opened.clone()
    }

    /// The network these sessions are on.
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// Why the signed-in session is kept in memory only (its keychain save failed), if it is.
    pub fn unsaved(&self) -> Option<String> {
        self.agent().and_then(|agent| agent.unsaved())
    }

    /// The signed-in agent, if any.
    pub fn agent(&self) -> Option<Agent> {
        match &*self.lock() {
            State::SignedIn(agent) => Some(agent.clone()),
            _ => None,
        }
    }

    /// The session now; the first call restores the keychain's session. A session whose
    /// grant ended since is forgotten here, with a notice.
    pub async fn current(&self) -> SessionView {
        self.restored.get_or_init(|| self.restore()).await;
        if let Some(agent) = self.agent().filter(|agent| agent.ended().is_some()) {
            self.forget_ended(agent).await;
        }
        self.view()
    }

    fn view(&self) -> SessionView {
        match &*self.lock() {
            State::SignedOut { notice } => SessionView::SignedOut {
                notice: notice.clone(),
            },
            State::SigningIn { input, .. } => SessionView::SigningIn {
                input: input.clone(),
            },
            State::SignedIn(agent) => SessionView::SignedIn(agent.account()),
        }
    }

    async fn restore(&self) {
        let Ok(client) = self.client().await else {
            return;
        };
        let agent = match client.restore().await {
            Ok(Some(agent)) => agent,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "the stored session could not be restored");
                return self.set_signed_out(Some(error.to_string()));
            }
        };
        let check = XrpcRequest::query("com.atproto.server.getSession", Vec::new());
        if let Err(error) = agent.call(&check).await {
            if agent.ended().is_some() {
                return self.forget_ended(agent).await;
            }
            tracing::warn!(%error, "the session could not be checked now; it is kept");
        }
        *self.lock() = State::SignedIn(agent);
    }

    /// Forgets a session whose grant ended (revoking what may be left of it) and tells why.
    async fn forget_ended(&self, agent: Agent) {
        tracing::info!(reason = ?agent.ended(), "the session has ended");
        let pds = agent.account().pds;
        if let Err(error) = agent.sign_out().await {
            tracing::debug!(%error, "revoking an ended session");
        }
        self.set_signed_out(Some(format!(
            "Your session at {pds} has ended. Sign in again."
        )));
    }

    /// Signs in the account `input` names (handle or DID); waits for the browser.
    pub async fn sign_in(&self, input: &str) -> Result<Account, SessionError> {
        self.current().await;
        let client = self.client().await?;
        if let Some(agent) = self.agent() {
            let account = agent.account();
            return Err(SessionError::AlreadySignedIn(
                account.handle.unwrap_or(account.did),
            ));
        }
        let client = self.with_app_links_when_handed_here(client).await;
        let input = input.trim().to_owned();
        let attempt = self.next_attempt();
        let task = {
            let input = input.clone();
            tokio::spawn(async move { client.sign_in(&input).await })
        };
        let previous = std::mem::replace(
            &mut *self.lock(),
            State::SigningIn {
                attempt,
                input,
                abort: task.abort_handle(),
            },
        );
        if let State::SigningIn { abort, .. } = previous {
            abort.abort();
        }
        let outcome = task.await;
        let mut state = self.lock();
        let current = matches!(&*state, State::SigningIn { attempt: now, .. } if *now == attempt);
        match outcome {
            Ok(Ok(agent)) if current => {
                let account = agent.account();
                *state = State::SignedIn(agent);
                Ok(account)
            }
            Ok(Err(error)) => {
                if current {
                    *state = State::SignedOut { notice: None };
                }
                Err(SessionError::SignIn(error))
            }
            _ => Err(SessionError::Cancelled),
        }
    }

    /// Signs the signed-in account in again, asking for the `extra` scopes beside the usual
    /// ones (publishing the market key asks for `identity:*`); waits for the browser. The new
    /// session (of the same DID: sign-in checks the token's subject) replaces the old one only
    /// while that account is still signed in; until then the old one stays in use. The old
    /// grant is then revoked at the server (its refresh token spent for good), not just dropped.
    pub async fn grant_more(&self, extra: &[&str]) -> Result<Account, SessionError> {
        let Some(agent) = self.agent() else {
            return Err(SessionError::SignedOut);
        };
        let client = self.client().await?;
        let client = self.with_app_links_when_handed_here(client).await;
        let did = agent.did();
        let granted = client
            .sign_in_asking(&did, extra)
            .await
            .map_err(SessionError::SignIn)?;
        let account = granted.account();
        {
            let mut state = self.lock();
            if !matches!(&*state, State::SignedIn(current) if current.did() == did) {
                return Err(SessionError::Cancelled);
            }
            *state = State::SignedIn(granted);
        }
        if let Err(error) = agent.revoke_replaced().await {
            tracing::warn!(%error, "the grant the new one replaced could not be revoked");
        }
        Ok(account)
    }

    /// `client`, returning through the app's own link when its client id is hosted (only that
    /// document lists the link) and the desktop hands the link to this program.
    async fn with_app_links_when_handed_here(&self, client: OAuthClient) -> OAuthClient {
        if !matches!(self.network.oauth.client, ClientKind::Hosted { .. }) {
            return client;
        }
        let handed = tokio::task::spawn_blocking(crate::app_link::handed_to_this_app).await;
        if handed.unwrap_or(false) {
            client.with_app_links(self.app_links.clone())
        } else {
            client
        }
    }

    /// Hands a sign-in link the desktop opened this app with to the sign-in waiting for it.
    pub fn deliver_app_link(&self, link: &str) -> Result<(), AppLinkError> {
        self.app_links.deliver(link)
    }

    /// Stops the sign-in that waits for the browser; whether there was one.
    pub fn cancel_sign_in(&self) -> bool {
        let mut state = self.lock();
        if let State::SigningIn { abort, .. } = &*state {
            abort.abort();
            *state = State::SignedOut { notice: None };
            return true;
        }
        false
    }

    /// Revokes and forgets the session. The owner is signed out even when revocation failed.
    pub async fn sign_out(&self) -> Result<(), SessionError> {
        let Some(agent) = self.agent() else {
            return Ok(());
        };
        let outcome = agent.sign_out().await;
        self.set_signed_out(None);
        match outcome {
            Ok(()) => Ok(()),
            Err(OAuthError::Keychain(error)) => Err(SessionError::Keychain(error)),
            Err(error) => Err(SessionError::NotRevoked(error)),
        }
    }

    fn set_signed_out(&self, notice: Option<String>) {
        *self.lock() = State::SignedOut { notice };
    }

    fn next_attempt(&self) -> u64 {
        let mut attempts = self
            .attempts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *attempts += 1;
        *attempts
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Opens the OS keychain off the async executor (it talks D-Bus, blocking): the session entry
/// of the profile at `data_dir`.
async fn open_keychain(
    network: String,
    data_dir: PathBuf,
) -> Result<Arc<dyn SessionStore>, KeychainError> {
    tokio::task::spawn_blocking(move || Keychain::open(&network))
        .await
        .map_err(|error| KeychainError::unavailable(error.to_string()))?
        .map(|keychain| Arc::new(keychain.session_of(&data_dir)) as Arc<dyn SessionStore>)
}

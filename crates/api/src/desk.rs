//! [`Desk`]: the app as its shell sees it, one value: the session of the network, and the
//! controller of the signed-in account, started when someone is signed in (at sign-in, or when
//! the session is restored at start) and stopped at sign-out.
//!
//! Invariants: at most one controller runs, for the account signed in; signing out stops it
//! before the session goes; a controller that cannot start leaves the owner signed in and says
//! why (the deployments wait, nothing is lost).

use std::path::PathBuf;
use std::sync::Arc;

use swdesk_atproto::identity::Resolver;
use swdesk_atproto::{Account, Browser};
use swdesk_controller::EngineConfig;
use tokio::sync::Mutex;

use crate::controller::AccountController;
use crate::network::Network;
use crate::session::{SessionError, SessionView, Sessions};

/// The session and the controller of the signed-in account.
#[derive(Debug)]
pub struct Desk {
    sessions: Sessions,
    data_dir: PathBuf,
    controller: Mutex<Option<AccountController>>,
    controller_error: std::sync::Mutex<Option<String>>,
}

impl Desk {
    /// A desk on `network`, signing in through `browser`, keeping its stores under `data_dir`.
    pub fn new(network: Network, browser: Arc<dyn Browser>, data_dir: PathBuf) -> Self {
        Self::with_sessions(Sessions::new(network, browser), data_dir)
    }

    /// A desk over `sessions` (tests give theirs a keychain entry of their own).
    pub fn with_sessions(sessions: Sessions, data_dir: PathBuf) -> Self {
        Self {
            sessions,
            data_dir,
            controller: Mutex::new(None),
            controller_error: std::sync::Mutex::new(None),
        }
    }

    /// The sessions of the network.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The session now (restored at the first call), with the controller running if someone
    /// is signed in.
    pub async fn session(&self) -> SessionView {
        let view = self.sessions.current().await;
        if matches!(view, SessionView::SignedIn(_)) {
            self.ensure_controller().await;
        }
        view
    }

    /// Signs in through the browser, then starts the account's controller.
    pub async fn sign_in(&self, input: &str) -> Result<Account, SessionError> {
        let account = self.sessions.sign_in(input).await?;
        self.ensure_controller().await;
        Ok(account)
    }

    /// Stops the controller, then revokes and forgets the session.
    pub async fn sign_out(&self) -> Result<(), SessionError> {
        if let Some(controller) = self.controller.lock().await.take() {
            controller.stop().await;
        }
        self.sessions.sign_out().await
    }

    /// Why the controller is not running although someone is signed in, if it is not.
    pub fn controller_error(&self) -> Option<String> {
        self.controller_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    async fn ensure_controller(&self) {
        let Some(agent) = self.sessions.agent() else {
            return;
        };
        let mut running = self.controller.lock().await;
        if running
            .as_ref()
            .is_some_and(|controller| controller.did() == agent.did())
        {
            return;
        }
        if let Some(previous) = running.take() {
            previous.stop().await;
        }
        let resolver = Resolver::new(
            self.sessions.network().oauth.identity.clone(),
            reqwest::Client::new(),
        );
        let started =
            AccountController::start(&self.data_dir, agent, resolver, EngineConfig::default())
                .await;
        let mut error = self
            .controller_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match started {
            Ok(controller) => {
                *running = Some(controller);
                *error = None;
            }
            Err(failure) => {
                tracing::error!(%failure, "the controller could not start");
                *error = Some(failure.to_string());
            }
        }
    }
}

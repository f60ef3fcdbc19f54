//! The signed-in agent: XRPC calls to the owner's PDS with a DPoP-bound access token. It
//! answers a `use_dpop_nonce` challenge by retrying with the new nonce, refreshes the access
//! token shortly before it expires (or when the PDS says it has), writes every refreshed
//! session back to the keychain, and signs out by revoking and forgetting.
//!
//! Invariants: refreshes are serialized (refresh tokens are single use): a caller that waited
//! for another's refresh uses its result instead of spending the new token again, and so does
//! another process of the same profile: a refresh holds the store ([`SessionStore::hold`], a
//! lock file in the data directory), reads the keychain again, and adopts a session that
//! process refreshed since ([`StoredSession::is_outrun_by`]). Rotated tokens go to memory
//! first, then to the keychain, tried again a few times; a save that still fails keeps them in
//! memory (the old refresh token is spent), says so ([`Agent::unsaved`]) and is tried again at
//! the next call. Only the
//! authorization server's word that the grant is gone (`invalid_grant`, see
//! [`OAuthError::ends_the_grant`]) ends the session ([`OAuthError::SessionEnded`], remembered:
//! every later call fails at once without a request); a refresh that does not reach the
//! server or finds it busy (the kernel's retry rule) is retried with jittered backoff, and then
//! fails as transient, keeping the session for the next call. Tokens never enter a log field
//! or an error message.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use swdesk_net::Outbound;

use crate::keychain::SessionStore;
use crate::oauth::{
    Account, AuthServerCalls, DpopKey, Nonces, OAuthError, Secret, StoredSession, unix_now,
};
use crate::retry::{self, Backoff};
use crate::xrpc::{XrpcError, XrpcRequest};

/// Refresh this long before the access token expires.
const REFRESH_MARGIN_SECONDS: i64 = 60;
/// Attempts of a refresh that does not reach the server, or finds it busy.
const REFRESH_ATTEMPTS: u32 = 3;
/// The waits between those attempts.
const REFRESH_BACKOFF: Backoff = Backoff {
    initial: Duration::from_millis(500),
    cap: Duration::from_secs(4),
};

/// Attempts of saving a refreshed session before it is told as unsaved.
const SAVE_ATTEMPTS: u32 = 3;
/// The wait after the first failed save; each next one waits twice as long.
const SAVE_BACKOFF: Duration = Duration::from_millis(250);

/// A signed-in session that makes XRPC calls. Cheap to clone; clones share the session.
#[derive(Debug, Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: Outbound,
    session: RwLock<StoredSession>,
    dpop: DpopKey,
    nonces: Nonces,
    refreshing: tokio::sync::Mutex<()>,
    store: Arc<dyn SessionStore>,
    /// Why the session ended, once the authorization server said so.
    ended: tokio::sync::watch::Sender<Option<String>>,
    /// Why the session in memory is not the keychain's, while a save failed.
    unsaved: tokio::sync::watch::Sender<Option<String>>,
}

impl Agent {
    /// The agent of a stored session.
    pub fn from_stored(
        stored: StoredSession,
        http: Outbound,
        store: Arc<dyn SessionStore>,
    ) -> Result<Self, OAuthError> {
        let dpop = stored.dpop_key().ok_or_else(|| {
            OAuthError::SessionEnded("the stored DPoP key is unreadable".to_owned())
        })?;
        Self::with_nonces(stored, dpop, Nonces::default(), http, store)
    }

    pub(crate) fn with_nonces(
        stored: StoredSession,
        dpop: DpopKey,
        nonces: Nonces,
        http: Outbound,
        store: Arc<dyn SessionStore>,
    ) -> Result<Self, OAuthError> {
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                session: RwLock::new(stored),
                dpop,
                nonces,
                refreshing: tokio::sync::Mutex::new(()),
                store,
                ended: tokio::sync::watch::Sender::new(None),
                unsaved: tokio::sync::watch::Sender::new(None),
            }),
        })
    }

    /// The signed-in account.
    pub fn account(&self) -> Account {
        self.read(|session| session.account.clone())
    }

    /// The DID of the signed-in account.
    pub fn did(&self) -> String {
        self.read(|session| session.account.did.clone())
    }

    /// The HTTP client (for unauthenticated calls to other services).
    pub fn http(&self) -> &Outbound {
        &self.inner.http
    }

    /// The session's DPoP nonces (tests use them to stage a nonce rotation).
    pub fn nonces(&self) -> &Nonces {
        &self.inner.nonces
    }

    /// Why the session ended, once its authorization server said the grant is gone.
    pub fn ended(&self) -> Option<String> {
        self.inner.ended.borrow().clone()
    }

    /// Why the session ended, as it changes (`None` while it holds): whoever shows the session
    /// waits on it to tell the owner at once.
    pub fn on_end(&self) -> tokio::sync::watch::Receiver<Option<String>> {
        self.inner.ended.subscribe()
    }

    /// Why the refreshed session is kept in memory only, while the keychain refuses it: after a
    /// restart the owner would have to sign in again. `None` once it is saved.
    pub fn unsaved(&self) -> Option<String> {
        self.inner.unsaved.borrow().clone()
    }

    /// Sends `request` to the PDS and returns the JSON answer.
    pub async fn call(&self, request: &XrpcRequest) -> Result<Value, XrpcError> {
        if let Some(why) = self.ended() {
            return Err(OAuthError::SessionEnded(why).into());
        }
        if self.unsaved().is_some() {
            self.save_again().await?;
        }
        self.refresh_if_due().await?;
        let mut nonce_retried = false;
        let mut refreshed = false;
        loop {
            let (status, headers, body) = self.send_once(request).await?;
            if status.is_success() {
                return Ok(body);
            }
            let challenge = Challenge::of(status, &headers, &body);
            match challenge {
                Challenge::UseNonce if !nonce_retried => nonce_retried = true,
                Challenge::TokenExpired if !refreshed => {
                    refreshed = true;
                    let spent = self.read(|session| session.access_token.clone());
                    self.refresh(&spent).await?;
                }
                _ => {
                    return Err(XrpcError::from_answer(
                        request.nsid,
                        status,
                        &headers,
                        &body,
                    ));
                }
            }
        }
    }

    async fn send_once(
        &self,
        request: &XrpcRequest,
    ) -> Result<(StatusCode, reqwest::header::HeaderMap, Value), XrpcError> {
        let (pds, token) = self.read(|s| (s.account.pds.clone(), s.access_token.clone()));
        let url = request.url(&pds)?;
        let method = request.method();
        let proof = self.inner.dpop.proof(
            method.as_str(),
            &url,
            self.inner.nonces.for_url(&url).as_deref(),
            Some(token.expose()),
            self.inner.nonces.now_for(&url),
        );
        let builder = self
            .inner
            .http
            .request(method.clone(), url.as_str())
            .map_err(|refused| XrpcError::refused(request.nsid, &refused))?
            .header("Authorization", format!("DPoP {}", token.expose()))
            .header("DPoP", proof);
        let builder = match request.json_body() {
            Some(body) => builder.json(body),
            None => builder,
        };
        let response = builder
            .timeout(crate::oauth::REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(|error| XrpcError::transport(request.nsid, &error))?;
        self.inner.nonces.remember(&url, response.headers());
        let status = response.status();
        let headers = response.headers().clone();
        let body = crate::xrpc::read_answer(request.nsid, status, response).await?;
        Ok((status, headers, body))
    }

    async fn refresh_if_due(&self) -> Result<(), XrpcError> {
        let (expires_at, token) = self.read(|s| (s.expires_at, s.access_token.clone()));
        if expires_at - REFRESH_MARGIN_SECONDS <= unix_now() {
            self.refresh(&token).await?;
        }
        Ok(())
    }

    /// Refreshes unless another caller already replaced `spent` while this one waited. A
    /// transient failure is retried a few times, not longer than the server's `Retry-After`
    /// allows within the call; the session is kept whatever happens but the grant's end.
    async fn refresh(&self, spent: &Secret) -> Result<(), OAuthError> {
        let _turn = self.inner.refreshing.lock().await;
        if self.read(|session| session.access_token != *spent) {
            return Ok(());
        }
        let _held =
            crate::keychain::blocking(self.inner.store.clone(), |store| store.hold()).await?;
        if self.adopt_newer().await {
            return Ok(());
        }
        let mut attempt = 1;
        loop {
            let error = match self.refresh_once().await {
                Ok(()) => return Ok(()),
                Err(error) => error,
            };
            if error.ends_the_grant() {
                return Err(self.end(&error));
            }
            let wait = retry::wait(error.fault(), &REFRESH_BACKOFF, attempt)
                .filter(|wait| attempt < REFRESH_ATTEMPTS && *wait <= REFRESH_BACKOFF.cap);
            let Some(wait) = wait else {
                return Err(error);
            };
            tracing::warn!(%error, attempt, ?wait, "the refresh failed for now; retrying");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Takes the session another process of this profile refreshed since this one read it (the
    /// same grant, refreshed more often): its tokens are the live ones, ours are spent. Called
    /// while the store is held.
    async fn adopt_newer(&self) -> bool {
        let stored =
            crate::keychain::blocking(self.inner.store.clone(), |store| store.load()).await;
        let stored = match stored {
            Ok(stored) => stored,
            Err(error) => {
                tracing::warn!(%error, "the keychain could not be read before a refresh");
                return false;
            }
        };
        let Some(newer) = stored.filter(|stored| self.read(|mine| mine.is_outrun_by(stored)))
        else {
            return false;
        };
        tracing::info!(
            generation = newer.generation,
            "adopted the session another process of this profile refreshed"
        );
        *self.write() = newer;
        true
    }

    /// Saves the session in memory to the keychain, up to `attempts` times; a save that still
    /// fails is kept as [`Self::unsaved`] and logged, never dropped: the tokens in memory are
    /// the only live ones.
    async fn save(&self, attempts: u32) {
        let mut wait = SAVE_BACKOFF;
        for attempt in 1..=attempts {
            let session = self.read(Clone::clone);
            let saved = crate::keychain::blocking(self.inner.store.clone(), move |store| {
                store.save(&session)
            })
            .await;
            let error = match saved {
                Ok(()) => {
                    if self.inner.unsaved.send_replace(None).is_some() {
                        tracing::info!("the refreshed session is saved in the keychain now");
                    }
                    return;
                }
                Err(error) => error,
            };
            if attempt == attempts {
                tracing::error!(%error, "the refreshed session could not be saved in the keychain; it is kept in memory");
                self.inner.unsaved.send_replace(Some(format!(
                    "Your refreshed session could not be saved in the keychain ({error}). It is kept \
                     until you quit; unlock the keychain, or you will have to sign in again."
                )));
                return;
            }
            tracing::warn!(%error, attempt, ?wait, "saving the refreshed session failed; retrying");
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
    }

    /// Tries once more to save a session whose save failed, holding the store as a refresh does.
    async fn save_again(&self) -> Result<(), OAuthError> {
        let _turn = self.inner.refreshing.lock().await;
        if self.unsaved().is_none() {
            return Ok(());
        }
        let _held =
            crate::keychain::blocking(self.inner.store.clone(), |store| store.hold()).await?;
        self.save(1).await;
        Ok(())
    }

    /// Remembers that the session ended, and why; the error every later call returns.
    fn end(&self, error: &OAuthError) -> OAuthError {
        let why = match error {
            OAuthError::SessionEnded(why) => why.clone(),
            other => other.to_string(),
        };
        tracing::info!(reason = %why, "the authorization server ended the session");
        self.inner.ended.send_replace(Some(why.clone()));
        OAuthError::SessionEnded(why)
    }

    async fn refresh_once(&self) -> Result<(), OAuthError> {
        let session = self.read(Clone::clone);
        let Some(refresh_token) = &session.refresh_token else {
            return Err(OAuthError::SessionEnded(
                "there is no refresh token".to_owned(),
            ));
        };
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.expose()),
            ("client_id", session.client_id.as_str()),
        ];
        let token = self
            .calls()
            .token("refresh", &session.token_endpoint, &form)
            .await?;
        if token
            .sub
            .as_deref()
            .is_some_and(|sub| sub != session.account.did)
        {
            return Err(OAuthError::SessionEnded(
                "the refresh named another account".to_owned(),
            ));
        }
        let mut renewed = session;
        renewed.access_token = Secret::new(token.access_token);
        renewed.refresh_token = token
            .refresh_token
            .map(Secret::new)
            .or(renewed.refresh_token);
        renewed.expires_at = unix_now().saturating_add(token.expires_in.unwrap_or(300));
        if !token.scope.is_empty() {
            renewed.account.granted_scope = token.scope;
        }
        renewed.generation = renewed.generation.saturating_add(1);
        *self.write() = renewed;
        tracing::debug!("access token refreshed");
        self.save(SAVE_ATTEMPTS).await;
        Ok(())
    }

    /// Revokes the tokens and forgets the session. The keychain entry is removed even when
    /// the server cannot be reached; that failure is returned after the entry is gone.
    pub async fn sign_out(self) -> Result<(), OAuthError> {
        let session = self.read(Clone::clone);
        let revoked = self.revoke(&session).await;
        crate::keychain::blocking(self.inner.store.clone(), |store| store.delete()).await?;
        tracing::info!(did = %session.account.did, "signed out");
        revoked
    }

    /// Revokes this session's tokens at its authorization server and leaves the keychain entry
    /// as it is: for a grant that a newer one of the same account and profile replaced (the
    /// entry holds the newer one now). Waits for a refresh in flight, so the tokens revoked are
    /// the live ones.
    pub async fn revoke_replaced(&self) -> Result<(), OAuthError> {
        let _turn = self.inner.refreshing.lock().await;
        let session = self.read(Clone::clone);
        self.revoke(&session).await
    }

    async fn revoke(&self, session: &StoredSession) -> Result<(), OAuthError> {
        let Some(endpoint) = &session.revocation_endpoint else {
            return Ok(());
        };
        let tokens = session.refresh_token.iter().chain([&session.access_token]);
        for token in tokens {
            let form = [
                ("token", token.expose()),
                ("client_id", session.client_id.as_str()),
            ];
            self.calls().post("revocation", endpoint, &form).await?;
        }
        Ok(())
    }

    fn calls(&self) -> AuthServerCalls<'_> {
        AuthServerCalls {
            http: &self.inner.http,
            dpop: &self.inner.dpop,
            nonces: &self.inner.nonces,
        }
    }

    fn read<T>(&self, with: impl FnOnce(&StoredSession) -> T) -> T {
        with(
            &self
                .inner
                .session
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, StoredSession> {
        self.inner
            .session
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What a refused resource call asks of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Challenge {
    /// Retry with the nonce (and the clock) the server's answer gave: it asked for a nonce,
    /// or refused the proof (an `iat` our wrong clock put too far off).
    UseNonce,
    /// Refresh the access token, then retry.
    TokenExpired,
    /// Nothing to retry.
    None,
}

impl Challenge {
    fn of(status: StatusCode, headers: &reqwest::header::HeaderMap, body: &Value) -> Self {
        let authenticate = headers
            .get("www-authenticate")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let error = body["error"].as_str().unwrap_or_default();
        let proof_refused = ["use_dpop_nonce", "invalid_dpop_proof"];
        if proof_refused
            .iter()
            .any(|name| authenticate.contains(name) || error == *name)
        {
            return Self::UseNonce;
        }
        let expired = authenticate.contains("invalid_token") || error == "ExpiredToken";
        if status == StatusCode::UNAUTHORIZED && expired {
            return Self::TokenExpired;
        }
        Self::None
    }
}

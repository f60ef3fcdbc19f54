//! The sign-in flow, step by step: resolve the account, discover its authorization server,
//! bind the redirect listener, push the authorization request (granular scopes first, the
//! coarse grant only when the server refuses them), open the browser, check the redirect,
//! exchange the code, check the subject, store the session.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::sync::broadcast;
use url::Url;

use super::app_link::{APP_LINK_CALLBACK, app_link_fits};
use super::dpop::{DpopKey, Nonces, random_token};
use super::loopback::{Callback, CallbackListener};
use super::metadata::{AuthServer, discover};
use super::server::{AuthServerCalls, TokenResponse};
use super::session::{Account, Secret, StoredSession};
use super::{ClientKind, OAuthClient, OAuthError, scope, unix_now};
use crate::agent::Agent;
use crate::identity::Identity;

/// What one authorization request was made with.
#[derive(Debug)]
struct Pushed {
    client_id: String,
    authorize_url: Url,
}

/// The parts of a sign-in that must be remembered until the code comes back.
#[derive(Debug)]
struct Attempt {
    identity: Identity,
    server: AuthServer,
    redirect_uri: String,
    state: String,
    verifier: String,
    dpop: DpopKey,
    nonces: Nonces,
}

impl OAuthClient {
    /// The session of an earlier run, if the keychain holds one.
    pub async fn restore(&self) -> Result<Option<Agent>, OAuthError> {
        let stored = crate::keychain::blocking(self.store.clone(), |store| store.load()).await?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        Agent::from_stored(stored, self.http.clone(), self.store.clone()).map(Some)
    }

    /// Signs in the account named by `input` (a handle or a DID) and stores the session.
    /// Dropping the returned future cancels the sign-in; nothing is stored then.
    pub async fn sign_in(&self, input: &str) -> Result<Agent, OAuthError> {
        self.sign_in_asking(input, &[]).await
    }

    /// Signs in as [`Self::sign_in`] does, asking for the `extra` scopes beside the usual
    /// ones (publishing the market key asks for [`scope::IDENTITY`]); the session's granted
    /// scope says whether the server granted them.
    pub async fn sign_in_asking(&self, input: &str, extra: &[&str]) -> Result<Agent, OAuthError> {
        let identity = self.resolver.resolve(input).await?;
        let allow_http = self.config.identity.allow_http_localhost;
        let server = discover(&self.http, &identity.pds, allow_http).await?;
        let mut returns = self.return_path().await?;
        let attempt = Attempt {
            identity,
            server,
            redirect_uri: returns.redirect_uri(),
            state: random_token(24),
            verifier: random_token(32),
            dpop: DpopKey::generate(),
            nonces: Nonces::default(),
        };
        let pushed = self.push_authorization(&attempt, input, extra).await?;
        tracing::info!(did = %attempt.identity.did, issuer = %attempt.server.issuer, "opening the authorization page");
        self.browser
            .open(&pushed.authorize_url)
            .map_err(OAuthError::Browser)?;
        let callback = tokio::time::timeout(
            self.config.callback_timeout,
            returns.next_callback(&attempt.state),
        )
        .await
        .map_err(|_| OAuthError::TimedOut(self.config.callback_timeout))??;
        let code = check_callback(&callback, &attempt)?;
        let token = self.exchange(&attempt, &pushed.client_id, code).await?;
        self.finish(attempt, pushed.client_id, token).await
    }

    /// Where the browser will send the owner back: the app's own link when the client id is
    /// hosted (only its document lists that link) and the desktop hands the link to this app,
    /// otherwise a loopback listener.
    async fn return_path(&self) -> Result<ReturnPath, OAuthError> {
        if let (ClientKind::Hosted { client_id }, Some(links)) =
            (&self.config.client, &self.app_links)
            && app_link_fits(client_id)
        {
            tracing::info!(
                redirect = APP_LINK_CALLBACK,
                "sign-in returns through the app's link"
            );
            return Ok(ReturnPath::AppLink(links.subscribe()));
        }
        let listener = CallbackListener::bind()
            .await
            .map_err(|error| OAuthError::Listener(error.to_string()))?;
        Ok(ReturnPath::Loopback(listener))
    }

    /// PAR with the granular scopes, or with the coarse grant when those are refused; the
    /// `extra` scopes asked for with either.
    async fn push_authorization(
        &self,
        attempt: &Attempt,
        hint: &str,
        extra: &[&str],
    ) -> Result<Pushed, OAuthError> {
        let granular = scope::with_extra(&scope::granular(), extra);
        match self.push_with_scope(attempt, hint, &granular).await {
            Err(OAuthError::Refused { error, .. }) if error == "invalid_scope" => {
                tracing::info!("the server refused granular scopes; asking for transition:generic");
                let generic = scope::with_extra(scope::GENERIC, extra);
                self.push_with_scope(attempt, hint, &generic).await
            }
            other => other,
        }
    }

    async fn push_with_scope(
        &self,
        attempt: &Attempt,
        hint: &str,
        scope: &str,
    ) -> Result<Pushed, OAuthError> {
        let client_id = self.client_id(&attempt.redirect_uri, scope);
        let challenge = crate::jwt::b64url(&Sha256::digest(attempt.verifier.as_bytes()));
        let form = [
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", attempt.redirect_uri.as_str()),
            ("scope", scope),
            ("state", attempt.state.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("login_hint", hint.trim().trim_start_matches('@')),
        ];
        let par = attempt
            .server
            .pushed_authorization_request_endpoint
            .as_ref()
            .ok_or_else(|| OAuthError::NoAuthorizationServer {
                pds: attempt.identity.pds.to_string(),
            })?;
        let answer = attempt
            .calls(&self.http)
            .post("authorization request", par, &form)
            .await?;
        let request_uri = answer["request_uri"]
            .as_str()
            .ok_or_else(|| OAuthError::Refused {
                step: "authorization request",
                error: "invalid_response".to_owned(),
                description: "no request_uri in the answer".to_owned(),
            })?;
        let mut authorize_url = attempt.server.authorization_endpoint.clone();
        authorize_url
            .query_pairs_mut()
            .append_pair("client_id", &client_id)
            .append_pair("request_uri", request_uri);
        Ok(Pushed {
            client_id,
            authorize_url,
        })
    }

    /// The client id presented for `scope`.
    fn client_id(&self, redirect_uri: &str, scope: &str) -> String {
        match &self.config.client {
            ClientKind::Loopback => {
                let mut url = Url::parse("http://localhost").expect("a constant URL");
                url.query_pairs_mut()
                    .append_pair("redirect_uri", redirect_uri)
                    .append_pair("scope", scope);
                url.to_string()
            }
            ClientKind::Hosted { client_id } => client_id.to_string(),
        }
    }

    async fn exchange(
        &self,
        attempt: &Attempt,
        client_id: &str,
        code: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", attempt.redirect_uri.as_str()),
            ("client_id", client_id),
            ("code_verifier", attempt.verifier.as_str()),
        ];
        attempt
            .calls(&self.http)
            .token("code exchange", &attempt.server.token_endpoint, &form)
            .await
    }

    /// Checks the subject, stores the session, hands out the agent.
    async fn finish(
        &self,
        attempt: Attempt,
        client_id: String,
        token: TokenResponse,
    ) -> Result<Agent, OAuthError> {
        let expected = attempt.identity.did.clone();
        if token.sub.as_deref() != Some(expected.as_str()) {
            let found = token.sub.clone().unwrap_or_else(|| "no account".to_owned());
            self.revoke_quietly(&attempt, &client_id, &token).await;
            return Err(OAuthError::subject_mismatch(expected, &found));
        }
        let stored = StoredSession {
            account: Account {
                did: expected,
                handle: attempt.identity.handle.clone(),
                pds: attempt.identity.pds.clone(),
                issuer: attempt.server.issuer.clone(),
                granted_scope: token.scope.clone(),
            },
            client_id,
            token_endpoint: attempt.server.token_endpoint.clone(),
            revocation_endpoint: attempt.server.revocation_endpoint.clone(),
            access_token: Secret::new(token.access_token),
            refresh_token: token.refresh_token.map(Secret::new),
            expires_at: unix_now().saturating_add(token.expires_in.unwrap_or(300)),
            dpop_key: StoredSession::encode_key(&attempt.dpop),
            generation: 0,
        };
        let saved = stored.clone();
        crate::keychain::blocking(self.store.clone(), move |store| store.save(&saved)).await?;
        tracing::info!(did = %stored.account.did, scope = %stored.account.granted_scope, "signed in");
        Agent::with_nonces(
            stored,
            attempt.dpop,
            attempt.nonces,
            self.http.clone(),
            Arc::clone(&self.store),
        )
    }

    /// Tokens that will not be used are revoked; a failure to do so changes nothing.
    async fn revoke_quietly(&self, attempt: &Attempt, client_id: &str, token: &TokenResponse) {
        let Some(endpoint) = &attempt.server.revocation_endpoint else {
            return;
        };
        let form = [
            ("token", token.access_token.as_str()),
            ("client_id", client_id),
        ];
        if let Err(error) = attempt
            .calls(&self.http)
            .post("revocation", endpoint, &form)
            .await
        {
            tracing::warn!(%error, "could not revoke the tokens of a refused sign-in");
        }
    }
}

impl Attempt {
    fn calls<'a>(&'a self, http: &'a swdesk_net::Outbound) -> AuthServerCalls<'a> {
        AuthServerCalls {
            http,
            dpop: &self.dpop,
            nonces: &self.nonces,
        }
    }
}

/// How the redirect comes back to the app.
#[derive(Debug)]
enum ReturnPath {
    /// To a listener on `127.0.0.1`.
    Loopback(CallbackListener),
    /// Through the app's own link, which the desktop hands to the shell.
    AppLink(broadcast::Receiver<Callback>),
}

impl ReturnPath {
    fn redirect_uri(&self) -> String {
        match self {
            Self::Loopback(listener) => listener.redirect_uri(),
            Self::AppLink(_) => APP_LINK_CALLBACK.to_owned(),
        }
    }

    /// The redirect of the sign-in whose state is `state`. A redirect carrying another state (an
    /// earlier attempt's, or one any program on the machine may send) is dropped (a link) or
    /// refused (the listener), never taken for this sign-in's answer, and the wait goes on.
    async fn next_callback(&mut self, state: &str) -> Result<Callback, OAuthError> {
        let inbox = match self {
            Self::Loopback(listener) => {
                return listener
                    .next_callback(state)
                    .await
                    .map_err(|error| OAuthError::Listener(error.to_string()));
            }
            Self::AppLink(inbox) => inbox,
        };
        loop {
            match inbox.recv().await {
                Ok(callback) if callback.carries_state(state) => return Ok(callback),
                Ok(_) => tracing::warn!("a sign-in link of another sign-in was dropped"),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "sign-in links came faster than they were read");
                }
                Err(broadcast::error::RecvError::Closed) => {
                    return Err(OAuthError::Listener(
                        "the app's link inbox closed".to_owned(),
                    ));
                }
            }
        }
    }
}

/// The code of a redirect that belongs to this attempt.
fn check_callback<'a>(callback: &'a Callback, attempt: &Attempt) -> Result<&'a str, OAuthError> {
    if !callback.carries_state(&attempt.state) {
        return Err(OAuthError::StateMismatch);
    }
    let issuer = attempt.server.issuer.as_str();
    let iss = callback.get("iss");
    if (iss.is_some()
        || attempt
            .server
            .authorization_response_iss_parameter_supported)
        && iss != Some(issuer)
    {
        return Err(OAuthError::issuer_mismatch(
            issuer,
            iss.unwrap_or("nowhere"),
        ));
    }
    if let Some(error) = callback.get("error") {
        return Err(OAuthError::denied(
            error,
            callback.get("error_description").unwrap_or_default(),
        ));
    }
    callback.get("code").ok_or_else(|| OAuthError::Denied {
        error: "no code".to_owned(),
        description: "the redirect carried no authorization code".to_owned(),
    })
}

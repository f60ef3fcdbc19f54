//! Calls to the authorization server, each a DPoP-signed form POST: PAR, the code exchange,
//! refresh and revocation. A server that answers `use_dpop_nonce` gets the same request again,
//! once, with the nonce it sent.

use serde::Deserialize;
use serde_json::Value;
use swdesk_net::{Limit, Outbound, read_error, read_json};
use url::Url;

use super::dpop::{DpopKey, Nonces};
use super::{OAuthError, REQUEST_TIMEOUT};
use crate::retry::Fault;

/// What the token endpoint answers.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenResponse {
    /// The access token.
    pub access_token: String,
    /// `DPoP` for atproto.
    pub token_type: String,
    /// The (single-use) refresh token.
    pub refresh_token: Option<String>,
    /// Seconds until the access token expires.
    pub expires_in: Option<i64>,
    /// The granted scopes.
    #[serde(default)]
    pub scope: String,
    /// The account the tokens are for.
    pub sub: Option<String>,
}

/// A client of one authorization server, signing with one DPoP key.
#[derive(Debug)]
pub struct AuthServerCalls<'a> {
    /// The HTTP client.
    pub http: &'a Outbound,
    /// The session's key.
    pub dpop: &'a DpopKey,
    /// Nonces per origin.
    pub nonces: &'a Nonces,
}

impl AuthServerCalls<'_> {
    /// Posts `form` to `url`; `step` names the call in errors.
    pub async fn post(
        &self,
        step: &'static str,
        url: &Url,
        form: &[(&str, &str)],
    ) -> Result<Value, OAuthError> {
        let mut retried = false;
        loop {
            let proof = self.dpop.proof(
                "POST",
                url,
                self.nonces.for_url(url).as_deref(),
                None,
                self.nonces.now_for(url),
            );
            let response = self
                .http
                .post(url.as_str())
                .map_err(|refused| OAuthError::Transport {
                    step,
                    reason: refused.to_string(),
                })?
                .header("DPoP", proof)
                .form(form)
                .timeout(REQUEST_TIMEOUT)
                .send()
                .await
                .map_err(|error| OAuthError::Transport {
                    step,
                    reason: error.without_url().to_string(),
                })?;
            self.nonces.remember(url, response.headers());
            let status = response.status();
            if status.is_success() {
                return read_json(response, Limit::DOCUMENT).await.map_err(|error| {
                    OAuthError::refused(step, "invalid_response", &error.to_string())
                });
            }
            let fault = crate::retry::fault_of(status, response.headers());
            let body = read_error(response).await;
            let error = body["error"].as_str().unwrap_or(status.as_str()).to_owned();
            if matches!(error.as_str(), "use_dpop_nonce" | "invalid_dpop_proof") && !retried {
                retried = true;
                continue;
            }
            if let Fault::Transient { retry_after } = fault {
                return Err(OAuthError::Unavailable {
                    step,
                    status: status.as_u16(),
                    retry_after,
                });
            }
            return Err(OAuthError::refused(
                step,
                &error,
                body["error_description"].as_str().unwrap_or_default(),
            ));
        }
    }

    /// Posts to the token endpoint and reads a DPoP-bound token answer.
    pub async fn token(
        &self,
        step: &'static str,
        url: &Url,
        form: &[(&str, &str)],
    ) -> Result<TokenResponse, OAuthError> {
        let body = self.post(step, url, form).await?;
        let token: TokenResponse = serde_json::from_value(body)
            .map_err(|error| OAuthError::refused(step, "invalid_response", &error.to_string()))?;
        if !token.token_type.eq_ignore_ascii_case("DPoP") {
            return Err(OAuthError::refused(
                step,
                "invalid_response",
                &format!("the token type is {}, not DPoP", token.token_type),
            ));
        }
        Ok(token)
    }
}

//! The two metadata hops after the PDS: its protected-resource metadata names the
//! authorization server, whose metadata names the endpoints. A server is used only when it
//! can do what a native atproto client needs: PAR, PKCE S256, DPoP with ES256, the `atproto`
//! scope, and an `issuer` equal to the URL it was fetched for.

use serde::Deserialize;
use swdesk_net::{Limit, Outbound, read_json};
use url::Url;

use super::OAuthError;
use crate::identity::is_acceptable_endpoint;

/// `/.well-known/oauth-protected-resource` of a PDS.
#[derive(Debug, Clone, Deserialize)]
pub struct ProtectedResource {
    /// The PDS itself.
    pub resource: String,
    /// Its authorization servers (atproto: exactly one).
    #[serde(default)]
    pub authorization_servers: Vec<String>,
}

/// `/.well-known/oauth-authorization-server`, the fields this client reads.
#[derive(Debug, Clone, Deserialize)]
pub struct AuthServer {
    /// Its identifier; tokens and callbacks name it.
    pub issuer: String,
    /// Where the browser goes.
    pub authorization_endpoint: Url,
    /// Codes and refresh tokens are exchanged here.
    pub token_endpoint: Url,
    /// PAR.
    pub pushed_authorization_request_endpoint: Option<Url>,
    /// Where tokens are revoked at sign-out.
    pub revocation_endpoint: Option<Url>,
    /// Scopes it names (granular atproto scopes are parameterised, so rarely listed).
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    /// DPoP algorithms.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Vec<String>,
    /// PKCE methods.
    #[serde(default)]
    pub code_challenge_methods_supported: Vec<String>,
    /// Whether the callback carries `iss`.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

impl AuthServer {
    /// Why this server cannot serve a native atproto client, if it cannot.
    fn unsuitable(&self, fetched_for: &str) -> Option<String> {
        let has = |list: &[String], value: &str| list.iter().any(|item| item == value);
        if self.issuer != fetched_for {
            return Some(format!("its issuer is {}, not {fetched_for}", self.issuer));
        }
        if self.pushed_authorization_request_endpoint.is_none() {
            return Some("it offers no pushed authorization requests (PAR)".to_owned());
        }
        if !has(&self.dpop_signing_alg_values_supported, "ES256") {
            return Some("it does not accept ES256 DPoP proofs".to_owned());
        }
        if !has(&self.code_challenge_methods_supported, "S256") {
            return Some("it does not accept PKCE S256".to_owned());
        }
        if !has(&self.scopes_supported, "atproto") {
            return Some("it does not offer the atproto scope".to_owned());
        }
        None
    }
}

/// The authorization server of the PDS at `pds`, checked for suitability.
pub async fn discover(
    http: &Outbound,
    pds: &Url,
    allow_http_localhost: bool,
) -> Result<AuthServer, OAuthError> {
    let resource_url = pds
        .join("/.well-known/oauth-protected-resource")
        .map_err(|error| pds_unreachable(pds, error.to_string()))?;
    let resource: ProtectedResource = fetch_json(http, &resource_url)
        .await
        .map_err(|reason| pds_unreachable(pds, reason))?;
    let issuer = resource.authorization_servers.first().ok_or_else(|| {
        OAuthError::NoAuthorizationServer {
            pds: pds.to_string(),
        }
    })?;
    let issuer_url = Url::parse(issuer)
        .ok()
        .filter(|url| is_acceptable_endpoint(url, allow_http_localhost))
        .ok_or_else(|| OAuthError::AuthServerUnsuitable {
            issuer: issuer.clone(),
            reason: "it is not an https URL".to_owned(),
        })?;
    let metadata_url = issuer_url
        .join("/.well-known/oauth-authorization-server")
        .map_err(|error| auth_server_unreachable(issuer, error.to_string()))?;
    let server: AuthServer = fetch_json(http, &metadata_url)
        .await
        .map_err(|reason| auth_server_unreachable(issuer, reason))?;
    match server.unsuitable(issuer) {
        Some(reason) => Err(OAuthError::AuthServerUnsuitable {
            issuer: issuer.clone(),
            reason,
        }),
        None => Ok(server),
    }
}

fn pds_unreachable(pds: &Url, reason: String) -> OAuthError {
    OAuthError::PdsUnreachable {
        pds: pds.to_string(),
        reason,
    }
}

fn auth_server_unreachable(issuer: &str, reason: String) -> OAuthError {
    OAuthError::AuthServerUnreachable {
        issuer: issuer.to_owned(),
        reason,
    }
}

async fn fetch_json<T: serde::de::DeserializeOwned>(
    http: &Outbound,
    url: &Url,
) -> Result<T, String> {
    let response = http
        .get(url)
        .map_err(|refused| refused.to_string())?
        .timeout(super::REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| error.without_url().to_string())?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    read_json(response, Limit::DOCUMENT)
        .await
        .map_err(|error| format!("{url} is not valid metadata: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(patch: serde_json::Value) -> AuthServer {
        let mut base = json!({
            "issuer": "https://auth.example.com",
            "authorization_endpoint": "https://auth.example.com/oauth/authorize",
            "token_endpoint": "https://auth.example.com/oauth/token",
            "pushed_authorization_request_endpoint": "https://auth.example.com/oauth/par",
            "scopes_supported": ["atproto", "transition:generic"],
            "dpop_signing_alg_values_supported": ["ES256"],
            "code_challenge_methods_supported": ["S256"],
        });
        for (key, value) in patch.as_object().unwrap() {
            base[key] = value.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_server_that_can_serve_a_native_client_is_suitable() {
        assert_eq!(
            server(json!({})).unsuitable("https://auth.example.com"),
            None
        );
    }

    #[test]
    fn each_missing_capability_is_named() {
        let issuer = "https://auth.example.com";
        let cases = [
            (
                json!({"issuer": "https://evil.example"}),
                "its issuer is https://evil.example, not https://auth.example.com",
            ),
            (
                json!({"pushed_authorization_request_endpoint": null}),
                "it offers no pushed authorization requests (PAR)",
            ),
            (
                json!({"dpop_signing_alg_values_supported": ["RS256"]}),
                "it does not accept ES256 DPoP proofs",
            ),
            (
                json!({"code_challenge_methods_supported": ["plain"]}),
                "it does not accept PKCE S256",
            ),
            (
                json!({"scopes_supported": ["openid"]}),
                "it does not offer the atproto scope",
            ),
        ];
        for (patch, reason) in cases {
            assert_eq!(
                server(patch.clone()).unsuitable(issuer).as_deref(),
                Some(reason),
                "{patch}"
            );
        }
    }
}

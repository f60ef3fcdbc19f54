//! Service auth on the receiving side: every market call carries `Authorization: Bearer <jwt>`
//! minted by the caller's PDS (`com.atproto.server.getServiceAuth`); [`authenticate`] verifies
//! it with `swdesk_atproto::service_auth::verify` (the signature against the issuer's `#atproto`
//! key from its DID document, resolved through the local PLC; `aud` = this bidder's service
//! DID; `lxm` = the method's NSID; `exp`) and answers the caller's DID, or a 401 named after
//! what failed. (The sandbox gateway's `auth.rs`, copied in its minimal part.)
//!
//! Error names follow `@atproto/xrpc-server`: `AuthMissing`, `BadJwt`, `BadJwtSignature`,
//! `BadJwtAudience`, `BadJwtLexiconMethod`, `JwtExpired`.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::jwt::JwtError;
use swdesk_atproto::service_auth::{VerifyError, verify};

use crate::xrpc::Refusal;

/// The bearer token of a request.
fn bearer(headers: &HeaderMap) -> Result<&str, Refusal> {
    headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            Refusal::unauthorized(
                "AuthMissing",
                "a service-auth token is required (Authorization: Bearer)",
            )
        })
}

/// The caller's DID, once its token verified for `nsid` at the bidder `audience`.
pub async fn authenticate(
    resolver: &Resolver,
    headers: &HeaderMap,
    audience: &str,
    nsid: &str,
    now: i64,
) -> Result<String, Refusal> {
    let token = bearer(headers)?;
    let claims = verify(resolver, token, audience, nsid, now)
        .await
        .map_err(refusal)?;
    Ok(claims.issuer_did().to_owned())
}

/// The 401 of a verification failure.
fn refusal(error: VerifyError) -> Refusal {
    let name = match &error {
        VerifyError::Token(JwtError::BadSignature | JwtError::Algorithm { .. }) => {
            "BadJwtSignature"
        }
        VerifyError::Token(JwtError::Malformed(_)) | VerifyError::Issuer(_) => "BadJwt",
        VerifyError::Audience { .. } => "BadJwtAudience",
        VerifyError::Method { .. } => "BadJwtLexiconMethod",
        VerifyError::Expired { .. } => "JwtExpired",
    };
    Refusal::unauthorized(name, error.to_string())
}

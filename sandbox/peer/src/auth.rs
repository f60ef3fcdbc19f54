//! Service auth on the receiving side: every call to a peer carries `Authorization: Bearer
//! <jwt>` minted by the caller's PDS (`com.atproto.server.getServiceAuth`); [`authenticate`]
//! verifies it with `swdesk_atproto::service_auth::verify` (the ES256K/ES256 signature against
//! the issuer's `#atproto` key from its DID document, resolved through the local PLC; `aud` =
//! the peer's service DID; `lxm` = the method's NSID; `exp`) and answers the caller's DID, or a
//! 401 named after what failed.
//!
//! Error names follow `@atproto/xrpc-server`: `AuthMissing`, `BadJwt`, `BadJwtSignature`,
//! `BadJwtAudience`, `BadJwtLexiconMethod`, `JwtExpired`. The token itself is never logged nor
//! put in a message.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::jwt::JwtError;
use swdesk_atproto::service_auth::{VerifyError, verify_for_any};

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

/// The caller's DID, once its token verified for `nsid` at the peer known by `audiences` (its
/// service DID first).
pub async fn authenticate(
    resolver: &Resolver,
    headers: &HeaderMap,
    audiences: &[&str],
    nsid: &str,
    now: i64,
) -> Result<String, Refusal> {
    let token = bearer(headers)?;
    let claims = verify_for_any(resolver, token, audiences, nsid, now)
        .await
        .map_err(refusal)?;
    Ok(claims.issuer_did().to_owned())
}

/// The XRPC error name of a verification failure.
fn error_name(error: &VerifyError) -> &'static str {
    match error {
        VerifyError::Token(JwtError::BadSignature | JwtError::Algorithm { .. }) => {
            "BadJwtSignature"
        }
        VerifyError::Token(JwtError::Malformed(_)) | VerifyError::Issuer(_) => "BadJwt",
        VerifyError::Audience { .. } => "BadJwtAudience",
        VerifyError::Method { .. } => "BadJwtLexiconMethod",
        VerifyError::Expired { .. } => "JwtExpired",
    }
}

/// The 401 of a verification failure.
fn refusal(error: VerifyError) -> Refusal {
    Refusal::unauthorized(error_name(&error), error.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use axum::http::HeaderValue;

    use super::*;

    fn headers_with(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = HeaderValue::from_str(authorization).unwrap();
        headers.insert(AUTHORIZATION, value);
        headers
    }

    #[test]
    fn the_bearer_token_is_read_and_trimmed() {
        assert_eq!(bearer(&headers_with("Bearer abc.def ")), Ok("abc.def"));
    }

    #[test]
    fn no_bearer_token_is_auth_missing() {
        for headers in [
            HeaderMap::new(),
            headers_with("Basic x"),
            headers_with("Bearer  "),
        ] {
            let refusal = bearer(&headers).unwrap_err();
            assert_eq!(
                (refusal.status.as_u16(), refusal.error.as_str()),
                (401, "AuthMissing")
            );
        }
    }

    #[test]
    fn verification_failures_are_named_as_xrpc_server_names_them() {
        let cases = [
            (
                VerifyError::Token(JwtError::BadSignature),
                "BadJwtSignature",
            ),
            (
                VerifyError::Token(JwtError::Malformed("x".into())),
                "BadJwt",
            ),
            (
                VerifyError::Audience {
                    expected: "did:web:a".into(),
                    found: "did:web:b".into(),
                },
                "BadJwtAudience",
            ),
            (VerifyError::Expired { exp: 1 }, "JwtExpired"),
        ];
        for (error, name) in cases {
            let refused = refusal(error);
            assert_eq!(
                (refused.status.as_u16(), refused.error.as_str()),
                (401, name)
            );
        }
    }
}

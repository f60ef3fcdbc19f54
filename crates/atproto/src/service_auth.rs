//! Service auth: short-lived JWTs the owner's PDS mints (`com.atproto.server.getServiceAuth`)
//! so another service (the cluster gateway, a market bidder) knows a call comes from the owner.
//! [`ServiceAuth`] fetches them with a cache that renews a token shortly before its `exp`;
//! [`verify`] is the receiving side: the signature against the issuer's `#atproto` key from its
//! DID document, then `aud`, `lxm` and `exp`.
//!
//! Invariants: a cached token is handed out only while it has more than [`RENEW_BEFORE`] left;
//! a token is never logged. Verification refuses a token for another audience or method, an
//! expired one, and one whose signature does not match the issuer's current key.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

use crate::agent::Agent;
use crate::identity::{IdentityError, Resolver};
use crate::jwt::{JwtError, Unverified};
use crate::oauth::{Secret, unix_now};
use crate::xrpc::{XrpcError, XrpcRequest};

/// A cached token is renewed when it has less than this many seconds left.
pub const RENEW_BEFORE: i64 = 15;
/// Clock skew tolerated when checking `exp` and `iat`.
const LEEWAY: i64 = 30;

/// The claims of a service-auth token.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Claims {
    /// The caller's DID (a `#fragment` may name one of its services).
    pub iss: String,
    /// The service the token is for.
    pub aud: String,
    /// The method it allows.
    pub lxm: Option<String>,
    /// Expiry, Unix seconds.
    pub exp: i64,
    /// Issued at.
    pub iat: Option<i64>,
    /// A unique id.
    pub jti: Option<String>,
}

impl Claims {
    /// The issuing account's DID, without a service fragment.
    pub fn issuer_did(&self) -> &str {
        self.iss.split('#').next().unwrap_or(&self.iss)
    }
}

/// Mints service-auth tokens through the owner's PDS, with a cache.
#[derive(Debug)]
pub struct ServiceAuth {
    agent: Agent,
    cache: Mutex<HashMap<(String, String), (Secret, i64)>>,
}

impl ServiceAuth {
    /// Tokens for `agent`'s account.
    pub fn new(agent: Agent) -> Self {
        Self {
            agent,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// A token for calling `lxm` at the service `aud`.
    pub async fn token(&self, aud: &str, lxm: &str) -> Result<Secret, XrpcError> {
        let key = (aud.to_owned(), lxm.to_owned());
        if let Some((token, exp)) = self.lock().get(&key)
            && exp.saturating_sub(unix_now()) > RENEW_BEFORE
        {
            return Ok(token.clone());
        }
        let request = XrpcRequest::query(
            "com.atproto.server.getServiceAuth",
            vec![("aud", aud.to_owned()), ("lxm", lxm.to_owned())],
        );
        let answer = self.agent.call(&request).await?;
        let token = answer["token"].as_str().unwrap_or_default().to_owned();
        let exp = Unverified::parse(&token)
            .ok()
            .and_then(|parsed| parsed.claims["exp"].as_i64())
            .ok_or_else(|| XrpcError::Server {
                nsid: request.nsid,
                status: 200,
                error: "InvalidResponse".to_owned(),
                message: "the PDS answered no usable token".to_owned(),
                retry_after: None,
            })?;
        let token = Secret::new(token);
        self.lock().insert(key, (token.clone(), exp));
        Ok(token)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), (Secret, i64)>> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Why a service-auth token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// Not a JWT, or a bad signature.
    #[error("the token is not valid: {0}")]
    Token(#[from] JwtError),
    /// The issuer's key could not be found.
    #[error("the issuer's key could not be found: {0}")]
    Issuer(#[from] IdentityError),
    /// For another service.
    #[error("the token is for {found}, not for {expected}")]
    Audience {
        /// This service.
        expected: String,
        /// What the token says.
        found: String,
    },
    /// For another method.
    #[error("the token allows {}, not {expected}", found.as_deref().unwrap_or("any method"))]
    Method {
        /// The method called.
        expected: String,
        /// What the token allows.
        found: Option<String>,
    },
    /// Expired.
    #[error("the token expired at {exp}")]
    Expired {
        /// Its `exp`.
        exp: i64,
    },
}

/// Verifies `token` for a call of `lxm` at the service `aud`, at `now` (Unix seconds).
pub async fn verify(
    resolver: &Resolver,
    token: &str,
    aud: &str,
    lxm: &str,
    now: i64,
) -> Result<Claims, VerifyError> {
    verify_for_any(resolver, token, &[aud], lxm, now).await
}

/// Verifies `token` for a call of `lxm` at a service known by each of `audiences` (its DID and
/// the other names it answers to), at `now` (Unix seconds).
pub async fn verify_for_any(
    resolver: &Resolver,
    token: &str,
    audiences: &[&str],
    lxm: &str,
    now: i64,
) -> Result<Claims, VerifyError> {
    let parsed = Unverified::parse(token)?;
    let issuer = parsed.claims["iss"].as_str().unwrap_or_default();
    let issuer_did = issuer.split('#').next().unwrap_or(issuer);
    let identity = resolver.resolve_did(issuer_did).await?;
    let claims: Claims = parsed.verify(&identity.signing_key)?;
    if !audiences.contains(&claims.aud.as_str()) {
        return Err(VerifyError::Audience {
            expected: audiences.join(" or "),
            found: claims.aud,
        });
    }
    if claims.lxm.as_deref() != Some(lxm) {
        return Err(VerifyError::Method {
            expected: lxm.to_owned(),
            found: claims.lxm,
        });
    }
    if claims.exp.saturating_add(LEEWAY) < now {
        return Err(VerifyError::Expired { exp: claims.exp });
    }
    Ok(claims)
}

//! Service auth on the receiving side: every call carries `Authorization: Bearer <jwt>` minted
//! by the caller's PDS; [`authenticate`] (the sandbox peers' shared check) verifies it with
//! `swdesk_atproto::service_auth::verify` (`aud` = this gateway's DID; `lxm` = the method's
//! NSID; `exp`) and answers the caller's DID, or a 401 named as `@atproto/xrpc-server` names it.
//! [`caller`] is that check for a call to this gateway, as every route and the stream make it.

use axum::http::HeaderMap;
pub use swdesk_sandbox_peer::auth::authenticate;

use crate::clusters::Gateway;
use crate::xrpc::Refusal;

/// The caller of a call to `nsid`.
pub async fn caller(gateway: &Gateway, headers: &HeaderMap, nsid: &str) -> Result<String, Refusal> {
    authenticate(
        gateway.resolver(),
        headers,
        &[gateway.did()],
        nsid,
        gateway.token_clock(),
    )
    .await
}

//! Service auth on the receiving side: every call carries `Authorization: Bearer <jwt>` minted
//! by the caller's PDS; [`authenticate`] (the sandbox peers' shared check) verifies it with
//! `swdesk_atproto::service_auth::verify` (`aud` = this gateway's DID; `lxm` = the method's
//! NSID; `exp`) and answers the caller's DID, or a 401 named as `@atproto/xrpc-server` names it.

pub use swdesk_sandbox_peer::auth::authenticate;

//! Service auth on the receiving side: every market call carries `Authorization: Bearer <jwt>`
//! minted by the caller's PDS; [`authenticate`] (the sandbox peers' shared check) verifies it
//! with `swdesk_atproto::service_auth::verify` (`aud` = this bidder's service DID, alone or with
//! the fragment of one of its services, `crate::did::audiences`; `lxm` = the method's NSID; `exp`) and answers the caller's DID, or a 401 named as
//! `@atproto/xrpc-server` names it.

pub use swdesk_sandbox_peer::auth::authenticate;

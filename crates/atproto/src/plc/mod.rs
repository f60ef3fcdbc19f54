//! The owner's market key in the owner's DID document. A strict market peer trusts a
//! signature only when its key is listed in the DID document of the signature's issuer, so the
//! app's attestation key (published otherwise only as a `market.badgeBlueKey` record) goes into
//! the owner's `did:plc` document as the verification method `#attestation`, the id the public
//! market reads. The owner's PDS holds the rotation key, so the change goes through it:
//! [`request_signature`] (the PDS emails the owner a code), then [`publish`] with that code
//! (the PDS signs the update, the app checks it and submits it), then the live document is
//! read back ([`live_listing`]).
//!
//! Invariants: nothing changes in the document without the code the PDS emailed to the owner;
//! every other key, handle and service is kept (a key the app cannot read stops the change);
//! an operation that would change more than asked is never submitted; a `did:web` owner edits
//! their own `did.json` ([`did_web_entry`] says what to add).

mod calls;
mod methods;

use crate::agent::Agent;
use crate::identity::{DidDocument, IdentityError, Resolver};
use crate::oauth::Secret;
use crate::xrpc::XrpcError;

pub use calls::{request_signature, sign_operation, submit_operation};
pub use methods::{
    ATPROTO_FRAGMENT, ATTESTATION_FRAGMENT, KeyChange, Listing, VerificationMethods,
    check_operation, current_methods, desired_methods, did_web_entry, listing,
};

/// Why the market key could not be published, replaced or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlcError {
    /// The owner's DID is not a `did:plc`: its document is not changed through the PDS.
    #[error("{did} is not a did:plc; its document is changed where it is hosted (did.json)")]
    NotPlc {
        /// The DID.
        did: String,
    },
    /// The code is not the one the PDS emailed, was used already, or has expired.
    #[error("{}", if *expired { "the emailed code has expired: ask for a new one" } else { "the code is not the one the PDS emailed last (or it was used already)" })]
    WrongToken {
        /// Whether the PDS said it expired.
        expired: bool,
    },
    /// The document holds a key the app cannot carry over into the update.
    #[error("the DID document's key {id} cannot be read ({reason}); nothing was changed")]
    UnreadableMethod {
        /// The verification method's id.
        id: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// The key to publish is not a `did:key` of a P-256 or secp256k1 key.
    #[error("the key to publish is not usable: {reason}")]
    BadKey {
        /// Why.
        reason: String,
    },
    /// The PDS signed an operation that changes more than asked; it was not submitted.
    #[error("the PDS prepared an update that {what}; it was not submitted")]
    UnexpectedOperation {
        /// What is wrong with it.
        what: String,
    },
    /// The owner's DID document could not be read.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// A call to the PDS failed.
    #[error(transparent)]
    Xrpc(#[from] XrpcError),
}

/// Applies `change` to the owner's DID document with the `token` the PDS emailed: reads the
/// live document, works out the verification methods it should have, has the PDS sign that
/// update, checks it, submits it, and reads the document back. When the document already is
/// as asked, nothing is signed (the code stays unused).
pub async fn publish(
    agent: &Agent,
    resolver: &Resolver,
    token: &Secret,
    change: &KeyChange,
) -> Result<DidDocument, PlcError> {
    let did = agent.did();
    ensure_plc(&did)?;
    let document = live_document(resolver, &did).await?;
    let desired = desired_methods(&document, change)?;
    if desired == current_methods(&document)? {
        return Ok(document);
    }
    let operation = sign_operation(agent, token, &desired).await?;
    check_operation(&operation, &document, &desired)?;
    submit_operation(agent, &operation).await?;
    tracing::info!(%did, change = ?change, "the DID document's market key was updated");
    Ok(live_document(resolver, &did).await?)
}

/// How the live DID document of `did` stands with the market key `key`.
pub async fn live_listing(
    resolver: &Resolver,
    did: &str,
    key: &str,
) -> Result<Listing, IdentityError> {
    let document = live_document(resolver, did).await?;
    Ok(listing(&document, key))
}

/// The DID document of `did` fetched afresh (never a kept copy).
async fn live_document(resolver: &Resolver, did: &str) -> Result<DidDocument, IdentityError> {
    resolver.forget(did);
    resolver.did_document(did).await
}

/// Refuses a DID whose document the PDS does not change (anything but a `did:plc`): check it
/// before the owner is asked for a code.
pub fn ensure_plc(did: &str) -> Result<(), PlcError> {
    if did.starts_with("did:plc:") {
        Ok(())
    } else {
        Err(PlcError::NotPlc {
            did: did.to_owned(),
        })
    }
}

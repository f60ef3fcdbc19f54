//! The owner's market key in their DID document, as the window's *Publish your market key*
//! step and Settings see it: which key this device signs with, whether the live DID document
//! lists it (read afresh each time), the extra `identity:*` grant the change needs (asked for
//! only when the owner takes this step, saying why first), the code the PDS emails, and the
//! change itself (publish, replace or remove) through `swdesk_atproto::plc`. A `did:web` owner
//! is shown the exact `verificationMethod` entry to add to their `did.json`, and can check it.
//!
//! Invariants: nothing in the document changes without the code the owner typed; a wrong or
//! used code is told as such and changes nothing; the key shown is the one the keychain holds
//! for the account (never a copy kept elsewhere).

use serde::Serialize;
use swdesk_atproto::attestation::AttestationKey;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::{Keychain, KeychainError};
use swdesk_atproto::oauth::{Secret, scope};
use swdesk_atproto::plc::{self, KeyChange, Listing, PlcError};

use crate::desk::Desk;
use crate::error_code::ErrorCode;
use crate::session::SessionError;

/// Why the window asks for the extra grant, in plain words, shown before the browser opens.
pub const WHY_IDENTITY: &str = "Strict market peers trust what this app signs for you only \
when your identity document (your DID document) lists the app's market key. Adding it needs \
one more permission from your server: changing your identity document. Your server emails you \
a code first; nothing changes until you type that code here.";

/// How the live DID document stands with this device's market key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum ListingView {
    /// It lists this device's key.
    Listed,
    /// It lists no market key.
    Absent,
    /// It lists another key (another device's, or a lost one): its short form.
    Other {
        /// The key listed, short.
        listed: String,
    },
    /// The document could not be read now: why.
    Unread {
        /// Why.
        why: String,
    },
}

/// The market key as the window shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MarketKeyView {
    /// The owner's DID.
    pub did: String,
    /// This device's market key, as a `did:key` (to copy).
    pub key: String,
    /// The same, short enough for a line.
    pub short: String,
    /// Whether the document is changed here (`did:plc`, through the PDS) or by the owner
    /// (`did:web`: their `did.json`).
    pub through_pds: bool,
    /// How the live document stands with the key, read just now.
    pub listing: ListingView,
    /// Whether the session may change the document (`identity:*` granted).
    pub identity_granted: bool,
    /// Why that grant is asked for, in plain words.
    pub why_identity: String,
    /// For a `did:web` owner: the `verificationMethod` entry to add to `did.json` (JSON).
    pub did_web_entry: Option<String>,
}

/// The change the owner asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ChangeAsked {
    /// List this device's key (adding it, or replacing another one).
    Publish,
    /// Take the market key out of the document (a lost device).
    Remove,
}

/// Why a market-key step did not happen.
#[derive(Debug, thiserror::Error)]
pub enum MarketKeyError {
    /// Nobody is signed in.
    #[error("sign in first")]
    SignedOut,
    /// The keychain holding the key did not answer.
    #[error(transparent)]
    Keychain(#[from] KeychainError),
    /// The session may not change the document yet.
    #[error("your server has not granted this app the change of your identity document yet")]
    NotGranted,
    /// The PLC step failed (a wrong code among others).
    #[error(transparent)]
    Plc(#[from] PlcError),
    /// Asking for the grant failed.
    #[error(transparent)]
    Session(#[from] SessionError),
}

impl MarketKeyError {
    /// A stable code for the window to branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::SignedOut => ErrorCode::SignedOut,
            Self::Keychain(_) => ErrorCode::Keychain,
            Self::NotGranted => ErrorCode::NotGranted,
            Self::Plc(PlcError::WrongToken { expired: false }) => ErrorCode::WrongCode,
            Self::Plc(PlcError::WrongToken { expired: true }) => ErrorCode::ExpiredCode,
            Self::Plc(PlcError::NotPlc { .. }) => ErrorCode::NotPlc,
            Self::Plc(_) => ErrorCode::Plc,
            Self::Session(error) => error.code(),
        }
    }
}

/// `did:key:zDnaeXYZ…uvw123`: the start and the end of a key, for a line.
pub fn short_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 28 {
        return key.to_owned();
    }
    let head: String = chars[..18].iter().collect();
    let tail: String = chars[chars.len() - 6..].iter().collect();
    format!("{head}…{tail}")
}

/// How `listing` (or the failure to read it) is shown.
fn listing_view(listing: Result<Listing, String>) -> ListingView {
    match listing {
        Ok(Listing::Listed) => ListingView::Listed,
        Ok(Listing::Absent) => ListingView::Absent,
        Ok(Listing::Other(listed)) => ListingView::Other {
            listed: short_key(&listed),
        },
        Err(why) => ListingView::Unread { why },
    }
}

impl Desk {
    /// The market key of the signed-in owner and how their live DID document stands with it.
    pub async fn market_key(&self) -> Result<MarketKeyView, MarketKeyError> {
        let agent = self.sessions().agent().ok_or(MarketKeyError::SignedOut)?;
        let did = agent.did();
        let key = self.attestation_key(&did).await?.did_key();
        let listing = plc::live_listing(&self.fresh_resolver(), &did, &key).await;
        let entry = plc::did_web_entry(&did, &key).ok();
        let through_pds = plc::ensure_plc(&did).is_ok();
        Ok(MarketKeyView {
            short: short_key(&key),
            through_pds,
            listing: listing_view(listing.map_err(|error| error.to_string())),
            identity_granted: scope::grants(&agent.account().granted_scope, scope::IDENTITY),
            why_identity: WHY_IDENTITY.to_owned(),
            did_web_entry: entry
                .filter(|_| !through_pds)
                .map(|entry| serde_json::to_string_pretty(&entry).unwrap_or_default()),
            did,
            key,
        })
    }

    /// Asks the owner's server, through the browser, for the grant that changes the DID
    /// document; the new session replaces the old, and the controller restarts on it.
    pub async fn grant_identity(&self) -> Result<MarketKeyView, MarketKeyError> {
        let did = self.signed_in_did()?;
        plc::ensure_plc(&did)?;
        self.sessions().grant_more(&[scope::IDENTITY]).await?;
        self.restart_controller().await;
        self.market_key().await
    }

    /// Has the owner's PDS email them the code the change needs.
    pub async fn request_market_key_code(&self) -> Result<(), MarketKeyError> {
        let agent = self.granted_agent()?;
        Ok(plc::request_signature(&agent).await?)
    }

    /// Makes `change` with the `code` the PDS emailed, then reads the live document back.
    pub async fn change_market_key(
        &self,
        code: &str,
        change: ChangeAsked,
    ) -> Result<MarketKeyView, MarketKeyError> {
        let agent = self.granted_agent()?;
        let change = match change {
            ChangeAsked::Publish => {
                KeyChange::Publish(self.attestation_key(&agent.did()).await?.did_key())
            }
            ChangeAsked::Remove => KeyChange::Remove,
        };
        let code = Secret::new(code.trim());
        plc::publish(&agent, &self.fresh_resolver(), &code, &change).await?;
        self.market_key().await
    }

    fn signed_in_did(&self) -> Result<String, MarketKeyError> {
        let agent = self.sessions().agent().ok_or(MarketKeyError::SignedOut)?;
        Ok(agent.did())
    }

    /// The session, when it may change the document of a `did:plc`.
    fn granted_agent(&self) -> Result<swdesk_atproto::Agent, MarketKeyError> {
        let agent = self.sessions().agent().ok_or(MarketKeyError::SignedOut)?;
        plc::ensure_plc(&agent.did())?;
        if !scope::grants(&agent.account().granted_scope, scope::IDENTITY) {
            return Err(MarketKeyError::NotGranted);
        }
        Ok(agent)
    }

    /// A resolver of the network's that has read nothing yet.
    fn fresh_resolver(&self) -> Resolver {
        let network = self.sessions().network();
        Resolver::new(network.oauth.identity.clone(), network.outbound.clone())
    }

    /// The account's market key, from the OS keychain (made there on first use).
    async fn attestation_key(&self, did: &str) -> Result<AttestationKey, KeychainError> {
        let (keychain, did) = (
            self.sessions().network().keychain_name.clone(),
            did.to_owned(),
        );
        tokio::task::spawn_blocking(move || Keychain::open(&keychain)?.attestation_key(&did))
            .await
            .map_err(|error| KeychainError::unavailable(error.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_shortened_keeping_its_start_and_end() {
        let key = "did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb";
        assert_eq!(short_key(key), "did:key:zDnaeTiq1P…CbmwSb");
        assert_eq!(short_key("did:key:zShort"), "did:key:zShort");
    }

    #[test]
    fn a_wrong_code_has_its_own_code() {
        let wrong = MarketKeyError::Plc(PlcError::WrongToken { expired: false });
        assert_eq!(wrong.code(), ErrorCode::WrongCode);
        let expired = MarketKeyError::Plc(PlcError::WrongToken { expired: true });
        assert_eq!(expired.code(), ErrorCode::ExpiredCode);
    }
}

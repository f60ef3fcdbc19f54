//! The one list of error codes the window branches on: every failed command carries one
//! ([`ErrorCode`], serialized in kebab-case and generated into the window's bindings as a
//! union of strings), so the window's `switch` on a code is checked by the type checker and a
//! code can neither be misspelt nor added on one side only. Each error type of the api says
//! which code it is ([`crate::DeskError::code`], [`crate::SessionError::code`], …); the sign-in's
//! own errors are mapped here, where the window's words for them are chosen.

use swdesk_atproto::oauth::OAuthError;

/// What kind of failure a command met: what the window branches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    // Sign-in.
    /// The handle or DID did not resolve.
    Identity,
    /// The owner's PDS did not answer.
    PdsUnreachable,
    /// The sign-in server cannot sign in a desktop app.
    AuthServerUnsuitable,
    /// The sign-in server did not answer (or not now).
    Unreachable,
    /// A server refused the request (sign-in, or a change the controller refused).
    Refused,
    /// The app could not listen for the browser's redirect.
    Listener,
    /// No browser could be opened.
    Browser,
    /// The owner did not grant access in the browser.
    Denied,
    /// The browser came back from another sign-in or another server.
    CallbackMismatch,
    /// The tokens are for another account than the one asked.
    SubjectMismatch,
    /// The sign-in was not finished in time.
    TimedOut,
    /// The OS keychain did not answer.
    Keychain,
    /// The session ended (revoked or expired); sign in again.
    SessionEnded,
    /// The sign-in was cancelled.
    Cancelled,
    /// Someone is signed in already.
    AlreadySignedIn,
    /// Signed out here, but the server did not confirm the revocation.
    NotRevoked,
    // The market key.
    /// The session lacks the grant to change the owner's DID document.
    NotGranted,
    /// The code typed is not the one the PDS emailed.
    WrongCode,
    /// The code the PDS emailed has expired.
    ExpiredCode,
    /// The owner's DID is not a `did:plc` (a `did:web` owner edits their own `did.json`).
    NotPlc,
    /// The PDS or the PLC directory failed to change the DID document.
    Plc,
    // The deployments.
    /// Nobody is signed in.
    SignedOut,
    /// The embedded controller failed or is not running.
    Controller,
    /// The declaration is not valid; its problems are named.
    Invalid,
    /// No such deployment (or a name that cannot be one).
    NotFound,
    /// The local store failed.
    Store,
    /// A conflict could not be resolved.
    Resolve,
    /// The record could not be read from the repo.
    Record,
    /// The contract has no receipt to open.
    NoReceipt,
    // The clusters.
    /// The network names no gateway.
    NoGateway,
    /// The gateway refused or failed.
    Gateway,
    /// The manifest is not one valid Kubernetes object.
    Manifest,
    /// The kubeconfig lifetime is out of range.
    Ttl,
    /// The kubeconfig could not be saved.
    Save,
    /// The owner asked to revoke their own grant on a cluster (refused: it locks them out).
    SelfRevoke,
    /// A kept kubeconfig could not be removed (or is not one saved here).
    Kubeconfig,
    // The app.
    /// The app's own directories could not be found.
    Paths,
    /// No update is downloaded to install.
    NoUpdate,
    /// The update could not be installed.
    UpdateNotInstalled,
}

impl ErrorCode {
    /// The code of a sign-in's failure.
    pub fn of_sign_in(error: &OAuthError) -> Self {
        match error {
            OAuthError::Identity(_) => Self::Identity,
            OAuthError::PdsUnreachable { .. } => Self::PdsUnreachable,
            OAuthError::NoAuthorizationServer { .. } | OAuthError::AuthServerUnsuitable { .. } => {
                Self::AuthServerUnsuitable
            }
            OAuthError::AuthServerUnreachable { .. }
            | OAuthError::Transport { .. }
            | OAuthError::Unavailable { .. } => Self::Unreachable,
            OAuthError::Refused { .. } => Self::Refused,
            OAuthError::Listener(_) => Self::Listener,
            OAuthError::Browser(_) => Self::Browser,
            OAuthError::Denied { .. } => Self::Denied,
            OAuthError::StateMismatch | OAuthError::IssuerMismatch { .. } => Self::CallbackMismatch,
            OAuthError::SubjectMismatch { .. } => Self::SubjectMismatch,
            OAuthError::TimedOut(_) => Self::TimedOut,
            OAuthError::Keychain(_) => Self::Keychain,
            OAuthError::SessionEnded(_) => Self::SessionEnded,
        }
    }

    /// The code as the window reads it (`signed-out`, `no-gateway`, …).
    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_in_kebab_case_as_the_window_has_always_read_them() {
        assert_eq!(ErrorCode::SignedOut.as_str(), "signed-out");
        assert_eq!(ErrorCode::PdsUnreachable.as_str(), "pds-unreachable");
        assert_eq!(
            ErrorCode::UpdateNotInstalled.as_str(),
            "update-not-installed"
        );
        assert_eq!(
            ErrorCode::of_sign_in(&OAuthError::StateMismatch),
            ErrorCode::CallbackMismatch
        );
    }
}

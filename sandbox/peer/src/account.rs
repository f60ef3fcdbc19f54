//! A peer's own account on the local PDS (where it writes its records), and how a process or a
//! test joins a sandbox PDS: a fresh account made there ([`PeerAccount::create`]) and the
//! identity configuration of its PLC and PDS ([`sandbox_identity`]).
//!
//! Invariant: the password is a [`Secret`] and never shows in `Debug`.

use swdesk_atproto::identity::IdentityConfig;
use swdesk_atproto::oauth::Secret;
use swdesk_devnet::{SandboxPds, SandboxPdsError};
use url::Url;

/// A peer's own account on the local PDS.
#[derive(Debug, Clone)]
pub struct PeerAccount {
    /// The PDS the account lives on.
    pub pds_url: Url,
    /// Its handle or DID.
    pub identifier: String,
    /// Its password (or an app password).
    pub password: Secret,
}

/// Why a peer could not join the sandbox PDS.
#[derive(Debug, thiserror::Error)]
pub enum SandboxJoinError {
    /// The account could not be made.
    #[error("the peer's account could not be created: {0}")]
    Account(#[from] SandboxPdsError),
    /// The PDS or PLC address in its ready line is not a URL.
    #[error("the sandbox PDS names a bad address: {0}")]
    Address(#[from] url::ParseError),
}

impl PeerAccount {
    /// A fresh account on `pds`, its handle starting with `prefix`.
    pub async fn create(pds: &SandboxPds, prefix: &str) -> Result<Self, SandboxJoinError> {
        let created = pds.create_account(prefix).await?;
        Ok(Self {
            pds_url: Url::parse(&pds.info().pds_url)?,
            identifier: created.did,
            password: Secret::new(created.password),
        })
    }
}

/// How identities resolve on the sandbox of `pds`: its PLC and its PDS.
pub fn sandbox_identity(pds: &SandboxPds) -> Result<IdentityConfig, url::ParseError> {
    let plc_url = Url::parse(&pds.info().plc_url)?;
    let pds_url = Url::parse(&pds.info().pds_url)?;
    Ok(IdentityConfig::sandbox(plc_url, pds_url))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_password_never_shows_in_debug() {
        let account = PeerAccount {
            pds_url: Url::parse("http://localhost:1").unwrap(),
            identifier: "did:plc:abc".into(),
            password: Secret::new("hunter2-password"),
        };
        let shown = format!("{account:?}");
        assert!(!shown.contains("hunter2-password"), "{shown}");
        assert!(shown.contains("did:plc:abc"));
    }
}

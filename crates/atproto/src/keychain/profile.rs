//! One profile's session in the keychain. A profile is one data directory (one running app:
//! single-instance is per data directory), and its session entry is keyed by that directory and
//! the signed-in account, so two profiles never share a grant and never spend each other's
//! single-use refresh token. A lock file in the data directory keeps two processes of one
//! profile from refreshing at once ([`SessionStore::hold`]).
//!
//! Entries, in the network's service: user `session:<profile>` names the account signed in
//! (its DID, nothing secret); user `session:<profile>:<did>` holds that account's session as
//! JSON. `<profile>` is the hex of the first 16 bytes of the SHA-256 of the data directory's
//! absolute path. The one entry of earlier versions (user `session`, one per network) is moved
//! into the first profile that finds none of its own and claims it (removes it first), so an
//! owner signed in before the upgrade stays signed in, in one profile only.

use std::path::{Path, PathBuf};

use keyring_core::Entry;
use sha2::{Digest, Sha256};

use super::{Held, Keychain, KeychainError, SessionStore, forget, read_text, unavailable};
use crate::oauth::session::StoredSession;

/// The user of the session entry of versions that kept one per network.
const LEGACY_USER: &str = "session";
/// The lock file in the data directory.
const LOCK_FILE: &str = "session.lock";

/// The session of one profile (data directory) in the keychain.
#[derive(Debug, Clone)]
pub struct ProfileSession {
    keychain: Keychain,
    profile: String,
    lock: PathBuf,
}

impl ProfileSession {
    pub(super) fn new(keychain: Keychain, data_dir: &Path) -> Self {
        let absolute = std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_owned());
        let digest = Sha256::digest(absolute.as_os_str().as_encoded_bytes());
        let profile = digest[..16]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Self {
            keychain,
            profile,
            lock: data_dir.join(LOCK_FILE),
        }
    }

    /// The keychain this session is kept in (for the account's other entries).
    pub fn keychain(&self) -> &Keychain {
        &self.keychain
    }

    fn signed_in(&self) -> Result<Entry, KeychainError> {
        self.keychain.entry(&format!("session:{}", self.profile))
    }

    fn of_account(&self, did: &str) -> Result<Entry, KeychainError> {
        self.keychain
            .entry(&format!("session:{}:{did}", self.profile))
    }

    /// The session an earlier version kept for the whole network, moved into this profile.
    /// The entry is claimed by removing it before it is saved here: of two profiles starting
    /// at once, only the one whose removal succeeds keeps it (the other's removal finds nothing
    /// or fails, as may its read), so a grant is never shared. A save that fails puts the entry
    /// back.
    fn adopt_legacy(&self) -> Result<Option<StoredSession>, KeychainError> {
        let legacy = self.keychain.entry(LEGACY_USER)?;
        let text = match read_text(&legacy) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(None),
            Err(error) => {
                // Read as another profile removes it; left where it is if not.
                tracing::debug!(%error, "the earlier session could not be read");
                return Ok(None);
            }
        };
        let session: StoredSession = serde_json::from_str(&text)
            .map_err(|error| KeychainError::Corrupt(error.to_string()))?;
        if let Err(error) = legacy.delete_credential() {
            tracing::debug!(%error, "another profile moved the earlier session first");
            return Ok(None);
        }
        if let Err(error) = self.save(&session) {
            legacy.set_password(&text).map_err(unavailable)?;
            return Err(error);
        }
        tracing::info!(did = %session.account.did, "moved the session into this profile's keychain entry");
        Ok(Some(session))
    }
}

impl SessionStore for ProfileSession {
    fn load(&self) -> Result<Option<StoredSession>, KeychainError> {
        match read_text(&self.signed_in()?)? {
            Some(did) => read_session(&self.of_account(&did)?),
            None => self.adopt_legacy(),
        }
    }

    fn save(&self, session: &StoredSession) -> Result<(), KeychainError> {
        let text = serde_json::to_string(session)
            .map_err(|error| KeychainError::Corrupt(error.to_string()))?;
        let did = &session.account.did;
        self.of_account(did)?
            .set_password(&text)
            .map_err(unavailable)?;
        self.signed_in()?.set_password(did).map_err(unavailable)
    }

    fn delete(&self) -> Result<(), KeychainError> {
        let signed_in = self.signed_in()?;
        if let Some(did) = read_text(&signed_in)? {
            forget(&self.of_account(&did)?)?;
        }
        forget(&signed_in)
    }

    fn hold(&self) -> Result<Held, KeychainError> {
        let lock = |error: std::io::Error| {
            KeychainError::Lock(format!("{}: {error}", self.lock.display()))
        };
        if let Some(folder) = self.lock.parent() {
            std::fs::create_dir_all(folder).map_err(lock)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)
            .map_err(lock)?;
        file.lock().map_err(lock)?;
        Ok(Held { _lock: Some(file) })
    }
}

fn read_session(entry: &Entry) -> Result<Option<StoredSession>, KeychainError> {
    read_text(entry)?
        .map(|text| serde_json::from_str(&text))
        .transpose()
        .map_err(|error| KeychainError::Corrupt(error.to_string()))
}

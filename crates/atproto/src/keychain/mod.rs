//! Where the session lives between runs: the OS keychain (Secret Service on Linux, Keychain on
//! macOS, Credential Manager on Windows) through `keyring-core`, one service per network: each
//! profile's session ([`ProfileSession`], keyed by data directory and account, holding the
//! session as JSON, tokens and the DPoP private key included), each account's attestation key
//! and the values of its deployments' secrets ([`SecretValues`], one entry each), which only this
//! keychain and memory ever hold.
//!
//! Invariants: the product has no other place for a session: when the keychain cannot be
//! reached, [`Keychain::open`] and every call fail with [`KeychainError::Unavailable`] saying
//! what to install or unlock; nothing falls back to a file or to memory. Keychain calls block
//! (D-Bus round trips), so the async wrappers run them on tokio's blocking pool. The in-memory
//! store exists only for unit tests of other crates (`test-support` feature).

use std::path::Path;
use std::sync::Arc;

use keyring_core::{CredentialStore, Entry};

use swdesk_kernel::secret::{SecretValue, SecretVault};

use crate::attestation::{AttestationKey, Curve};
use crate::oauth::session::StoredSession;

mod profile;

pub use profile::ProfileSession;

/// The keychain's service name prefix; the network name follows it.
const SERVICE_PREFIX: &str = "computer.socialweb.desk";

/// Why the keychain did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    /// No keychain service is reachable.
    #[error("the OS keychain is not available ({reason}). {hint}")]
    Unavailable {
        /// What the platform said.
        reason: String,
        /// What to install or unlock.
        hint: &'static str,
    },
    /// The entry holds something this app did not write.
    #[error("the keychain entry of the session is unreadable: {0}; sign in again")]
    Corrupt(String),
    /// The lock that keeps two processes of one profile from refreshing at once was not taken.
    #[error("the session's lock file could not be taken: {0}")]
    Lock(String),
}

/// What to do when no keychain answers, per platform.
const HINT: &str = if cfg!(target_os = "linux") {
    "Install and unlock a Secret Service keyring (e.g. gnome-keyring or KWallet) in your desktop session."
} else if cfg!(target_os = "macos") {
    "Unlock your login keychain."
} else {
    "Make sure the Windows Credential Manager is available."
};

/// Where a session is kept between runs.
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// The stored session, if any.
    fn load(&self) -> Result<Option<StoredSession>, KeychainError>;
    /// Replaces the stored session.
    fn save(&self, session: &StoredSession) -> Result<(), KeychainError>;
    /// Forgets the stored session; forgetting nothing succeeds.
    fn delete(&self) -> Result<(), KeychainError>;
    /// Keeps every other process from refreshing this store's session until the answer is
    /// dropped (blocks while another holds it). A store one process alone uses needs none.
    fn hold(&self) -> Result<Held, KeychainError> {
        Ok(Held { _lock: None })
    }
}

/// A store held by this process ([`SessionStore::hold`]): the lock file stays locked until
/// this is dropped.
#[derive(Debug)]
pub struct Held {
    /// The locked file, kept open (closing it unlocks).
    _lock: Option<std::fs::File>,
}

/// The OS keychain.
#[derive(Debug, Clone)]
pub struct Keychain {
    store: Arc<CredentialStore>,
    service: String,
}

impl Keychain {
    /// Opens the platform keychain for the sessions of `network` (e.g. `sandbox`, `public`).
    pub fn open(network: &str) -> Result<Self, KeychainError> {
        Ok(Self {
            store: platform_store()?,
            service: format!("{SERVICE_PREFIX}/{network}"),
        })
    }

    /// The session of the profile whose data directory is `data_dir` (its lock file lives
    /// there).
    pub fn session_of(&self, data_dir: &Path) -> ProfileSession {
        ProfileSession::new(self.clone(), data_dir)
    }

    fn entry(&self, user: &str) -> Result<Entry, KeychainError> {
        Entry::new_in_store(&self.store, &self.service, user).map_err(unavailable)
    }
}

impl Keychain {
    /// The key `did` signs its market records with (inline attestations), kept in the keychain
    /// beside the session; made and kept on first use. Never leaves the keychain and memory.
    pub fn attestation_key(&self, did: &str) -> Result<AttestationKey, KeychainError> {
        let entry = self.entry(&format!("attestation:{did}"))?;
        match entry.get_secret() {
            Ok(bytes) => AttestationKey::from_secret_bytes(Curve::P256, &bytes).ok_or_else(|| {
                KeychainError::Corrupt(
                    "the attestation key in the keychain is not a P-256 key".into(),
                )
            }),
            Err(keyring_core::Error::NoEntry) => {
                let key = AttestationKey::generate(Curve::P256);
                entry
                    .set_secret(&key.to_secret_bytes())
                    .map_err(unavailable)?;
                Ok(key)
            }
            Err(error) => Err(unavailable(error)),
        }
    }
}

impl Keychain {
    /// The values of `did`'s secrets, kept beside its session.
    pub fn secret_values(&self, did: &str) -> SecretValues {
        SecretValues {
            keychain: self.clone(),
            prefix: format!("secret:{did}:"),
        }
    }
}

/// The values of one account's secrets: one keychain entry each (user `secret:<did>:<entry>`).
/// Reading is the market's (as its [`SecretVault`]); writing and removing the owner's.
#[derive(Debug, Clone)]
pub struct SecretValues {
    keychain: Keychain,
    prefix: String,
}

impl SecretValues {
    fn entry(&self, entry: &str) -> Result<Entry, KeychainError> {
        self.keychain.entry(&format!("{}{entry}", self.prefix))
    }

    /// Keeps `value` under `entry`, replacing what was there.
    pub fn write(&self, entry: &str, value: &SecretValue) -> Result<(), KeychainError> {
        self.entry(entry)?
            .set_secret(value.expose())
            .map_err(unavailable)
    }

    /// Forgets the value under `entry`; forgetting nothing succeeds.
    pub fn remove(&self, entry: &str) -> Result<(), KeychainError> {
        forget(&self.entry(entry)?)
    }
}

impl SecretVault for SecretValues {
    fn read(&self, entry: &str) -> Result<Option<SecretValue>, String> {
        match self
            .entry(entry)
            .map_err(|error| error.to_string())?
            .get_secret()
        {
            Ok(bytes) => Ok(Some(SecretValue::new(bytes))),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(error) => Err(unavailable(error).to_string()),
        }
    }
}

/// Runs a blocking store call off the async executor (the D-Bus store must not run on it).
pub async fn blocking<T: Send + 'static>(
    store: Arc<dyn SessionStore>,
    call: impl FnOnce(&dyn SessionStore) -> Result<T, KeychainError> + Send + 'static,
) -> Result<T, KeychainError> {
    tokio::task::spawn_blocking(move || call(store.as_ref()))
        .await
        .map_err(|error| KeychainError::unavailable(error.to_string()))?
}

/// The text `entry` holds, if any.
fn read_text(entry: &Entry) -> Result<Option<String>, KeychainError> {
    match entry.get_password() {
        Ok(text) => Ok(Some(text)),
        Err(keyring_core::Error::NoEntry) => Ok(None),
        Err(error) => Err(unavailable(error)),
    }
}

/// Removes `entry`; removing nothing succeeds.
fn forget(entry: &Entry) -> Result<(), KeychainError> {
    match entry.delete_credential() {
        Ok(()) | Err(keyring_core::Error::NoEntry) => Ok(()),
        Err(error) => Err(unavailable(error)),
    }
}

fn unavailable(error: keyring_core::Error) -> KeychainError {
    KeychainError::unavailable(error.to_string())
}

impl KeychainError {
    /// The keychain did not answer for `reason`; the platform's hint says what to do.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self::Unavailable {
            reason: reason.into(),
            hint: HINT,
        }
    }
}

#[cfg(target_os = "linux")]
fn platform_store() -> Result<Arc<CredentialStore>, KeychainError> {
    let store = dbus_secret_service_keyring_store::Store::new().map_err(unavailable)?;
    Ok(store)
}

#[cfg(target_os = "macos")]
fn platform_store() -> Result<Arc<CredentialStore>, KeychainError> {
    let store = apple_native_keyring_store::keychain::Store::new().map_err(unavailable)?;
    Ok(store)
}

#[cfg(target_os = "windows")]
fn platform_store() -> Result<Arc<CredentialStore>, KeychainError> {
    let store = windows_native_keyring_store::Store::new().map_err(unavailable)?;
    Ok(store)
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
fn platform_store() -> Result<Arc<CredentialStore>, KeychainError> {
    Err(KeychainError::unavailable(
        "this platform has no supported keychain",
    ))
}

/// A session store in memory, for other crates' unit tests only.
#[cfg(any(test, feature = "test-support"))]
#[derive(Debug, Default)]
pub struct MemoryStore(std::sync::Mutex<Option<StoredSession>>);

#[cfg(any(test, feature = "test-support"))]
impl SessionStore for MemoryStore {
    fn load(&self) -> Result<Option<StoredSession>, KeychainError> {
        Ok(self.lock().clone())
    }

    fn save(&self, session: &StoredSession) -> Result<(), KeychainError> {
        *self.lock() = Some(session.clone());
        Ok(())
    }

    fn delete(&self) -> Result<(), KeychainError> {
        *self.lock() = None;
        Ok(())
    }
}

#[cfg(any(test, feature = "test-support"))]
impl MemoryStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<StoredSession>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

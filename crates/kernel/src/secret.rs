//! Secrets by reference, as both domains see them: a [`SecretRef`] names a secret (what the
//! guest calls it, which OS keychain entry holds its value, which version of it is current); a
//! [`SecretValue`] holds a value in memory on its way from the keychain to being sealed for a
//! guest; a [`SecretVault`] reads values (the OS keychain in the app, `swdesk-atproto`'s
//! keychain). What a guest has of its secrets is the market's (`swdesk-auction`'s `secret`).
//!
//! Invariants: no object, record or status type holds a secret value, only [`SecretRef`]s;
//! a [`SecretValue`] is never serialized (it implements neither `Serialize` nor `Display`) and
//! its `Debug` prints `<redacted>`, so no log or persisted JSON can carry one.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a secret lives and who receives it. Holds no value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    /// The name the guest sees it under (a file in its secrets bundle), unique in the spec.
    pub name: String,
    /// The OS keychain entry that holds the value.
    pub keychain_entry: String,
    /// The contracts whose guests receive it; empty means every contract.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contracts: Vec<String>,
    /// Which value is current: a rotation writes a new value and counts this up, and every
    /// guest gets the new one sealed afresh.
    #[serde(default = "first_version", skip_serializing_if = "is_first_version")]
    pub version: u32,
}

fn first_version() -> u32 {
    1
}

fn is_first_version(version: &u32) -> bool {
    *version == 1
}

impl SecretRef {
    /// Whether the guest of contract `name` receives this secret.
    pub fn is_for(&self, contract: &str) -> bool {
        self.contracts.is_empty() || self.contracts.iter().any(|c| c == contract)
    }
}

/// A secret's value, read from the keychain, in memory only.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(Vec<u8>);

impl SecretValue {
    /// Wraps the bytes read from the keychain.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The bytes, for sealing to a guest's key.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

/// Where secret values are read: the OS keychain in the app, a map in unit tests. Reading may
/// block (a keychain asks D-Bus); callers run it off the async runtime.
pub trait SecretVault: Send + Sync + fmt::Debug {
    /// The value kept under `entry`; `None` when there is none.
    fn read(&self, entry: &str) -> Result<Option<SecretValue>, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_value_never_shows_in_debug_output() {
        let value = SecretValue::new(b"hunter2".to_vec());
        let shown = format!("{value:?} {:?}", Some(&value));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(value.expose(), b"hunter2");
    }

    #[test]
    fn a_secret_without_contracts_goes_to_every_contract() {
        let all = SecretRef {
            name: "token".into(),
            keychain_entry: "swdesk/token".into(),
            contracts: vec![],
            version: 1,
        };
        let one = SecretRef {
            contracts: vec!["db".into()],
            ..all.clone()
        };
        assert!(all.is_for("web"));
        assert!(one.is_for("db"));
        assert!(!one.is_for("web"));
    }

    #[test]
    fn a_secret_ref_written_before_versions_is_at_version_one() {
        let read: SecretRef =
            serde_json::from_value(serde_json::json!({"name": "t", "keychainEntry": "k"}))
                .expect("secret ref");
        assert_eq!(read.version, 1);
    }
}

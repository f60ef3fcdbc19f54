//! Secrets as the domain sees them: a [`SecretRef`] names a secret (what the guest calls it,
//! which OS keychain entry holds its value, which version of it is current); a [`SecretValue`]
//! holds a value in memory on its way from the keychain to being sealed for a guest; a
//! [`SecretVault`] reads values (the OS keychain in the app). [`SecretsStatus`] is what a
//! contract's guest has of its secrets: the key its bidder reported for it and each secret
//! sealed to that key, and [`SecretsStatus::undelivered`] is the one rule of what still has to
//! be sealed and delivered.
//!
//! Invariants: no object, record or status type holds a secret value, only [`SecretRef`]s;
//! a [`SecretValue`] is never serialized (it implements neither `Serialize` nor `Display`) and
//! its `Debug` prints `<redacted>`, so no log or persisted JSON can carry one. A secret counts
//! as delivered only at its current version and to the guest key seen last: a new key (a
//! re-keyed or replaced guest) or a new version (a rotation) seals it afresh.

use std::fmt;

use serde::{Deserialize, Serialize};
use swdesk_kernel::timestamp::Timestamp;

use crate::trust::RecordCheck;

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

/// The largest secret value sealed for a guest, in bytes: a credential, a key, a small file.
pub const MAX_SECRET_BYTES: usize = 8 * 1024;

/// Where secret values are read: the OS keychain in the app, a map in unit tests. Reading may
/// block (a keychain asks D-Bus); callers run it off the async runtime.
pub trait SecretVault: Send + Sync + fmt::Debug {
    /// The value kept under `entry`; `None` when there is none.
    fn read(&self, entry: &str) -> Result<Option<SecretValue>, String>;
}

/// A guest's public key for its sealed secrets, as its bidder reported it about the receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuestKey {
    /// The age X25519 recipient (`age1…`).
    pub recipient: String,
    /// The bidder's `market.event` that reported it.
    pub event: String,
    /// When it was seen.
    pub seen_at: Timestamp,
    /// What vouched for it: the key record's proof, and how the report's (and, where the key
    /// record is unproven, its own) signing keys are bound to the bidder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<RecordCheck>,
}

/// The last characters of an age recipient, enough for an owner to tell keys apart ("…q8z4").
pub fn short_recipient(recipient: &str) -> String {
    let tail: String = recipient
        .chars()
        .rev()
        .take(6)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

/// One secret sealed to a guest key and delivered to the guest's provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretDelivery {
    /// The secret's name.
    pub name: String,
    /// The version sealed.
    pub version: u32,
    /// The recipient it was sealed to.
    pub recipient: String,
    /// The sealed record's at-uri in the owner's repo.
    pub record: String,
    /// When the provider acknowledged it.
    pub delivered_at: Timestamp,
}

/// What a contract's guest has of its secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretsStatus {
    /// The guest's key, once its bidder reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_key: Option<GuestKey>,
    /// The last delivery of each secret.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivered: Vec<SecretDelivery>,
    /// How many of the contract's secrets wait to be sealed and delivered.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending: u32,
    /// Why the last delivery did not go through (no key yet, no value in the keychain, the
    /// provider did not answer), when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

impl SecretsStatus {
    /// The secrets of `wanted` not yet delivered at their version to the guest key seen last
    /// (all of them while no key is known).
    pub fn undelivered<'a>(&self, wanted: &'a [SecretRef]) -> Vec<&'a SecretRef> {
        wanted.iter().filter(|secret| !self.has(secret)).collect()
    }

    fn has(&self, secret: &SecretRef) -> bool {
        let Some(key) = &self.guest_key else {
            return false;
        };
        self.delivered.iter().any(|delivery| {
            delivery.name == secret.name
                && delivery.version == secret.version
                && delivery.recipient == key.recipient
        })
    }

    /// Keeps `delivery` as its secret's last, replacing an older one.
    pub fn record_delivery(&mut self, delivery: SecretDelivery) {
        self.delivered.retain(|kept| kept.name != delivery.name);
        self.delivered.push(delivery);
    }

    /// Forgets deliveries of secrets no longer in `wanted` and counts what is pending.
    pub fn settle(&mut self, wanted: &[SecretRef]) {
        self.delivered
            .retain(|delivery| wanted.iter().any(|secret| secret.name == delivery.name));
        self.pending = u32::try_from(self.undelivered(wanted).len()).unwrap_or(u32::MAX);
        if self.pending == 0 {
            self.problem = None;
        }
    }
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

    fn secret(name: &str, version: u32) -> SecretRef {
        SecretRef {
            name: name.into(),
            keychain_entry: format!("swdesk/{name}"),
            contracts: vec![],
            version,
        }
    }

    fn key(recipient: &str) -> GuestKey {
        GuestKey {
            recipient: recipient.into(),
            event: "at://did:plc:bidder/com.publicdomainrelay.temp.market.event/3l".into(),
            seen_at: Timestamp::from_unix_millis(1_800_000_000_000).expect("time"),
            checked: None,
        }
    }

    fn delivery(name: &str, version: u32, recipient: &str) -> SecretDelivery {
        SecretDelivery {
            name: name.into(),
            version,
            recipient: recipient.into(),
            record: format!("at://did:plc:owner/computer.socialweb.sealedSecret/{name}"),
            delivered_at: Timestamp::from_unix_millis(1_800_000_060_000).expect("time"),
        }
    }

    #[test]
    fn nothing_counts_as_delivered_before_the_guest_has_a_key() {
        let wanted = [secret("token", 1)];
        let status = SecretsStatus {
            delivered: vec![delivery("token", 1, "age1old")],
            ..SecretsStatus::default()
        };
        assert_eq!(status.undelivered(&wanted).len(), 1);
    }

    #[test]
    fn a_rotation_or_a_new_guest_key_seals_the_secret_afresh() {
        let wanted = [secret("token", 2), secret("db", 1)];
        let mut status = SecretsStatus {
            guest_key: Some(key("age1new")),
            ..SecretsStatus::default()
        };
        status.record_delivery(delivery("token", 1, "age1new"));
        status.record_delivery(delivery("db", 1, "age1old"));
        let names: Vec<_> = status
            .undelivered(&wanted)
            .iter()
            .map(|s| &*s.name)
            .collect();
        assert_eq!(names, ["token", "db"], "old version, old key");

        status.record_delivery(delivery("token", 2, "age1new"));
        status.record_delivery(delivery("db", 1, "age1new"));
        status.settle(&wanted);
        assert_eq!(status.pending, 0);
        assert_eq!(status.delivered.len(), 2, "one delivery per secret is kept");
    }

    #[test]
    fn a_removed_secret_is_forgotten_and_pending_counts_what_is_left() {
        let mut status = SecretsStatus {
            guest_key: Some(key("age1k")),
            problem: Some("the keychain has no value for db".into()),
            ..SecretsStatus::default()
        };
        status.record_delivery(delivery("gone", 1, "age1k"));
        status.settle(&[secret("db", 1)]);
        assert!(status.delivered.is_empty());
        assert_eq!(status.pending, 1);
        assert!(
            status.problem.is_some(),
            "the problem stays while something waits"
        );
        status.settle(&[]);
        assert_eq!((status.pending, status.problem), (0, None));
    }

    #[test]
    fn a_secret_ref_written_before_versions_is_at_version_one() {
        let read: SecretRef =
            serde_json::from_value(serde_json::json!({"name": "t", "keychainEntry": "k"}))
                .expect("secret ref");
        assert_eq!(read.version, 1);
        assert_eq!(
            short_recipient(&key("age1qqqqqqq8z4abc").recipient),
            "…8z4abc"
        );
    }
}

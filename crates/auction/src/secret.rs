//! What a contract's guest has of its secrets ([`SecretsStatus`]): the key its bidder reported
//! for it and each secret sealed to that key, and [`SecretsStatus::undelivered`] is the one rule
//! of what still has to be sealed and delivered. The secrets themselves, by reference, their
//! values in memory and the vault that reads them are the kernel's (`swdesk_kernel::secret`).
//!
//! Invariants: a secret counts as delivered only at its current version and to the guest key
//! seen last: a new key (a re-keyed or replaced guest) or a new version (a rotation) seals it
//! afresh.

use serde::{Deserialize, Serialize};
use swdesk_kernel::secret::SecretRef;
use swdesk_kernel::timestamp::Timestamp;

use crate::trust::RecordCheck;

/// The largest secret value sealed for a guest, in bytes: a credential, a key, a small file.
pub const MAX_SECRET_BYTES: usize = 8 * 1024;

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
    fn a_recipient_is_shown_by_its_last_six_characters() {
        assert_eq!(
            short_recipient(&key("age1qqqqqqq8z4abc").recipient),
            "…8z4abc"
        );
    }
}

//! What every object of the embedded core carries: [`Metadata`] (SPEC §1), the object [`Uid`],
//! owner references and status conditions.
//!
//! Invariants: `name` is a DNS-1123 label and `uid` a UUID, both fixed for the object's life;
//! `generation` counts spec changes and `resource_version` counts writes (the store bumps
//! them, optimistic concurrency compares `resource_version`); a deletion only sets
//! `deletion_requested_at`, and the object disappears once `finalizers` is empty. Everything
//! here serializes to the JSON the store persists.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::newtype::text_newtype;

use crate::name::Name;
use crate::timestamp::Timestamp;

/// An object's unique id: a UUID in its canonical lower-case hyphenated form.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Uid(String);

text_newtype!(Uid, UidError);

/// The text is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{text:?} is not a UUID such as 0f8e3c1a-5b2d-4c7e-9a10-2b3c4d5e6f70")]
pub struct UidError {
    /// The text that was given.
    pub text: String,
}

const UUID_GROUPS: [usize; 5] = [8, 4, 4, 4, 12];

impl Uid {
    /// Parses a UUID (any case); the result is lower case.
    pub fn parse(text: &str) -> Result<Self, UidError> {
        let groups: Vec<&str> = text.split('-').collect();
        let lengths_fit = groups.len() == UUID_GROUPS.len()
            && groups
                .iter()
                .zip(UUID_GROUPS)
                .all(|(g, len)| g.len() == len);
        if lengths_fit
            && groups
                .iter()
                .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            Ok(Self(text.to_ascii_lowercase()))
        } else {
            Err(UidError {
                text: text.to_owned(),
            })
        }
    }

    /// The UUID of 16 bytes (the store draws them at random).
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let (a, rest) = hex.split_at(8);
        let (b, rest) = rest.split_at(4);
        let (c, rest) = rest.split_at(4);
        let (d, e) = rest.split_at(4);
        Self(format!("{a}-{b}-{c}-{d}-{e}"))
    }

    /// Its first 8 hex digits, as successor rkeys use them.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }
}

/// The kinds of object the embedded core holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// A deployment without a lifetime.
    Infra,
    /// A deployment that ends at completion or at its deadline.
    EphemeralInfra,
    /// One contract's run on the compute market.
    ComputeContract,
    /// One record in the owner's repo.
    AtprotoRecord,
    /// Follows an account's index of Infra records.
    InfraCollection,
    /// Follows an account's index of EphemeralInfra records.
    EphemeralInfraCollection,
}

/// A reference to the object that owns this one; owned objects go when their owner goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerRef {
    /// The owner's kind.
    pub kind: Kind,
    /// The owner's name.
    pub name: Name,
    /// The owner's uid: a re-created owner of the same name is another owner.
    pub uid: Uid,
    /// Whether the owner controls this object (at most one owner does).
    #[serde(default)]
    pub controller: bool,
}

/// The metadata of every object (SPEC §1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// DNS-1123 label, unique per kind.
    pub name: Name,
    /// Fixed for the object's life.
    pub uid: Uid,
    /// Bumped on every spec change.
    pub generation: u64,
    /// Bumped on every write; compared on every write.
    pub resource_version: u64,
    /// When the object was created.
    pub created_at: Timestamp,
    /// Set by a deletion; the object goes once its finalizers are gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_requested_at: Option<Timestamp>,
    /// What must happen before the object may go.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// Free labels, e.g. `infra.socialweb.computer/cluster`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The objects this one belongs to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_refs: Vec<OwnerRef>,
}

impl Metadata {
    /// Fresh metadata for an object created at `created_at`: generation 1, never written.
    pub fn new(name: Name, uid: Uid, created_at: Timestamp) -> Self {
        Self {
            name,
            uid,
            generation: 1,
            resource_version: 0,
            created_at,
            deletion_requested_at: None,
            finalizers: Vec::new(),
            labels: BTreeMap::new(),
            owner_refs: Vec::new(),
        }
    }

    /// Whether a deletion has been asked for.
    pub fn is_deleting(&self) -> bool {
        self.deletion_requested_at.is_some()
    }
}

/// An object of the embedded core: metadata, spec and status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Object<Spec, Status> {
    /// Name, uid, versions, deletion, finalizers, labels, owners.
    pub metadata: Metadata,
    /// What is wanted.
    pub spec: Spec,
    /// What is observed.
    #[serde(default)]
    pub status: Status,
}

/// The truth of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Not known yet.
    Unknown,
}

/// One observed condition of an object, Kubernetes style (e.g. `Synced`, `Conflict`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// What the condition is about, in CamelCase.
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// A CamelCase reason a program may branch on.
    pub reason: String,
    /// A sentence for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// When `status` last changed.
    pub last_transition_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uid_parses_in_any_case_and_reads_lower_case() {
        let uid = Uid::parse("0F8E3C1A-5B2D-4C7E-9A10-2B3C4D5E6F70").unwrap();
        assert_eq!(uid.as_str(), "0f8e3c1a-5b2d-4c7e-9a10-2b3c4d5e6f70");
        assert_eq!(uid.short(), "0f8e3c1a");
    }

    #[test]
    fn a_uid_with_a_short_group_is_refused() {
        assert!(Uid::parse("0f8e3c1-5b2d-4c7e-9a10-2b3c4d5e6f70").is_err());
    }

    #[test]
    fn a_uid_from_bytes_is_a_parseable_uuid() {
        let uid = Uid::from_bytes([0xab; 16]);
        assert_eq!(uid.as_str(), "abababab-abab-abab-abab-abababababab");
        assert_eq!(Uid::parse(uid.as_str()).unwrap(), uid);
    }

    #[test]
    fn metadata_round_trips_through_json_with_camel_case_keys() {
        let created = Timestamp::from_unix_millis(0).unwrap();
        let meta = Metadata::new(
            Name::parse("web").unwrap(),
            Uid::from_bytes([1; 16]),
            created,
        );
        let json = serde_json::to_value(&meta).unwrap();
        assert_eq!(json["resourceVersion"], 0);
        assert_eq!(serde_json::from_value::<Metadata>(json).unwrap(), meta);
    }
}

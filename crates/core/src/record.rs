//! AtprotoRecord (SPEC §1): one record in the owner's repo, written by its own controller with
//! `putRecord` and a swap cid. A deployment never writes its record itself: it applies a child
//! AtprotoRecord with [`DeletionPolicy::Retain`].
//!
//! Invariants: deleting an AtprotoRecord object deletes the repo record only under
//! [`DeletionPolicy::Delete`], and never for the two deployment collections, whatever the
//! policy says ([`deletes_from_repo`]): deployment records are never deleted.

use serde::{Deserialize, Serialize};

use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::object::Object;
use swdesk_kernel::retry::{Backoff, Fault};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::timestamp::Timestamp;

/// What deleting the object does to the repo record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DeletionPolicy {
    /// Keep the record.
    #[default]
    Retain,
    /// Delete the record (never for a deployment collection).
    Delete,
}

/// The spec of an AtprotoRecord.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AtprotoRecordSpec {
    /// The collection NSID.
    pub collection: String,
    /// The record key.
    pub rkey: Rkey,
    /// The record as stored (with `$type`).
    pub value: serde_json::Value,
    /// What deleting the object does to the record.
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    /// The cid of the record `value` replaces, as the owner last read it: the write's
    /// `swapRecord`. Absent: the cid this object last wrote (nothing, before its first write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<String>,
}

/// The status of an AtprotoRecord.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AtprotoRecordStatus {
    /// The record's URI once written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The cid last written: the swap for the next write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cid: Option<String>,
    /// The repo revision of the commit that wrote `cid`, when the repo said (not for a record
    /// adopted as found): what orders our write against news of the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// When it was last written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_write_at: Option<Timestamp>,
    /// The last write's error, if it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When a write that failed for now (the repo unreachable, busy or failing) may be tried
    /// again; kept in the status so neither this object's own status write nor a restart
    /// makes the write come back sooner than the repo asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<WriteRetry>,
}

/// The schedule of a write that failed for now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteRetry {
    /// The cid of the value whose write failed: a new value is tried at once.
    pub cid: String,
    /// Consecutive failures of that write.
    pub failures: u32,
    /// Not before then.
    pub at: Timestamp,
}

impl WriteRetry {
    /// The schedule after the write of `cid` failed for now with `fault` at `now`: core's
    /// retry rule (the default backoff, or the repo's `Retry-After` when longer), counted on
    /// from `before` when it was about the same value.
    pub fn after(before: Option<&Self>, cid: &str, fault: Fault, now: Timestamp) -> Self {
        let failures = before
            .filter(|before| before.cid == cid)
            .map_or(1, |before| before.failures.saturating_add(1));
        let wait = fault.delay(&Backoff::DEFAULT, failures);
        Self {
            cid: cid.to_owned(),
            failures,
            at: now.saturating_add(wait),
        }
    }

    /// How long the write of `cid` must still wait at `now`, if at all.
    pub fn wait_for(&self, cid: &str, now: Timestamp) -> Option<std::time::Duration> {
        (self.cid == cid && now < self.at).then(|| self.at.since(now))
    }
}

/// An AtprotoRecord object.
pub type AtprotoRecordObject = Object<AtprotoRecordSpec, AtprotoRecordStatus>;

/// Whether deleting an AtprotoRecord of `collection` under `policy` deletes the repo record.
pub fn deletes_from_repo(collection: &str, policy: DeletionPolicy) -> bool {
    policy == DeletionPolicy::Delete && DeploymentKind::from_collection(collection).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_record_is_never_deleted_even_under_delete() {
        for kind in [DeploymentKind::Infra, DeploymentKind::EphemeralInfra] {
            assert!(!deletes_from_repo(
                kind.collection(),
                DeletionPolicy::Delete
            ));
        }
    }

    #[test]
    fn another_record_is_deleted_only_under_delete() {
        assert!(deletes_from_repo(
            "com.example.note",
            DeletionPolicy::Delete
        ));
        assert!(!deletes_from_repo(
            "com.example.note",
            DeletionPolicy::Retain
        ));
    }
}

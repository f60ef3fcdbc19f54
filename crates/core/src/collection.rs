//! InfraCollection and EphemeralInfraCollection (SPEC §1): each follows one account's index at
//! `self` and keeps one local deployment per live entry of its collection that another device
//! wrote, bound to that entry's record (sync `Both`). Such a *follower* deployment shows the
//! status its writer publishes and edits the declaration through the record; it never runs the
//! contracts (the writer rule, SPEC §3) and never makes a final write.
//!
//! Invariants: a follower carries [`FOLLOWER_LABEL`]; one follower per followed record; a
//! follower goes when its entry leaves the index's live list.

use serde::{Deserialize, Serialize};

use swdesk_kernel::deployment_kind::DeploymentKind;

/// The label that marks a deployment as following a record another device writes.
pub const FOLLOWER_LABEL: &str = "infra.socialweb.computer/follower";

/// The spec of an InfraCollection: whose index to follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InfraCollectionSpec {
    /// The DID of the account whose index is followed.
    pub repo: String,
}

/// The spec of an EphemeralInfraCollection: whose index to follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralInfraCollectionSpec {
    /// The DID of the account whose index is followed.
    pub repo: String,
}

/// One live entry followed: the record and the local deployment that follows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowedEntry {
    /// The record's rkey.
    pub rkey: String,
    /// The follower deployment's name.
    pub name: String,
    /// Who wrote the deployment, as the index says.
    pub writer: String,
}

/// The status of a collection: the entries it follows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionStatus {
    /// The live entries of other writers, each with its follower.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub following: Vec<FollowedEntry>,
    /// Why the index could not be read, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A collection spec: which deployments it follows in whose repo.
pub trait CollectionSpec {
    /// The deployments it follows.
    const DEPLOYMENT: DeploymentKind;
    /// The repo whose index it follows.
    fn repo(&self) -> &str;
}

impl CollectionSpec for InfraCollectionSpec {
    const DEPLOYMENT: DeploymentKind = DeploymentKind::Infra;

    fn repo(&self) -> &str {
        &self.repo
    }
}

impl CollectionSpec for EphemeralInfraCollectionSpec {
    const DEPLOYMENT: DeploymentKind = DeploymentKind::EphemeralInfra;

    fn repo(&self) -> &str {
        &self.repo
    }
}

//! The deployment kinds, Infra and EphemeralInfra (SPEC §1): their specs and statuses.
//!
//! A spec has two parts. The declaration (`description`, `contracts`) is published to the
//! record and hashed; the binding (`record`) and the local-only fields (`secrets`,
//! `clusterRef`, `nodes`) never reach a record and never enter the declaration hash. An
//! EphemeralInfra adds a lifetime (`ttlSeconds`, default [`DEFAULT_TTL_SECONDS`], at least
//! [`MIN_TTL_SECONDS`]) and `endWhen`. Contracts are the lexicon's `#contract` type itself, so
//! fields this version does not know are kept and published unchanged.
//!
//! Invariants: secrets appear only as [`SecretRef`]s; `status.endedAt` and `status.endReason`
//! are set together, once; `status.expiresAt` is set on EphemeralInfra only.

use serde::{Deserialize, Serialize};
use swdesk_kernel::drift::Drift;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Object;
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::rollup::{ContractPhase, ObjectPhase};
use swdesk_kernel::secret::SecretRef;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;

use crate::declaration::types::DeclarationHash;
use crate::sync::{SyncMode, SyncStatus};

pub use swdesk_lexicon::computer::socialweb::infra::{Contract, ContractState};

/// An EphemeralInfra's lifetime when its spec names none.
pub const DEFAULT_TTL_SECONDS: u64 = 3600;
/// The shortest lifetime an EphemeralInfra may have.
pub const MIN_TTL_SECONDS: u64 = 60;

/// `spec.record`: how the object is bound to its record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordBinding {
    /// An existing record to follow instead of the object's own rkey.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<RecordUri>,
    /// Which way declarations flow.
    #[serde(default)]
    pub sync: SyncMode,
}

/// `spec.clusterRef` (local-only): the tenant cluster whose nodes this Infra's contracts are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRef {
    /// The gateway serving the cluster, by DID.
    pub gateway: String,
    /// The cluster's name at the gateway.
    pub name: Name,
}

/// `spec.nodes[]` (local-only): what a contract that is a cluster node needs beyond its
/// published fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractNode {
    /// The contract this node entry belongs to; one entry per contract.
    pub contract: String,
    /// The DID that owns the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_did: Option<String>,
    /// Adopt an existing guest instead of renting one.
    #[serde(default)]
    pub adopt: bool,
    /// The NodeClaim this entry serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_claim: Option<String>,
    /// The node's join bundle, by reference: the secret that holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<SecretRef>,
}

/// The spec of an Infra.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InfraSpec {
    /// Declaration: free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Declaration: the contracts, names unique.
    #[serde(default)]
    pub contracts: Vec<Contract>,
    /// The record binding.
    #[serde(default)]
    pub record: RecordBinding,
    /// Local-only: secrets the guests receive, by reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretRef>,
    /// Local-only: the tenant cluster this Infra serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_ref: Option<ClusterRef>,
    /// Local-only: node fields by contract.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<ContractNode>,
}

impl InfraSpec {
    /// The contract called `name`.
    pub fn contract(&self, name: &str) -> Option<&Contract> {
        self.contracts.iter().find(|contract| contract.name == name)
    }
}

/// `spec.endWhen` of an EphemeralInfra.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EndWhen {
    /// Ends when every contract is released, or at `expiresAt`, whichever comes first.
    #[default]
    Complete,
    /// Ends only at `expiresAt`.
    Deadline,
}

/// The spec of an EphemeralInfra: an Infra's, plus a lifetime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralInfraSpec {
    /// Everything an Infra has.
    #[serde(flatten)]
    pub infra: InfraSpec,
    /// Lifetime from `createdAt`, in seconds.
    #[serde(default = "default_ttl")]
    pub ttl_seconds: u64,
    /// When it ends.
    #[serde(default)]
    pub end_when: EndWhen,
}

fn default_ttl() -> u64 {
    DEFAULT_TTL_SECONDS
}

/// Why a deployment ended (`#endReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EndReason {
    /// Its object was deleted (the only reason for an Infra).
    Deleted,
    /// Every contract was released (EphemeralInfra, `endWhen: complete`).
    Complete,
    /// `expiresAt` passed (EphemeralInfra).
    Deadline,
}

/// `status.record`: the record the object is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundRecord {
    /// The record's URI.
    pub uri: RecordUri,
    /// The cid last written or read, for the next swap.
    pub cid: String,
    /// The rkey (also the last part of `uri`).
    pub rkey: Rkey,
}

/// `status.contracts[]`: one contract as observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractStatus {
    /// The contract's name.
    pub name: String,
    /// Its phase.
    pub phase: ContractPhase,
    /// The winning bidder's DID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// The at-uri of the winner's receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
    /// What it waits for, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What drifted and since when, while it does ([`swdesk_kernel::drift`]); local, never
    /// published.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "swdesk_kernel::drift::stored"
    )]
    pub drift: Option<Drift>,
}

/// A contract entering a phase, as a follower saw it in the writer's record ([`crate::seen`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeenChange {
    /// The contract's name.
    pub contract: String,
    /// The phase it entered.
    pub phase: ContractPhase,
    /// When this device first saw it there.
    pub at: Timestamp,
    /// What the record said of the contract then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The status of an Infra.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InfraStatus {
    /// The rolled-up phase.
    #[serde(default)]
    pub phase: ObjectPhase,
    /// One entry per declared contract.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contracts: Vec<ContractStatus>,
    /// The bound record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<BoundRecord>,
    /// The declaration hash both sides agreed on last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_declaration_hash: Option<DeclarationHash>,
    /// The generation this status describes.
    #[serde(default)]
    pub observed_generation: u64,
    /// How it stands with its record, as the reconciler last found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncStatus>,
    /// When the deployment ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Timestamp>,
    /// Why it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<EndReason>,
    /// A follower's contract phase changes as this device saw them in the writer's record
    /// ([`crate::seen::note`]); local, never published.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<SeenChange>,
}

/// The status of an EphemeralInfra: an Infra's, plus its expiry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralInfraStatus {
    /// Everything an Infra's status has.
    #[serde(flatten)]
    pub infra: InfraStatus,
    /// `createdAt + ttlSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
}

/// An Infra object.
pub type InfraObject = Object<InfraSpec, InfraStatus>;
/// An EphemeralInfra object.
pub type EphemeralInfraObject = Object<EphemeralInfraSpec, EphemeralInfraStatus>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_ephemeral_spec_without_lifetime_fields_takes_the_defaults() {
        let spec: EphemeralInfraSpec = serde_json::from_value(json!({"contracts": []})).unwrap();
        assert_eq!(spec.ttl_seconds, 3600);
        assert_eq!(spec.end_when, EndWhen::Complete);
        assert_eq!(spec.infra.record.sync, SyncMode::Both);
    }

    #[test]
    fn unknown_contract_fields_survive_a_spec_round_trip() {
        let value = json!({"contracts": [{"name": "web", "state": "staged", "gpu": "a100"}]});
        let spec: InfraSpec = serde_json::from_value(value).unwrap();
        assert_eq!(
            serde_json::to_value(&spec).unwrap()["contracts"][0]["gpu"],
            "a100"
        );
    }
}

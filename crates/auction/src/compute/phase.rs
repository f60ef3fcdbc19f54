//! The two words every part of the market flow shares about a ComputeContract: its
//! [`ComputePhase`] and a [`StrongRef`] to a record. They sit below the contract and the
//! auction's flow, which both name them.

use serde::{Deserialize, Serialize};

use swdesk_kernel::rollup::ContractPhase;

/// The phase of a ComputeContract.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ComputePhase {
    /// The request-for-proposals flow runs.
    #[default]
    Requesting,
    /// The guest runs.
    Deployed,
    /// The release was sent.
    Releasing,
    /// The guest is released.
    Released,
    /// The flow or the release failed.
    Failed,
}

impl ComputePhase {
    /// The phase shown for the contract in its deployment's status.
    pub fn contract_phase(self) -> ContractPhase {
        match self {
            Self::Requesting => ContractPhase::Requesting,
            Self::Deployed => ContractPhase::Deployed,
            Self::Releasing => ContractPhase::Releasing,
            Self::Released => ContractPhase::Released,
            Self::Failed => ContractPhase::Failed,
        }
    }
}

/// A reference to a record by URI and cid.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StrongRef {
    /// The record's at-uri.
    pub uri: String,
    /// The record's cid.
    pub cid: String,
}

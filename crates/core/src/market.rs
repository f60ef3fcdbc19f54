//! The `Market` port: what runs a ComputeContract on the compute market (the requester side of
//! the RFP flow, `market.md`) and releases its guest. The real adapter comes with the market;
//! until then a ComputeContract waits in `Requesting` and says what it waits for.
//!
//! Invariants: `advance` is idempotent and level-triggered like a reconcile: given the contract
//! as it is, it takes the next step (or none) and returns the status the contract has after
//! it; a release is never skipped for a contract that holds a guest.

use std::future::Future;

use thiserror::Error;

use crate::compute::{ComputeContractObject, ComputeContractStatus};
use crate::timestamp::Timestamp;

/// Why the market could not advance a contract.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the market: {message}")]
pub struct MarketError {
    /// What went wrong.
    pub message: String,
    /// Whether trying again later may succeed.
    pub transient: bool,
}

/// Runs ComputeContracts on the compute market.
pub trait Market: Send + Sync + std::fmt::Debug {
    /// Takes the contract's next step (start or continue the RFP flow, or send its release)
    /// and returns its status after it.
    fn advance(
        &self,
        contract: &ComputeContractObject,
        now: Timestamp,
    ) -> impl Future<Output = Result<ComputeContractStatus, MarketError>> + Send;
}

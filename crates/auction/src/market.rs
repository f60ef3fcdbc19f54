//! The `Market` port: what runs a ComputeContract on the compute market (the requester side of
//! the RFP flow, `market.md`) and releases its guest. The real adapter comes with the market;
//! until then a ComputeContract waits in `Requesting` and says what it waits for. Also here:
//! [`Unconnected`], the market of a session that has none (signed out, or a benchmark): it
//! rents nothing, so a requested contract waits (and says so) and a release of a contract that
//! never got a guest is done at once.
//!
//! Invariants: `advance` is idempotent and level-triggered like a reconcile: given the contract
//! as it is, it takes the next step (or none) and returns the status the contract has after
//! it; a release is never skipped for a contract that holds a guest.

use std::future::Future;

use swdesk_kernel::timestamp::Timestamp;
use thiserror::Error;

use crate::compute::{ComputeContractObject, ComputeContractStatus, ComputePhase};

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

/// The market of a build without one: nothing is rented, so a requested contract waits and a
/// release of a contract without a guest is done at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unconnected;

/// What a requested contract waits for in a build without a market.
pub const NO_MARKET: &str =
    "waiting for the compute market: this build has no market connection yet";

impl Market for Unconnected {
    async fn advance(
        &self,
        contract: &ComputeContractObject,
        now: Timestamp,
    ) -> Result<ComputeContractStatus, MarketError> {
        let mut status = contract.status.clone();
        match (contract.spec.release, status.receipt.is_some()) {
            (true, false) => {
                status.phase = ComputePhase::Released;
                status.message = Some("released before any guest was rented".to_owned());
                status.release_sent_at = Some(contract.spec.release_requested_at.unwrap_or(now));
            }
            (true, true) => {
                status.message =
                    Some("waiting for the compute market to confirm the release".to_owned());
            }
            (false, _) => status.message = Some(NO_MARKET.to_owned()),
        }
        Ok(status)
    }
}

//! One reconciler per kind, each over a [`crate::Context`]: [`record`] (AtprotoRecord: one
//! record in the owner's repo, written with a swap cid), [`compute`] (ComputeContract: one
//! contract on the compute market, through the `Market` port), [`deployment`] (Infra and
//! EphemeralInfra: the record, the index, the contracts, the end).

pub mod compute;
pub mod deployment;
pub mod record;

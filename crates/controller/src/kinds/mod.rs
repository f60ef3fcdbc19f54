//! One reconciler per kind, each over a [`crate::Context`]: [`record`] (AtprotoRecord: one
//! record in the owner's repo, written with a swap cid), [`compute`] (ComputeContract: one
//! contract on the compute market, through the `Market` port), [`deployment`] (Infra and
//! EphemeralInfra: the record, the index, the contracts, the end; followers of other devices'
//! deployments), [`collection`] (InfraCollection and EphemeralInfraCollection: following an
//! account's index).

pub mod collection;
pub mod compute;
pub mod deployment;
pub mod record;

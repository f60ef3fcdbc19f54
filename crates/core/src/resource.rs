//! [`Resource`]: what ties an object kind to its spec and status types, so typed code (the
//! store's API, the reconcilers, the deployment rules of [`crate::deployment`]) names a kind by
//! its spec type: `store.get::<InfraSpec>` reads an Infra, and a write infers the kind from the
//! object it is given.
//!
//! Implemented for every kind: Infra, EphemeralInfra, ComputeContract, AtprotoRecord,
//! InfraCollection and EphemeralInfraCollection.

use serde::Serialize;
use serde::de::DeserializeOwned;
use swdesk_auction::compute::{ComputeContractSpec, ComputeContractStatus};
use swdesk_kernel::object::{Kind, Object};

use crate::collection::{CollectionStatus, EphemeralInfraCollectionSpec, InfraCollectionSpec};
use crate::infra::{EphemeralInfraSpec, EphemeralInfraStatus, InfraSpec, InfraStatus};
use crate::record::{AtprotoRecordSpec, AtprotoRecordStatus};

/// A spec type that the store keeps objects of: its kind and its status type.
pub trait Resource: Serialize + DeserializeOwned + Send + 'static {
    /// The kind of the objects whose spec this is.
    const KIND: Kind;
    /// Their status type.
    type Status: Serialize + DeserializeOwned + Default + Send + 'static;
}

/// The object type of a resource: metadata, its spec, its status.
pub type ObjectOf<R> = Object<R, <R as Resource>::Status>;

impl Resource for InfraSpec {
    const KIND: Kind = Kind::Infra;
    type Status = InfraStatus;
}

impl Resource for EphemeralInfraSpec {
    const KIND: Kind = Kind::EphemeralInfra;
    type Status = EphemeralInfraStatus;
}

impl Resource for ComputeContractSpec {
    const KIND: Kind = Kind::ComputeContract;
    type Status = ComputeContractStatus;
}

impl Resource for AtprotoRecordSpec {
    const KIND: Kind = Kind::AtprotoRecord;
    type Status = AtprotoRecordStatus;
}

impl Resource for InfraCollectionSpec {
    const KIND: Kind = Kind::InfraCollection;
    type Status = CollectionStatus;
}

impl Resource for EphemeralInfraCollectionSpec {
    const KIND: Kind = Kind::EphemeralInfraCollection;
    type Status = CollectionStatus;
}

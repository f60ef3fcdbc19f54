//! [`Resource`]: what ties an object kind to its spec and status types, so the store's API is
//! typed while the database holds JSON. A spec type is the resource: `store.get::<InfraSpec>`
//! reads an Infra, and a write infers the kind from the object it is given.
//!
//! Implemented for every kind: Infra, EphemeralInfra, ComputeContract, AtprotoRecord,
//! InfraCollection and EphemeralInfraCollection.
//!
//! Invariant: the text of a kind in the database (`kind_text`) never changes once written; it
//! does not follow serde renames of [`Kind`].

use serde::Serialize;
use serde::de::DeserializeOwned;
use swdesk_core::collection::{
    CollectionStatus, EphemeralInfraCollectionSpec, InfraCollectionSpec,
};
use swdesk_core::compute::{ComputeContractSpec, ComputeContractStatus};
use swdesk_core::infra::{EphemeralInfraSpec, EphemeralInfraStatus, InfraSpec, InfraStatus};
use swdesk_core::object::{Kind, Object};
use swdesk_core::record::{AtprotoRecordSpec, AtprotoRecordStatus};

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

/// Every kind, in the order of [`Kind`].
const KINDS: [Kind; 6] = [
    Kind::Infra,
    Kind::EphemeralInfra,
    Kind::ComputeContract,
    Kind::AtprotoRecord,
    Kind::InfraCollection,
    Kind::EphemeralInfraCollection,
];

/// The kind as the database spells it.
pub(crate) fn kind_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Infra => "Infra",
        Kind::EphemeralInfra => "EphemeralInfra",
        Kind::ComputeContract => "ComputeContract",
        Kind::AtprotoRecord => "AtprotoRecord",
        Kind::InfraCollection => "InfraCollection",
        Kind::EphemeralInfraCollection => "EphemeralInfraCollection",
    }
}

/// The kind the database spelled `text`.
pub(crate) fn kind_from_text(text: &str) -> Option<Kind> {
    KINDS.into_iter().find(|kind| kind_text(*kind) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_database_text() {
        for kind in KINDS {
            assert_eq!(kind_from_text(kind_text(kind)), Some(kind));
        }
        assert_eq!(kind_from_text("Pod"), None);
    }

    #[test]
    fn the_database_text_of_a_kind_is_its_json_name_today() {
        for kind in KINDS {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind_text(kind));
        }
    }
}

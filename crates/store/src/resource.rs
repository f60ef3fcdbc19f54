//! How the database spells each [`Kind`]. The [`Resource`] trait that ties a kind to its spec
//! and status types lives in the core (`swdesk_core::resource`); the store re-exports it.
//!
//! Invariant: the text of a kind in the database (`kind_text`) never changes once written; it
//! does not follow serde renames of [`Kind`].

pub use swdesk_core::resource::{ObjectOf, Resource};
use swdesk_kernel::object::Kind;

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

//! The two deployment kinds, Infra and EphemeralInfra (SPEC §1), and the record collection
//! each lives in: the one name both the deployment rules and a ComputeContract (whose
//! deployment it belongs to) use for them.

use serde::{Deserialize, Serialize};

use crate::object::Kind;

/// The two deployment kinds and their record collections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum DeploymentKind {
    /// `computer.socialweb.infra`.
    Infra,
    /// `computer.socialweb.ephemeralInfra`.
    EphemeralInfra,
}

impl DeploymentKind {
    /// The record collection NSID.
    pub fn collection(self) -> &'static str {
        match self {
            Self::Infra => swdesk_lexicon::computer::socialweb::infra::NSID,
            Self::EphemeralInfra => swdesk_lexicon::computer::socialweb::ephemeral_infra::NSID,
        }
    }

    /// The kind whose records live in `collection`.
    pub fn from_collection(collection: &str) -> Option<Self> {
        [Self::Infra, Self::EphemeralInfra]
            .into_iter()
            .find(|kind| kind.collection() == collection)
    }

    /// The object kind.
    pub fn kind(self) -> Kind {
        match self {
            Self::Infra => Kind::Infra,
            Self::EphemeralInfra => Kind::EphemeralInfra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_deployment_kind_finds_itself_by_its_collection() {
        for kind in [DeploymentKind::Infra, DeploymentKind::EphemeralInfra] {
            assert_eq!(
                DeploymentKind::from_collection(kind.collection()),
                Some(kind)
            );
        }
        assert_eq!(DeploymentKind::from_collection("app.bsky.feed.post"), None);
    }
}

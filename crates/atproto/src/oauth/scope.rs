//! The scopes swdesk asks for: least privilege. `atproto`, `repo:` for exactly the collections
//! the app writes (its deployments and the market records of its contracts), and
//! `rpc:<nsid>?aud=*` for the gateway and market methods it calls with service auth. A server
//! without granular scopes refuses them at PAR (`invalid_scope`); only then does the client ask
//! for `transition:generic`, and the account screen shows which of the two was granted.
//!
//! [`IDENTITY`] is not part of the sign-in's set: it is asked for only when the owner publishes
//! the market key in their DID document (a sign-in of its own, which says why first).
//! `transition:generic` does not cover it, so a server without granular scopes cannot grant it.

/// Collections the app writes in the owner's repo.
pub const WRITTEN_COLLECTIONS: &[&str] = &[
    "computer.socialweb.infra",
    "computer.socialweb.ephemeralInfra",
    "com.publicdomainrelay.temp.compute.vm",
    "com.publicdomainrelay.temp.compute.events.vm.delete",
    "com.publicdomainrelay.temp.market.rfp",
    "com.publicdomainrelay.temp.market.accept",
    "com.publicdomainrelay.temp.market.accepts.free",
    "com.publicdomainrelay.temp.market.event",
    "com.publicdomainrelay.temp.market.badgeBlueKey",
    "computer.socialweb.secret.sealed",
];

/// Methods the app calls at other services with service auth (`getServiceAuth` `lxm`).
pub const CALLED_METHODS: &[&str] = &[
    "com.publicdomainrelay.temp.cluster.createCluster",
    "com.publicdomainrelay.temp.cluster.getKubeconfig",
    "com.publicdomainrelay.temp.cluster.listClusters",
    "com.publicdomainrelay.temp.cluster.controlPlaneUp",
    "com.publicdomainrelay.temp.cluster.controlPlaneDown",
    "com.publicdomainrelay.temp.cluster.deleteCluster",
    "com.publicdomainrelay.temp.cluster.revokeIdentity",
    "com.publicdomainrelay.temp.cluster.subscribeClusters",
    "computer.socialweb.k8s.kubectlApplyServerSide",
    "computer.socialweb.k8s.getJob",
    "com.publicdomainrelay.temp.market.submitRfp",
    "com.publicdomainrelay.temp.market.submitAccept",
    "com.publicdomainrelay.temp.market.submitEvent",
];

/// Changing the owner's DID document through their PDS (`requestPlcOperationSignature`,
/// `signPlcOperation`, `submitPlcOperation`). In plain words, for the owner: "Publish your
/// market key: lets this app add its market key to your identity document, so strict market
/// peers trust what it signs for you. Your PDS emails you a code first; nothing changes until
/// you type it in."
pub const IDENTITY: &str = "identity:*";

/// The coarse grant asked for only from servers without granular scopes.
pub const GENERIC: &str = "atproto transition:generic";

/// The least-privilege scope string.
pub fn granular() -> String {
    let repo = WRITTEN_COLLECTIONS
        .iter()
        .map(|nsid| format!("repo:{nsid}"));
    let rpc = CALLED_METHODS
        .iter()
        .map(|nsid| format!("rpc:{nsid}?aud=*"));
    std::iter::once("atproto".to_owned())
        .chain(repo)
        .chain(rpc)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every scope this client may ask for (the granular set, [`IDENTITY`] and the coarse
/// fallback), as its client metadata must declare them.
pub fn declared() -> String {
    format!("{} {IDENTITY} transition:generic", granular())
}

/// `scope` with `extra` scopes appended (a sign-in that asks for more than the usual set).
pub fn with_extra(scope: &str, extra: &[&str]) -> String {
    std::iter::once(scope)
        .chain(extra.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a granted scope string holds `scope` exactly.
pub fn grants(granted: &str, scope: &str) -> bool {
    granted.split_whitespace().any(|item| item == scope)
}

/// Whether a granted scope string is the coarse fallback.
pub fn is_generic(granted: &str) -> bool {
    grants(granted, "transition:generic")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_granular_scope_names_each_collection_and_method_once_and_nothing_broader() {
        let scope = granular();
        let items: Vec<&str> = scope.split(' ').collect();
        assert_eq!(items[0], "atproto");
        assert_eq!(
            items.len(),
            1 + WRITTEN_COLLECTIONS.len() + CALLED_METHODS.len()
        );
        assert!(items.contains(&"repo:computer.socialweb.infra"));
        assert!(items.contains(&"rpc:computer.socialweb.k8s.getJob?aud=*"));
        assert!(
            !items
                .iter()
                .any(|item| item.starts_with("transition:") || *item == "repo:*")
        );
        assert!(!is_generic(&scope));
        assert!(is_generic(GENERIC));
        assert!(!grants(&scope, IDENTITY));
    }

    #[test]
    fn the_identity_scope_is_declared_and_asked_for_only_as_an_extra() {
        assert!(grants(&declared(), IDENTITY));
        let asked = with_extra(&granular(), &[IDENTITY]);
        assert!(asked.starts_with(&granular()));
        assert!(grants(&asked, IDENTITY));
        assert_eq!(with_extra(GENERIC, &[]), GENERIC);
    }
}

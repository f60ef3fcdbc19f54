//! Who is asked for proposals: the contract's explicit `bidderDids`, and every bidder whose
//! `market.offering` applies to the payload's NSID (found by the adapter through a relay's
//! `listReposByCollection`), minus `denyBidderDids`.
//!
//! Invariants: [`asked_bidders`] is deduplicated by DID and stable: explicit bidders first in
//! declaration order, then offerings in the order given; a denied DID is never in it, whatever
//! else names it; an explicit bidder takes the endpoint of its offering when it has one.
//!
//! Limits (a relay or a crowd of strangers publishing offerings must not make the app read or
//! call without end): at most [`MAX_OFFERING_REPOS`] repos are read for offerings per auction
//! ([`offering_repos`]: explicit bidders first), and the discovered bidders asked stop at
//! [`MAX_ASKED`] in all; every explicit bidder is asked.

use swdesk_lexicon::com::publicdomainrelay::temp::market::offering::Offering;

/// An offering as found in a bidder's repo.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundOffering {
    /// The DID of the repo that holds the offering: the bidder.
    pub bidder_did: String,
    /// The record.
    pub offering: Offering,
}

/// A bidder the RFP is sent to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskedBidder {
    /// The bidder's DID.
    pub did: String,
    /// Its market service (`did:web:HOST#temp_market`) from its offering; `None` for an explicit
    /// bidder without an offering (the adapter resolves it from the DID document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// The most repos read for offerings in one auction.
pub const MAX_OFFERING_REPOS: usize = 256;
/// The most bidders one RFP goes to (explicit bidders beyond it are still asked).
pub const MAX_ASKED: usize = 64;

/// The repos to read offerings from: the explicit bidders', then those a relay listed, without
/// the denied ones or repeats, at most [`MAX_OFFERING_REPOS`].
pub fn offering_repos(explicit: &[String], listed: Vec<String>, denied: &[String]) -> Vec<String> {
    let mut repos: Vec<String> = Vec::new();
    for repo in explicit.iter().cloned().chain(listed) {
        if repos.len() >= MAX_OFFERING_REPOS {
            break;
        }
        if !denied.contains(&repo) && !repos.contains(&repo) {
            repos.push(repo);
        }
    }
    repos
}

/// The bidders asked for a payload of `payload_nsid`.
pub fn asked_bidders(
    explicit: &[String],
    offerings: &[FoundOffering],
    denied: &[String],
    payload_nsid: &str,
) -> Vec<AskedBidder> {
    let applying: Vec<&FoundOffering> = offerings
        .iter()
        .filter(|found| applies_to(&found.offering, payload_nsid))
        .collect();
    let endpoint_of = |did: &str| {
        applying
            .iter()
            .find(|found| found.bidder_did == did)
            .map(|found| found.offering.endpoint_url.clone())
    };
    let candidates = explicit
        .iter()
        .map(String::as_str)
        .chain(applying.iter().map(|found| found.bidder_did.as_str()));
    let mut asked: Vec<AskedBidder> = Vec::new();
    for (index, did) in candidates.enumerate() {
        let discovered = index >= explicit.len();
        if discovered && asked.len() >= MAX_ASKED {
            break;
        }
        let seen = asked.iter().any(|bidder| bidder.did == did);
        if !seen && !denied.iter().any(|deny| deny == did) {
            asked.push(AskedBidder {
                did: did.to_owned(),
                endpoint: endpoint_of(did),
            });
        }
    }
    asked
}

/// Whether an offering's `appliesTo` names `payload_nsid`.
pub fn applies_to(offering: &Offering, payload_nsid: &str) -> bool {
    offering.applies_to.iter().any(|nsid| nsid == payload_nsid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const VM: &str = "com.publicdomainrelay.temp.compute.vm";

    fn found(did: &str, applies: &[&str]) -> FoundOffering {
        FoundOffering {
            bidder_did: did.to_owned(),
            offering: Offering {
                endpoint_url: format!("did:web:{}#temp_market", did.replace(':', "-")),
                applies_to: applies.iter().map(|s| (*s).to_owned()).collect(),
                created_at: "2026-12-01T00:00:00.000Z".to_owned(),
                ..Offering::default()
            },
        }
    }

    fn dids(asked: &[AskedBidder]) -> Vec<&str> {
        asked.iter().map(|bidder| bidder.did.as_str()).collect()
    }

    #[test]
    fn explicit_bidders_come_first_then_offerings_for_the_payload_minus_the_denied() {
        let explicit = vec!["did:plc:a".to_owned(), "did:plc:d".to_owned()];
        let offerings = [
            found("did:plc:b", &[VM]),
            found("did:plc:c", &["com.example.other"]),
            found("did:plc:d", &[VM]),
            found("did:plc:e", &["com.example.other", VM]),
        ];
        let denied = vec!["did:plc:e".to_owned()];
        let asked = asked_bidders(&explicit, &offerings, &denied, VM);
        assert_eq!(dids(&asked), ["did:plc:a", "did:plc:d", "did:plc:b"]);
        assert_eq!(asked[0].endpoint, None);
        assert_eq!(
            asked[1].endpoint.as_deref(),
            Some("did:web:did-plc-d#temp_market")
        );
    }

    #[test]
    fn a_denied_bidder_is_never_asked_even_when_named_explicitly() {
        let explicit = vec!["did:plc:a".to_owned()];
        let asked = asked_bidders(&explicit, &[found("did:plc:a", &[VM])], &explicit, VM);
        assert!(asked.is_empty());
    }

    fn did() -> impl Strategy<Value = String> {
        "did:plc:[a-f]".prop_map(|s| s)
    }

    proptest! {
        #[test]
        fn the_asked_set_is_deduplicated_stable_and_never_holds_a_denied_did(
            explicit in prop::collection::vec(did(), 0..6),
            offered in prop::collection::vec((did(), any::<bool>()), 0..6),
            denied in prop::collection::vec(did(), 0..3),
        ) {
            let offerings: Vec<FoundOffering> = offered
                .iter()
                .map(|(did, vm)| found(did, if *vm { &[VM] } else { &["com.example.x"] }))
                .collect();
            let asked = asked_bidders(&explicit, &offerings, &denied, VM);
            let names = dids(&asked);
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            prop_assert_eq!(unique.len(), names.len());
            prop_assert!(names.iter().all(|did| !denied.iter().any(|d| d == did)));
            let expected: Vec<&str> = explicit
                .iter()
                .map(String::as_str)
                .chain(offered.iter().filter(|(_, vm)| *vm).map(|(did, _)| did.as_str()))
                .filter(|did| !denied.iter().any(|d| d == did))
                .fold(Vec::new(), |mut seen, did| {
                    if !seen.contains(&did) {
                        seen.push(did);
                    }
                    seen
                });
            prop_assert_eq!(names, expected);
        }
    }

    #[test]
    fn a_crowd_of_offerings_is_read_and_asked_only_up_to_the_limits() {
        let crowd: Vec<String> = (0..10_000)
            .map(|n| format!("did:plc:stranger{n}"))
            .collect();
        let explicit = vec!["did:plc:mine".to_owned()];
        let denied = vec!["did:plc:stranger0".to_owned()];
        let repos = offering_repos(&explicit, crowd.clone(), &denied);
        assert_eq!(repos.len(), MAX_OFFERING_REPOS);
        assert_eq!(repos[0], "did:plc:mine", "explicit bidders are read first");
        assert!(!repos.contains(&"did:plc:stranger0".to_owned()));

        let offerings: Vec<FoundOffering> = crowd.iter().map(|did| found(did, &[VM])).collect();
        let asked = asked_bidders(&explicit, &offerings, &denied, VM);
        assert_eq!(asked.len(), MAX_ASKED);
        assert_eq!(asked[0].did, "did:plc:mine");

        let many_explicit: Vec<String> = (0..100).map(|n| format!("did:plc:mine{n}")).collect();
        let asked = asked_bidders(&many_explicit, &offerings, &denied, VM);
        assert_eq!(
            asked.len(),
            100,
            "every explicit bidder is asked, no stranger beyond"
        );
    }
}

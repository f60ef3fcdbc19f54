//! Verifying the winner's `market.receipt` before the contract counts as deployed: it must be
//! authored by the winning bid's author, point at our RFP, the winning bid and our accept (uri
//! and cid each), and its `cid` must be the attestation CID that binds it to our accept as it
//! stands in our repo (the badge.blue remote-attestation rule, `lexicon::attestation`).
//!
//! The bidder's grant of free terms (`market.receipts.free`) is checked the same way
//! ([`verify_grant`]): by the winning bidder, about our `accepts.free`, bound to it by its `cid`.
//!
//! Invariants: both checks name every mismatch at once; they read values only (the adapter
//! fetched the receipt or grant and knows the records it wrote).

use serde_json::Value;
use swdesk_lexicon::Record;
use swdesk_lexicon::attestation::attestation_cid;
use swdesk_lexicon::com::atproto::repo::strong_ref;
use swdesk_lexicon::com::publicdomainrelay::temp::market::receipt::Receipt;
use swdesk_lexicon::com::publicdomainrelay::temp::market::receipts::free::Free as Grant;

use super::bids::author_of;
use crate::compute::phase::StrongRef;

/// What the receipt must match: the contract as the requester made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deal<'a> {
    /// Our RFP.
    pub rfp: &'a StrongRef,
    /// The winning bid.
    pub bid: &'a StrongRef,
    /// The winning bid's author.
    pub bidder: &'a str,
    /// Our accept.
    pub accept: &'a StrongRef,
    /// The accept record as written (with its `$type` and signatures).
    pub accept_record: &'a Value,
    /// The requester's DID: the repo that holds the accept.
    pub requester: &'a str,
}

/// One way a receipt does not match its deal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptMismatch {
    /// Someone else than the winning bidder wrote it.
    #[error("the receipt is in {found}'s repo, not the winning bidder {expected}'s")]
    Author {
        /// The winning bid's author.
        expected: String,
        /// The receipt's repo (or its uri when it names none).
        found: String,
    },
    /// A reference points elsewhere.
    #[error("the receipt's {field} is {found}, not {expected}")]
    Reference {
        /// `rfp`, `bid` or `accept`.
        field: &'static str,
        /// Ours.
        expected: String,
        /// The receipt's.
        found: String,
    },
    /// Its `cid` does not bind it to our accept.
    #[error("the receipt's cid {found} does not bind it to our accept (expected {expected})")]
    Binding {
        /// The attestation CID over our accept.
        expected: String,
        /// The receipt's `cid`.
        found: String,
    },
}

/// Every mismatch between the receipt at `receipt_uri` and the deal; empty when it verifies.
/// Its binding is checked against the receipt re-encoded from `receipt`: use
/// [`verify_stored_receipt`] for a receipt fetched from a peer.
pub fn verify_receipt(
    receipt_uri: &str,
    receipt: &Receipt,
    deal: &Deal<'_>,
) -> Vec<ReceiptMismatch> {
    let stored = receipt.to_record_value().unwrap_or(Value::Null);
    verify_stored_receipt(receipt_uri, receipt, &stored, deal)
}

/// [`verify_receipt`], its binding checked against the receipt `stored` as its author wrote it:
/// the bytes decide the attestation CID, and a re-encoded copy may differ from them (the public
/// implementation writes `payload: null`, which a typed copy drops).
pub fn verify_stored_receipt(
    receipt_uri: &str,
    receipt: &Receipt,
    stored: &Value,
    deal: &Deal<'_>,
) -> Vec<ReceiptMismatch> {
    let mut mismatches = Vec::new();
    mismatches.extend(author_mismatch(receipt_uri, deal.bidder));
    let references = [
        ("rfp", &receipt.rfp, deal.rfp),
        ("bid", &receipt.bid, deal.bid),
        ("accept", &receipt.accept, deal.accept),
    ];
    for (field, found, expected) in references {
        if !same(found, expected) {
            mismatches.push(ReceiptMismatch::Reference {
                field,
                expected: describe(&expected.uri, &expected.cid),
                found: describe(&found.uri, &found.cid),
            });
        }
    }
    mismatches.extend(bound(
        deal.accept_record,
        stored,
        deal.requester,
        &receipt.cid,
    ));
    mismatches
}

/// What a free grant must match: our acceptance of the winning bid's free terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeAcceptance<'a> {
    /// The winning bid's author.
    pub bidder: &'a str,
    /// Our `accepts.free`.
    pub accept: &'a StrongRef,
    /// It as written (with its `$type` and signatures).
    pub accept_record: &'a Value,
    /// The requester's DID: the repo that holds it.
    pub requester: &'a str,
}

/// Every mismatch between the grant at `grant_uri` and our acceptance; empty when it verifies.
pub fn verify_grant(
    grant_uri: &str,
    grant: &Grant,
    acceptance: &FreeAcceptance<'_>,
) -> Vec<ReceiptMismatch> {
    let mut mismatches = Vec::new();
    mismatches.extend(author_mismatch(grant_uri, acceptance.bidder));
    if !same(&grant.accept, acceptance.accept) {
        mismatches.push(ReceiptMismatch::Reference {
            field: "accept",
            expected: describe(&acceptance.accept.uri, &acceptance.accept.cid),
            found: describe(&grant.accept.uri, &grant.accept.cid),
        });
    }
    let metadata = grant.to_record_value().ok();
    mismatches.extend(metadata.and_then(|metadata| {
        bound(
            acceptance.accept_record,
            &metadata,
            acceptance.requester,
            &grant.cid,
        )
    }));
    mismatches
}

fn author_mismatch(uri: &str, bidder: &str) -> Option<ReceiptMismatch> {
    let author = author_of(uri);
    (author.as_deref() != Some(bidder)).then(|| ReceiptMismatch::Author {
        expected: bidder.to_owned(),
        found: author.unwrap_or_else(|| uri.to_owned()),
    })
}

/// A mismatch unless `found` is the attestation CID of `subject` in `repository` under `proof`.
fn bound(subject: &Value, proof: &Value, repository: &str, found: &str) -> Option<ReceiptMismatch> {
    let expected = attestation_cid(subject, proof, repository)
        .map(|cid| cid.to_string())
        .unwrap_or_else(|error| format!("(none: {error})"));
    (expected != found).then(|| ReceiptMismatch::Binding {
        expected,
        found: found.to_owned(),
    })
}

fn same(found: &strong_ref::StrongRef, expected: &StrongRef) -> bool {
    found.uri == expected.uri && found.cid == expected.cid
}

fn describe(uri: &str, cid: &str) -> String {
    format!("{uri} ({cid})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OWNER: &str = "did:plc:owner";
    const BIDDER: &str = "did:web:bidder.example.com";
    const CID_A: &str = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq";
    const CID_B: &str = "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i";

    fn strong(did: &str, collection: &str, cid: &str) -> StrongRef {
        StrongRef {
            uri: format!("at://{did}/com.publicdomainrelay.temp.market.{collection}/3lbjpbyznfc2a"),
            cid: cid.into(),
        }
    }

    struct Fixture {
        rfp: StrongRef,
        bid: StrongRef,
        accept: StrongRef,
        accept_record: Value,
    }

    fn fixture() -> Fixture {
        let rfp = strong(OWNER, "rfp", CID_A);
        let bid = strong(BIDDER, "bid", CID_B);
        let accept_record = json!({"$type": "com.publicdomainrelay.temp.market.accept",
            "rfp": {"uri": rfp.uri, "cid": rfp.cid}, "bid": {"uri": bid.uri, "cid": bid.cid},
            "signatures": []});
        Fixture {
            accept: strong(OWNER, "accept", CID_A),
            rfp,
            bid,
            accept_record,
        }
    }

    fn deal(fixture: &Fixture) -> Deal<'_> {
        Deal {
            rfp: &fixture.rfp,
            bid: &fixture.bid,
            bidder: BIDDER,
            accept: &fixture.accept,
            accept_record: &fixture.accept_record,
            requester: OWNER,
        }
    }

    /// The receipt an honest bidder mints for the fixture's accept.
    fn honest_receipt(fixture: &Fixture) -> Receipt {
        let mut receipt = Receipt {
            rfp: super::super::request::lexicon_ref(&fixture.rfp),
            bid: super::super::request::lexicon_ref(&fixture.bid),
            accept: super::super::request::lexicon_ref(&fixture.accept),
            submit_event: Some("did:web:bidder.example.com#compute_event".into()),
            ..Receipt::default()
        };
        let metadata = receipt.to_record_value().expect("value");
        receipt.cid = attestation_cid(&fixture.accept_record, &metadata, OWNER)
            .expect("cid")
            .to_string();
        receipt
    }

    const RECEIPT_URI: &str =
        "at://did:web:bidder.example.com/com.publicdomainrelay.temp.market.receipt/3lbjpbyznfc2h";

    #[test]
    fn an_honest_receipt_verifies() {
        let fixture = fixture();
        let receipt = honest_receipt(&fixture);
        assert_eq!(
            verify_receipt(RECEIPT_URI, &receipt, &deal(&fixture)),
            vec![]
        );
    }

    #[test]
    fn every_mismatch_of_a_receipt_is_named() {
        let fixture = fixture();
        let mut receipt = honest_receipt(&fixture);
        receipt.rfp.cid = CID_B.into();
        receipt.accept.uri = strong(OWNER, "accept", CID_A)
            .uri
            .replace("3lbjpbyznfc2a", "3lbjpbyznfc2z");
        let elsewhere = RECEIPT_URI.replace("did:web:bidder.example.com", "did:plc:mallory");
        let mismatches = verify_receipt(&elsewhere, &receipt, &deal(&fixture));
        let fields: Vec<String> = mismatches
            .iter()
            .map(|m| match m {
                ReceiptMismatch::Author { found, .. } => format!("author {found}"),
                ReceiptMismatch::Reference { field, .. } => (*field).to_owned(),
                ReceiptMismatch::Binding { .. } => "binding".to_owned(),
            })
            .collect();
        assert_eq!(
            fields,
            ["author did:plc:mallory", "rfp", "accept", "binding"]
        );
    }

    #[test]
    fn a_grant_is_checked_for_its_author_its_accept_and_its_binding() {
        let accept = strong(OWNER, "accepts.free", CID_A);
        let accept_record = json!({"$type": "com.publicdomainrelay.temp.market.accepts.free",
            "bid": {"uri": strong(BIDDER, "bid", CID_B).uri, "cid": CID_B}, "signatures": []});
        let acceptance = FreeAcceptance {
            bidder: BIDDER,
            accept: &accept,
            accept_record: &accept_record,
            requester: OWNER,
        };
        let mut grant = Grant {
            accept: super::super::request::lexicon_ref(&accept),
            ..Grant::default()
        };
        let metadata = grant.to_record_value().expect("value");
        grant.cid = attestation_cid(&accept_record, &metadata, OWNER)
            .expect("cid")
            .to_string();
        let uri = "at://did:web:bidder.example.com/com.publicdomainrelay.temp.market.receipts.free/3lbjpbyznfc2f";
        assert_eq!(verify_grant(uri, &grant, &acceptance), vec![]);
        grant.accept.cid = CID_B.into();
        let forged = uri.replace("did:web:bidder.example.com", "did:plc:mallory");
        let kinds: Vec<&str> = verify_grant(&forged, &grant, &acceptance)
            .iter()
            .map(|m| match m {
                ReceiptMismatch::Author { .. } => "author",
                ReceiptMismatch::Reference { field, .. } => field,
                ReceiptMismatch::Binding { .. } => "binding",
            })
            .collect();
        assert_eq!(kinds, ["author", "accept", "binding"]);
    }

    #[test]
    fn a_receipt_bound_to_a_copy_of_the_accept_in_another_repo_does_not_verify() {
        let fixture = fixture();
        let mut receipt = honest_receipt(&fixture);
        let metadata = receipt.to_record_value().expect("value");
        receipt.cid = attestation_cid(&fixture.accept_record, &metadata, "did:plc:copycat")
            .expect("cid")
            .to_string();
        let mismatches = verify_receipt(RECEIPT_URI, &receipt, &deal(&fixture));
        assert!(
            matches!(mismatches.as_slice(), [ReceiptMismatch::Binding { .. }]),
            "{mismatches:?}"
        );
    }
}

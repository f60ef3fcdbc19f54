//! Inputs the fuzz target `bid_cost` (`fuzz/`, see its README) found breaking a promise of
//! `auction::bids`: "a refusal repeats at most 64 characters of a peer's value". The bid's RFP
//! reference and the bid's own uri are a peer's values too.

use std::time::Duration;

use serde_json::json;
use swdesk_auction::bids::{Auction, ReceivedBid, Refusal, admit};
use swdesk_auction::compute::StrongRef;
use swdesk_auction::request::Bidding;
use swdesk_kernel::timestamp::Timestamp;

const RFP: &str = "at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2b";
const CID: &str = "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i";
const SHOWN_CHARS: usize = 64;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("a time")
}

fn auction() -> Auction {
    let rfp = StrongRef {
        uri: RFP.into(),
        cid: CID.into(),
    };
    let bidding = Bidding {
        window: Duration::from_secs(30),
        first_free: false,
    };
    Auction::asking(rfp, &["did:plc:a"], at(0), bidding)
}

fn received(uri: &str, rfp_uri: &str, rfp_cid: &str) -> ReceivedBid {
    let record = json!({
        "rfp": {"uri": rfp_uri, "cid": rfp_cid},
        "payload": {
            "uri": "at://did:plc:a/com.publicdomainrelay.temp.market.bids.free/3lbjpbyznfc2d",
            "cid": CID
        },
        "signatures": []
    });
    ReceivedBid {
        reference: StrongRef {
            uri: uri.into(),
            cid: CID.into(),
        },
        record: serde_json::from_value(record).expect("a bid"),
        received_at: at(1),
        checked: None,
        terms: None,
    }
}

/// The fuzzer's seed `other-rfp` (an RFP uri one character longer than ours) and a long one.
#[test]
fn a_bid_for_another_rfp_is_refused_repeating_at_most_64_characters_of_its_reference() {
    let long = format!("at://did:plc:a/com.example.rfp/{}", "x".repeat(4096));
    for (rfp_uri, rfp_cid) in [
        (format!("{RFP}x"), CID.to_owned()),
        (long, "b".repeat(4096)),
    ] {
        let bid = received(
            "at://did:plc:a/com.publicdomainrelay.temp.market.bid/3lbjpbyznfc2c",
            &rfp_uri,
            &rfp_cid,
        );
        let refusals = admit(&auction(), &bid).expect_err("another RFP");
        for refusal in &refusals {
            if let Refusal::OtherRfp { found, .. } = refusal {
                // `<uri> (<cid>)`, each cut.
                assert!(
                    found.chars().count() <= 2 * SHOWN_CHARS + 3,
                    "repeated whole: {found:?}"
                );
            }
        }
    }
}

#[test]
fn a_bid_whose_uri_names_no_author_is_refused_repeating_at_most_64_characters_of_it() {
    let uri = format!("at://{}", "a".repeat(4096));
    let bid = received(&uri, RFP, CID);
    let refusals = admit(&auction(), &bid).expect_err("no author");
    for refusal in &refusals {
        if let Refusal::NoAuthor(uri) = refusal {
            assert!(
                uri.chars().count() <= SHOWN_CHARS,
                "repeated whole: {} characters",
                uri.len()
            );
        }
    }
}

//! `submitRfp`: an open RFP gets a signed bid that the requester's own admission rules count;
//! two bidders with different prices both bid and the cheaper wins; the refusal and delay
//! controls; an RFP the caller did not author, or at another CID, is refused.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve, is_signed_by};
use swdesk_core::auction::bidders::AskedBidder;
use swdesk_core::auction::bids::{Auction, Cost, Decision, ReceivedBid, admit, decide};
use swdesk_core::auction::request::{Bidding, rfp as rfp_record};
use swdesk_core::compute::StrongRef;
use swdesk_core::timestamp::Timestamp;
use swdesk_lexicon::Record;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::bid::Bid;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{bid, bids, offering, rfp, submit_rfp};
use swdesk_sandbox_bidder::{Behaviour, RunningBidder};

use crate::support::{Requester, assert_valid, get_record, list_records, sandbox};

fn rfp_input(rfp: &StrongRef) -> Value {
    json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid})
}

/// The bid a `submitRfp` answer names, as the requester receives it.
async fn received(requester: &Requester, answer: &Value) -> (ReceivedBid, Value) {
    let uri = answer["bidUri"].as_str().expect("a bid uri").to_owned();
    let (value, cid) = get_record(&requester.resolver, &uri).await;
    assert_eq!(answer["bidCid"].as_str(), Some(cid.as_str()));
    let record = Bid::from_record_value(value.clone()).expect("a market.bid");
    let bid = ReceivedBid {
        reference: StrongRef { uri, cid },
        record,
        received_at: Timestamp::from_unix_millis(1_000).unwrap(),
    };
    (bid, value)
}

fn auction(rfp: &StrongRef, bidders: &[&RunningBidder]) -> Auction {
    Auction {
        rfp: rfp.clone(),
        asked: bidders
            .iter()
            .map(|bidder| AskedBidder {
                did: bidder.account.clone(),
                endpoint: Some(bidder.market_service()),
            })
            .collect(),
        denied: Vec::new(),
        opened_at: Timestamp::from_unix_millis(0).unwrap(),
        bidding: Bidding {
            window: Duration::from_secs(30),
            first_free: false,
        },
    }
}

#[tokio::test]
async fn an_open_rfp_gets_a_signed_free_bid_that_the_requester_counts() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let requester = sandbox.requester("owner").await;
    let offerings = list_records(&requester.resolver, &bidder.account, offering::NSID).await;
    assert_eq!(offerings.len(), 1);
    assert_eq!(
        offerings[0]["value"]["endpointUrl"],
        json!(format!("{}#temp_market", bidder.did))
    );
    assert_eq!(offerings[0]["value"]["appliesTo"], json!([vm::NSID]));
    assert_eq!(
        requester.endpoint(&bidder.did).await,
        bidder.url.as_str().trim_end_matches('/')
    );

    let rfp = requester.rfp().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!(
        (answer.status, &answer.body["ok"]),
        (200, &json!(true)),
        "{:?}",
        answer.body
    );
    let (received, value) = received(&requester, &answer.body).await;
    assert!(is_signed_by(
        &value,
        &bidder.account,
        &bidder.attestation_did_key()
    ));
    assert_eq!(
        received.record.submit_accept.as_deref(),
        Some(bidder.market_service().as_str())
    );
    let counted = admit(&auction(&rfp, &[&bidder]), &received).expect("the bid counts");
    assert_eq!(
        (counted.free, counted.cost, counted.bidder.as_str()),
        (true, Cost::Nanos(0), bidder.account.as_str())
    );
    let (terms, _) = get_record(&requester.resolver, &counted.terms.uri).await;
    assert_valid(bid::NSID, &value);
    assert_valid(bids::free::NSID, &terms);
    assert_valid(offering::NSID, &offerings[0]["value"]);
    assert!(is_signed_by(
        &terms,
        &bidder.account,
        &bidder.attestation_did_key()
    ));
    assert_eq!(terms["url"], json!(format!("{}free/receipt", bidder.url)));

    let again = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!(
        again.body["bidUri"], answer.body["bidUri"],
        "the same RFP gets the same bid"
    );
    let state = bidder.state();
    assert_eq!((state.rfps_seen.len(), state.bids.len()), (1, 1));
    assert_eq!(state.rfps_seen[0].requester, requester.did);
}

#[tokio::test]
async fn two_bidders_with_different_prices_both_bid_and_the_cheaper_wins() {
    let sandbox = sandbox().await;
    let priced = |cost: &str| Behaviour {
        cost: Some(cost.to_owned()),
        ..Behaviour::default()
    };
    let dear = sandbox.bidder(priced("0.50")).await;
    let cheap = sandbox.bidder(priced("0.25")).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let auction = auction(&rfp, &[&dear, &cheap]);
    let mut counted = Vec::new();
    for bidder in [&dear, &cheap] {
        let answer = requester
            .call(bidder, submit_rfp::NSID, &rfp_input(&rfp))
            .await;
        let (received, _) = received(&requester, &answer.body).await;
        counted.push(admit(&auction, &received).expect("the bid counts"));
    }
    let costs: Vec<String> = counted.iter().map(|bid| bid.cost.to_string()).collect();
    assert_eq!(costs, ["0.5", "0.25"]);
    let closed = Timestamp::from_unix_millis(60_000).unwrap();
    match decide(&auction, &counted, closed) {
        Decision::Winner { bid, .. } => assert_eq!(bid.bidder, cheap.account),
        other => panic!("no winner: {other:?}"),
    }
}

#[tokio::test]
async fn a_refusing_bidder_answers_not_ok_and_writes_no_bid() {
    let sandbox = sandbox().await;
    let refusing = Behaviour {
        refuse: true,
        ..Behaviour::default()
    };
    let bidder = sandbox.bidder(refusing).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!(
        (answer.status, &answer.body["ok"]),
        (200, &json!(false)),
        "{:?}",
        answer.body
    );
    assert_eq!(answer.body.get("bidUri"), None);
    assert_eq!(
        list_records(&requester.resolver, &bidder.account, bid::NSID).await,
        Vec::<Value>::new()
    );
    assert_eq!(bidder.state().rfps_refused, vec![rfp]);
    assert!(bidder.state().bids.is_empty());
}

#[tokio::test]
async fn a_slow_bidder_bids_only_after_its_delay_and_a_told_bidder_changes_its_price() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    bidder.set_behaviour(Behaviour {
        cost: Some("2".into()),
        bid_delay: Duration::from_millis(1_200),
        ..Behaviour::default()
    });
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let started = Instant::now();
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert!(
        started.elapsed() >= Duration::from_millis(1_200),
        "answered after {:?}",
        started.elapsed()
    );
    let (received, _) = received(&requester, &answer.body).await;
    let counted = admit(&auction(&rfp, &[&bidder]), &received).expect("the bid counts");
    assert_eq!(counted.cost.to_string(), "2");
}

#[tokio::test]
async fn an_rfp_the_caller_did_not_author_or_at_another_cid_is_refused() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let owner = sandbox.requester("owner").await;
    let mallory = sandbox.requester("mallory").await;
    let rfp = owner.rfp().await;
    let answer = mallory
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (403, "Forbidden"),
        "{:?}",
        answer.body
    );
    let other = owner.rfp().await;
    let mixed = json!({"rfpUri": rfp.uri, "rfpCid": other.cid});
    let answer = owner.call(&bidder, submit_rfp::NSID, &mixed).await;
    assert_eq!(
        (answer.status, answer.error()),
        (400, "InvalidRequest"),
        "{:?}",
        answer.body
    );
    assert!(bidder.state().bids.is_empty());
}

#[tokio::test]
async fn an_rfp_signed_with_a_key_its_author_does_not_publish_is_refused() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let mut requester = sandbox.requester("owner").await;
    requester.key = AttestationKey::generate(Curve::P256);
    let rfp = requester.rfp().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!((answer.status, answer.error()), (400, "InvalidRequest"));
    let message = answer.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&requester.key.did_key()) && message.contains("does not publish"),
        "{message}"
    );
    assert!(bidder.state().bids.is_empty());

    requester.publish_key().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
}

#[tokio::test]
async fn an_unsigned_rfp_or_one_for_another_payload_is_refused() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let requester = sandbox.requester("owner").await;
    let signed = requester.rfp().await;
    let (value, _) = get_record(&requester.resolver, &signed.uri).await;
    let mut unsigned = value.clone();
    unsigned["signatures"] = json!([]);
    let unsigned = requester.create(rfp::NSID, &unsigned).await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&unsigned))
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (400, "InvalidRequest"),
        "{:?}",
        answer.body
    );

    let thing = json!({"$type": "com.example.sandbox.thing", "text": "not a vm"});
    let thing = requester.create("com.example.sandbox.thing", &thing).await;
    let record = rfp_record(&thing, None, None).to_record_value().unwrap();
    let (other, _) = requester.signed(rfp::NSID, &record).await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&other))
        .await;
    assert_eq!(
        (answer.status, answer.error()),
        (400, "NotApplicable"),
        "{:?}",
        answer.body
    );
    assert!(bidder.state().rfps_seen.is_empty());
    assert!(bidder.state().bids.is_empty());
}

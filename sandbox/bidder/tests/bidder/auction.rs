//! `submitRfp`: an open RFP gets a signed bid that the requester's own admission rules count;
//! a priced bidder bids signed paid terms (`bids.x402`) whose payment endpoint answers 402 and
//! which get no free grant; the requester's rules on real bids (a free bid wins over a cheaper
//! looking paid one, only paid bids reject the auction naming the cheapest, the earlier of two
//! free bids wins); the refusal and delay controls; an RFP the caller did not author, or at
//! another CID, is refused.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve, is_signed_by};
use swdesk_auction::bidders::AskedBidder;
use swdesk_auction::bids::{Auction, Cost, CountedBid, Decision, ReceivedBid, admit, decide};
use swdesk_auction::compute::StrongRef;
use swdesk_auction::request::{Bidding, rfp as rfp_record};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::Record;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::bid::Bid;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    accepts, bid, bids, offering, rfp, submit_accept, submit_rfp,
};
use swdesk_sandbox_bidder::{Behaviour, RunningBidder};

use crate::support::{Requester, assert_valid, get_record, list_records, sandbox, strong};

/// The collection of paid terms (not in our lexicons).
const PAID_TERMS: &str = "com.publicdomainrelay.temp.market.bids.x402";

/// The at-uri percent-encoded as one path segment.
fn encode(uri: &str) -> String {
    uri.replace('%', "%25")
        .replace(':', "%3A")
        .replace('/', "%2F")
}

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
        checked: None,
        terms: None,
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
        declined: Vec::new(),
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
    assert_eq!(
        value["payload"].get("cost"),
        None,
        "free terms ask no price"
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

/// A behaviour asking `cost` a guest.
fn priced(cost: &str) -> Behaviour {
    Behaviour {
        cost: Some(cost.to_owned()),
        ..Behaviour::default()
    }
}

/// The bids of `bidders` on one RFP, in this order, as the requester counts them (`received_at`
/// one second apart, in that order).
async fn counted_bids(
    requester: &Requester,
    rfp: &StrongRef,
    auction: &Auction,
    bidders: &[&RunningBidder],
) -> Vec<CountedBid> {
    let mut counted = Vec::new();
    for (second, bidder) in (1..).zip(bidders) {
        let answer = requester
            .call(bidder, submit_rfp::NSID, &rfp_input(rfp))
            .await;
        assert_eq!(answer.status, 200, "{:?}", answer.body);
        let (mut received, _) = received(requester, &answer.body).await;
        received.received_at = Timestamp::from_unix_millis(second * 1_000).unwrap();
        counted.push(admit(auction, &received).expect("the bid counts"));
    }
    counted
}

/// When every bid is in and the window closed.
fn closed() -> Timestamp {
    Timestamp::from_unix_millis(60_000).unwrap()
}

#[tokio::test]
async fn a_priced_bidder_writes_signed_x402_terms_whose_payment_endpoint_answers_402() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(priced("0.35")).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let (received, value) = received(&requester, &answer.body).await;
    assert_valid(bid::NSID, &value);
    assert_eq!(value["payload"]["cost"], json!("0.35"));
    let counted = admit(&auction(&rfp, &[&bidder]), &received).expect("a paid bid counts");
    assert_eq!(
        (counted.free, counted.cost.to_string()),
        (false, "0.35".to_owned())
    );

    let (terms, _) = get_record(&requester.resolver, &counted.terms.uri).await;
    assert!(
        counted
            .terms
            .uri
            .starts_with(&format!("at://{}/{PAID_TERMS}/", bidder.account)),
        "{}",
        counted.terms.uri
    );
    let payment_url = format!("{}x402/receipt", bidder.url);
    assert_eq!(terms["$type"], json!(PAID_TERMS));
    assert_eq!(terms["cost"], json!("0.35"));
    assert_eq!(terms["currency"], json!("USDC"));
    assert_eq!(terms["frequency"], json!("one-time"));
    assert_eq!(terms["prepay"], json!(true));
    assert_eq!(terms["url"], json!(payment_url));
    assert!(is_signed_by(
        &terms,
        &bidder.account,
        &bidder.attestation_did_key()
    ));
    let state = bidder.state();
    assert_eq!(state.bids.len(), 1);
    assert_eq!(state.bids[0].cost.as_deref(), Some("0.35"));
    assert!(!state.bids[0].is_free());
    assert_eq!(state.bids[0].terms, counted.terms);

    let accepts_x402 = format!(
        "at://{}/com.publicdomainrelay.temp.market.accepts.x402/3lbjpbyznfc2a",
        requester.did
    );
    let payment = reqwest::get(format!("{payment_url}/{}/bafyreid", encode(&accepts_x402)))
        .await
        .unwrap();
    assert_eq!(payment.status().as_u16(), 402);
    let body: Value = payment.json().await.unwrap();
    assert_eq!(body["error"], json!("PaymentRequired"), "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("takes no payment")),
        "{body}"
    );
}

#[tokio::test]
async fn a_paid_bid_gets_no_free_grant_and_so_no_accept() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(priced("0.35")).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&rfp))
        .await;
    let (received, _) = received(&requester, &answer.body).await;
    let terms = received.record.payload.clone();
    let terms = StrongRef {
        uri: terms.uri,
        cid: terms.cid,
    };
    let record = json!({"$type": accepts::free::NSID, "bid": strong(&received.reference),
        "payload": strong(&terms), "signatures": []});
    let (accepts_free, _) = requester.signed(accepts::free::NSID, &record).await;
    let grant_url = format!(
        "{}free/receipt/{}/{}",
        bidder.url,
        encode(&accepts_free.uri),
        accepts_free.cid
    );
    let refused = reqwest::get(grant_url).await.unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("paid terms")),
        "{body}"
    );

    let (accept, _) = requester
        .accept(&rfp, &received.reference, &accepts_free)
        .await;
    let input = json!({"acceptUri": accept.uri, "acceptCid": accept.cid});
    let answer = requester.call(&bidder, submit_accept::NSID, &input).await;
    assert_eq!(
        (answer.status, answer.error()),
        (400, "InvalidRequest"),
        "{:?}",
        answer.body
    );
    let state = bidder.state();
    assert!(state.grants.is_empty(), "{:?}", state.grants);
    assert!(state.guests.is_empty(), "{:?}", state.guests);
}

#[tokio::test]
async fn a_free_bidder_wins_over_a_cheaper_looking_earlier_paid_one_which_counts_with_its_price() {
    let sandbox = sandbox().await;
    let paid = sandbox.bidder(priced("0.000000001")).await;
    let free = sandbox.bidder(Behaviour::default()).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let auction = auction(&rfp, &[&paid, &free]);
    let counted = counted_bids(&requester, &rfp, &auction, &[&paid, &free]).await;
    let shown: Vec<(&str, bool, String)> = counted
        .iter()
        .map(|bid| (bid.bidder.as_str(), bid.free, bid.cost.to_string()))
        .collect();
    assert_eq!(
        shown,
        [
            (paid.account.as_str(), false, "0.000000001".to_owned()),
            (free.account.as_str(), true, "0".to_owned()),
        ]
    );
    match decide(&auction, &counted, closed()) {
        Decision::Winner { bid, .. } => assert_eq!(bid.bidder, free.account),
        other => panic!("no winner: {other:?}"),
    }
}

#[tokio::test]
async fn only_paid_bids_reject_the_auction_naming_the_cheapest_paid_offer() {
    let sandbox = sandbox().await;
    let dear = sandbox.bidder(priced("0.50")).await;
    let cheap = sandbox.bidder(priced("0.35")).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let auction = auction(&rfp, &[&dear, &cheap]);
    let counted = counted_bids(&requester, &rfp, &auction, &[&dear, &cheap]).await;
    let costs: Vec<String> = counted.iter().map(|bid| bid.cost.to_string()).collect();
    assert_eq!(costs, ["0.5", "0.35"]);
    assert_eq!(
        decide(&auction, &counted, closed()),
        Decision::Rejected {
            reason: format!(
                "no free bid; cheapest paid offer: 0.35 from {} (2 paid offer(s); this app does \
                 not pay)",
                cheap.account
            )
        }
    );
}

#[tokio::test]
async fn of_two_free_bidders_the_earlier_bid_wins() {
    let sandbox = sandbox().await;
    let early = sandbox.bidder(Behaviour::default()).await;
    let late = sandbox.bidder(priced("0")).await;
    let requester = sandbox.requester("owner").await;
    let rfp = requester.rfp().await;
    let auction = auction(&rfp, &[&late, &early]);
    let mut counted = counted_bids(&requester, &rfp, &auction, &[&early, &late]).await;
    assert!(counted.iter().all(|bid| bid.free && bid.cost == Cost::ZERO));
    assert!(
        late.state().bids[0].is_free(),
        "a zero price bids free terms"
    );
    // Received in this order, listed the other way round: the earlier still wins.
    counted.reverse();
    match decide(&auction, &counted, closed()) {
        Decision::Winner { bid, .. } => assert_eq!(bid.bidder, early.account),
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
    let (paid, _) = received(&requester, &answer.body).await;
    let counted = admit(&auction(&rfp, &[&bidder]), &paid).expect("the bid counts");
    assert_eq!(
        (counted.free, counted.cost.to_string()),
        (false, "2".to_owned())
    );

    bidder.set_behaviour(Behaviour::default());
    let again = requester.rfp().await;
    let answer = requester
        .call(&bidder, submit_rfp::NSID, &rfp_input(&again))
        .await;
    let (free, value) = received(&requester, &answer.body).await;
    assert_eq!(value["payload"].get("cost"), None, "{value}");
    let counted = admit(&auction(&again, &[&bidder]), &free).expect("the bid counts");
    assert_eq!((counted.free, counted.cost), (true, Cost::ZERO));
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
async fn an_rfp_signed_with_a_key_bound_to_its_author_in_no_way_is_refused() {
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
        message.contains(&requester.key.did_key())
            && message.contains("neither publishes nor lists in its DID document"),
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

//! `submitAccept` and `submitEvent`: a settled accept gets a receipt that verifies under the
//! requester's own rules (`auction::receipt`), the guest starts, reports itself and
//! publishes its key; the accept's author releases it or sends it a sealed secret it opens; a
//! release or a secret from another account, a secret sealed to another key, or an accept by
//! someone other than the RFP's author, is refused; the fail-after-accept control.

use serde_json::{Value, json};
use swdesk_atproto::attestation::is_signed_by;
use swdesk_auction::compute::StrongRef;
use swdesk_auction::receipt::{Deal, FreeAcceptance, verify_grant, verify_receipt};
use swdesk_lexicon::Record;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::{on_network, started};
use swdesk_lexicon::com::publicdomainrelay::temp::market::receipt::Receipt;
use swdesk_lexicon::com::publicdomainrelay::temp::market::receipts::free::Free as Grant;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    event, receipt, receipts, submit_accept, submit_event, submit_rfp,
};
use swdesk_lexicon::computer::socialweb::secret::guest_key;
use swdesk_sandbox_bidder::{Behaviour, GuestPhase, Opened, RunningBidder};

use crate::support::{
    Requester, Sandbox, assert_valid, eventually, get_record, list_records, sandbox,
};

/// A contract up to the receipt: the RFP, the bid, the receipt.
pub struct Held {
    pub rfp: StrongRef,
    pub bid: StrongRef,
    pub receipt: StrongRef,
}

/// RFP and bid (in the `submitRfp` answer), then [`settled`].
async fn held(requester: &Requester, bidder: &RunningBidder) -> Held {
    let rfp = requester.rfp().await;
    let answer = requester
        .call(
            bidder,
            submit_rfp::NSID,
            &json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid}),
        )
        .await;
    let bid = StrongRef {
        uri: answer.body["bidUri"].as_str().expect("a bid").to_owned(),
        cid: answer.body["bidCid"].as_str().expect("a cid").to_owned(),
    };
    settled(requester, bidder, rfp, bid, None).await
}

/// Free settlement of `bid` (grant verified), the accept (naming `submit_event`, if any),
/// `submitAccept`, the receipt verified.
pub async fn settled(
    requester: &Requester,
    bidder: &RunningBidder,
    rfp: StrongRef,
    bid: StrongRef,
    submit_event: Option<&str>,
) -> Held {
    let (bid_value, _) = get_record(&requester.resolver, &bid.uri).await;
    let terms = StrongRef {
        uri: bid_value["payload"]["uri"].as_str().unwrap().to_owned(),
        cid: bid_value["payload"]["cid"].as_str().unwrap().to_owned(),
    };
    let (terms_value, _) = get_record(&requester.resolver, &terms.uri).await;
    let (accepts_free, accepts_value, grant) = requester
        .settle_free(&bid, terms_value["url"].as_str().unwrap(), &terms)
        .await;
    check_grant(requester, bidder, &accepts_free, &accepts_value, &grant).await;
    let (accept, accept_value) = requester
        .accept_with(&rfp, &bid, &grant, submit_event)
        .await;
    let input = json!({"acceptUri": accept.uri, "acceptCid": accept.cid});
    let answer = requester.call(bidder, submit_accept::NSID, &input).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let output: submit_accept::Output = serde_json::from_value(answer.body).unwrap();
    assert_eq!(output.submit_event, format!("{}#compute_event", bidder.did));
    assert!(output.uri.ends_with(&format!("/{}", output.id)));
    let receipt = StrongRef {
        uri: output.uri,
        cid: output.cid,
    };
    let (receipt_value, cid) = get_record(&requester.resolver, &receipt.uri).await;
    assert_eq!(cid, receipt.cid);
    assert!(is_signed_by(
        &receipt_value,
        &bidder.account,
        &bidder.attestation_did_key()
    ));
    let deal = Deal {
        rfp: &rfp,
        bid: &bid,
        bidder: &bidder.account,
        accept: &accept,
        accept_record: &accept_value,
        requester: &requester.did,
    };
    assert_valid(receipt::NSID, &receipt_value);
    let parsed = Receipt::from_record_value(receipt_value).expect("a market.receipt");
    assert_eq!(verify_receipt(&receipt.uri, &parsed, &deal), vec![]);
    let again = requester.call(bidder, submit_accept::NSID, &input).await;
    assert_eq!(
        again.body["uri"],
        json!(receipt.uri),
        "the same accept gets the same receipt"
    );
    Held { rfp, bid, receipt }
}

async fn check_grant(
    requester: &Requester,
    bidder: &RunningBidder,
    accepts_free: &StrongRef,
    accepts_value: &Value,
    grant: &StrongRef,
) {
    let (grant_value, _) = get_record(&requester.resolver, &grant.uri).await;
    assert!(is_signed_by(
        &grant_value,
        &bidder.account,
        &bidder.attestation_did_key()
    ));
    let acceptance = FreeAcceptance {
        bidder: &bidder.account,
        accept: accepts_free,
        accept_record: accepts_value,
        requester: &requester.did,
    };
    assert_valid(receipts::free::NSID, &grant_value);
    let parsed = Grant::from_record_value(grant_value).expect("a receipts.free");
    assert_eq!(verify_grant(&grant.uri, &parsed, &acceptance), vec![]);
}

async fn phase_reaches(bidder: &RunningBidder, receipt: &StrongRef, phase: GuestPhase) {
    eventually(&format!("the guest {phase:?}"), || {
        (bidder.state().guest(&receipt.uri)?.phase == phase).then_some(())
    })
    .await;
}

async fn release(
    requester: &Requester,
    bidder: &RunningBidder,
    receipt: &StrongRef,
) -> crate::support::Answer {
    let (event, record) = requester.release_event(receipt).await;
    let input = json!({"uri": event.uri, "cid": event.cid, "record": record});
    requester.call(bidder, submit_event::NSID, &input).await
}

async fn running(sandbox: &Sandbox) -> (RunningBidder, Requester, Held) {
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let requester = sandbox.requester("owner").await;
    let held = held(&requester, &bidder).await;
    phase_reaches(&bidder, &held.receipt, GuestPhase::OnNetwork).await;
    eventually("the guest's key", || {
        bidder.state().guest(&held.receipt.uri)?.key.clone()
    })
    .await;
    (bidder, requester, held)
}

#[tokio::test]
async fn an_accept_gets_a_verified_receipt_and_the_guest_reports_started_then_on_network() {
    let sandbox = sandbox().await;
    let (bidder, requester, held) = running(&sandbox).await;
    let guest = bidder
        .state()
        .guest(&held.receipt.uri)
        .cloned()
        .expect("a guest");
    assert_eq!(
        (&guest.bid, guest.accept_author.as_str()),
        (&held.bid, requester.did.as_str())
    );
    let state = bidder.state();
    assert!(
        state
            .bids
            .iter()
            .any(|made| made.rfp == held.rfp && made.bid == held.bid)
    );
    let events = list_records(&requester.resolver, &bidder.account, event::NSID).await;
    let mut payloads: Vec<String> = Vec::new();
    for record in &events {
        assert_eq!(record["value"]["receipt"]["uri"], json!(held.receipt.uri));
        assert_valid(event::NSID, &record["value"]);
        assert!(is_signed_by(
            &record["value"],
            &bidder.account,
            &bidder.attestation_did_key()
        ));
        let payload = record["value"]["payload"]["uri"].as_str().unwrap();
        payloads.push(payload.split('/').nth(3).unwrap().to_owned());
    }
    payloads.sort();
    assert_eq!(payloads, [on_network::NSID, started::NSID, guest_key::NSID]);
    let keys = list_records(&requester.resolver, &bidder.account, guest_key::NSID).await;
    assert_valid(guest_key::NSID, &keys[0]["value"]);
    assert_eq!(keys[0]["value"]["receipt"]["uri"], json!(held.receipt.uri));
    assert_eq!(keys[0]["value"]["recipient"].as_str(), guest.key.as_deref());
    let on_network = list_records(&requester.resolver, &bidder.account, on_network::NSID).await;
    assert_eq!(on_network[0]["value"]["address"], json!(guest.address));
    assert_valid(on_network::NSID, &on_network[0]["value"]);
}

#[tokio::test]
async fn the_accept_author_releases_the_guest_and_it_is_torn_down() {
    let sandbox = sandbox().await;
    let (bidder, requester, held) = running(&sandbox).await;
    let answer = release(&requester, &bidder, &held.receipt).await;
    assert_eq!(
        (answer.status, &answer.body["ok"]),
        (200, &json!(true)),
        "{:?}",
        answer.body
    );
    let state = bidder.state();
    let guest = state.guest(&held.receipt.uri).unwrap();
    assert_eq!(guest.phase, GuestPhase::TornDown);
    assert!(guest.released_by.is_some());
    assert_eq!(state.running(), 0);
}

#[tokio::test]
async fn a_sealed_secret_opens_only_from_the_accept_author_and_to_the_guests_own_key() {
    let sandbox = sandbox().await;
    let (bidder, owner, held) = running(&sandbox).await;
    let guest_key = bidder
        .state()
        .guest(&held.receipt.uri)
        .unwrap()
        .key
        .clone()
        .unwrap();
    let deliver = async |from: &Requester, recipient: &str, value: &[u8]| {
        let (event, record) = from.sealed_event(&held.receipt, recipient, value).await;
        let input = json!({"uri": event.uri, "cid": event.cid, "record": record});
        from.call(&bidder, submit_event::NSID, &input).await
    };

    let mallory = sandbox.requester("mallory").await;
    let answer = deliver(&mallory, &guest_key, b"from mallory").await;
    assert_eq!(
        (answer.status, answer.error()),
        (403, "Forbidden"),
        "{:?}",
        answer.body
    );
    let stranger = age::x25519::Identity::generate().to_public().to_string();
    let answer = deliver(&owner, &stranger, b"to another key").await;
    assert_eq!(answer.status, 400, "{:?}", answer.body);
    assert!(
        answer.body.to_string().contains("another key"),
        "{:?}",
        answer.body
    );
    assert!(
        bidder
            .state()
            .guest(&held.receipt.uri)
            .unwrap()
            .opened
            .is_empty()
    );

    let answer = deliver(&owner, &guest_key, b"hunter2").await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(
        bidder.state().guest(&held.receipt.uri).unwrap().opened,
        vec![Opened {
            name: "db-password".into(),
            version: 1,
            sha256: "f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7".into(),
        }]
    );
}

#[tokio::test]
async fn a_release_signed_by_another_account_is_refused_and_the_guest_keeps_running() {
    let sandbox = sandbox().await;
    let (bidder, _owner, held) = running(&sandbox).await;
    let mallory = sandbox.requester("mallory").await;
    let answer = release(&mallory, &bidder, &held.receipt).await;
    assert_eq!(
        (answer.status, answer.error()),
        (403, "Forbidden"),
        "{:?}",
        answer.body
    );
    assert_eq!(
        bidder.state().guest(&held.receipt.uri).unwrap().phase,
        GuestPhase::OnNetwork
    );
    assert_eq!(bidder.state().running(), 1);
}

#[tokio::test]
async fn an_accept_by_someone_else_than_the_rfp_author_is_forbidden() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let owner = sandbox.requester("owner").await;
    let mallory = sandbox.requester("mallory").await;
    let rfp = owner.rfp().await;
    let answer = owner
        .call(
            &bidder,
            submit_rfp::NSID,
            &json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid}),
        )
        .await;
    let bid = StrongRef {
        uri: answer.body["bidUri"].as_str().unwrap().to_owned(),
        cid: answer.body["bidCid"].as_str().unwrap().to_owned(),
    };
    let (accept, _) = mallory.accept(&rfp, &bid, &bid).await;
    let input = json!({"acceptUri": accept.uri, "acceptCid": accept.cid});
    let answer = mallory.call(&bidder, submit_accept::NSID, &input).await;
    assert_eq!(
        (answer.status, answer.error()),
        (403, "Forbidden"),
        "{:?}",
        answer.body
    );
    let answer = owner.call(&bidder, submit_accept::NSID, &input).await;
    assert_eq!(
        (answer.status, answer.error()),
        (403, "Forbidden"),
        "{:?}",
        answer.body
    );
    assert!(bidder.state().guests.is_empty());
}

#[tokio::test]
async fn a_bidder_told_to_fail_after_accept_writes_the_receipt_then_its_guest_fails_and_can_be_released()
 {
    let sandbox = sandbox().await;
    let failing = Behaviour {
        fail_after_accept: true,
        ..Behaviour::default()
    };
    let bidder = sandbox.bidder(failing).await;
    let requester = sandbox.requester("owner").await;
    let held = held(&requester, &bidder).await;
    phase_reaches(&bidder, &held.receipt, GuestPhase::Failed).await;
    assert_eq!(
        list_records(&requester.resolver, &bidder.account, event::NSID).await,
        Vec::<Value>::new()
    );
    let answer = release(&requester, &bidder, &held.receipt).await;
    assert_eq!(
        (answer.status, &answer.body["ok"]),
        (200, &json!(true)),
        "{:?}",
        answer.body
    );
    assert_eq!(
        bidder.state().guest(&held.receipt.uri).unwrap().phase,
        GuestPhase::TornDown
    );
}

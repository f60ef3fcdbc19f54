//! The auction against the real PDS and local bidders (free ones, and paid ones asking a price
//! on `bids.x402` terms): this app does not pay, so a free bid wins over any paid one, which is
//! still shown with its price; only paid bids fail the contract naming the cheapest offer; of
//! free bids the earliest wins; `firstFree` wins at the first free bid, a paid one does not end
//! the auction; a denied bidder is never asked, no bidder fails the contract with "no bids". Windows that must see every bid are a few seconds long: a bid
//! answered after the window closes is late and rightly not counted, and a loaded machine
//! (two cores, a PDS, Chromium) can take seconds to write one.

use std::time::Duration;

use swdesk_auction::compute::{ComputeContractStatus, ComputePhase};
use swdesk_lexicon::com::publicdomainrelay::temp::market::{accept, accepts, rfp};
use swdesk_market::{OfferingSource, RequesterMarket};
use swdesk_sandbox_bidder::Behaviour;

use crate::support::*;

/// A free bidder (`bids.free` terms), bidding after `delay_ms`.
fn free_after(delay_ms: u64) -> Behaviour {
    Behaviour {
        bid_delay: Duration::from_millis(delay_ms),
        ..Behaviour::default()
    }
}

/// Each bid the status shows: its bidder and price.
fn costs(status: &ComputeContractStatus) -> Vec<(String, Option<String>)> {
    status
        .bids
        .iter()
        .map(|bid| (bid.bidder.clone(), bid.cost.clone()))
        .collect()
}

#[tokio::test]
async fn a_free_bidder_wins_over_cheaper_looking_paid_ones_which_are_shown_with_their_price() {
    let sandbox = sandbox().await;
    let pricey = sandbox.bidder(asking("0.30", 0)).await;
    let free = sandbox.bidder(free_after(300)).await;
    let cheap = sandbox.bidder(asking("0.01", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&pricey, &free, &cheap]);
    let mut contract = contract(window(6, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    let status = &contract.status;
    assert_eq!(status.winner.as_deref(), Some(free.account.as_str()));
    let mut shown = costs(status);
    shown.sort();
    let mut expected = vec![
        (pricey.account.clone(), Some("0.3".to_owned())),
        (free.account.clone(), Some("0".to_owned())),
        (cheap.account.clone(), Some("0.01".to_owned())),
    ];
    expected.sort();
    assert_eq!(shown, expected, "every bid is shown with its price");
    let receipt = status.receipt.as_ref().expect("a receipt");
    assert!(receipt.uri.starts_with(&format!("at://{}/", free.account)));
    assert!(!receipt.cid.is_empty());
    let guest = free
        .state()
        .guest(&receipt.uri)
        .cloned()
        .expect("the winner runs a guest");
    assert_eq!(guest.accept_author, owner.agent.did());
    for paid in [&pricey, &cheap] {
        let state = paid.state();
        assert_eq!((state.grants.len(), state.guests.len()), (0, 0));
    }
    assert_eq!(owner.records(rfp::NSID).await.len(), 1);
    assert_eq!(owner.records(accepts::free::NSID).await.len(), 1);
    assert_eq!(owner.records(accept::NSID).await.len(), 1);
}

#[tokio::test]
async fn only_paid_bids_fail_the_contract_naming_the_cheapest_paid_offer() {
    let sandbox = sandbox().await;
    let dear = sandbox.bidder(asking("0.50", 0)).await;
    let cheap = sandbox.bidder(asking("0.35", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&dear, &cheap]);
    let mut contract = contract(window(5, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), finished).await;

    assert_eq!(contract.status.phase, ComputePhase::Failed);
    assert_eq!(
        contract.status.message.as_deref(),
        Some(
            format!(
                "no free bid; cheapest paid offer: 0.35 from {} (2 paid offer(s); this app does \
                 not pay)",
                cheap.account
            )
            .as_str()
        )
    );
    assert_eq!(contract.status.winner, None);
    let mut shown = costs(&contract.status);
    shown.sort();
    let mut expected = vec![
        (dear.account.clone(), Some("0.5".to_owned())),
        (cheap.account.clone(), Some("0.35".to_owned())),
    ];
    expected.sort();
    assert_eq!(
        shown, expected,
        "the paid offers are shown with their price"
    );
    assert!(!contract.status.holds_guest());
    assert!(owner.records(accepts::free::NSID).await.is_empty());
    assert!(owner.records(accept::NSID).await.is_empty());
    for bidder in [&dear, &cheap] {
        assert_eq!(bidder.state().bids.len(), 1);
        assert!(bidder.state().guests.is_empty());
    }
}

#[tokio::test]
async fn of_two_free_bidders_the_earliest_bid_wins() {
    let sandbox = sandbox().await;
    let late = sandbox.bidder(free_after(1200)).await;
    let early = sandbox.bidder(free_after(0)).await;
    let paid = sandbox.bidder(asking("0.50", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&late, &early, &paid]);
    let mut contract = contract(window(8, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(contract.status.bids.len(), 3, "{:?}", contract.status.bids);
    assert_eq!(
        contract.status.winner.as_deref(),
        Some(early.account.as_str())
    );
    assert!(late.state().guests.is_empty());
}

#[tokio::test]
async fn with_first_free_the_first_free_bid_wins_before_the_window_closes() {
    let sandbox = sandbox().await;
    let fast_paid = sandbox.bidder(asking("0.01", 0)).await;
    let slow_free = sandbox.bidder(free_after(3000)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&fast_paid, &slow_free]);
    let mut contract = contract(window(600, true), None, None);
    // The window is far longer than the drive's deadline: only firstFree can deploy in time,
    // and the paid bid that came first does not end the auction (it cannot win).
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(
        contract.status.winner.as_deref(),
        Some(slow_free.account.as_str())
    );
    assert!(
        costs(&contract.status).contains(&(fast_paid.account.clone(), Some("0.01".to_owned()))),
        "{:?}",
        contract.status.bids
    );
    assert!(fast_paid.state().guests.is_empty());
}

#[tokio::test]
async fn a_denied_bidder_is_never_asked_even_when_named_explicitly() {
    let sandbox = sandbox().await;
    let denied = sandbox.bidder(free_after(0)).await;
    let allowed = sandbox.bidder(free_after(300)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&denied, &allowed]);
    let mut contract = contract(
        window(5, false),
        Some(vec![denied.account.clone()]),
        Some(vec![denied.account.clone()]),
    );
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(
        contract.status.winner.as_deref(),
        Some(allowed.account.as_str())
    );
    let seen = denied.state();
    assert!(seen.rfps_seen.is_empty(), "{:?}", seen.rfps_seen);
    assert!(seen.bids.is_empty());
}

#[tokio::test]
async fn an_explicit_bidder_found_by_its_offering_is_asked_without_a_relay() {
    let sandbox = sandbox().await;
    let explicit = sandbox.bidder(free_after(0)).await;
    let owner = sandbox.owner().await;
    // No offering source (no relay, no repos); only the network reaches the bidder's loopback
    // service, as the owner's sandbox configuration names it.
    let market = RequesterMarket::connect(
        owner.agent.clone(),
        resolver(&owner.identity, &[&explicit]),
        OfferingSource::Repos(Vec::new()),
        owner.key.clone(),
    )
    .with_settings(quick_settings());
    let mut contract = contract(window(5, false), Some(vec![explicit.account.clone()]), None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(
        contract.status.winner.as_deref(),
        Some(explicit.account.as_str())
    );
}

#[tokio::test]
async fn without_bidders_the_contract_fails_with_no_bids() {
    let sandbox = sandbox().await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[]);
    let mut contract = contract(window(1, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), finished).await;

    assert_eq!(contract.status.phase, ComputePhase::Failed);
    let message = contract.status.message.clone().unwrap_or_default();
    assert!(message.starts_with("no bids"), "{message}");
    assert!(!contract.status.holds_guest());
    assert_eq!(owner.records(rfp::NSID).await.len(), 1);
    assert!(owner.records(accept::NSID).await.is_empty());
}

#[tokio::test]
async fn a_bidder_that_refuses_is_no_bid_and_the_other_wins() {
    let sandbox = sandbox().await;
    let refusing = sandbox
        .bidder(Behaviour {
            refuse: true,
            ..Behaviour::default()
        })
        .await;
    let willing = sandbox.bidder(free_after(0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&refusing, &willing]);
    let mut contract = contract(window(5, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(contract.status.bids.len(), 1);
    assert_eq!(
        contract.status.winner.as_deref(),
        Some(willing.account.as_str())
    );
    assert_eq!(refusing.state().rfps_refused.len(), 1);
}

/// The public policy collections (`market.policies.only_me`, `…direct_network`) are not valid
/// atproto NSIDs and have no lexicon here, so the record is never sent: the contract fails
/// before any RFP is written, naming the collection, rather than asking bidders without the
/// policy the owner declared.
#[tokio::test]
async fn a_policy_the_pds_refuses_fails_the_contract_before_any_rfp() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(free_after(0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&bidder]);
    let mut contract = contract(window(5, false), None, None);
    contract.spec.fields.policy = Some("only_me".to_owned());
    drive(&market, &mut contract, Duration::from_secs(90), finished).await;

    assert_eq!(contract.status.phase, ComputePhase::Failed);
    let message = contract.status.message.clone().unwrap_or_default();
    assert!(
        message.contains("the record was not sent")
            && message.contains("com.publicdomainrelay.temp.market.policies.only_me"),
        "{message}"
    );
    assert!(owner.records(rfp::NSID).await.is_empty());
    assert!(bidder.state().rfps_seen.is_empty());
}

#[tokio::test]
async fn hostile_prices_are_shown_refused_with_the_value_they_sent_and_never_win() {
    let sandbox = sandbox().await;
    let negative = sandbox.bidder(asking("-5", 0)).await;
    let not_a_number = sandbox.bidder(asking("NaN", 0)).await;
    let enormous = sandbox.bidder(asking(&"9".repeat(30), 0)).await;
    let free = sandbox.bidder(free_after(300)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&negative, &not_a_number, &enormous, &free]);
    let mut contract = contract(window(5, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    let status = &contract.status;
    assert_eq!(status.winner.as_deref(), Some(free.account.as_str()));
    let counted: Vec<&str> = status.bids.iter().map(|bid| bid.bidder.as_str()).collect();
    assert_eq!(
        counted,
        [free.account.as_str()],
        "only the honest bid counts"
    );
    for (hostile, sent) in [
        (&negative, "-5"),
        (&not_a_number, "NaN"),
        (&enormous, "999"),
    ] {
        let refused = status
            .refused_bids
            .iter()
            .find(|bid| bid.bidder == hostile.account)
            .unwrap_or_else(|| panic!("{sent}: shown refused: {:?}", status.refused_bids));
        let why = refused.refused.as_deref().unwrap_or_default();
        assert!(
            why.contains(sent),
            "{sent}: the reason names the value: {why}"
        );
        assert!(why.len() <= 512, "{sent}: one cut line");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bid_named_at_a_cid_its_repo_does_not_prove_is_refused_naming_both() {
    let sandbox = sandbox().await;
    let lying = sandbox
        .bidder(Behaviour {
            misstate_bid_cid: true,
            ..Behaviour::default()
        })
        .await;
    let honest = sandbox.bidder(free_after(300)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&lying, &honest]);
    let mut contract = contract(window(5, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    let status = &contract.status;
    assert_eq!(status.winner.as_deref(), Some(honest.account.as_str()));
    let refused = status
        .refused_bids
        .iter()
        .find(|bid| bid.bidder == lying.account)
        .unwrap_or_else(|| panic!("the lying bid is shown refused: {:?}", status.refused_bids));
    let why = refused.refused.as_deref().unwrap_or_default();
    let claimed = &refused.record.cid;
    assert!(
        why.contains("not at the cid we were given") && why.contains(claimed.as_str()),
        "names the cid it was given and the one its bytes have: {why}"
    );
}

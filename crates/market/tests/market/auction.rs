//! The auction against the real PDS and local bidders: the lowest cost wins, a tie goes to the
//! earliest bid, `firstFree` wins at once, a denied bidder is never asked, no bidder fails the
//! contract with "no bids". Windows that must see every bid are a few seconds long: a bid
//! answered after the window closes is late and rightly not counted, and a loaded machine
//! (two cores, a PDS, Chromium) can take seconds to write one.

use std::time::Duration;

use swdesk_core::compute::ComputePhase;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{accept, rfp};
use swdesk_sandbox_bidder::Behaviour;

use crate::support::*;

#[tokio::test]
async fn the_lowest_cost_of_three_bidders_wins_and_the_contract_is_deployed() {
    let sandbox = sandbox().await;
    let pricey = sandbox.bidder(asking("0.30", 0)).await;
    let cheap = sandbox.bidder(asking("0.10", 0)).await;
    let middle = sandbox.bidder(asking("0.20", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&pricey, &cheap, &middle]);
    let mut contract = contract(window(6, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    let status = &contract.status;
    assert_eq!(status.winner.as_deref(), Some(cheap.account.as_str()));
    assert_eq!(status.bids.len(), 3, "{:?}", status.bids);
    let receipt = status.receipt.as_ref().expect("a receipt");
    assert!(receipt.uri.starts_with(&format!("at://{}/", cheap.account)));
    assert!(!receipt.cid.is_empty());
    let guest = cheap
        .state()
        .guest(&receipt.uri)
        .cloned()
        .expect("the winner runs a guest");
    assert_eq!(guest.accept_author, owner.agent.did());
    assert_eq!(pricey.state().guests.len() + middle.state().guests.len(), 0);
    assert_eq!(owner.records(rfp::NSID).await.len(), 1);
    assert_eq!(owner.records(accept::NSID).await.len(), 1);
}

#[tokio::test]
async fn among_equal_costs_the_earliest_bid_wins() {
    let sandbox = sandbox().await;
    let late = sandbox.bidder(asking("0.10", 1200)).await;
    let early = sandbox.bidder(asking("0.10", 0)).await;
    let dearer = sandbox.bidder(asking("0.50", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&late, &early, &dearer]);
    let mut contract = contract(window(8, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(contract.status.bids.len(), 3);
    assert_eq!(
        contract.status.winner.as_deref(),
        Some(early.account.as_str())
    );
}

#[tokio::test]
async fn with_first_free_the_first_free_bid_wins_before_the_window_closes() {
    let sandbox = sandbox().await;
    let slow_cheap = sandbox.bidder(asking("0.01", 3000)).await;
    let fast = sandbox.bidder(asking("0.90", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&slow_cheap, &fast]);
    let mut contract = contract(window(600, true), None, None);
    // The window is far longer than the drive's deadline: only firstFree can deploy in time.
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;

    assert_eq!(
        contract.status.winner.as_deref(),
        Some(fast.account.as_str())
    );
    assert!(slow_cheap.state().guests.is_empty());
}

#[tokio::test]
async fn a_denied_bidder_is_never_asked_even_when_named_explicitly() {
    let sandbox = sandbox().await;
    let denied = sandbox.bidder(asking("0.01", 0)).await;
    let allowed = sandbox.bidder(asking("0.40", 0)).await;
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
    let explicit = sandbox.bidder(asking("0.20", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[]);
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
    let willing = sandbox.bidder(asking("0.70", 0)).await;
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
/// atproto NSIDs, so a real PDS refuses them: the contract fails before any RFP is written,
/// rather than asking bidders without the policy the owner declared.
#[tokio::test]
async fn a_policy_the_pds_refuses_fails_the_contract_before_any_rfp() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(asking("0.10", 0)).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&bidder]);
    let mut contract = contract(window(5, false), None, None);
    contract.spec.fields.policy = Some("only_me".to_owned());
    drive(&market, &mut contract, Duration::from_secs(90), finished).await;

    assert_eq!(contract.status.phase, ComputePhase::Failed);
    let message = contract.status.message.clone().unwrap_or_default();
    assert!(message.contains("Invalid NSID"), "{message}");
    assert!(owner.records(rfp::NSID).await.is_empty());
    assert!(bidder.state().rfps_seen.is_empty());
}

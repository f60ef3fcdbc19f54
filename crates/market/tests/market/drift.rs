//! Drift against the real PDS and a local bidder: a deployed contract whose provider deletes
//! its receipt shows, at its next look, that it drifted (what, since when, the fix: release),
//! keeps the time it was first seen at later looks, and the drift ends with the release.

use std::time::Duration;

use swdesk_auction::compute::ComputePhase;
use swdesk_auction::market::Market;
use swdesk_kernel::drift::{DriftFix, DriftKind};
use swdesk_kernel::timestamp::Clock;
use swdesk_market::SystemClock;
use swdesk_sandbox_bidder::Behaviour;

use crate::support::*;

#[tokio::test]
async fn a_receipt_deleted_by_its_provider_is_drift_until_the_contract_is_released() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&bidder]);
    let mut contract = contract(window(3, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;
    let status = market
        .advance(&contract, SystemClock.now())
        .await
        .expect("a look");
    assert!(
        status.drift.is_empty(),
        "the receipt stands: {:?}",
        status.drift
    );

    let receipt = contract.status.receipt.clone().expect("a receipt");
    bidder.delete_receipt(&receipt).await.expect("deleted");
    drive(&market, &mut contract, Duration::from_secs(30), |status| {
        !status.drift.is_empty()
    })
    .await;
    let drift = contract.status.drift[0].clone();
    assert_eq!(
        (drift.kind, drift.fix()),
        (DriftKind::ReceiptGone, DriftFix::Release)
    );
    assert!(drift.detail.contains("receipt is gone"), "{}", drift.detail);
    assert_eq!(
        contract.status.phase,
        ComputePhase::Deployed,
        "drift is not a phase"
    );

    tokio::time::sleep(Duration::from_millis(20)).await;
    contract.status = persisted(
        &market
            .advance(&contract, SystemClock.now())
            .await
            .expect("a look"),
    );
    assert_eq!(
        contract.status.drift,
        vec![drift],
        "the same drift, since the same time"
    );

    release(&mut contract, SystemClock.now());
    drive(&market, &mut contract, Duration::from_secs(90), |status| {
        status.phase == ComputePhase::Released
    })
    .await;
    assert!(
        contract.status.drift.is_empty(),
        "a released contract has no drift"
    );
}

//! Release and restarts against the real PDS and a local bidder: the accept's author releases
//! and the bidder tears the guest down; a market dropped and made anew at every step (and
//! every step done twice, as when the app dies after doing it and before persisting it)
//! completes the same contract with exactly one RFP, one accept and one guest; a guest that
//! fails after the accept fails the contract, which still releases it.

use std::time::Duration;

use swdesk_auction::compute::ComputePhase;
use swdesk_auction::flow::Step;
use swdesk_auction::market::Market;
use swdesk_kernel::timestamp::Clock;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::delete;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{accept, accepts, event, rfp};
use swdesk_market::SystemClock;
use swdesk_sandbox_bidder::{Behaviour, GuestPhase};

use crate::support::*;

#[tokio::test]
async fn the_accept_author_releases_and_the_bidder_tears_the_guest_down() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&bidder]);
    let mut contract = contract(window(5, false), None, None);
    drive(&market, &mut contract, Duration::from_secs(90), deployed).await;
    let receipt = contract.status.receipt.clone().expect("a receipt");
    let address = bidder
        .state()
        .guest(&receipt.uri)
        .expect("the guest")
        .address
        .clone();
    let on_network = contract
        .status
        .events
        .iter()
        .find(|event| event.kind == "vm.onNetwork")
        .expect("the guest's vm.onNetwork is kept");
    assert_eq!(on_network.detail.as_deref(), Some(address.as_str()));
    assert!(
        on_network
            .uri
            .starts_with(&format!("at://{}/{}/", bidder.account, event::NSID))
    );
    assert_eq!(
        contract.status.bids[0].cost.as_deref(),
        Some("0"),
        "a free bid"
    );

    let asked_at = SystemClock.now();
    release(&mut contract, asked_at);
    drive(&market, &mut contract, Duration::from_secs(90), |status| {
        status.phase == ComputePhase::Released
    })
    .await;

    let guest = bidder
        .state()
        .guest(&receipt.uri)
        .cloned()
        .expect("the guest");
    assert_eq!(guest.phase, GuestPhase::TornDown);
    let released_by = guest.released_by.expect("released by our event");
    assert!(
        released_by
            .uri
            .starts_with(&format!("at://{}/{}/", owner.agent.did(), event::NSID))
    );
    assert_eq!(contract.status.release_sent_at, Some(asked_at));
    assert!(!contract.status.holds_guest());
    assert_eq!(owner.records(delete::NSID).await.len(), 1);
    assert_eq!(owner.records(event::NSID).await.len(), 1);
}

#[tokio::test]
async fn a_restart_at_every_step_completes_the_same_contract_with_one_rfp_and_one_accept() {
    let sandbox = sandbox().await;
    let bidder = sandbox
        .bidder(Behaviour {
            bid_delay: Duration::from_millis(300),
            ..Behaviour::default()
        })
        .await;
    let owner = sandbox.owner().await;
    let mut contract = contract(window(5, false), None, None);
    let mut steps = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while contract.status.phase != ComputePhase::Released {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            contract.status.message
        );
        if contract.status.phase == ComputePhase::Deployed && !contract.spec.release {
            release(&mut contract, SystemClock.now());
        }
        // The app dies after doing the step, before persisting its result...
        let lost = owner.market(&[&bidder]);
        let _ = lost
            .advance(&contract, SystemClock.now())
            .await
            .expect("advances");
        drop(lost);
        // ...and a new one does the same step again from the persisted status.
        let restarted = owner.market(&[&bidder]);
        let status = restarted
            .advance(&contract, SystemClock.now())
            .await
            .expect("advances");
        contract.status = persisted(&status);
        if let Some(flow) = &contract.status.flow {
            steps.push(format!("{:?}", std::mem::discriminant(&flow.step)));
        }
        assert_ne!(
            contract.status.phase,
            ComputePhase::Failed,
            "{:?}",
            contract.status.message
        );
    }

    assert!(matches!(
        contract.status.flow.as_ref().map(|flow| &flow.step),
        Some(Step::Released { receipt: Some(_) })
    ));
    for collection in [vm::NSID, rfp::NSID, accepts::free::NSID, accept::NSID] {
        assert_eq!(owner.records(collection).await.len(), 1, "{collection}");
    }
    let mut kinds: Vec<_> = contract
        .status
        .events
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    kinds.dedup();
    assert_eq!(
        kinds.len(),
        contract.status.events.len(),
        "each guest event kept once although every step ran twice: {:?}",
        contract.status.events
    );
    assert!(kinds.contains(&"vm.onNetwork"), "{kinds:?}");
    let state = bidder.state();
    assert_eq!(state.bids.len(), 1, "one bid on the one RFP");
    assert_eq!(state.guests.len(), 1, "one guest");
    assert_eq!(state.guests[0].phase, GuestPhase::TornDown);
    assert!(steps.len() >= 10, "{steps:?}");
}

#[tokio::test]
async fn a_guest_that_fails_after_the_accept_fails_the_contract_which_can_still_be_released() {
    let sandbox = sandbox().await;
    let failing = sandbox
        .bidder(Behaviour {
            fail_after_accept: true,
            ..Behaviour::default()
        })
        .await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&failing]);
    let mut contract = contract(window(5, false), None, None);
    contract.spec.fields.vm_ready_timeout_sec = Some(2);
    drive(&market, &mut contract, Duration::from_secs(90), finished).await;

    assert_eq!(contract.status.phase, ComputePhase::Failed);
    let message = contract.status.message.clone().unwrap_or_default();
    assert!(message.contains("vm.onNetwork"), "{message}");
    assert!(contract.status.holds_guest(), "the receipt is kept");

    release(&mut contract, SystemClock.now());
    drive(&market, &mut contract, Duration::from_secs(90), |status| {
        status.phase == ComputePhase::Released
    })
    .await;
    let receipt = contract.status.receipt.clone().expect("the receipt");
    let guest = failing
        .state()
        .guest(&receipt.uri)
        .cloned()
        .expect("the guest");
    assert_eq!(guest.phase, GuestPhase::TornDown);
}

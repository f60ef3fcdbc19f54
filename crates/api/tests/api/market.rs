//! The account's controller with a contract on the market (a sandbox bidder on the real PDS):
//! the deployment stays in sync with its record while its contract is requested and deployed —
//! the sync state the window shows, not only the phases.

use std::time::Duration;

use serde_json::json;
use swdesk_api::controller::{AccountController, MarketAccess};
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::Resolver;
use swdesk_core::infra::{ContractState, InfraSpec};
use swdesk_core::sync::SyncState;
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::rollup::ContractPhase;
use swdesk_kernel::timestamp::Clock;
use swdesk_market::OfferingSource;
use swdesk_net::Outbound;

use crate::session::{network, signed_in};
use crate::support::{edit_infra, eventually, infra, sandbox_bidder};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_stays_in_sync_while_its_contract_deploys() {
    stays_in_sync_while_deploying(true).await;
}

/// As the window does it: the contract is requested while the first write is under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_requested_before_the_first_write_landed_leaves_the_deployment_in_sync() {
    stays_in_sync_while_deploying(false).await;
}

async fn stays_in_sync_while_deploying(wait_for_the_first_write: bool) {
    let (pds, network, store) = network("market").await;
    let account = pds.create_account("mkt").await.unwrap();
    let (_signed, agent, _) = signed_in(&network, &store, &account).await;
    let identity = network.oauth.identity.clone();
    let bidder = sandbox_bidder(&pds, &identity, "mktbid").await;
    let policy = identity.net_policy().with_loopback_service(&bidder.url);
    let resolver = Resolver::new(identity, Outbound::new(policy));
    let market = MarketAccess {
        offerings: OfferingSource::Repos(vec![bidder.account.clone()]),
        key: AttestationKey::generate(Curve::P256),
        vault: None,
        follow_winners: true,
    };
    let data = tempfile::tempdir().unwrap();
    let controller = AccountController::start_on_market(
        data.path(),
        agent,
        resolver,
        Some(market),
        swdesk_controller::EngineConfig::default(),
        swdesk_api::live_source::LiveSource::Pds,
    )
    .await
    .unwrap();
    let object: Object<InfraSpec, _> = Object {
        metadata: Metadata::new(
            swdesk_kernel::name::Name::parse("rented").unwrap(),
            swdesk_store::random_uid().unwrap(),
            swdesk_controller::SystemClock.now(),
        ),
        spec: serde_json::from_value(json!({"contracts": [
            {"name": "vm", "state": "staged", "policyArgs": {"bidWindowSec": 2}}]}))
        .unwrap(),
        status: Default::default(),
    };
    controller.store().create::<InfraSpec>(&object).unwrap();
    let store = controller.store();
    let synced = |state: SyncState| {
        infra(store, "rented")
            .and_then(|object| object.status.sync)
            .is_some_and(|sync| sync.state == state)
    };
    if wait_for_the_first_write {
        eventually("the deployment is published", async || {
            synced(SyncState::Published).then_some(())
        })
        .await;
    }
    edit_infra(store, "rented", |spec| {
        spec.contracts[0].state = ContractState::Requested
    });

    let mut seen_conflict = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        seen_conflict |= synced(SyncState::Conflict);
        let object = infra(store, "rented").unwrap();
        let deployed = object
            .status
            .contracts
            .first()
            .is_some_and(|contract| contract.phase == ContractPhase::Deployed);
        if deployed && synced(SyncState::Published) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not deployed and in sync: {:?}",
            object.status
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!seen_conflict, "the deployment never showed a conflict");
    bidder.stop().await;
    controller.stop().await;
}

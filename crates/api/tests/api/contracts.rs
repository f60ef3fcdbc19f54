//! A contract's run as the detail shows it, over a real store file: the bids (cost, the winner
//! marked), the guest's events, each contract's phase history and the deployment's merged
//! timeline; then the DIDs named, and the identity cache against the real sandbox PDS (a
//! bidirectionally verified handle and the PDS, a DID that does not resolve shown as itself).

use std::time::{Duration, Instant};
use swdesk_net::Outbound;

use serde_json::json;
use swdesk_api::contracts::{dids, name_identities};
use swdesk_api::deployments::{declare, detail};
use swdesk_api::identities::{Identities, Named, Names};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_auction::compute::{
    Bid, ComputeContractObject, ComputeContractSpec, ComputeContractStatus, ComputePhase,
    DeploymentRef, GuestEvent, PhaseChange, StrongRef,
};
use swdesk_auction::trust::{KeyBinding, LinkedRecord, RecordCheck};
use swdesk_core::infra::{ContractStatus, InfraSpec};
use swdesk_devnet::SandboxPds;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Metadata, Object, OwnerRef, Uid};
use swdesk_kernel::repo::Provenance;
use swdesk_kernel::rollup::ContractPhase;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_store::Store;
use url::Url;

const BIDDER: &str = "did:plc:cheapbidder";
const DEAR: &str = "did:plc:dearbidder";
const STRANGER: &str = "did:plc:stranger";
const RECEIPT: &str = "at://did:plc:cheapbidder/com.publicdomainrelay.temp.market.receipt/3lr";

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).unwrap()
}

fn bid(bidder: &str, seconds: i64, cost: Option<&str>) -> Bid {
    Bid {
        bidder: bidder.into(),
        record: StrongRef {
            uri: format!("at://{bidder}/com.publicdomainrelay.temp.market.bid/3lb"),
            cid: "bafybid".into(),
        },
        received_at: at(seconds),
        cost: cost.map(str::to_owned),
        refused: None,
        checked: None,
    }
}

fn change(phase: ComputePhase, seconds: i64, message: &str) -> PhaseChange {
    PhaseChange {
        phase,
        at: at(seconds),
        message: Some(message.into()),
    }
}

/// A ComputeContract of `contract` (its own uid from `seed`), controlled by the owner `uid`,
/// with `status`.
fn compute(
    seed: u8,
    uid: &Uid,
    contract: &str,
    status: ComputeContractStatus,
) -> ComputeContractObject {
    let name = Name::parse(&format!("{}-{contract}", uid.short())).unwrap();
    let mut metadata = Metadata::new(name, Uid::from_bytes([seed; 16]), at(0));
    metadata.owner_refs.push(OwnerRef {
        kind: Kind::Infra,
        name: Name::parse("web").unwrap(),
        uid: uid.clone(),
        controller: true,
    });
    Object {
        metadata,
        spec: ComputeContractSpec {
            deployment: DeploymentRef {
                kind: DeploymentKind::Infra,
                name: Name::parse("web").unwrap(),
            },
            contract: Name::parse(contract).unwrap(),
            fields: Default::default(),
            secrets: Vec::new(),
            release: false,
            release_requested_at: None,
        },
        status,
    }
}

fn deployed_api() -> ComputeContractStatus {
    ComputeContractStatus {
        phase: ComputePhase::Deployed,
        winner: Some(BIDDER.into()),
        receipt: Some(StrongRef {
            uri: RECEIPT.into(),
            cid: "bafyreceipt".into(),
        }),
        receipt_checked: Some(RecordCheck {
            provenance: Provenance::Proven {
                rev: "3lrev".into(),
            },
            bindings: vec![KeyBinding::AuthorDocument {
                key: "did:key:zQ3sh".into(),
            }],
            linked: vec![LinkedRecord {
                link: "bid.config".into(),
                uri: "at://did:plc:cheapbidder/com.publicdomainrelay.temp.compute.config.wif.simple/3lc"
                    .into(),
                cid: "bafyconfig".into(),
                collection: "com.publicdomainrelay.temp.compute.config.wif.simple".into(),
                known: false,
                provenance: None,
                value: "not read: its PDS did not answer".into(),
            }],
        }),
        bids: vec![
            bid(DEAR, 2, Some("0.35")),
            Bid {
                checked: Some(RecordCheck {
                    provenance: Provenance::Unproven {
                        why: "its PDS answers sync.getRecord with JSON, not a CAR".into(),
                    },
                    bindings: vec![KeyBinding::Published {
                        key: "did:key:zDn".into(),
                    }],
                    linked: Vec::new(),
                }),
                ..bid(BIDDER, 1, Some("0.2"))
            },
        ],
        refused_bids: vec![Bid {
            refused: Some("did:plc:stranger was not asked for a proposal".into()),
            ..bid(STRANGER, 3, None)
        }],
        events: vec![GuestEvent {
            kind: "vm.onNetwork".into(),
            at: at(20),
            detail: Some("10.0.0.7".into()),
            uri: "at://did:plc:cheapbidder/com.publicdomainrelay.temp.market.event/3le".into(),
        }],
        history: vec![
            change(ComputePhase::Requesting, 0, "waiting for bids"),
            change(ComputePhase::Deployed, 21, "deployed"),
        ],
        ..Default::default()
    }
}

/// The Infra `web` with contracts api (deployed, won) and worker (failed), their
/// ComputeContracts, and one of another (re-created) deployment of the same name.
fn store_with_a_run() -> (tempfile::TempDir, Store) {
    let (dir, store) = swdesk_testkit::store_file();
    let declaration = json!({"kind": "Infra", "metadata": {"name": "web"}, "spec": {"contracts": [
        {"name": "api", "state": "requested"}, {"name": "worker", "state": "requested"}]}});
    declare(&store, &declaration, at(0)).unwrap();
    let web = store
        .get::<InfraSpec>(&Name::parse("web").unwrap())
        .unwrap()
        .unwrap();
    let mut observed = web.clone();
    observed.status.contracts = vec![ContractStatus {
        name: "api".into(),
        phase: ContractPhase::Deployed,
        winner: Some(BIDDER.into()),
        receipt: Some(RECEIPT.into()),
        message: Some("deployed".into()),
        drift: None,
    }];
    store.update_status::<InfraSpec>(&observed).unwrap();
    let worker = ComputeContractStatus {
        phase: ComputePhase::Failed,
        history: vec![
            change(ComputePhase::Requesting, 5, "waiting for bids"),
            change(ComputePhase::Failed, 30, "no bids"),
        ],
        ..Default::default()
    };
    let stranger = ComputeContractStatus {
        history: vec![change(ComputePhase::Requesting, 99, "another deployment's")],
        ..Default::default()
    };
    for object in [
        compute(1, &web.metadata.uid, "api", deployed_api()),
        compute(2, &web.metadata.uid, "worker", worker),
        compute(3, &Uid::from_bytes([9; 16]), "api", stranger),
    ] {
        store.create::<ComputeContractSpec>(&object).unwrap();
    }
    (dir, store)
}

#[test]
fn the_detail_shows_bids_events_history_and_a_merged_timeline_newest_first() {
    let (_dir, store) = store_with_a_run();
    let shown = detail(&store, DeploymentKind::Infra, &Name::parse("web").unwrap())
        .unwrap()
        .unwrap();
    let api = &shown.contracts[0];
    assert_eq!(api.name, "api");
    let bids: Vec<_> = api
        .bids
        .iter()
        .map(|bid| (bid.bidder.as_str(), bid.cost.as_deref(), bid.won))
        .collect();
    assert_eq!(
        bids,
        [
            (DEAR, Some("0.35"), false),
            (BIDDER, Some("0.2"), true),
            (STRANGER, None, false)
        ]
    );
    let refused: Vec<_> = api.bids.iter().map(|bid| bid.refused.as_deref()).collect();
    assert_eq!(
        refused,
        [
            None,
            None,
            Some("did:plc:stranger was not asked for a proposal")
        ],
        "a refused bid is shown with why, never silently dropped"
    );
    assert_eq!(api.bids[1].received_at, at(1).to_rfc3339());
    let checks: Vec<_> = api
        .bids
        .iter()
        .map(|bid| bid.checked.as_ref().map(|check| check.proven))
        .collect();
    assert_eq!(checks, [None, Some(false), None]);
    assert_eq!(
        api.bids[1]
            .checked
            .as_ref()
            .map(|check| check.summary.as_str()),
        Some(
            "unproven: its PDS answers sync.getRecord with JSON, not a CAR; signed with a key \
             the author's repo publishes"
        ),
        "an unproven bid says so, and which binding held"
    );
    let receipt = api.receipt_checked.as_ref().expect("the receipt's check");
    assert!(receipt.proven);
    let linked: Vec<_> = receipt
        .linked
        .iter()
        .map(|linked| (linked.link.as_str(), linked.known, linked.proven))
        .collect();
    assert_eq!(
        linked,
        [("bid.config", false, None)],
        "a linked record of an unknown collection is shown, not refused"
    );
    assert_eq!(
        receipt.summary,
        "proven by its repo's signed commit (rev 3lrev); signed with a key the author's DID \
         document lists"
    );
    assert_eq!(api.events.len(), 1);
    assert_eq!(api.events[0].kind, "vm.onNetwork");
    assert_eq!(api.events[0].detail.as_deref(), Some("10.0.0.7"));
    let phases: Vec<_> = api.history.iter().map(|c| c.phase.as_str()).collect();
    assert_eq!(phases, ["requesting", "deployed"]);
    assert_eq!(
        (api.winner_handle.as_deref(), api.receipt_url.as_deref()),
        (None, None)
    );
    let timeline: Vec<_> = shown
        .timeline
        .iter()
        .map(|entry| format!("{} {} {}", entry.at, entry.contract, entry.phase))
        .collect();
    assert_eq!(
        timeline,
        [
            format!("{} worker failed", at(30).to_rfc3339()),
            format!("{} api deployed", at(21).to_rfc3339()),
            format!("{} worker requesting", at(5).to_rfc3339()),
            format!("{} api requesting", at(0).to_rfc3339()),
        ],
        "every contract of this deployment, none of another's"
    );
}

#[test]
fn the_dids_shown_are_named_as_far_as_they_are_known() {
    let (_dir, store) = store_with_a_run();
    let mut shown = detail(&store, DeploymentKind::Infra, &Name::parse("web").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        dids(&shown.contracts).into_iter().collect::<Vec<_>>(),
        [BIDDER, DEAR, STRANGER]
    );
    let names: Names = [(
        BIDDER.to_owned(),
        Named {
            handle: Some("cheap.test".into()),
            pds: Url::parse("http://localhost:2583").unwrap(),
        },
    )]
    .into();
    name_identities(&mut shown.contracts, &names);
    let api = &shown.contracts[0];
    assert_eq!(api.winner_handle.as_deref(), Some("cheap.test"));
    assert_eq!(api.bids[1].bidder_handle.as_deref(), Some("cheap.test"));
    assert_eq!(
        api.bids[0].bidder_handle, None,
        "an unknown DID stays itself"
    );
    assert_eq!(
        api.receipt_url.as_deref(),
        Some(
            "http://localhost:2583/xrpc/com.atproto.repo.getRecord?repo=did%3Aplc%3Acheapbidder&collection=com.publicdomainrelay.temp.market.receipt&rkey=3lr"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_names_a_real_account_once_and_shows_an_unknown_did_as_itself() {
    let pds = SandboxPds::from_env_or_start().await.unwrap();
    let info = pds.info();
    let account = pds.create_account("named").await.unwrap();
    let config = IdentityConfig::sandbox(
        Url::parse(&info.plc_url).unwrap(),
        Url::parse(&info.pds_url).unwrap(),
    );
    let identities = Identities::new(Resolver::new(
        config.clone(),
        Outbound::new(config.net_policy()),
    ));
    let unknown = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".to_owned();
    let asked = [account.did.clone(), unknown.clone()];

    let names = identities
        .names(asked.clone(), Duration::from_secs(20))
        .await;
    let named = names.get(&account.did).expect("the account resolves");
    assert_eq!(named.handle.as_deref(), Some(account.handle.as_str()));
    assert_eq!(
        named.pds.as_str().trim_end_matches('/'),
        info.pds_url.trim_end_matches('/')
    );
    assert!(!names.contains_key(&unknown), "an unknown DID is left out");

    drop(pds);
    let started = Instant::now();
    let again = identities.names(asked, Duration::from_secs(20)).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "known and failed DIDs are not asked again"
    );
    assert_eq!(again.get(&account.did), Some(named));
    assert!(!again.contains_key(&unknown));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_did_named_after_its_read_stopped_waiting_is_told_and_one_named_in_time_is_not() {
    let pds = SandboxPds::from_env_or_start().await.unwrap();
    let info = pds.info();
    let late = pds.create_account("named-late").await.unwrap();
    let in_time = pds.create_account("named-in-time").await.unwrap();
    let config = IdentityConfig::sandbox(
        Url::parse(&info.plc_url).unwrap(),
        Url::parse(&info.pds_url).unwrap(),
    );
    let (told, mut named_late) = tokio::sync::mpsc::unbounded_channel();
    let identities = Identities::new(Resolver::new(
        config.clone(),
        Outbound::new(config.net_policy()),
    ))
    .when_named_late(move |did| told.send(did.to_owned()).unwrap());

    let names = identities.names([late.did.clone()], Duration::ZERO).await;
    assert!(
        names.is_empty(),
        "a read that cannot wait shows the DID as itself"
    );
    let did = tokio::time::timeout(Duration::from_secs(20), named_late.recv())
        .await
        .expect("the late naming is told")
        .unwrap();
    assert_eq!(did, late.did);
    let again = identities.names([late.did.clone()], Duration::ZERO).await;
    assert_eq!(
        again
            .get(&late.did)
            .and_then(|named| named.handle.as_deref()),
        Some(late.handle.as_str()),
        "the next read has the handle at once"
    );

    let names = identities
        .names([in_time.did.clone()], Duration::from_secs(20))
        .await;
    assert!(names.contains_key(&in_time.did));
    assert!(
        named_late.try_recv().is_err(),
        "a DID named while its read waited is not told again"
    );
}

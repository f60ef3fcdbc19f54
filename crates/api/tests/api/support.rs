//! What the controller tests share: a quick engine configuration, deployments made in a
//! controller's store, a sandbox bidder with an account of its own, waiting for something to
//! happen, and reading records as anyone can.

use std::time::Duration;

use serde_json::Value;
use swdesk_api::controller::AccountController;
use swdesk_controller::EngineConfig;
use swdesk_controller::runtime::ControllerConfig;
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_core::sync::SyncState;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::timestamp::Clock;
use swdesk_store::random_uid;
use swdesk_store::{ObjectOf, Store, StoreError};

pub const INFRA: &str = "computer.socialweb.infra";

/// Resyncs every 2 s and trusts a listing for 1 s: the tests see changes quickly.
pub fn quick_engine() -> EngineConfig {
    EngineConfig {
        controllers: ControllerConfig {
            resync_period: Duration::from_secs(2),
            ..Default::default()
        },
        remote_max_age: Duration::from_secs(1),
        ..Default::default()
    }
}

/// Waits (up to 90 s) until `check` answers something.
pub async fn eventually<T>(what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
    swdesk_testkit::eventually(what, Duration::from_secs(90), check).await
}

/// The record `computer.socialweb.infra/<rkey>` of `did`, read without a session.
pub async fn public_record(pds: &str, did: &str, rkey: &str) -> Option<Value> {
    let url =
        format!("{pds}/xrpc/com.atproto.repo.getRecord?repo={did}&collection={INFRA}&rkey={rkey}");
    let response = reqwest::get(url).await.ok()?;
    response.status().is_success().then_some(())?;
    response
        .json::<Value>()
        .await
        .ok()
        .map(|body| body["value"].clone())
}

/// Every rkey of `computer.socialweb.infra` in `did`'s repo, read without a session.
pub async fn public_rkeys(pds: &str, did: &str) -> Vec<String> {
    let (mut rkeys, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let after = cursor.map(|at| format!("&cursor={at}")).unwrap_or_default();
        let url = format!(
            "{pds}/xrpc/com.atproto.repo.listRecords?repo={did}&collection={INFRA}&limit=100{after}"
        );
        let page: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
        for record in page["records"].as_array().unwrap() {
            let uri = record["uri"].as_str().unwrap();
            rkeys.push(uri.rsplit('/').next().unwrap().to_owned());
        }
        match page["cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    rkeys.sort();
    rkeys
}

/// The live (or, with `"recentEnded"`, the ended) rkeys of the index at `self`, sorted.
pub fn index_rkeys(index: &Value, list: &str) -> Vec<String> {
    let mut rkeys: Vec<String> = index["index"][list]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|entry| entry["rkey"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    rkeys.sort();
    rkeys
}

/// Declares the Infra `name` in the controller's store, described as `description`.
pub fn create_infra(controller: &AccountController, name: &str, description: &str) {
    declare_infra(controller.store(), name, description);
}

/// Declares the Infra `name` in `store`, described as `description`.
pub fn declare_infra(store: &Store, name: &str, description: &str) {
    let object = Object {
        metadata: Metadata::new(
            Name::parse(name).unwrap(),
            random_uid().unwrap(),
            swdesk_controller::SystemClock.now(),
        ),
        spec: InfraSpec {
            description: Some(description.to_owned()),
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    store.create::<InfraSpec>(&object).unwrap();
}

/// The Infra `name` in `store`, if there is one.
pub fn infra(store: &Store, name: &str) -> Option<ObjectOf<InfraSpec>> {
    store.get::<InfraSpec>(&Name::parse(name).ok()?).ok()?
}

/// The description the Infra `name` declares in `store`.
pub fn description(store: &Store, name: &str) -> Option<String> {
    infra(store, name)?.spec.description
}

/// Deletes the Infra `name` as the owner would (the controller ends it).
pub fn delete_infra(controller: &AccountController, name: &str) {
    let name = Name::parse(name).unwrap();
    let now = swdesk_controller::SystemClock.now();
    controller.store().delete::<InfraSpec>(&name, now).unwrap();
}

/// Edits the Infra `name`'s spec as the owner would, again when the controller wrote its
/// status in between.
pub fn edit_infra(store: &Store, name: &str, edit: impl Fn(&mut InfraSpec)) {
    loop {
        let mut object = infra(store, name).expect("the deployment exists");
        edit(&mut object.spec);
        match store.replace::<InfraSpec>(&object) {
            Err(StoreError::Conflict { .. }) => continue,
            result => return drop(result.unwrap()),
        }
    }
}

pub use swdesk_testkit::kept::sandbox_kept_in;

/// How the Infra `name` stands with its record, as its reconciler last found it.
pub fn sync_state(controller: &AccountController, name: &str) -> Option<SyncState> {
    infra(controller.store(), name)?
        .status
        .sync
        .map(|sync| sync.state)
}

/// Whether the Infra `name` is in sync with its record.
pub fn in_sync(controller: &AccountController, name: &str) -> bool {
    sync_state(controller, name).is_some_and(|state| state.is_synced())
}

/// A sandbox bidder on loopback with a fresh account (its handle starting with `prefix`) on
/// `pds`, resolving identities as `identity` says.
pub async fn sandbox_bidder(
    pds: &swdesk_devnet::SandboxPds,
    identity: &swdesk_atproto::identity::IdentityConfig,
    prefix: &str,
) -> swdesk_sandbox_bidder::RunningBidder {
    let config = swdesk_testkit::bidder_config(pds, identity, prefix, Default::default()).await;
    swdesk_sandbox_bidder::start(config).await.unwrap()
}

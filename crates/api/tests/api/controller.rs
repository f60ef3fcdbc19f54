//! The account's controller against the real PDS: deployments created in the local store are
//! published with the index, an edit made on the PDS is pulled, a deletion ends the record.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use swdesk_api::controller::AccountController;
use swdesk_atproto::PdsRepo;
use swdesk_atproto::identity::Resolver;
use swdesk_controller::EngineConfig;
use swdesk_controller::kinds::deployment::random_uid;
use swdesk_controller::runtime::ControllerConfig;
use swdesk_core::collection::InfraCollectionSpec;
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_core::name::Name;
use swdesk_core::object::{Metadata, Object};
use swdesk_core::repo::{RecordRepo, Swap};
use swdesk_core::rkey::Rkey;
use swdesk_core::timestamp::Clock;

use crate::session::{Approving, network, sessions};

const INFRA: &str = "computer.socialweb.infra";

/// Waits (up to 60 s) until `check` answers something.
async fn eventually<T>(what: &str, check: impl AsyncFn() -> Option<T>) -> T {
    for _ in 0..300 {
        if let Some(found) = check().await {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{what} did not happen within 60 s");
}

async fn public_record(pds: &str, did: &str, rkey: &str) -> Option<Value> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployments_are_published_pulled_and_ended_on_the_real_pds() {
    let (pds, network, store) = network("controller").await;
    let account = pds.create_account("ctrl").await.unwrap();
    let signed = sessions(&network, Arc::new(Approving(account.clone())), &store);
    signed.sign_in(&account.handle).await.unwrap();
    let agent = signed.agent().unwrap();
    let resolver = Resolver::new(network.oauth.identity.clone(), reqwest::Client::new());
    let data = tempfile::tempdir().unwrap();
    let config = EngineConfig {
        controllers: ControllerConfig {
            resync_period: Duration::from_secs(2),
            ..Default::default()
        },
        remote_max_age: Duration::from_secs(1),
    };
    let controller = AccountController::start(data.path(), agent.clone(), resolver.clone(), config)
        .await
        .unwrap();
    let clock = swdesk_controller::SystemClock;
    for name in ["alpha", "beta", "gamma"] {
        let object = Object {
            metadata: Metadata::new(
                Name::parse(name).unwrap(),
                random_uid().unwrap(),
                clock.now(),
            ),
            spec: InfraSpec {
                description: Some(format!("{name} v1")),
                ..Default::default()
            },
            status: InfraStatus::default(),
        };
        controller.store().create::<InfraSpec>(&object).unwrap();
    }
    let pds_url = &pds.info().pds_url;
    for name in ["alpha", "beta", "gamma"] {
        let record = eventually("a record is published", async || {
            public_record(pds_url, &account.did, name).await
        })
        .await;
        assert_eq!(record["description"], format!("{name} v1"));
    }
    eventually("the index lists all three", async || {
        let index = public_record(pds_url, &account.did, "self").await?;
        (index["index"]["live"].as_array()?.len() == 3).then_some(())
    })
    .await;

    let elsewhere = PdsRepo::new(agent, resolver);
    let mut edited = public_record(pds_url, &account.did, "alpha").await.unwrap();
    edited["description"] = Value::from("alpha edited on another device");
    elsewhere
        .put(INFRA, &Rkey::parse("alpha").unwrap(), &edited, Swap::Any)
        .await
        .unwrap();
    eventually("the edit is pulled", async || {
        let object = controller
            .store()
            .get::<InfraSpec>(&Name::parse("alpha").unwrap())
            .ok()??;
        (object.spec.description.as_deref() == Some("alpha edited on another device")).then_some(())
    })
    .await;

    controller
        .store()
        .delete::<InfraSpec>(&Name::parse("beta").unwrap(), clock.now())
        .unwrap();
    eventually(
        "the deleted deployment goes after its final write",
        async || {
            controller
                .store()
                .get::<InfraSpec>(&Name::parse("beta").unwrap())
                .ok()?
                .is_none()
                .then_some(())
        },
    )
    .await;
    let ended = public_record(pds_url, &account.did, "beta")
        .await
        .expect("the record stays");
    assert_eq!(ended["status"]["phase"], "ended");
    assert_eq!(ended["status"]["endReason"], "deleted");
    let index = public_record(pds_url, &account.did, "self").await.unwrap();
    assert_eq!(index["index"]["recentEnded"][0]["rkey"], "beta");
    let live: Vec<&str> = index["index"]["live"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["rkey"].as_str())
        .collect();
    assert_eq!(live.len(), 2, "{live:?}");
    assert!(!live.contains(&"beta"));
    let own = Name::parse(swdesk_api::controller::OWN_INDEX).unwrap();
    let following = controller
        .store()
        .get::<InfraCollectionSpec>(&own)
        .unwrap()
        .expect("the own index is followed");
    assert_eq!(following.spec.repo, account.did);
    let mut local: Vec<String> = controller
        .store()
        .list::<InfraSpec>()
        .unwrap()
        .into_iter()
        .map(|object| object.metadata.name.to_string())
        .collect();
    local.sort();
    assert_eq!(
        local,
        ["alpha", "gamma"],
        "this device's own deployments are not followed twice"
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_devices_on_one_account_share_the_index_and_follow_each_others_deployments() {
    let (pds, network, store) = network("devices").await;
    let account = pds.create_account("devs").await.unwrap();
    let signed = sessions(&network, Arc::new(Approving(account.clone())), &store);
    signed.sign_in(&account.handle).await.unwrap();
    let agent = signed.agent().unwrap();
    let resolver = Resolver::new(network.oauth.identity.clone(), reqwest::Client::new());
    let config = EngineConfig {
        controllers: ControllerConfig {
            resync_period: Duration::from_secs(2),
            ..Default::default()
        },
        remote_max_age: Duration::from_secs(1),
    };
    let (laptop_dir, desktop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let laptop =
        AccountController::start(laptop_dir.path(), agent.clone(), resolver.clone(), config)
            .await
            .unwrap();
    let desktop = AccountController::start(desktop_dir.path(), agent, resolver, config)
        .await
        .unwrap();
    let clock = swdesk_controller::SystemClock;
    let create = |controller: &AccountController, name: &str| {
        let object = Object {
            metadata: Metadata::new(
                Name::parse(name).unwrap(),
                random_uid().unwrap(),
                clock.now(),
            ),
            spec: InfraSpec {
                description: Some(format!("{name} v1")),
                ..Default::default()
            },
            status: InfraStatus::default(),
        };
        controller.store().create::<InfraSpec>(&object).unwrap();
    };
    for n in 0..3 {
        create(&laptop, &format!("laptop-{n}"));
        create(&desktop, &format!("desktop-{n}"));
    }
    let pds_url = &pds.info().pds_url;
    let live = eventually("the index lists all six once", async || {
        let index = public_record(pds_url, &account.did, "self").await?;
        let mut live: Vec<String> = index["index"]["live"]
            .as_array()?
            .iter()
            .filter_map(|entry| entry["rkey"].as_str().map(str::to_owned))
            .collect();
        live.sort();
        (live.len() == 6).then_some(live)
    })
    .await;
    let mut deduped = live.clone();
    deduped.dedup();
    assert_eq!(deduped, live, "no entry twice");

    let followed = eventually("the desktop follows the laptop's deployment", async || {
        controller_object(&desktop, "laptop-0").filter(|object| object.spec.description.is_some())
    })
    .await;
    assert!(
        followed
            .metadata
            .labels
            .contains_key(swdesk_core::collection::FOLLOWER_LABEL)
    );
    assert_eq!(followed.spec.description.as_deref(), Some("laptop-0 v1"));

    let mut edited = followed;
    edited.spec.description = Some("edited on the desktop".into());
    desktop.store().replace::<InfraSpec>(&edited).unwrap();
    eventually(
        "the laptop, the writer, pulls the desktop's edit",
        async || {
            let object = controller_object(&laptop, "laptop-0")?;
            (object.spec.description.as_deref() == Some("edited on the desktop")).then_some(())
        },
    )
    .await;
    laptop.stop().await;
    desktop.stop().await;
    signed.sign_out().await.unwrap();
}

fn controller_object(
    controller: &AccountController,
    name: &str,
) -> Option<swdesk_store::ObjectOf<InfraSpec>> {
    controller
        .store()
        .get::<InfraSpec>(&Name::parse(name).ok()?)
        .ok()?
}

//! The account's controller against the real PDS: deployments created in the local store are
//! published with the index, an edit made on the PDS is pulled, a deletion ends the record.

use serde_json::Value;
use swdesk_api::activity::{Activity, ActivityEvent};
use swdesk_api::controller::{AccountController, ControllerError};
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::{Agent, PdsRepo};
use swdesk_core::collection::InfraCollectionSpec;
use swdesk_core::infra::InfraSpec;
use swdesk_kernel::name::Name;
use swdesk_kernel::repo::{RecordRepo, Swap};
use swdesk_kernel::rkey::Rkey;

use crate::session::{network, signed_in};
use crate::support::{
    INFRA, create_infra, delete_infra, edit_infra, eventually, index_rkeys, infra, public_record,
    public_rkeys, quick_engine,
};

/// The at-uris of the record writes the activity stream tells, until `enough` holds of them
/// (a minute at most).
async fn record_writes_until(
    activity: &mut tokio::sync::mpsc::Receiver<ActivityEvent>,
    enough: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut uris = Vec::new();
    let collect = async {
        while !enough(&uris) {
            let event = activity.recv().await.expect("the activity stream");
            if let Activity::Wrote { uri, cid } = event.what {
                assert!(!cid.is_empty(), "a write names its cid");
                assert_eq!(event.kind, "Record");
                uris.push(uri);
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), collect)
        .await
        .expect("the writes are told within a minute");
    uris
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployments_are_published_pulled_and_ended_on_the_real_pds() {
    let (pds, network, store) = network("controller").await;
    let account = pds.create_account("ctrl").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let config = quick_engine();
    let controller = AccountController::start(data.path(), agent.clone(), resolver.clone(), config)
        .await
        .unwrap();
    let mut activity = controller.activity();
    for name in ["alpha", "beta", "gamma"] {
        create_infra(&controller, name, &format!("{name} v1"));
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

    let written = record_writes_until(&mut activity, |uris| {
        ["alpha", "beta", "gamma", "self"]
            .iter()
            .all(|rkey| uris.contains(&format!("at://{}/{INFRA}/{rkey}", account.did)))
    })
    .await;
    assert!(
        written
            .iter()
            .all(|uri| uri.starts_with(&format!("at://{}/", account.did))),
        "the Activity view lists every record written, each by its at-uri: {written:?}"
    );

    let elsewhere = PdsRepo::new(agent, resolver);
    let mut edited = public_record(pds_url, &account.did, "alpha").await.unwrap();
    edited["description"] = Value::from("alpha edited on another device");
    elsewhere
        .put(INFRA, &Rkey::parse("alpha").unwrap(), &edited, Swap::Any)
        .await
        .unwrap();
    eventually("the edit is pulled", async || {
        let object = infra(controller.store(), "alpha")?;
        (object.spec.description.as_deref() == Some("alpha edited on another device")).then_some(())
    })
    .await;

    delete_infra(&controller, "beta");
    eventually(
        "the deleted deployment goes after its final write",
        async || infra(controller.store(), "beta").is_none().then_some(()),
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
    let own = Name::parse(swdesk_api::deployments::OWN_INDEX).unwrap();
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

    create_infra(&controller, "beta", "beta, declared again");
    let again = infra(controller.store(), "beta").unwrap();
    let successor = format!("beta-{}", again.metadata.uid.short());
    let record = eventually(
        "the new beta is published under a successor key",
        async || public_record(pds_url, &account.did, &successor).await,
    )
    .await;
    assert_eq!(record["description"], "beta, declared again");
    let ended = public_record(pds_url, &account.did, "beta").await.unwrap();
    assert_eq!(
        ended["status"]["phase"], "ended",
        "the ended record is never reused"
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_devices_on_one_account_share_the_index_and_follow_each_others_deployments() {
    let (pds, network, store) = network("devices").await;
    let account = pds.create_account("devs").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let config = quick_engine();
    let (laptop_dir, desktop_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let laptop =
        AccountController::start(laptop_dir.path(), agent.clone(), resolver.clone(), config)
            .await
            .unwrap();
    let desktop = AccountController::start(desktop_dir.path(), agent, resolver, config)
        .await
        .unwrap();
    for n in 0..3 {
        for (controller, device) in [(&laptop, "laptop"), (&desktop, "desktop")] {
            let name = format!("{device}-{n}");
            create_infra(controller, &name, &format!("{name} v1"));
        }
    }
    let pds_url = &pds.info().pds_url;
    let live = eventually("the index lists all six once", async || {
        let index = public_record(pds_url, &account.did, "self").await?;
        let live = index_rkeys(&index, "live");
        (live.len() == 6).then_some(live)
    })
    .await;
    let mut deduped = live.clone();
    deduped.dedup();
    assert_eq!(deduped, live, "no entry twice");

    let followed = eventually("the desktop follows the laptop's deployment", async || {
        infra(desktop.store(), "laptop-0").filter(|object| object.spec.description.is_some())
    })
    .await;
    assert!(
        followed
            .metadata
            .labels
            .contains_key(swdesk_core::collection::FOLLOWER_LABEL)
    );
    assert_eq!(followed.spec.description.as_deref(), Some("laptop-0 v1"));

    edit_infra(desktop.store(), "laptop-0", |spec| {
        spec.description = Some("edited on the desktop".into());
    });
    eventually(
        "the laptop, the writer, pulls the desktop's edit",
        async || {
            let object = infra(laptop.store(), "laptop-0")?;
            (object.spec.description.as_deref() == Some("edited on the desktop")).then_some(())
        },
    )
    .await;

    // Each device ends one of its own at the same moment: the index keeps every entry once.
    delete_infra(&laptop, "laptop-1");
    delete_infra(&desktop, "desktop-1");
    eventually("both endings reach the index", async || {
        let index = public_record(pds_url, &account.did, "self").await?;
        let settled = index_rkeys(&index, "live")
            == ["desktop-0", "desktop-2", "laptop-0", "laptop-2"]
            && index_rkeys(&index, "recentEnded") == ["desktop-1", "laptop-1"];
        settled.then_some(())
    })
    .await;
    eventually(
        "each device lets go of the other's ended deployment",
        async || {
            (infra(desktop.store(), "laptop-1").is_none()
                && infra(laptop.store(), "desktop-1").is_none())
            .then_some(())
        },
    )
    .await;
    laptop.stop().await;
    desktop.stop().await;
    signed.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_fifty_six_deployments_are_published_each_once_with_the_index() {
    const COUNT: usize = 256;
    let (pds, network, store) = network("many").await;
    let pds_url = &pds.info().pds_url;
    let account = pds.create_account("many").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let controller = AccountController::start(data.path(), agent, resolver, quick_engine())
        .await
        .unwrap();
    let names: Vec<String> = (0..COUNT).map(|n| format!("d{n:03}")).collect();
    for name in &names {
        create_infra(&controller, name, &format!("{name} v1"));
    }
    let index = eventually("the index lists all of them", async || {
        let index = public_record(pds_url, &account.did, "self").await?;
        (index_rkeys(&index, "live").len() >= COUNT).then_some(index)
    })
    .await;
    assert_eq!(index_rkeys(&index, "live"), names, "each once, no other");
    let mut expected = names.clone();
    expected.push("self".to_owned());
    assert_eq!(
        public_rkeys(pds_url, &account.did).await,
        expected,
        "one record each"
    );
    for name in &names {
        let record = public_record(pds_url, &account.did, name).await.unwrap();
        assert_eq!(record["description"], format!("{name} v1"));
        assert_eq!(record["$type"], INFRA);
    }
    controller.stop().await;
    signed.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_store_runs_one_controller_and_a_second_is_told_who_holds_it() {
    let (pds, network, store) = network("locked").await;
    let account = pds.create_account("locked").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let start =
        || AccountController::start(data.path(), agent.clone(), resolver.clone(), quick_engine());
    let first = start().await.unwrap();
    let second = start()
        .await
        .expect_err("a second controller on the same store");
    let told = second.to_string();
    assert!(
        matches!(second, ControllerError::Locked(_))
            && told.contains(&format!("process {}", std::process::id())),
        "{told}"
    );
    assert!(told.contains("objects.sqlite"), "{told}");
    first.stop().await;
    let after = start()
        .await
        .expect("the store is free once the first stopped");
    after.stop().await;

    let objects = swdesk_api::controller::store_path(data.path(), &account.did);
    let mut other_process = std::process::Command::new("flock")
        .arg("--close")
        .arg(objects.with_extension("sqlite.lock"))
        .args(["sleep", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("flock(1) from util-linux");
    eventually("the other process holds the store", async || {
        swdesk_store::StoreLock::acquire(&objects).err()
    })
    .await;
    let refused = start().await.expect_err("another process holds the store");
    assert!(matches!(refused, ControllerError::Locked(_)), "{refused}");
    other_process.kill().unwrap();
    other_process.wait().unwrap();
    start()
        .await
        .expect("free once that process ended")
        .stop()
        .await;
    signed.sign_out().await.unwrap();
}

/// A controller started (in a data folder of its own) after another client wrote `index` at
/// `self`.
async fn started_over_index(
    agent: Agent,
    resolver: Resolver,
    index: &Value,
) -> (AccountController, tempfile::TempDir) {
    PdsRepo::new(agent.clone(), resolver.clone())
        .put_as_another_client(INFRA, &Rkey::parse("self").unwrap(), index, Swap::Any)
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let controller = AccountController::start(data.path(), agent, resolver, quick_engine())
        .await
        .unwrap();
    (controller, data)
}

/// Another client's index already lists the most live deployments it may: the count is known
/// at start, and a deployment published here is named as waiting for room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_index_is_counted_at_start_and_a_new_deployment_named_as_waiting_for_room() {
    let (pds, network, store) = network("full-index").await;
    let account = pds.create_account("fullindex").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let live: Vec<Value> = (0..swdesk_core::index::MAX_LIVE)
        .map(|n| {
            serde_json::json!({
                "collection": INFRA, "rkey": format!("cli-{n}"), "writer": "cli",
                "createdAt": "2026-12-01T00:00:00.000Z", "addedAt": "2026-12-01T00:00:00.000Z",
            })
        })
        .collect();
    let full = serde_json::json!({
        "$type": INFRA,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "index": {"updatedAt": "2026-12-01T00:00:00.000Z", "live": live},
    });
    let (controller, _data) = started_over_index(agent, resolver, &full).await;
    let counted = eventually("the count is read at start", async || {
        controller.index_health().live
    })
    .await;
    assert_eq!(counted, 256);
    create_infra(&controller, "web", "web v1");
    let waiting = eventually("web is named as waiting for room", async || {
        Some(controller.index_health().waiting_for_room).filter(|waiting| !waiting.is_empty())
    })
    .await;
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0].starts_with(&format!("{INFRA}/")), "{waiting:?}");
    controller.stop().await;
    signed.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_a_newer_client_wrote_is_kept_and_the_owner_told_while_deployments_sync() {
    let (pds, network, store) = network("newer-index").await;
    let pds_url = &pds.info().pds_url;
    let account = pds.create_account("newerindex").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let newer = serde_json::json!({
        "$type": INFRA,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "index": {"updatedAt": "2026-12-01T00:00:00.000Z", "live": {"shards": 2}},
    });
    let (controller, _data) = started_over_index(agent, resolver, &newer).await;
    create_infra(&controller, "web", "web v1");
    let told = eventually("the owner is told why the index waits", async || {
        controller.index_health().problem
    })
    .await;
    assert!(told.contains("newer or broken client"), "{told}");
    let web = public_record(pds_url, &account.did, "web").await;
    assert_eq!(
        web.unwrap()["description"],
        "web v1",
        "the deployment syncs"
    );
    assert_eq!(
        public_record(pds_url, &account.did, "self").await,
        Some(newer),
        "the newer client's index is not written over"
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
}

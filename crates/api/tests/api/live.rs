//! The owner's repo followed live by the account's controller, against the real PDS: with
//! every poll an hour away, an edit made by another client is pulled within seconds, the status says `live`, the stream's cursor is kept in the store and a restarted
//! controller resumes from it; and an idle controller with the stream open makes no request.

use std::time::{Duration, Instant};

use serde_json::Value;
use swdesk_api::controller::{AccountController, OWNER_STREAM};
use swdesk_controller::EngineConfig;
use swdesk_controller::runtime::ControllerConfig;

use crate::session::{network, signed_in};
use crate::support::{INFRA, create_infra, description, eventually, public_record};

const HOUR: Duration = Duration::from_secs(3600);

/// No poll within the test, but every object resynced every 2 s over a listing that ages in
/// 1 s: only the stream can bring an edit in without a request, and a resync while live must
/// ask for nothing.
fn no_polls() -> EngineConfig {
    EngineConfig {
        controllers: ControllerConfig {
            resync_period: Duration::from_secs(2),
            ..Default::default()
        },
        remote_max_age: Duration::from_secs(1),
        remote_poll: HOUR,
        live_poll: HOUR,
    }
}

async fn kept_seq(controller: &AccountController) -> Option<i64> {
    let kept = controller
        .with_store(|store| store.cursor(OWNER_STREAM))
        .await
        .unwrap()
        .unwrap();
    kept.map(|cursor| cursor.seq)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_elsewhere_is_pulled_live_resumed_after_a_restart_and_idle_is_idle() {
    let (pds, network, store) = network("live").await;
    let account = pds.create_account("live").await.unwrap();
    let (_signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let start =
        || AccountController::start(data.path(), agent.clone(), resolver.clone(), no_polls());
    let controller = start().await.unwrap();
    create_infra(&controller, "alpha", "alpha v1");
    let pds_url = pds.info().pds_url.clone();
    let mut record: Value = eventually("alpha is published", async || {
        public_record(&pds_url, &account.did, "alpha").await
    })
    .await;
    eventually("the status says live", async || {
        (controller.live_status().mode == "live").then_some(())
    })
    .await;

    record["description"] = Value::from("alpha v2, edited on another device");
    let edited = Instant::now();
    pds.put_record_as(&account, INFRA, "alpha", &record)
        .await
        .unwrap();
    eventually("the edit is pulled", async || {
        let now = description(controller.store(), "alpha")?;
        (now == "alpha v2, edited on another device").then_some(())
    })
    .await;
    let took = edited.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "pulled {took:?} after the edit, polls an hour away"
    );
    let before_restart =
        eventually("the cursor is kept", async || kept_seq(&controller).await).await;

    // Idle: the stream is open, nothing changes, ten resyncs run, nothing is asked.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let made = network.outbound.made();
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(
        network.outbound.made(),
        made,
        "requests made in 20 idle seconds"
    );
    assert_eq!(controller.live_status().mode, "live");

    controller.stop().await;
    record["description"] = Value::from("alpha v3, edited while the app was closed");
    pds.put_record_as(&account, INFRA, "alpha", &record)
        .await
        .unwrap();
    let controller = start().await.unwrap();
    eventually("the edit made while closed is pulled", async || {
        let now = description(controller.store(), "alpha")?;
        (now == "alpha v3, edited while the app was closed").then_some(())
    })
    .await;
    eventually("the cursor moves on from the kept one", async || {
        kept_seq(&controller)
            .await
            .filter(|seq| *seq > before_restart)
    })
    .await;
    controller.stop().await;
}

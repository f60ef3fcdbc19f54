//! The owner's repo followed live by the account's controller, against the real PDS: with
//! every poll an hour away, an edit made by another client is pulled within seconds, the status says `live`, the stream's cursor is kept in the store and a restarted
//! controller resumes from it; an idle controller with the stream open makes no request; and
//! a relay's URL named in place of the PDS is where the stream is read.

use std::time::{Duration, Instant};

use serde_json::Value;
use swdesk_api::controller::AccountController;
use swdesk_api::live_source::{LiveSource, OWNER_STREAM};
use swdesk_controller::EngineConfig;
use swdesk_controller::runtime::ControllerConfig;
use swdesk_devnet::{Account, SandboxPds};
use url::Url;

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

/// Another client sets `alpha`'s description to `text` (in `record`, as it is in the repo);
/// the controller's store has it within seconds, its polls an hour away.
async fn edited_elsewhere(
    pds: &SandboxPds,
    account: &Account,
    controller: &AccountController,
    record: &mut Value,
    text: &str,
) {
    record["description"] = Value::from(text);
    let edited = Instant::now();
    pds.put_record_as(account, INFRA, "alpha", record)
        .await
        .unwrap();
    eventually("the edit is pulled", async || {
        let now = description(controller.store(), "alpha")?;
        (now == text).then_some(())
    })
    .await;
    let took = edited.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "pulled {took:?} after the edit, polls an hour away"
    );
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

    edited_elsewhere(
        &pds,
        &account,
        &controller,
        &mut record,
        "alpha v2, edited elsewhere",
    )
    .await;
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

/// The repo followed at a relay's URL instead of the PDS (Settings' one URL): the sandbox PDS
/// given explicitly as the relay is followed live, the status names it, and its cursor is
/// kept under its own name (a relay's sequence numbers are not the PDS's); a URL the policy
/// allows that serves no stream (the PLC directory) leaves the app polling, saying why, so the
/// stream really is read where the URL says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_url_is_followed_in_place_of_the_pds_with_a_cursor_of_its_own() {
    let (pds, network, store) = network("relay").await;
    let account = pds.create_account("relay").await.unwrap();
    let (_signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let data = tempfile::tempdir().unwrap();
    let policy = network.outbound.policy();
    let at = |url: &str| LiveSource::parse(url, policy).unwrap();
    let start = |source: LiveSource| {
        let (agent, resolver) = (agent.clone(), resolver.clone());
        let data = data.path().to_owned();
        async move {
            AccountController::start_on_market(&data, agent, resolver, None, no_polls(), source)
                .await
                .unwrap()
        }
    };

    let nowhere = at(&pds.info().plc_url);
    let controller = start(nowhere.clone()).await;
    let polling = eventually("the status says polling: no stream there", async || {
        let status = controller.live_status();
        let no_stream = status
            .why
            .as_deref()
            .is_some_and(|why| why.contains("handshake"));
        (status.mode == "polling" && no_stream).then_some(status)
    })
    .await;
    assert_eq!(
        polling.source.as_deref(),
        nowhere.service().map(Url::as_str)
    );
    controller.stop().await;

    let relay = at(&pds.info().pds_url);
    let controller = start(relay.clone()).await;
    create_infra(&controller, "alpha", "alpha v1");
    let pds_url = pds.info().pds_url.clone();
    let mut record: Value = eventually("alpha is published", async || {
        public_record(&pds_url, &account.did, "alpha").await
    })
    .await;
    let live = eventually("the status says live", async || {
        let status = controller.live_status();
        (status.mode == "live").then_some(status)
    })
    .await;
    assert_eq!(live.source.as_deref(), relay.service().map(Url::as_str));
    edited_elsewhere(
        &pds,
        &account,
        &controller,
        &mut record,
        "alpha v2, via the relay",
    )
    .await;
    let stream = relay.stream();
    let relay_seq = eventually("the relay's cursor is kept", async || {
        let stream = stream.clone();
        let kept = controller.with_store(move |store| store.cursor(&stream));
        kept.await.unwrap().unwrap().map(|cursor| cursor.seq)
    })
    .await;
    assert!(relay_seq > 0);
    assert_eq!(
        kept_seq(&controller).await,
        None,
        "nothing is kept for the PDS's own stream"
    );
    controller.stop().await;
}

//! The account through a busy and failing PDS: the real sandbox PDS behind a loopback proxy on
//! its public port that answers 429 (with `Retry-After`) and 503 on a schedule. Publishing
//! waits as long as it is asked and lands once, with nothing lost or doubled; a token refresh
//! that meets 503s is retried and keeps the session, and one told to wait longer than a call
//! can keeps the session for the next call.

use std::sync::Arc;
use std::time::Duration;

use swdesk_api::SessionView;
use swdesk_api::controller::AccountController;
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_core::sync::SyncState;
use swdesk_devnet::Fault;
use swdesk_devnet::fault_proxy::gaps;

use crate::session::{NoBrowser, network_of, sessions, signed_in};
use crate::support::{
    create_infra, eventually, in_sync, public_record, public_rkeys, quick_engine, sync_state,
};

pub const PUT_RECORD: &str = "/xrpc/com.atproto.repo.putRecord";
const TOKEN: &str = "/oauth/token";

pub use swdesk_testkit::kept::pds_behind_proxy;

fn fault(path: &str, status: u16, retry_after: Option<&str>, times: usize) -> Fault {
    Fault {
        path: path.to_owned(),
        status,
        retry_after: retry_after.map(str::to_owned),
        times,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishing_through_429s_and_503s_waits_as_asked_and_lands_once() {
    let data = tempfile::tempdir().unwrap();
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    let pds_url = pds.info().pds_url.clone();
    let (network, store) = network_of(&pds, "faults-publish");
    let account = pds.create_account("faultpub").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let controller =
        AccountController::start(&data.path().join("app"), agent, resolver, quick_engine())
            .await
            .unwrap();

    proxy.inject(fault(PUT_RECORD, 429, Some("2"), 2));
    proxy.inject(fault(PUT_RECORD, 503, None, 2));
    create_infra(&controller, "web", "web v1");
    let waiting = eventually("the deployment says it waits to sync", async || {
        sync_state(&controller, "web")
            .filter(|state| matches!(state, SyncState::WriteFailed { .. }))
    })
    .await;
    let words = waiting.message().unwrap_or_default();
    assert!(words.starts_with("waiting to sync"), "{waiting:?}");
    assert!(words.contains("HTTP 429"), "{waiting:?}");
    eventually(
        "the deployment is in sync once the PDS answers",
        async || in_sync(&controller, "web").then_some(()),
    )
    .await;

    assert_eq!(proxy.injected(), 4, "every scheduled fault was met");
    let puts = proxy.seen(PUT_RECORD);
    let first_gap = gaps(&puts)[0];
    assert!(
        first_gap >= Duration::from_secs(2),
        "the retry after a 429 with Retry-After: 2 waited {first_gap:?}"
    );
    let record = public_record(&pds_url, &account.did, "web").await.unwrap();
    assert_eq!(record["description"], "web v1");
    eventually("the index lists it", async || {
        let index = public_record(&pds_url, &account.did, "self").await?;
        (index["index"]["live"][0]["rkey"] == "web").then_some(())
    })
    .await;
    assert_eq!(
        public_rkeys(&pds_url, &account.did).await,
        ["self", "web"],
        "one record, no duplicate"
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
    pds.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_through_503s_is_retried_and_one_told_to_wait_keeps_the_session() {
    let data = tempfile::tempdir().unwrap();
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    let (network, store) = network_of(&pds, "faults-refresh");
    let account = pds.create_account("faultref").await.unwrap();
    let (signed, _agent, _resolver) = signed_in(&network, &store, &account).await;
    drop(signed);
    let expire = || {
        let mut kept = store.load().unwrap().unwrap();
        kept.expires_at = 0;
        store.save(&kept).unwrap();
    };

    expire();
    let before = proxy.seen(TOKEN).len();
    proxy.inject(fault(TOKEN, 503, None, 2));
    let restarted = sessions(&network, Arc::new(NoBrowser), &store);
    assert!(matches!(
        restarted.current().await,
        SessionView::SignedIn(_)
    ));
    assert_eq!(proxy.injected(), 2);
    let refreshes = &proxy.seen(TOKEN)[before..];
    assert!(
        refreshes.len() >= 3 && refreshes.last().is_some_and(|last| last.injected.is_none()),
        "two 503s, then the refresh that worked: {refreshes:?}"
    );
    assert!(store.load().unwrap().unwrap().expires_at > 0, "refreshed");

    expire();
    proxy.inject(fault(TOKEN, 429, Some("120"), 1));
    let busy = sessions(&network, Arc::new(NoBrowser), &store);
    assert!(matches!(busy.current().await, SessionView::SignedIn(_)));
    let agent = busy.agent().unwrap();
    assert_eq!(agent.ended(), None, "a busy server does not end a session");
    let check = XrpcRequest::query("com.atproto.server.getSession", Vec::new());
    let session = agent.call(&check).await.unwrap();
    assert_eq!(
        session["did"],
        account.did.as_str(),
        "the next call refreshes"
    );
    busy.sign_out().await.unwrap();
    pds.stop().await.unwrap();
}

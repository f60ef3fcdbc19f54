//! The account while its PDS is down, against a real PDS stopped and started again on its own
//! data: what the owner does meanwhile is kept, says it waits to sync, and reaches the repo
//! once it is back, with one write each and no duplicate record; a start offline with an
//! expired access token keeps the session, which refreshes once the PDS is back.

use std::sync::Arc;
use std::time::Duration;

use swdesk_api::SessionView;
use swdesk_api::activity::Activity;
use swdesk_api::controller::AccountController;
use swdesk_atproto::PdsRepo;
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_core::infra::InfraSpec;
use swdesk_core::sync::SyncState;
use swdesk_devnet::SandboxPds;
use swdesk_kernel::name::Name;
use swdesk_kernel::repo::counted::Counted;

use crate::session::{NoBrowser, network_of, sessions, signed_in};
use crate::support::{
    create_infra, delete_infra, edit_infra, eventually, in_sync, index_rkeys, infra, public_record,
    public_rkeys, quick_engine, sandbox_kept_in, sync_state,
};

/// Whether the Infra `name` says it waits for the repo.
fn waits_to_sync(controller: &AccountController, name: &str) -> bool {
    sync_state(controller, name).is_some_and(|state| {
        matches!(
            state,
            SyncState::Offline { .. } | SyncState::WriteFailed { .. }
        ) && state
            .message()
            .is_some_and(|words| words.starts_with("waiting to sync"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_done_while_the_pds_is_down_reaches_it_once_it_is_back_with_one_write_each() {
    let data = tempfile::tempdir().unwrap();
    let (storage, pds) = sandbox_kept_in(data.path()).await;
    let pds_url = pds.info().pds_url.clone();
    let (network, store) = network_of(&pds, "offline");
    let account = pds.create_account("offl").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let repo = Counted::new(PdsRepo::new(agent, resolver));
    let tally = repo.tally();
    let controller = AccountController::start_over(&data.path().join("app"), repo, quick_engine())
        .await
        .unwrap();
    create_infra(&controller, "alpha", "alpha v1");
    create_infra(&controller, "gamma", "gamma v1");
    eventually("both are published with the index", async || {
        let index = public_record(&pds_url, &account.did, "self").await?;
        (index_rkeys(&index, "live") == ["alpha", "gamma"]).then_some(())
    })
    .await;

    let mut activity = controller.activity();
    pds.stop().await.unwrap();
    edit_infra(controller.store(), "alpha", |spec| {
        spec.description = Some("alpha v2, edited offline".into());
    });
    create_infra(&controller, "beta", "beta v1, made offline");
    delete_infra(&controller, "gamma");
    eventually("the edit and the new deployment wait to sync", async || {
        (waits_to_sync(&controller, "alpha") && waits_to_sync(&controller, "beta")).then_some(())
    })
    .await;
    // The listing marks every deployment offline as soon as it fails; beta's own write fails
    // (and plans its retry) on its next run, which may come a moment later.
    let beta = eventually("beta's own write failed", async || {
        let view = controller
            .sync_view::<InfraSpec>(&Name::parse("beta").unwrap())
            .await
            .unwrap()
            .expect("beta is there");
        (view.failures >= 1).then_some(view)
    })
    .await;
    assert_eq!(beta.synced, Some(false));
    assert!(
        beta.last_error
            .as_deref()
            .is_some_and(|error| error.contains("repo")),
        "{beta:?}"
    );
    assert!(
        beta.failures >= 1 && beta.next_run_in_ms.is_some(),
        "a retry is planned: {beta:?}"
    );
    let beta_failed = async {
        while let Some(event) = activity.recv().await {
            if event.name.as_deref() == Some("beta")
                && matches!(event.what, Activity::Failed { .. })
            {
                return event;
            }
        }
        panic!("the activity stream ended");
    };
    let failed = tokio::time::timeout(Duration::from_secs(60), beta_failed)
        .await
        .expect("the Activity stream shows beta's failed run");
    assert_eq!(failed.kind, "Infra");
    assert!(
        infra(controller.store(), "gamma").is_some(),
        "a deletion waits for its final write"
    );
    assert_eq!(
        infra(controller.store(), "alpha")
            .unwrap()
            .spec
            .description
            .as_deref(),
        Some("alpha v2, edited offline"),
        "nothing made here is lost"
    );

    let before = tally.answered();
    let pds = SandboxPds::start_with(&storage, &[]).await.unwrap();
    let index = eventually("the index catches up", async || {
        let index = public_record(&pds_url, &account.did, "self").await?;
        let settled = index_rkeys(&index, "live") == ["alpha", "beta"]
            && index_rkeys(&index, "recentEnded") == ["gamma"];
        settled.then_some(index)
    })
    .await;
    eventually("every deployment is back in sync", async || {
        let in_sync = |name| in_sync(&controller, name);
        (in_sync("alpha") && in_sync("beta") && infra(controller.store(), "gamma").is_none())
            .then_some(())
    })
    .await;
    let alpha = public_record(&pds_url, &account.did, "alpha")
        .await
        .unwrap();
    assert_eq!(alpha["description"], "alpha v2, edited offline");
    let beta = public_record(&pds_url, &account.did, "beta").await.unwrap();
    assert_eq!(beta["description"], "beta v1, made offline");
    let gamma = public_record(&pds_url, &account.did, "gamma")
        .await
        .unwrap();
    assert_eq!(gamma["status"]["phase"], "ended", "the ended record stays");
    assert_eq!(
        public_rkeys(&pds_url, &account.did).await,
        ["alpha", "beta", "gamma", "self"],
        "no duplicate record, no successor key"
    );
    assert!(index["index"]["live"].as_array().unwrap().len() == 2);

    let writes = tally.answered().since(before);
    assert_eq!(writes.deletes, 0, "nothing is deleted from the repo");
    assert!(
        writes.puts <= 3 + 2,
        "alpha's edit, beta, gamma's final write and at most two index writes, not {} puts",
        writes.puts
    );
    controller.stop().await;
    signed.sign_out().await.unwrap();
    pds.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_offline_with_an_expired_token_keeps_the_session_and_syncs_once_back() {
    let data = tempfile::tempdir().unwrap();
    let (storage, pds) = sandbox_kept_in(data.path()).await;
    let (network, store) = network_of(&pds, "expired-offline");
    let account = pds.create_account("expoff").await.unwrap();
    let (signed, _agent, _resolver) = signed_in(&network, &store, &account).await;
    let mut kept = store
        .load()
        .unwrap()
        .expect("the session is in the keychain");
    kept.expires_at = 0;
    store.save(&kept).unwrap();
    drop(signed);
    pds.stop().await.unwrap();

    let offline = sessions(&network, Arc::new(NoBrowser), &store);
    assert!(
        matches!(offline.current().await, SessionView::SignedIn(ref a) if a.did == account.did),
        "offline is not signed out"
    );
    let agent = offline.agent().unwrap();
    let check = XrpcRequest::query("com.atproto.server.getSession", Vec::new());
    let failed = agent.call(&check).await.unwrap_err();
    assert!(failed.fault().is_transient(), "{failed}");
    assert_eq!(agent.ended(), None);
    assert!(
        store.load().unwrap().is_some(),
        "the keychain entry is kept while the PDS is away"
    );

    let _pds = SandboxPds::start_with(&storage, &[]).await.unwrap();
    let session = agent.call(&check).await.unwrap();
    assert_eq!(session["did"], account.did.as_str());
    let refreshed = store.load().unwrap().unwrap();
    assert!(
        refreshed.expires_at > kept.expires_at,
        "the refresh reached the keychain"
    );
    assert!(matches!(offline.current().await, SessionView::SignedIn(_)));
    offline.sign_out().await.unwrap();
}

//! The desk as the window sees it. Two app processes on one data directory (two desks in one
//! process here: the store lock is per open file, so they exclude each other as processes do):
//! the second is signed in from the shared keychain but runs no controller, and says which
//! process holds the store, until the first is gone. A session the server ends while the app
//! runs: the window is told at once, and the work made before is kept for the next sign-in.

use std::sync::Arc;

use swdesk_api::controller::LiveEvent;
use swdesk_api::{Desk, DeskError, ErrorCode, SessionView};
use swdesk_atproto::Agent;
use swdesk_atproto::keychain::MemoryStore;
use swdesk_testkit::Chromium;

use crate::session::{network, sessions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_desk_on_one_data_directory_runs_no_controller_and_says_who_holds_it() {
    let (pds, network, store) = network("two-desks").await;
    let account = pds.create_account("twodesks").await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let browser = Chromium::approving(&account);
    let desk =
        |browser| Desk::with_sessions(sessions(&network, browser, &store), data.path().into());
    let first = desk(browser.clone());
    first.sign_in(&account.handle).await.unwrap();
    assert!(first.deployments().await.unwrap().is_empty());

    let second = desk(browser);
    assert!(matches!(second.session().await, SessionView::SignedIn(_)));
    let refused = second.deployments().await.unwrap_err();
    assert!(matches!(refused, DeskError::NotRunning(_)), "{refused:?}");
    assert_eq!(refused.code(), ErrorCode::Controller);
    let told = refused.to_string();
    assert!(
        told.contains(&format!(
            "in use by another swdesk (process {})",
            std::process::id()
        )),
        "{told}"
    );

    drop(first);
    assert!(
        matches!(second.deployments().await, Err(DeskError::NotRunning(_))),
        "a read right after a failed start does not start it again (it waits a moment)"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let rows = loop {
        let rows = second.deployments().await;
        if rows.is_ok() || std::time::Instant::now() > deadline {
            break rows;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(
        rows.is_ok(),
        "the store is free once the first is gone, and a later read starts it: {rows:?}"
    );
    second.sign_out().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_by_the_server_while_running_is_told_at_once_and_keeps_the_work() {
    let (pds, network, store) = network("ended-live").await;
    let account = pds.create_account("endedlive").await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let browser = Chromium::approving(&account);
    let desk = Desk::with_sessions(
        sessions(&network, browser.clone(), &store),
        data.path().into(),
    );
    desk.sign_in(&account.handle).await.unwrap();
    let mut live = desk.live();
    let kept = store.load().unwrap().unwrap();
    let elsewhere = Agent::from_stored(
        kept,
        network.outbound.clone(),
        Arc::new(MemoryStore::default()),
    );
    elsewhere
        .unwrap()
        .sign_out()
        .await
        .expect("revoked at the server");

    let declaration = serde_json::json!({
        "kind": "Infra",
        "metadata": {"name": "kept"},
        "spec": {"description": "made before the session ended", "contracts": []},
    });
    desk.declare(declaration).await.unwrap();
    let told = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            if let Ok(LiveEvent::SessionEnded) = live.recv().await {
                return;
            }
        }
    })
    .await;
    assert!(
        told.is_ok(),
        "the window is told when the server ends the session"
    );
    match desk.session().await {
        SessionView::SignedOut {
            notice: Some(notice),
        } => {
            assert!(notice.contains("has ended"), "{notice}");
        }
        other => panic!("signed out with a notice, not {other:?}"),
    }
    assert!(matches!(
        desk.deployments().await,
        Err(DeskError::SignedOut)
    ));

    desk.sign_in(&account.handle).await.unwrap();
    let rows = desk.deployments().await.unwrap();
    assert!(
        rows.iter().any(|row| row.name == "kept"),
        "the work made before the end is kept"
    );
    desk.sign_out().await.unwrap();
}

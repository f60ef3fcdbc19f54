//! The desk as two app processes on one data directory see it (two desks in one process
//! here: the store lock is per open file, so they exclude each other as processes do): the
//! second is signed in from the shared keychain but runs no controller, and says which
//! process holds the store, until the first is gone.

use std::sync::Arc;

use swdesk_api::{Desk, DeskError, SessionView};
use swdesk_atproto::oauth::sandbox::ApprovingBrowser;

use crate::session::{network, sessions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_desk_on_one_data_directory_runs_no_controller_and_says_who_holds_it() {
    let (pds, network, store) = network("two-desks").await;
    let account = pds.create_account("twodesks").await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let browser = Arc::new(ApprovingBrowser(account.clone()));
    let desk =
        |browser| Desk::with_sessions(sessions(&network, browser, &store), data.path().into());
    let first = desk(browser.clone());
    first.sign_in(&account.handle).await.unwrap();
    assert!(first.deployments().await.unwrap().is_empty());

    let second = desk(browser);
    assert!(matches!(second.session().await, SessionView::SignedIn(_)));
    let refused = second.deployments().await.unwrap_err();
    assert!(matches!(refused, DeskError::NotRunning(_)), "{refused:?}");
    assert_eq!(refused.code(), "controller");
    let told = refused.to_string();
    assert!(
        told.contains(&format!(
            "in use by another swdesk (process {})",
            std::process::id()
        )),
        "{told}"
    );

    drop(first);
    let rows = second.deployments().await;
    assert!(
        rows.is_ok(),
        "the store is free once the first is gone: {rows:?}"
    );
    second.sign_out().await.unwrap();
}

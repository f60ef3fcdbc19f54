//! The window while the PDS fails: a sandbox PDS of its own behind the fault proxy answers the
//! deployment's writes 503 with `Retry-After` a few times; the list says the deployment waits to
//! sync (and its detail says why and when it is retried), then shows it in sync once the PDS
//! answers, with its record written once.

use std::time::Duration;

use swdesk_devnet::Fault;
use swdesk_testkit::kept::pds_behind_proxy;
use swdesk_tests::{AppWindow, STEP_TIMEOUT};

/// Long enough for the retries the faults ask for (three waits of 8 s) under load.
const CATCH_UP: Duration = Duration::from_secs(90);

#[tokio::test]
async fn the_window_says_a_deployment_waits_to_sync_while_the_pds_fails_then_catches_up()
-> anyhow::Result<()> {
    let data = tempfile::tempdir()?;
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    let (mut window, _) = AppWindow::signed_in_as_new_owner(&pds, "e2efault", "faults").await?;

    proxy.inject(Fault {
        path: "/xrpc/com.atproto.repo.putRecord".to_owned(),
        status: 503,
        retry_after: Some("8".to_owned()),
        times: 3,
    });
    window.press_command_key("n").await?;
    window.type_into("#decl-name", "web").await?;
    window.click("[data-action='save-declaration']").await?;
    let row = "[data-testid='deployment-row'][data-name='web']";
    window
        .wait_for(&format!("{row}[data-sync='offline']"), STEP_TIMEOUT)
        .await?;
    window.click(row).await?;
    let said = window
        .wait_for_text("[data-testid='sync-message']", "waiting to sync")
        .await?;
    assert!(said.contains("503"), "the detail names the failure: {said}");
    assert!(said.contains("retry in"), "and when it is retried: {said}");
    window.screenshot("waiting-to-sync").await?;

    window
        .wait_for(&format!("{row}[data-sync='inSync']"), CATCH_UP)
        .await?;
    assert_eq!(proxy.injected(), 3, "every scheduled fault was met");
    window.screenshot("caught-up").await?;
    window.close().await?;
    // Waited for, so no process of this test outlives it.
    pds.stop().await?;
    Ok(())
}

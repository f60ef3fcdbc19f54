//! Drift in the window, against the sandbox's real PDS and a sandbox bidder: a deployed
//! contract whose provider deletes its receipt shows Drift at its next look (within a minute),
//! on its row and on the contract with what differs and the fix; one click on Release (once
//! confirmed) releases it and the drift is gone.

use std::time::Duration;

use swdesk_devnet::SandboxPds;
use swdesk_tests::{AppWindow, borrowed, sandbox_env};

use crate::market::{MARKET_TIMEOUT, bidder, with_bidders};

/// A deployed contract is looked at for drift every minute; generous under load.
const DRIFT_TIMEOUT: Duration = Duration::from_secs(150);

#[tokio::test]
async fn a_receipt_gone_from_its_provider_shows_drift_and_one_click_releases_it()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let owner = pds.create_account("e2edrift").await?;
    let free = bidder(&pds, None).await?;
    let env = with_bidders(sandbox_env(&pds, &owner)?, &[&free])?;
    let mut window = AppWindow::open_with_env("drift", &borrowed(&env)).await?;
    window.sign_in().await?;
    window
        .declare_and_deploy_vm("drifty", MARKET_TIMEOUT)
        .await?;
    assert!(
        window
            .find_all("[data-testid='row-drift']")
            .await?
            .is_empty()
    );

    let receipt = free.state().guests[0].receipt.clone();
    free.delete_receipt(&receipt)
        .await
        .map_err(anyhow::Error::msg)?;
    let drift = window
        .wait_for_text_within(
            "[data-contract='vm'] [data-testid='contract-drift']",
            "receipt is gone",
            DRIFT_TIMEOUT,
        )
        .await?;
    assert!(drift.contains("Release it"), "the fix is named: {drift}");
    window.find("[data-testid='row-drift']").await?;
    window.screenshot("drift").await?;

    window.release_vm(MARKET_TIMEOUT).await?;
    assert!(
        window
            .find_all("[data-contract='vm'] [data-testid='contract-drift']")
            .await?
            .is_empty(),
        "a released contract shows no drift"
    );
    window.screenshot("released").await?;
    window.close().await
}

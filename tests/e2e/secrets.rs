//! A deployment's secret from the window, against the sandbox's real PDS, the test keyring and
//! a sandbox bidder: on a deployed contract the owner adds a secret (a bad name first: refused
//! with its problem, nothing saved); the Secrets panel shows it sealed to the guest's key and
//! delivered, and the guest opened exactly that value (it reports its SHA-256); Reveal reads it
//! back from the keychain on a click; Rotate delivers version 2; Remove, once confirmed, takes
//! it off.

use sha2::{Digest, Sha256};
use swdesk_devnet::SandboxPds;
use swdesk_sandbox_bidder::{Opened, RunningBidder};
use swdesk_tests::{AppWindow, borrowed, sandbox_env};

use crate::market::{MARKET_TIMEOUT, bidder, with_bidders};

const GUEST: &str = "[data-secret='db-password'] [data-testid='secret-guest']";

fn opened(version: i64, value: &str) -> Opened {
    Opened {
        name: "db-password".into(),
        version,
        sha256: Sha256::digest(value.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
    }
}

/// What the winning guest opened, once it has opened `count` secrets.
async fn guest_opened(free: &RunningBidder, count: usize) -> anyhow::Result<Vec<Opened>> {
    let deadline = std::time::Instant::now() + MARKET_TIMEOUT;
    loop {
        let opened = free
            .state()
            .guests
            .first()
            .map(|guest| guest.opened.clone())
            .unwrap_or_default();
        if opened.len() >= count || std::time::Instant::now() > deadline {
            return Ok(opened);
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

async fn fill_secret(window: &AppWindow, name: Option<&str>, value: &str) -> anyhow::Result<()> {
    if let Some(name) = name {
        window.type_into("[data-field='secret-name']", name).await?;
    }
    window
        .type_into("[data-field='secret-value']", value)
        .await?;
    window.click("[data-action='save-secret']").await
}

#[tokio::test]
async fn a_secret_added_in_the_window_reaches_the_guest_sealed_rotates_and_is_removed()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let owner = pds.create_account("e2esec").await?;
    let free = bidder(&pds, None).await?;
    let env = with_bidders(sandbox_env(&pds, &owner)?, &[&free])?;
    let mut window = AppWindow::open_with_env("secrets", &borrowed(&env)).await?;
    window.sign_in().await?;
    window
        .declare_and_deploy_vm("vault", MARKET_TIMEOUT)
        .await?;

    window.click("[data-action='add-secret']").await?;
    fill_secret(&window, Some("Bad Name"), "irrelevant").await?;
    let problems = window.text_of("[data-testid='secret-problems']").await?;
    assert!(
        problems.contains("is not a secret name"),
        "the problem is named: {problems}"
    );
    window.screenshot("refused").await?;
    let first = "first-e2e-value-7c1f";
    fill_secret(&window, Some("db-password"), first).await?;
    window
        .wait_for_text_within(GUEST, "sealed to guest key …", MARKET_TIMEOUT)
        .await?;
    assert_eq!(guest_opened(&free, 1).await?, vec![opened(1, first)]);
    window.screenshot("delivered").await?;

    window
        .click("[data-secret='db-password'] [data-action='reveal-secret']")
        .await?;
    assert_eq!(
        window.text_of("[data-testid='secret-revealed']").await?,
        first
    );
    window
        .click("[data-secret='db-password'] [data-action='hide-secret']")
        .await?;

    window
        .click("[data-secret='db-password'] [data-action='rotate-secret']")
        .await?;
    let second = "second-e2e-value-9a2b";
    fill_secret(&window, None, second).await?;
    window
        .wait_for_text(
            "[data-secret='db-password'] [data-testid='secret-version']",
            "version 2",
        )
        .await?;
    assert_eq!(
        guest_opened(&free, 2).await?,
        vec![opened(1, first), opened(2, second)]
    );
    window
        .wait_for_text_within(GUEST, "sealed to guest key …", MARKET_TIMEOUT)
        .await?;
    window.screenshot("rotated").await?;

    window
        .click("[data-secret='db-password'] [data-action='remove-secret']")
        .await?;
    let asked = window.text_of("[data-testid='confirm-message']").await?;
    assert!(asked.contains("“db-password”"), "{asked}");
    window
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    window
        .wait_for_text("[data-testid='secrets']", "No secrets.")
        .await?;
    window.close().await
}

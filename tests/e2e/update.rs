//! Signed updates as the owner meets them: the running app reads the release server's
//! `latest.json` (a loopback one, with keys of the test's own), refuses every release it must
//! (another key's signature, a package cut short, an unreadable signature, an older version, a
//! signature made for another version) saying why while it keeps working, and offers a good one
//! as "ready — restart to update", installing nothing before the owner asks.

use swdesk_tests::AppWindow;
use swdesk_tests::releases::{ReleaseServer, SigningKey};

/// Where the sidebar tells of an update.
const BAR: &str = "[data-testid='update-bar']";

/// A package to offer: bytes that are no package, so that nothing is ever installed here (the
/// installed app's update, with a real `.deb`, is in `package.rs`).
fn package() -> Vec<u8> {
    (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// Asks the app to check again from Settings, then waits for the sidebar to say `expected`.
async fn check_again(window: &AppWindow, expected: &str) -> anyhow::Result<String> {
    window.click("[data-testid='updates'] button").await?;
    window.wait_for_text(BAR, expected).await
}

#[tokio::test]
async fn every_bad_release_is_refused_with_its_reason_and_a_good_one_waits_for_the_owner()
-> anyhow::Result<()> {
    let project = SigningKey::generate()?;
    let stranger = SigningKey::generate()?;
    let server = ReleaseServer::start().await?;
    let package = package();
    server.offer("9.0.0", &package, &stranger.sign(&package, "9.0.0")?);
    let endpoint = server.manifest_url();
    let mut window = AppWindow::open_with_env(
        "updates",
        &[
            ("SWDESK_UPDATE_ENDPOINT", &endpoint),
            ("SWDESK_UPDATE_KEY", &project.public),
        ],
    )
    .await?;
    window
        .wait_for_text(BAR, "signed by another key than the project's")
        .await?;
    window.click("button[data-nav='settings']").await?;

    let signed = project.sign(&package, "9.0.0")?;
    server.offer("9.0.0", &package[..package.len() / 2], &signed);
    check_again(&window, "changed or cut short on its way").await?;

    server.offer("9.0.0", &package, "bm90IGEgc2lnbmF0dXJl");
    check_again(&window, "its signature cannot be read").await?;

    server.offer("0.0.1", &package, &project.sign(&package, "0.0.1")?);
    check_again(&window, "older than the running 0.1.0").await?;

    server.offer("9.0.0", &package, &project.sign(&package, "0.0.2")?);
    check_again(&window, "made for version 0.0.2").await?;
    let refused = window.text_of(BAR).await?;
    assert!(refused.contains("keeps working"), "{refused}");
    window.screenshot("refused").await?;

    server.offer("9.0.0", &package, &signed);
    check_again(&window, "Version 9.0.0 is ready — restart to update").await?;
    window
        .wait_for_text("[data-testid='updates']", "Version 9.0.0 is ready")
        .await?;
    window.screenshot("ready").await?;

    // An install that fails (the bytes are no package; a build not installed from one refuses
    // to write over itself) says so, and the running version keeps working.
    window.click(&format!("{BAR} button")).await?;
    window.wait_for_text(BAR, "could not be installed").await?;
    window.click("button[data-nav='deployments']").await?;
    window.wait_for_text("main", "Deployments").await?;
    window.close().await
}

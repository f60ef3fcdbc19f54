//! Signing in from the window: the sign-in screen (with the scopes it will ask for, before the
//! browser opens), the browser (Chromium at the sandbox PDS's
//! real authorization page, as `$BROWSER`), the account menu, a restart that keeps the
//! session, sign-out; and a handle that does not resolve, refused with advice.

use std::time::Duration;

use swdesk_devnet::SandboxPds;
use swdesk_tests::{AppWindow, BROWSER_TIMEOUT, borrowed, sandbox_env};

const ACCOUNT: &str = "section[aria-label='Account']";

#[tokio::test]
async fn signing_in_shows_the_account_and_a_restart_keeps_it_until_sign_out() -> anyhow::Result<()>
{
    let pds = SandboxPds::from_env_or_start().await?;
    let account = pds.create_account("e2e").await?;
    let env = sandbox_env(&pds, &account)?;
    let mut window = AppWindow::open_with_env("sign-in", &borrowed(&env)).await?;
    window.wait_for_text(ACCOUNT, "Signed out").await?;

    window.click("[data-action='sign-in']").await?;
    window
        .wait_for_text("[data-testid='sandbox-demo']", &account.handle)
        .await?;
    window
        .click("[data-testid='requested-scopes'] summary")
        .await?;
    window
        .wait_for_text(
            "[data-testid='requested-scopes']",
            "Write computer.socialweb.infra records",
        )
        .await?;
    window.screenshot("sign-in-screen").await?;
    window.click("[data-action='continue-in-browser']").await?;
    let signed_in = window
        .wait_for("[data-account-handle]", BROWSER_TIMEOUT)
        .await?;
    assert_eq!(signed_in.text().await?, account.handle);

    window.click("[data-action='account-menu']").await?;
    assert_eq!(
        window.text_of("[data-testid='account-did']").await?,
        account.did
    );
    window
        .wait_for_text(
            "[data-testid='granted-scopes']",
            "Write computer.socialweb.infra records",
        )
        .await?;
    assert!(
        window
            .find_all("[data-testid='scopes-not-granted']")
            .await?
            .is_empty(),
        "the sandbox PDS grants every scope asked: nothing is said to be missing"
    );
    window.screenshot("account-menu").await?;

    let mut window = window.restart().await?;
    let restored = window
        .wait_for("[data-account-handle]", Duration::from_secs(20))
        .await?;
    assert_eq!(
        restored.text().await?,
        account.handle,
        "the session survives a restart"
    );
    window.screenshot("restored").await?;

    window.click("[data-action='account-menu']").await?;
    window.click("[data-action='sign-out']").await?;
    window.wait_for_text(ACCOUNT, "Signed out").await?;
    let window = window.restart().await?;
    window.wait_for_text(ACCOUNT, "Signed out").await?;
    window.close().await
}

#[tokio::test]
async fn a_handle_that_does_not_resolve_is_refused_with_what_to_do() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let account = pds.create_account("e2ebad").await?;
    let env = sandbox_env(&pds, &account)?;
    let mut window = AppWindow::open_with_env("sign-in-unknown", &borrowed(&env)).await?;
    window.click("[data-action='sign-in']").await?;
    window
        .type_into("#sign-in-handle", "nobody-at-all.test")
        .await?;
    window.click("[data-action='continue-in-browser']").await?;
    let error = window
        .wait_for_text("[data-testid='sign-in-error']", "does not resolve")
        .await?;
    assert!(error.contains("nobody-at-all.test"), "{error}");
    assert!(
        error.contains("Check the handle"),
        "the advice is shown: {error}"
    );
    window.screenshot("unknown-handle").await?;
    window.click("[data-action='cancel-sign-in']").await?;
    window.wait_for_text(ACCOUNT, "Signed out").await?;
    window.close().await
}

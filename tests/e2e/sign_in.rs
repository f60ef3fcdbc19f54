//! Signing in from the window: the sign-in screen (with the scopes it will ask for, before the
//! browser opens), the browser (Chromium at the sandbox PDS's
//! real authorization page, as `$BROWSER`), the account menu, a restart that keeps the
//! session, sign-out; a release build's sign-in (its hosted client id) returning through the
//! app's own link; and a handle that does not resolve, refused with advice.

use std::path::Path;
use std::time::Duration;

use swdesk_devnet::SandboxPds;
use swdesk_tests::{AppWindow, BROWSER_TIMEOUT, borrowed, sandbox_env};

const ACCOUNT: &str = "section[aria-label='Account']";

#[tokio::test]
async fn signing_in_shows_the_account_and_a_restart_keeps_it_until_sign_out() -> anyhow::Result<()>
{
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, account) = AppWindow::open_for_new_owner(&pds, "e2e", "sign-in").await?;
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
    window
        .wait_for("[data-account-handle]", BROWSER_TIMEOUT)
        .await?;
    assert_eq!(
        window.text_of("[data-account-handle]").await?,
        account.handle
    );

    window.click("[data-action='account-menu']").await?;
    assert_eq!(
        window
            .attr_of("[data-testid='account-did']", "data-value")
            .await?
            .as_deref(),
        Some(account.did.as_str()),
        "the DID is a secondary detail: short, whole behind its copy button"
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
    window
        .wait_for("[data-account-handle]", Duration::from_secs(20))
        .await?;
    assert_eq!(
        window.text_of("[data-account-handle]").await?,
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

/// The hosted client metadata document a release build presents (the sandbox PDS answers its
/// URL with the committed document).
const HOSTED_CLIENT_ID: &str = "https://desk.socialweb.computer/oauth-client-metadata.json";

/// Where the desktop hands the app its link (a desktop entry naming this binary, the default
/// handler of `x-scheme-handler/computer.socialweb.desk`, as the package installs it), sign-in
/// returns through the link: the browser hands it to `xdg-open`, which launches the app a
/// second time with it, and that launch gives it to the running window.
#[tokio::test]
async fn a_release_sign_in_returns_through_the_apps_own_link() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let account = pds.create_account("e2elink").await?;
    let mut env = sandbox_env(&pds, &account)?;
    env.push(("SWDESK_CLIENT_ID", HOSTED_CLIENT_ID.to_owned()));
    let window = AppWindow::open_with_env("sign-in-link", &borrowed(&env)).await?;
    register_link_handler(window.home(), window.binary())?;
    window.wait_for_text(ACCOUNT, "Signed out").await?;

    window.click("[data-action='sign-in']").await?;
    window.click("[data-action='continue-in-browser']").await?;
    window
        .wait_for("[data-account-handle]", BROWSER_TIMEOUT)
        .await?;
    assert_eq!(
        window.text_of("[data-account-handle]").await?,
        account.handle
    );
    let log = window.log();
    for line in [
        "sign-in returns through the app's link",
        "a second launch: showing this window instead",
        "a sign-in link was handed to the waiting sign-in",
    ] {
        assert!(log.contains(line), "{line:?} in the log:\n{log}");
    }
    assert!(
        !log.contains("code="),
        "the link's authorization code is never logged"
    );
    window.close().await
}

/// Makes `binary` the desktop's handler of the app's link in `home`, as the installed
/// package's desktop entry does system-wide.
fn register_link_handler(home: &Path, binary: &Path) -> anyhow::Result<()> {
    let applications = home.join("data/applications");
    std::fs::create_dir_all(&applications)?;
    std::fs::write(
        applications.join("swdesk-link-test.desktop"),
        format!(
            "[Desktop Entry]\nType=Application\nName=Socialweb Desk\nExec={} %u\n\
             MimeType=x-scheme-handler/computer.socialweb.desk;\nNoDisplay=true\n",
            binary.display()
        ),
    )?;
    let config = home.join("config");
    std::fs::create_dir_all(&config)?;
    std::fs::write(
        config.join("mimeapps.list"),
        "[Default Applications]\nx-scheme-handler/computer.socialweb.desk=swdesk-link-test.desktop\n",
    )?;
    Ok(())
}

#[tokio::test]
async fn a_handle_that_does_not_resolve_is_refused_with_what_to_do() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, _) = AppWindow::open_for_new_owner(&pds, "e2ebad", "sign-in-unknown").await?;
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

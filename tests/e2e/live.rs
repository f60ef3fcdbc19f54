//! Two devices, one repo, in the real window against the sandbox's real PDS: the window is
//! signed in and says `live`; another client (the owner's phone, a second agent writing to the
//! same repo on the PDS) creates a deployment and edits it three times, and the window shows
//! each change within a few seconds, while its poll is ten minutes away (it polls every 30 s
//! only when the stream is not open, which the account area would say).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swdesk_devnet::{Account, SandboxPds};
use swdesk_tests::AppWindow;

/// The deployments' record collection (the index at `self` is a record of it too).
const INFRA: &str = "computer.socialweb.infra";
/// How soon a change written elsewhere must be on screen: the stream brings it in well under
/// a second; a poll (every 10 minutes while live, every 30 s when not) would not.
const LIVE_BUDGET: Duration = Duration::from_secs(5);
/// How long the stream may take to open after sign-in (generous under load).
const STREAM_TIMEOUT: Duration = Duration::from_secs(30);
/// The account area while the repo's stream is open.
const LIVE: &str = "[data-live='live']";
/// The row of the deployment the phone writes.
const PHONE_ROW: &str = "[data-testid='deployment-row'][data-name='phone']";

/// The phone's deployment record, described as `description`.
fn phone_record(description: &str) -> Value {
    json!({
        "$type": INFRA,
        "createdAt": "2026-12-06T00:00:00.000Z",
        "description": description,
        "contracts": [],
    })
}

/// The index at `self` as the phone writes it: its one deployment, live.
fn phone_index() -> Value {
    json!({
        "$type": INFRA,
        "createdAt": "2026-12-06T00:00:00.000Z",
        "index": {
            "updatedAt": "2026-12-06T00:00:00.000Z",
            "live": [{
                "collection": INFRA,
                "rkey": "phone",
                "createdAt": "2026-12-06T00:00:00.000Z",
                "addedAt": "2026-12-06T00:00:00.000Z",
                "writer": "phone",
            }],
        },
    })
}

/// The phone creates its deployment, described as `description`, and lists it in the index,
/// in one commit.
async fn phone_creates(
    pds: &SandboxPds,
    account: &Account,
    description: &str,
) -> anyhow::Result<()> {
    let writes = [
        ("phone".to_owned(), phone_record(description)),
        ("self".to_owned(), phone_index()),
    ];
    Ok(pds.put_records_as(account, INFRA, &writes).await?)
}

/// Runs `write` (the phone's), then waits until the phone's row shows `expected`; how long
/// that took from the write's start, failing past [`LIVE_BUDGET`].
async fn shown_after(
    window: &AppWindow,
    expected: &str,
    write: impl AsyncFnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<Duration> {
    let written = Instant::now();
    write().await?;
    loop {
        // The row's line is cut to its width (WebDriver reads a clipped text as empty): its
        // whole text, as the hover shows it.
        let seen = match window.find_all(PHONE_ROW).await?.first() {
            Some(row) => match row.prop("textContent").await {
                Ok(text) => text.unwrap_or_default(),
                // Replaced by the list meanwhile: read again on the next turn.
                Err(error) if swdesk_tests::is_stale(&error) => String::new(),
                Err(error) => return Err(error.into()),
            },
            None => String::new(),
        };
        if seen.contains(expected) {
            return Ok(written.elapsed());
        }
        anyhow::ensure!(
            written.elapsed() < LIVE_BUDGET,
            "the phone's row did not show {expected:?} within {LIVE_BUDGET:?}: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn another_devices_edits_are_on_screen_within_seconds_while_live() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, account) = AppWindow::signed_in_as_new_owner(&pds, "e2elive", "live").await?;
    window.wait_for(LIVE, STREAM_TIMEOUT).await?;

    let mut took = Vec::new();
    took.push(
        shown_after(&window, "made on the phone", async || {
            phone_creates(&pds, &account, "made on the phone").await
        })
        .await?,
    );
    window.screenshot("created-elsewhere").await?;
    for round in 1..=3 {
        let description = format!("edited on the phone ({round})");
        let record = phone_record(&description);
        took.push(
            shown_after(&window, &description, async || {
                Ok(pds.put_record_as(&account, INFRA, "phone", &record).await?)
            })
            .await?,
        );
    }
    eprintln!("written elsewhere → on screen: {took:?}");
    window.screenshot("edited-elsewhere").await?;
    assert!(
        !window.find_all(LIVE).await?.is_empty(),
        "the window stayed live: {}",
        window.text_of("[aria-label='Account']").await?
    );
    window.click("[data-action='account-menu']").await?;
    window
        .wait_for_text("[data-testid='live-status']", "Live")
        .await?;
    window.screenshot("live-status").await?;
    window.close().await
}

/// Types `url` into Settings' relay field and saves it.
async fn save_live_source(window: &AppWindow, url: &str) -> anyhow::Result<()> {
    let field = window.find("#live-source-url").await?;
    field.clear().await?;
    window.type_into("#live-source-url", url).await?;
    window.click("[data-action='save-live-source']").await
}

/// Settings names a relay: a URL the network's policy refuses is refused with every reason and
/// nothing kept; the sandbox PDS itself, given explicitly as the relay's URL, is kept (across a
/// restart), the account menu says the app follows it, and the phone's edit arrives on it
/// within seconds.
#[tokio::test]
async fn a_relay_named_in_settings_is_checked_kept_and_followed() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, account) =
        AppWindow::signed_in_as_new_owner(&pds, "e2erelay", "relay").await?;
    window.wait_for(LIVE, STREAM_TIMEOUT).await?;
    window.press_command_key(",").await?;
    window.wait_for_text("#section-title", "Settings").await?;
    window
        .wait_for_text("[data-testid='live-source-now']", "Following your PDS")
        .await?;

    save_live_source(&window, "http://relay.example.com/xrpc").await?;
    let refused = window
        .wait_for_text("[data-testid='live-source-error']", "only https")
        .await?;
    assert!(refused.contains("has a path (/xrpc)"), "{refused}");
    save_live_source(&window, "http://localhost:1").await?;
    window
        .wait_for_text(
            "[data-testid='live-source-error']",
            "a loopback address not named by the network configuration",
        )
        .await?;
    window.screenshot("refused").await?;
    assert_eq!(
        window.text_of("[data-testid='live-source-now']").await?,
        "Following your PDS",
        "nothing was kept"
    );

    let relay = format!("{}/", pds.info().pds_url.trim_end_matches('/'));
    save_live_source(&window, &relay).await?;
    window
        .wait_for_text(
            "[data-testid='live-source-now']",
            &format!("Following {relay} (saved)"),
        )
        .await?;
    assert!(
        window
            .find_all("[data-testid='live-source-error']")
            .await?
            .is_empty()
    );
    window.screenshot("kept").await?;
    let mut window = window.restart().await?;
    window.wait_for(LIVE, STREAM_TIMEOUT).await?;
    window.click("[data-action='account-menu']").await?;
    window
        .wait_for_text(
            "[data-testid='live-source']",
            &format!("Following {relay} (set in Settings)"),
        )
        .await?;
    window.press_escape().await?;
    window.press_command_key("1").await?;
    let made = "made on the phone, read from the relay";
    let took = shown_after(&window, made, async || {
        phone_creates(&pds, &account, made).await
    })
    .await?;
    eprintln!("written elsewhere → on screen through the relay URL: {took:?}");
    assert!(
        window.log_lines_containing("subscribeRepos:owner@http://localhost") > 0,
        "the follower reads the stream at the relay URL"
    );
    window.screenshot("followed-at-the-relay").await?;
    window.close().await
}

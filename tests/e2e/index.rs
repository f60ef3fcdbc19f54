//! The account's index at `self` in the window, against the sandbox's real PDS: another client
//! (a CLI) already filled it with the most live deployments it may list (256, each with its
//! record, which the window follows as another device's). The Deployments
//! header counts them; a deployment declared here is published all the same, and its row, its
//! detail and the notice above the list say it waits for room and what to do. Once the other
//! client ends one of its own, the deployment is listed and the wait is gone.

use std::time::Duration;

use serde_json::{Value, json};
use swdesk_devnet::SandboxPds;
use swdesk_tests::{AppWindow, borrowed, sandbox_env};

/// The index's collection and key.
const INFRA: &str = "computer.socialweb.infra";
/// The most live entries an index may list.
const MAX_LIVE: usize = 256;
/// Publishing takes seconds; a deployment at rest offers itself to the index again at its
/// next resync, up to a minute later; generous under load.
const INDEX_TIMEOUT: Duration = Duration::from_secs(120);
/// What a row and the detail say while the deployment waits for room.
const WAITS: &str = "waiting: your index is full (256 live); end or release one";

/// The records of another client's deployments `cli-0` to `cli-{count - 1}`.
fn records_of_another_client(count: usize) -> Vec<(String, Value)> {
    (0..count)
        .map(|n| {
            let record = json!({
                "$type": INFRA,
                "createdAt": "2026-12-01T00:00:00.000Z",
                "description": format!("a deployment the CLI made ({n})"),
                "contracts": [],
            });
            (format!("cli-{n}"), record)
        })
        .collect()
}

/// An index listing the first `live` of them.
fn index_of_another_client(live: usize) -> Value {
    let entries: Vec<Value> = (0..live)
        .map(|n| {
            json!({
                "collection": INFRA,
                "rkey": format!("cli-{n}"),
                "createdAt": "2026-12-01T00:00:00.000Z",
                "addedAt": "2026-12-01T00:00:00.000Z",
                "writer": "cli",
            })
        })
        .collect();
    json!({
        "$type": INFRA,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "index": {"updatedAt": "2026-12-01T00:00:00.000Z", "live": entries},
    })
}

/// Waits until the Deployments header counts a full index.
async fn full_count(window: &AppWindow) -> anyhow::Result<()> {
    window
        .wait_for_exact_text(
            "[data-testid='index-count']",
            "256 / 256 live",
            INDEX_TIMEOUT,
        )
        .await
}

#[tokio::test]
async fn a_full_index_is_counted_and_a_new_deployment_says_it_waits_for_room() -> anyhow::Result<()>
{
    let pds = SandboxPds::from_env_or_start().await?;
    let account = pds.create_account("e2eindex").await?;
    pds.put_records_as(&account, INFRA, &records_of_another_client(MAX_LIVE))
        .await?;
    pds.put_record_as(&account, INFRA, "self", &index_of_another_client(MAX_LIVE))
        .await?;
    let env = sandbox_env(&pds, &account)?;
    let mut window = AppWindow::open_with_env("index", &borrowed(&env)).await?;
    window.sign_in().await?;
    full_count(&window).await?;

    window.press_command_key("n").await?;
    window.type_into("#decl-name", "web").await?;
    window.click("[data-action='save-declaration']").await?;
    // 257 rows: the list shows the ones in view, so find it as an owner would.
    window
        .type_into("[data-testid='deployment-search']", "web")
        .await?;
    let row = "[data-testid='deployment-row'][data-name='web']";
    // The row's line is cut to its width (WebDriver reads a clipped text as empty): its whole
    // text, as the hover shows it.
    let wait = format!("{row} [data-testid='row-index-wait']");
    window.wait_for(&wait, INDEX_TIMEOUT).await?;
    assert_eq!(
        window.prop_of(&wait, "textContent").await?.as_deref(),
        Some(WAITS)
    );
    full_count(&window).await?;
    let notice = window.text_of("[data-testid='index-notice']").await?;
    assert!(
        notice.contains("already lists 256 live deployments") && notice.contains("1 new"),
        "the notice above the list says why: {notice}"
    );
    window.click(row).await?;
    window
        .wait_for_exact_text("[data-testid='index-wait']", WAITS, INDEX_TIMEOUT)
        .await?;
    assert_eq!(
        window.text_of("[data-testid='detail-sync']").await?,
        "In sync",
        "the record is published all the same"
    );
    window.screenshot("waits-for-room").await?;

    // The CLI takes its last deployment out of the index: room for one.
    pds.put_record_as(
        &account,
        INFRA,
        "self",
        &index_of_another_client(MAX_LIVE - 1),
    )
    .await?;
    window
        .wait_for_gone("[data-testid='index-wait']", INDEX_TIMEOUT)
        .await?;
    full_count(&window).await?;
    assert!(
        window
            .find_all("[data-testid='index-notice']")
            .await?
            .is_empty(),
        "the notice is gone with the wait"
    );
    window.screenshot("listed").await?;
    window.close().await
}

//! Deployments from the window, against the sandbox's real PDS: a declaration with problems is
//! refused naming each; a valid one is created, published (the record checked on the PDS), its
//! contract requested (shown waiting, with what for) and released with one click (shown
//! releasing at once, then released, and the record says so); the release is told in the
//! window and, the owner not looking at the window, on the desktop. A contract's kind changed
//! by another client is neither applied nor reverted until the owner keeps this side or ends
//! the deployment for a successor. An ephemeral one's lifetime counts down in the list.

use std::time::Duration;

use serde_json::Value;
use swdesk_devnet::SandboxPds;
use swdesk_tests::desktop::{DesktopNotifications, OtherApp};
use swdesk_tests::{AppWindow, STEP_TIMEOUT, borrowed, sandbox_env};

/// Publishing, pulling and the controller's reaction take seconds, a status-only write of the
/// record up to a minute (the progress-write policy); generous under load.
const SYNC_TIMEOUT: Duration = Duration::from_secs(90);
/// The row of the Infra `web`, in sync with its record.
const WEB_IN_SYNC: &str = "[data-testid='deployment-row'][data-name='web'][data-sync='inSync']";
/// The deployments' record collection.
const INFRA: &str = "computer.socialweb.infra";

async fn record(pds: &SandboxPds, did: &str, rkey: &str) -> anyhow::Result<Option<Value>> {
    let url = format!(
        "{}/xrpc/com.atproto.repo.getRecord?repo={did}&collection=computer.socialweb.infra&rkey={rkey}",
        pds.info().pds_url
    );
    let response = reqwest::get(url).await?;
    if !response.status().is_success() {
        return Ok(None);
    }
    Ok(Some(response.json::<Value>().await?["value"].clone()))
}

/// The description this device declares for the Infra `name`, read through the window's own
/// `deployment` command.
async fn local_description(window: &AppWindow, name: &str) -> anyhow::Result<Option<String>> {
    let view = window
        .run_script(
            DEPLOYMENT,
            vec![serde_json::json!(name)],
            Duration::from_secs(10),
        )
        .await?;
    let declaration: Value =
        serde_json::from_str(view["detail"]["declaration"].as_str().unwrap_or("null"))?;
    Ok(declaration["spec"]["description"]
        .as_str()
        .map(str::to_owned))
}

const DEPLOYMENT: &str = r#"
const done = arguments[arguments.length - 1];
window.__TAURI_INTERNALS__
  .invoke("deployment", { kind: "Infra", name: arguments[0] })
  .then(done, (error) => done({ error: String(error) }));
"#;

/// Whether the window has the focus and is shown (the owner looking at it), as the page sees it.
const LOOKING: &str = r#"
const done = arguments[arguments.length - 1];
done({ focused: document.hasFocus(), hidden: document.hidden });
"#;

/// Waits until the record at `rkey` satisfies `check`.
async fn record_where(
    pds: &SandboxPds,
    did: &str,
    rkey: &str,
    check: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let deadline = std::time::Instant::now() + SYNC_TIMEOUT;
    loop {
        if let Some(found) = record(pds, did, rkey).await?.filter(|value| check(value)) {
            return Ok(found);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the record {rkey} never became as expected: {:?}",
            record(pds, did, rkey).await?
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// An ephemeral deployment's lifetime counts down in the list, second by second: the list's
/// clock runs while a countdown is on screen (and, `ui/src/lib/ticker.ts`, only then).
#[tokio::test]
async fn an_ephemeral_deployments_lifetime_counts_down_in_the_list() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, _) = AppWindow::signed_in_as_new_owner(&pds, "e2ettl", "countdown").await?;
    window.find_in_palette("ephemeral", "new-ephemeral").await?;
    window.press_enter().await?;
    window.type_into("#decl-name", "scratch").await?;
    window.click("[data-action='save-declaration']").await?;
    // Saved, it is opened beside the list, whose clock ticks as the list's does.
    let in_detail =
        "[data-testid='deployment-detail'][data-name='scratch'] [data-testid='detail-ttl']";
    let ticked = counts_down(&window, in_detail).await?;
    assert!(ticked.starts_with("ends in 59 min"), "{ticked}");
    // Closed, the list has room for every column.
    window.press_escape().await?;
    window
        .wait_for_gone("[data-testid='deployment-detail']", STEP_TIMEOUT)
        .await?;
    let ticked = counts_down(
        &window,
        "[data-testid='deployment-row'][data-name='scratch'] .ttl",
    )
    .await?;
    assert!(ticked.starts_with("in 59 min"), "{ticked}");
    window.screenshot("countdown").await?;
    window.close().await
}

/// Waits until `css` shows a countdown under an hour, then until it reads otherwise, at most
/// 5 s later; answers what it then reads.
async fn counts_down(window: &AppWindow, css: &str) -> anyhow::Result<String> {
    let first = window
        .wait_for_text_within(css, "in 59 min", SYNC_TIMEOUT)
        .await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut now = first.clone();
    while now == first && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        now = window.text_of(css).await?;
    }
    anyhow::ensure!(now != first, "`{css}` stood still for 5 s at {first:?}");
    Ok(now)
}

#[tokio::test]
async fn a_deployment_is_declared_published_requested_and_released_with_one_click()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let desktop = DesktopNotifications::serve().await?;
    let (mut window, account) =
        AppWindow::signed_in_as_new_owner(&pds, "e2edep", "deployments").await?;
    window.screenshot("empty").await?;

    window.press_command_key("n").await?;
    window.type_into("#decl-name", "Web_Server").await?;
    window.type_into("#decl-contracts", "api, api").await?;
    window.click("[data-action='save-declaration']").await?;
    let problems = window
        .wait_for_text("[data-testid='declaration-problems']", "Nothing was saved")
        .await?;
    assert!(problems.contains("Name:"), "{problems}");
    assert!(problems.contains("Contracts › contract 2"), "{problems}");
    window.screenshot("problems").await?;

    window.type_into("#decl-name", "web").await?;
    window
        .type_into("#decl-description", "the web front")
        .await?;
    window.type_into("#decl-contracts", "api, worker").await?;
    window.click("[data-action='save-declaration']").await?;
    window.wait_for(WEB_IN_SYNC, SYNC_TIMEOUT).await?;
    let published = record_where(&pds, &account.did, "web", |_| true).await?;
    assert_eq!(published["description"], "the web front");
    assert_eq!(published["contracts"][1]["name"], "worker");
    window.screenshot("published").await?;

    // The command palette opens it: Ctrl+K, a few letters, Enter.
    window.find_in_palette("open web", "open-Infra-web").await?;
    window.screenshot("palette").await?;
    window.press_enter().await?;
    window
        .find("[data-testid='deployment-detail'][data-name='web']")
        .await?;
    // The record's URI is shown short, the whole of it behind its copy button.
    window
        .wait_for(
            &format!(
                "[data-testid='record-uri'][data-value='at://{}/computer.socialweb.infra/web']",
                account.did
            ),
            STEP_TIMEOUT,
        )
        .await?;
    window
        .click("[data-contract='api'] [data-action='request']")
        .await?;
    window
        .wait_for_text(
            "[data-contract='api'] [data-testid='contract-phase']",
            "Requesting",
        )
        .await?;
    window
        .wait_for_text(
            "[data-contract='api'] [data-testid='waiting-for']",
            "Waiting for",
        )
        .await?;
    record_where(&pds, &account.did, "web", |record| {
        record["contracts"][0]["state"] == "requested"
    })
    .await?;
    window.screenshot("requested").await?;

    window
        .click_until_shown(
            "[data-contract='api'] [data-action='release']",
            "[data-testid='confirm-message']",
        )
        .await?;
    let confirmation = window.text_of("[data-testid='confirm-message']").await?;
    assert!(confirmation.contains("“api”"), "{confirmation}");
    window.screenshot("release-confirmation").await?;
    window
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    // The owner switches to another app while the release goes through.
    let other_app = OtherApp::focus()?;
    window
        .wait_for_text(
            "[data-contract='api'] [data-testid='contract-phase']",
            "Releas",
        )
        .await?;
    let released = record_where(&pds, &account.did, "web", |record| {
        record["contracts"][0]["state"] == "released"
            && record["contracts"][0]["releaseRequestedAt"].is_string()
    })
    .await?;
    assert_eq!(
        released["contracts"][1]["state"], "staged",
        "only api was released"
    );
    window
        .wait_for_text(
            "[data-contract='api'] [data-testid='contract-phase']",
            "Released",
        )
        .await?;
    window
        .wait_for_text(
            "[data-testid='notice'][data-name='web']",
            "A contract was released",
        )
        .await?;
    window.screenshot("released").await?;
    let looking = window
        .run_script(LOOKING, vec![], Duration::from_secs(5))
        .await?;
    assert_eq!(
        looking["focused"], false,
        "another app has the focus: {looking}"
    );
    let shown = desktop
        .wait_for("web (Infra)", Duration::from_secs(10))
        .await?;
    assert_eq!(shown.summary, "A contract was released", "{shown:?}");
    drop(other_app);
    // The section, the notices and the palette read one list: listed once, at sign-in.
    assert_eq!(
        window.log_lines_containing("listed the deployments"),
        1,
        "the window listed the deployments more than once"
    );
    window.close().await
}

#[tokio::test]
async fn a_second_device_follows_the_deployment_and_releases_it_by_a_record_edit()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let account = pds.create_account("e2edev").await?;
    let env = sandbox_env(&pds, &account)?;
    let mut laptop = AppWindow::open_with_env("laptop", &borrowed(&env)).await?;
    laptop.sign_in().await?;
    laptop.press_command_key("n").await?;
    laptop.type_into("#decl-name", "shared").await?;
    laptop.type_into("#decl-contracts", "api").await?;
    laptop.click("[data-action='save-declaration']").await?;
    laptop
        .wait_for(
            "[data-testid='deployment-row'][data-name='shared'][data-sync='inSync']",
            SYNC_TIMEOUT,
        )
        .await?;
    laptop
        .click("[data-testid='deployment-row'][data-name='shared']")
        .await?;
    laptop
        .click("[data-contract='api'] [data-action='request']")
        .await?;
    record_where(&pds, &account.did, "shared", |record| {
        record["status"]["contracts"][0]["phase"] == "requesting"
    })
    .await?;

    let mut desktop = AppWindow::open_with_env("desktop", &borrowed(&env)).await?;
    desktop.sign_in().await?;
    desktop
        .wait_for(
            "[data-testid='deployment-row'][data-name='shared']",
            SYNC_TIMEOUT,
        )
        .await?;
    desktop
        .click("[data-testid='deployment-row'][data-name='shared']")
        .await?;
    desktop
        .wait_for_text("[data-testid='deployment-detail']", "Written by")
        .await?;
    desktop
        .wait_for_text(
            "[data-contract='api'] [data-testid='contract-phase']",
            "Requesting",
        )
        .await?;
    desktop.screenshot("follower").await?;
    desktop
        .click_until_shown(
            "[data-contract='api'] [data-action='release']",
            "[data-testid='confirm-message']",
        )
        .await?;
    let confirmation = desktop.text_of("[data-testid='confirm-message']").await?;
    assert!(
        confirmation.contains("Another device writes this deployment"),
        "{confirmation}"
    );
    desktop
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    let asked = record_where(&pds, &account.did, "shared", |record| {
        record["contracts"][0]["state"] == "released"
    })
    .await?;
    assert!(asked["contracts"][0]["releaseRequestedAt"].is_string());
    let writer_phase = "[data-contract='api'] [data-testid='contract-phase']";
    laptop
        .wait_for_exact_text(writer_phase, "Released", SYNC_TIMEOUT)
        .await?;
    laptop.screenshot("released-by-the-writer").await?;
    // The writer publishes its progress at most once a minute (SPEC §2): the follower sees the
    // release in the record within that.
    record_where(&pds, &account.did, "shared", |record| {
        record["status"]["contracts"][0]["phase"] == "released"
    })
    .await?;
    desktop
        .wait_for_exact_text(writer_phase, "Released", SYNC_TIMEOUT)
        .await?;
    desktop.screenshot("released-from-the-follower").await?;
    desktop.close().await?;
    laptop.close().await
}

/// A fresh account signed in to a window named `test`, with the Infra `web` declared in the
/// editor (`field` typed as given) and published.
async fn web_published(
    pds: &SandboxPds,
    test: &str,
    (field, text): (&str, &str),
) -> anyhow::Result<(AppWindow, swdesk_devnet::Account)> {
    let (window, account) =
        AppWindow::signed_in_as_new_owner(pds, &format!("e2e{test}"), test).await?;
    window.press_command_key("n").await?;
    window.type_into("#decl-name", "web").await?;
    window.type_into(field, text).await?;
    window.click("[data-action='save-declaration']").await?;
    window.wait_for(WEB_IN_SYNC, SYNC_TIMEOUT).await?;
    Ok((window, account))
}

/// Another client changes what only creation sets (a contract's `computeKind`): the window
/// shows it, applies nothing and writes nothing back until the owner chooses; "keep this
/// device's" writes ours back, "end and declare a successor" ends `web` and declares `web-2`
/// as the record was.
#[tokio::test]
async fn a_contract_kind_changed_elsewhere_is_kept_here_or_ends_for_a_successor()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, account) = web_published(&pds, "genesis", ("#decl-contracts", "api")).await?;
    let in_sync = WEB_IN_SYNC;
    let ours = record_where(&pds, &account.did, "web", |_| true).await?;

    let edit_elsewhere = async || {
        let mut theirs = ours.clone();
        theirs["contracts"][0]["computeKind"] = serde_json::json!("deno");
        pds.put_record_as(&account, INFRA, "web", &theirs).await
    };
    edit_elsewhere().await?;
    let changed = "[data-testid='deployment-row'][data-name='web'][data-sync='conflict']";
    window.wait_for(changed, SYNC_TIMEOUT).await?;
    window.click(changed).await?;
    window
        .wait_for_text(
            "[data-testid='changed-elsewhere']",
            "computeKind of contract api: vm here, deno in the record",
        )
        .await?;
    let record = record(&pds, &account.did, "web").await?.unwrap_or_default();
    assert_eq!(
        record["contracts"][0]["computeKind"], "deno",
        "nothing is written back before the owner chooses"
    );
    window.screenshot("changed-elsewhere").await?;

    window
        .click("[data-testid='changed-elsewhere'] [data-action='keep-local']")
        .await?;
    record_where(&pds, &account.did, "web", |record| {
        record["contracts"][0].get("computeKind").is_none()
    })
    .await?;
    window.wait_for(in_sync, SYNC_TIMEOUT).await?;

    edit_elsewhere().await?;
    window
        .wait_for("[data-testid='changed-elsewhere']", SYNC_TIMEOUT)
        .await?;
    window
        .click("[data-testid='changed-elsewhere'] [data-action='succeed']")
        .await?;
    window
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    window
        .wait_for(
            "[data-testid='deployment-row'][data-name='web-2'][data-sync='inSync']",
            SYNC_TIMEOUT,
        )
        .await?;
    window
        .find("[data-testid='deployment-detail'][data-name='web-2']")
        .await?;
    let successor = record_where(&pds, &account.did, "web-2", |_| true).await?;
    assert_eq!(successor["contracts"][0]["computeKind"], "deno");
    record_where(&pds, &account.did, "web", |record| {
        record["status"]["endedAt"].is_string()
    })
    .await?;
    window.screenshot("successor").await?;
    window.close().await
}

/// Edited in the window and by another client since they last agreed: the window shows the
/// conflict and each choice wins in turn (this device's, then the record's), after which the
/// record and the list agree.
#[tokio::test]
async fn a_conflict_is_resolved_each_way_in_the_window() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, account) =
        web_published(&pds, "conflict", ("#decl-description", "v1")).await?;
    let row = "[data-testid='deployment-row'][data-name='web']";
    let in_sync = format!("{row}[data-sync='inSync']");

    for (round, choice, winner) in [(1, "keep-local", "ours"), (2, "take-record", "theirs")] {
        let agreed = record_where(&pds, &account.did, "web", |_| true).await?;
        window.click("[data-action='edit-deployment']").await?;
        window
            .type_into("#decl-description", &format!("ours {round}"))
            .await?;
        // The other client writes while this edit is still unsaved, so neither saw the other.
        let mut theirs = agreed.clone();
        theirs["description"] = serde_json::json!(format!("theirs {round}"));
        pds.put_record_as(&account, INFRA, "web", &theirs).await?;
        window.click("[data-action='save-declaration']").await?;
        window
            .wait_for(&format!("{row}[data-sync='conflict']"), SYNC_TIMEOUT)
            .await?;
        window
            .wait_for("[data-testid='conflict']", SYNC_TIMEOUT)
            .await?;
        window.screenshot(&format!("conflict-{round}")).await?;
        window
            .click(&format!(
                "[data-testid='conflict'] [data-action='{choice}']"
            ))
            .await?;
        let won = format!("{winner} {round}");
        record_where(&pds, &account.did, "web", |record| {
            record["description"] == won.as_str()
        })
        .await?;
        window.wait_for(&in_sync, SYNC_TIMEOUT).await?;
        let deadline = std::time::Instant::now() + SYNC_TIMEOUT;
        while local_description(&window, "web").await?.as_deref() != Some(won.as_str()) {
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "this device never declared {won:?}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        window.screenshot(&format!("resolved-{round}")).await?;
    }
    window.close().await
}

//! The window for people, checked in the real window: axe-core finds nothing serious or critical
//! on any screen state the owner reaches, in light and in dark; a deployment is declared,
//! requested and released with the keyboard alone, the focus taken by each dialog, kept in it,
//! given back, and landing on what each action made; the Activity grouped by deployment, its
//! folds of routine steps opened and closed by keyboard; the layout holds at 1,024×700 and
//! 1,440×900 on every screen (nothing past the window's edge, no controls overlapping).

use std::time::Duration;

use swdesk_devnet::SandboxPds;
use swdesk_tests::AppWindow;
use swdesk_tests::axe::AxeFindings;
use swdesk_tests::layout::LayoutProblems;

/// Publishing and the controller's reaction take seconds; generous under load.
const SYNC_TIMEOUT: Duration = Duration::from_secs(90);

/// The Activity's group of the steps about the deployment `web`.
const WEB_GROUP: &str = "[data-testid='activity-group'][data-group='Infra/web']";

/// The sections past the deployments, each with the key that opens it (with Ctrl).
const SECTIONS: [(&str, &str); 3] = [("2", "clusters"), ("3", "activity"), (",", "settings")];

/// Opens every fold of the deployment panel (the record, the local objects, the proofs), so
/// what they hold is checked too.
const UNFOLD: &str = r#"
const done = arguments[arguments.length - 1];
for (const fold of document.querySelectorAll("[data-testid='deployment-detail'] details")) fold.open = true;
setTimeout(() => done(true), 500);
"#;

/// Grey text on grey (about 1.1:1), planted in the page and taken away again.
const PLANT: &str = r#"
const [on, done] = [arguments[0], arguments[arguments.length - 1]];
document.getElementById("e2e-planted")?.remove();
if (on) {
  const line = document.createElement("p");
  line.id = "e2e-planted";
  line.textContent = "planted: grey on grey";
  line.style.cssText = "color:#767676;background:#707070";
  document.body.prepend(line);
}
requestAnimationFrame(() => done(true));
"#;

/// The check can fail: a line of text below AA contrast, planted in the window, is found.
async fn the_check_finds_a_planted_fault(window: &mut AppWindow) -> anyhow::Result<()> {
    let mut planted = AxeFindings::default();
    window
        .run_script(PLANT, vec![true.into()], Duration::from_secs(10))
        .await?;
    window
        .check_accessibility("planted fault", &mut planted)
        .await?;
    window
        .run_script(PLANT, vec![false.into()], Duration::from_secs(10))
        .await?;
    anyhow::ensure!(
        planted.found("color-contrast"),
        "axe missed text at 1.1:1 contrast planted in the window"
    );
    Ok(())
}

/// The `aria-expanded` of the element matching `css`.
async fn expanded(window: &AppWindow, css: &str) -> anyhow::Result<Option<String>> {
    window.attr_of(css, "aria-expanded").await
}

/// In the open editor, declares `web` with `contracts` and waits until its record holds it.
async fn save_web_until_in_sync(window: &AppWindow, contracts: &str) -> anyhow::Result<()> {
    window.type_into("#decl-name", "web").await?;
    window.type_into("#decl-contracts", contracts).await?;
    window.click("[data-action='save-declaration']").await?;
    window
        .wait_for(
            "[data-testid='deployment-row'][data-name='web'][data-sync='inSync']",
            SYNC_TIMEOUT,
        )
        .await?;
    Ok(())
}

/// Requests the contract `api` of the deployment shown and waits until its card says what it
/// waits for.
async fn request_api(window: &AppWindow) -> anyhow::Result<()> {
    window
        .click_until_shown(
            "[data-contract='api'] [data-action='request']",
            "[data-contract='api'] [data-action='release']",
        )
        .await?;
    window
        .wait_for_text(
            "[data-contract='api'] [data-testid='waiting-for']",
            "Waiting for",
        )
        .await
        .map(drop)
}

/// Opens `section` with its `key` and waits until it is shown.
async fn open_section(window: &AppWindow, key: &str, section: &str) -> anyhow::Result<()> {
    window.press_command_key(key).await?;
    window
        .find(&format!("main[data-section='{section}']"))
        .await
        .map(drop)
}

#[tokio::test]
async fn every_screen_state_passes_axe_in_light_and_dark() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, _) = AppWindow::open_for_new_owner(&pds, "e2eaxe", "axe").await?;
    let mut findings = AxeFindings::default();
    window.find("[data-action='sign-in']").await?;
    window
        .check_accessibility("signed out", &mut findings)
        .await?;
    the_check_finds_a_planted_fault(&mut window).await?;

    window.sign_in().await?;
    window.wait_for_text("main", "No deployments yet").await?;
    window
        .check_accessibility("no deployments", &mut findings)
        .await?;

    window.press_command_key("n").await?;
    window.type_into("#decl-name", "Web_Server").await?;
    window.type_into("#decl-contracts", "api, api").await?;
    window.click("[data-action='save-declaration']").await?;
    window
        .wait_for_text("[data-testid='declaration-problems']", "Nothing was saved")
        .await?;
    window
        .check_accessibility("editor with problems", &mut findings)
        .await?;

    save_web_until_in_sync(&window, "api, worker").await?;
    window
        .find("[data-testid='deployment-detail'][data-name='web']")
        .await?;
    window
        .check_accessibility("deployment panel", &mut findings)
        .await?;

    request_api(&window).await?;
    window
        .run_script(UNFOLD, vec![], Duration::from_secs(10))
        .await?;
    window
        .find("[data-testid='deployment-detail'] details[open] pre")
        .await?;
    window
        .check_accessibility("contract requested, folds open", &mut findings)
        .await?;

    window
        .click_until_shown(
            "[data-contract='api'] [data-action='release']",
            "[data-testid='confirm-message']",
        )
        .await?;
    window
        .check_accessibility("release confirmation", &mut findings)
        .await?;
    window
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    window
        .wait_for_exact_text(
            "[data-contract='api'] [data-testid='contract-phase']",
            "Released",
            SYNC_TIMEOUT,
        )
        .await?;
    window
        .check_accessibility("contract released", &mut findings)
        .await?;

    window.find_in_palette("web", "open-Infra-web").await?;
    window
        .check_accessibility("command palette", &mut findings)
        .await?;
    window.press("Escape").await?;
    window
        .wait_for_gone("[data-testid='command-palette']", Duration::from_secs(5))
        .await?;

    for (key, section) in SECTIONS {
        open_section(&window, key, section).await?;
        window.check_accessibility(section, &mut findings).await?;
    }

    eprintln!(
        "axe checked {} states: {}; {} serious or critical findings",
        findings.states().len(),
        findings.states().join(", "),
        findings.count()
    );
    findings.assert_none()?;
    window.close().await
}

/// The `api` contract's phase as the window shows it.
const API_PHASE: &str = "[data-contract='api'] [data-testid='contract-phase']";

#[tokio::test]
async fn a_deployment_is_declared_requested_and_released_by_keyboard_alone() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, _) = AppWindow::open_for_new_owner(&pds, "e2ekeys", "keyboard").await?;

    // The first Tab reaches the skip link, which takes the focus past the navigation.
    window.press("Tab").await?;
    window
        .wait_for_focus("[data-action=skip-to-content]")
        .await?;
    window.press("Enter").await?;
    window.wait_for_focus("main").await?;

    // Signing in: Tab to Sign in, Enter; the dialog starts on its field (the sandbox's handle
    // filled in), Enter continues in the browser.
    let to_sign_in = window.tab_to("[data-action=sign-in]", 20).await?;
    window.press("Enter").await?;
    window.wait_for_focus("sign-in-handle").await?;
    window.press("Enter").await?;
    window
        .wait_for("[data-account-handle]", swdesk_tests::BROWSER_TIMEOUT)
        .await?;
    window.wait_for_text("main", "No deployments yet").await?;
    let signing_in = window.keys_pressed();
    window.screenshot("signed-in").await?;

    // The editor takes the focus and keeps it: 12 Tabs (twice its controls) stay inside.
    window.press("Ctrl+N").await?;
    window.wait_for_focus("decl-name").await?;
    let before_trap = window.keys_pressed();
    for tab in 1..=12 {
        window
            .press(if tab % 4 == 0 { "Shift+Tab" } else { "Tab" })
            .await?;
        anyhow::ensure!(
            window
                .focus_within("[data-testid='declaration-editor']")
                .await?,
            "Tab {tab} left the editor for {}",
            window.focused().await?
        );
    }
    let trap_keys = window.keys_pressed() - before_trap;
    // Escape closes it and gives the focus back to the page; Ctrl+N opens it afresh.
    window.press("Escape").await?;
    window
        .wait_for_gone("[data-testid='declaration-editor']", Duration::from_secs(5))
        .await?;
    window.press("Ctrl+N").await?;
    window.wait_for_focus("decl-name").await?;
    window.type_keys("web").await?;
    window.press_times("Tab", 2).await?;
    window.wait_for_focus("decl-contracts").await?;
    // The field starts with the editor's example contract: select it all, type over it.
    window.press("Ctrl+A").await?;
    window.type_keys("api").await?;
    window.screenshot("declared").await?;
    window.press("Ctrl+Enter").await?;
    // Created: the focus lands on the new deployment's panel.
    let created = window.wait_for_focus("h2").await?;
    assert!(created.contains("web"), "{created}");
    window
        .find("[data-testid='deployment-detail'][data-name='web']")
        .await?;

    // Request (Ctrl+R, as its tooltip says): the focus lands on the contract's card.
    let tooltip = window
        .attr_of("[data-contract='api'] [data-action='request']", "title")
        .await?
        .unwrap_or_default();
    assert_eq!(tooltip, "Request (Ctrl+R)");
    window.press("Ctrl+R").await?;
    window.wait_for_focus("li in [data-contract=api]").await?;
    window.wait_for_text(API_PHASE, "Requesting").await?;
    window.screenshot("requested").await?;

    // Release (Ctrl+Shift+R) asks first, the focus on its confirming button; Escape closes
    // the confirmation alone, the panel stays, the focus back where it was.
    window.press("Ctrl+Shift+R").await?;
    window.wait_for_focus("[data-action=confirm]").await?;
    window.screenshot("release-confirmation").await?;
    window.press("Escape").await?;
    window
        .wait_for_gone("[data-testid='confirm']", Duration::from_secs(5))
        .await?;
    window
        .find("[data-testid='deployment-detail'][data-name='web']")
        .await?;
    window.wait_for_focus("[data-contract=api]").await?;
    window.press("Ctrl+Shift+R").await?;
    window.wait_for_focus("[data-action=confirm]").await?;
    window.press("Enter").await?;
    window.wait_for_focus("li in [data-contract=api]").await?;
    window.wait_for_text(API_PHASE, "Releas").await?;
    window
        .wait_for_exact_text(API_PHASE, "Released", SYNC_TIMEOUT)
        .await?;
    window.screenshot("released").await?;
    eprintln!(
        "keyboard alone: signed in with {signing_in} keys ({to_sign_in} Tabs to Sign in); declared, requested and released `web` with {} keys",
        window.keys_pressed() - signing_in - trap_keys
    );
    window.close().await
}

#[tokio::test]
async fn the_layout_holds_at_1024_and_1440_on_every_screen() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, _) = AppWindow::signed_in_as_new_owner(&pds, "e2elayout", "layout").await?;
    let mut problems = LayoutProblems::default();
    window
        .check_layout_at_each_size("no deployments", &mut problems)
        .await?;

    window.press_command_key("n").await?;
    window.type_into("#decl-name", "web").await?;
    window
        .type_into(
            "#decl-description",
            "the web front, with a description long enough to wrap",
        )
        .await?;
    window.type_into("#decl-contracts", "api, worker").await?;
    window
        .check_layout_at_each_size("editor", &mut problems)
        .await?;
    window.click("[data-action='save-declaration']").await?;
    window
        .find("[data-testid='deployment-detail'][data-name='web']")
        .await?;
    request_api(&window).await?;
    window
        .check_layout_at_each_size("deployment panel", &mut problems)
        .await?;
    window
        .wait_for(
            "[data-testid='deployment-row'][data-name='web'][data-sync='inSync']",
            SYNC_TIMEOUT,
        )
        .await?;
    window.click("[data-action='inspect-record']").await?;
    window
        .find("[data-testid='record-dialog'] [data-testid='record-inspector'] pre")
        .await?;
    window
        .check_layout_at_each_size("record inspector", &mut problems)
        .await?;
    window.press("Escape").await?;
    window
        .wait_for_gone("[data-testid='record-dialog']", Duration::from_secs(5))
        .await?;
    for (key, section) in SECTIONS {
        open_section(&window, key, section).await?;
        if section == "activity" {
            // The steps' rows themselves, a fold of routine steps open among them.
            window
                .click(&format!("{WEB_GROUP} [data-action='toggle-fold']"))
                .await?;
            window
                .find(&format!(
                    "{WEB_GROUP} .folded [data-testid='activity-step']"
                ))
                .await?;
        }
        window
            .check_layout_at_each_size(section, &mut problems)
            .await?;
    }
    eprintln!("layout measured in {} states", problems.states());
    problems.assert_none()?;
    window.close().await
}

#[tokio::test]
async fn the_activity_is_grouped_by_deployment_and_its_routine_folds_open_by_keyboard()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, _) =
        AppWindow::signed_in_as_new_owner(&pds, "e2eactivity", "activity-groups").await?;
    window.press_command_key("n").await?;
    save_web_until_in_sync(&window, "api").await?;
    window.press_command_key("3").await?;

    // The record's write and the contract's steps are in web's group, the index's elsewhere.
    window
        .wait_for(
            &format!("{WEB_GROUP} [data-testid='record-write']"),
            SYNC_TIMEOUT,
        )
        .await?;
    window
        .wait_for_text_within(
            "[data-testid='activity-group'][data-group='other']",
            "computer.socialweb.infra/self",
            SYNC_TIMEOUT,
        )
        .await?;
    let shown = window
        .texts_of(&format!("{WEB_GROUP} [data-testid='activity-step']"))
        .await?;
    for text in &shown {
        assert!(
            !text.contains("looked at") && !text.contains("in order"),
            "routine steps are folded, yet {text:?} is shown"
        );
    }
    let fold = format!("{WEB_GROUP} [data-action='toggle-fold']");
    let summary = window.text_of(&fold).await?;
    assert!(summary.contains("routine step"), "{summary}");
    assert_eq!(expanded(&window, &fold).await?.as_deref(), Some("false"));
    window.screenshot("folded").await?;

    // By keyboard: Tab to the fold, Enter opens it, Space closes it again.
    let tabs = window.tab_to("[data-action=toggle-fold]", 40).await?;
    anyhow::ensure!(
        window.focus_within(WEB_GROUP).await?,
        "the first fold reached is web's: {}",
        window.focused().await?
    );
    window.press("Enter").await?;
    let opened = format!("{WEB_GROUP} .folded [data-testid='activity-step']");
    window.wait_for(&opened, Duration::from_secs(5)).await?;
    let text = window.text_of(&opened).await?;
    assert!(
        text.contains("looked at") || text.contains("in order"),
        "the fold holds routine steps: {text:?}"
    );
    assert_eq!(expanded(&window, &fold).await?.as_deref(), Some("true"));
    window.screenshot("unfolded").await?;
    window.press("Space").await?;
    window
        .wait_for_gone(
            &format!("{WEB_GROUP} .folded [data-testid='activity-step']"),
            Duration::from_secs(5),
        )
        .await?;
    eprintln!("reached web's fold of routine steps in {tabs} Tabs; opened and closed by keyboard");
    window.close().await
}

//! The window's shell: title, navigation, account area, sections, shortcuts, settings, and how
//! the app ends.

use swdesk_devnet::SandboxPds;
use swdesk_tests::AppWindow;

const SECTIONS: [(&str, &str); 4] = [
    ("deployments", "Deployments"),
    ("clusters", "Clusters"),
    ("activity", "Activity"),
    ("settings", "Settings"),
];

#[tokio::test]
async fn the_window_shows_the_shell_with_its_navigation_and_a_signed_out_account()
-> anyhow::Result<()> {
    let mut window = AppWindow::open("shell").await?;
    let labels = window.texts_of("nav[aria-label='Sections'] button").await?;
    let titles: Vec<&str> = SECTIONS.iter().map(|(_, title)| *title).collect();
    assert_eq!(labels.len(), 4, "navigation buttons: {labels:?}");
    for (label, title) in labels.iter().zip(&titles) {
        assert!(
            label.starts_with(title),
            "navigation shows {label:?} where {title:?} belongs"
        );
    }
    assert_eq!(window.text_of("#section-title").await?, "Deployments");
    window
        .wait_for_text("section[aria-label='Account']", "Signed out")
        .await?;
    window.screenshot("shell").await?;
    window.close().await
}

#[tokio::test]
async fn every_section_opens_from_the_navigation() -> anyhow::Result<()> {
    let mut window = AppWindow::open("navigation").await?;
    for (id, title) in SECTIONS.iter().rev() {
        window.click(&format!("button[data-nav='{id}']")).await?;
        window.wait_for_text("#section-title", title).await?;
        let current = window.find(&format!("button[data-nav='{id}']")).await?;
        assert_eq!(
            current.attr("aria-current").await?.as_deref(),
            Some("page"),
            "{id} is not marked current"
        );
        assert_eq!(
            window.find_all("[aria-current='page']").await?.len(),
            1,
            "exactly one section is current"
        );
        window.screenshot(id).await?;
    }
    window.close().await
}

#[tokio::test]
async fn keyboard_shortcuts_switch_sections() -> anyhow::Result<()> {
    let mut window = AppWindow::open("shortcuts").await?;
    window.press_command_key("2").await?;
    window.wait_for_text("#section-title", "Clusters").await?;
    window.press_command_key(",").await?;
    window.wait_for_text("#section-title", "Settings").await?;
    window.press_command_key("1").await?;
    window
        .wait_for_text("#section-title", "Deployments")
        .await?;
    window.screenshot("after-shortcuts").await?;
    window.close().await
}

#[tokio::test]
async fn settings_show_the_local_sandbox_and_where_this_installation_keeps_its_data()
-> anyhow::Result<()> {
    let mut window = AppWindow::open("settings").await?;
    window.click("button[data-nav='settings']").await?;
    window
        .wait_for_text("[data-testid='network']", "Local sandbox")
        .await?;
    let facts = window.text_of("[data-testid='app-info']").await?;
    let home = window.home().display().to_string();
    assert!(
        facts.contains(&home),
        "the data directory is not inside the test's home {home}: {facts}"
    );
    assert!(
        facts.contains("computer.socialweb.desk"),
        "the data directory is not the app's: {facts}"
    );
    window.screenshot("settings").await?;
    window.close().await
}

/// Whether the window has the focus, and its inner size, as the page sees them.
const WINDOW: &str = r#"
const done = arguments[arguments.length - 1];
done({ focused: document.hasFocus(), width: window.innerWidth, height: window.innerHeight });
"#;

async fn window_seen(window: &AppWindow) -> anyhow::Result<serde_json::Value> {
    window
        .run_script(WINDOW, vec![], std::time::Duration::from_secs(5))
        .await
}

/// Polls the page until `check` holds of what it sees, for up to 10 s.
async fn until_seen(
    window: &AppWindow,
    what: &str,
    check: impl Fn(&serde_json::Value) -> bool,
) -> anyhow::Result<serde_json::Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let seen = window_seen(window).await?;
        if check(&seen) {
            return Ok(seen);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "{what}: the page saw {seen}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_second_launch_brings_the_first_window_forward_and_ends() -> anyhow::Result<()> {
    let mut window = AppWindow::open("second-launch").await?;
    let other_app = swdesk_tests::desktop::OtherApp::focus()?;
    until_seen(&window, "the other app has the focus", |seen| {
        seen["focused"] == false
    })
    .await?;
    let second = window
        .launch_again(std::time::Duration::from_secs(30))
        .await?;
    assert!(
        second.success(),
        "the second launch hands over and ends: {second}"
    );
    until_seen(&window, "the first window is brought forward", |seen| {
        seen["focused"] == true
    })
    .await?;
    drop(other_app);
    window.screenshot("brought-forward").await?;
    window.close().await
}

#[tokio::test]
async fn the_window_keeps_its_size_across_a_restart() -> anyhow::Result<()> {
    let window = AppWindow::open("window-size").await?;
    let before = window_seen(&window).await?;
    swdesk_tests::desktop::resize_window("Socialweb Desk", 900, 640)?;
    let resized = until_seen(&window, "the window is resized", |seen| {
        seen["width"] != before["width"]
    })
    .await?;
    // The size is written once the window rests (400 ms).
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let window = window.restart().await?;
    let after = window_seen(&window).await?;
    assert_eq!(
        (&after["width"], &after["height"]),
        (&resized["width"], &resized["height"]),
        "restored at the size it was left (it opened at {before})"
    );
    window.close().await
}

#[tokio::test]
async fn the_desktops_quit_signal_stops_the_controller_before_the_app_ends() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (window, _) = AppWindow::signed_in_as_new_owner(&pds, "e2equit", "quit-signal").await?;
    let log = window.quit_by_signal().await?;
    let position = |needle: &str| {
        log.find(needle)
            .ok_or_else(|| anyhow::anyhow!("the log says “{needle}”:\n{log}"))
    };
    let asked = position("the system asked the app to quit")?;
    let stopped = position("the controller stopped")?;
    let quit = position("the app quit cleanly")?;
    assert!(
        asked < stopped && stopped < quit,
        "asked, then the controller stopped, then the app ended:\n{log}"
    );
    Ok(())
}

/// WebKit runs the page in a process of its own; when it dies (a crash, the kernel's
/// out-of-memory killer) WebKitGTK leaves the window blank. The app says why in its log and
/// loads its page again, which comes back signed in and lists the owner's deployments, since
/// the session lives in the app, not the page. WebKitWebDriver ends its session when the page
/// dies ("session deleted because of page crash or hang"), so what the new page did is read
/// from the app's log: its own first paint and its request for the list.
#[tokio::test]
async fn a_page_whose_web_process_died_is_loaded_again_as_it_was() -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (window, _owner) =
        AppWindow::signed_in_as_new_owner(&pds, "e2ecrash", "page-crash").await?;
    let lists_before = window.log_lines_containing("listed the deployments");
    let killed = kill_the_page(&window)?;
    window
        .wait_for_log_lines("window interactive", 2, PAGE_BACK)
        .await?;
    window
        .wait_for_log_lines("listed the deployments", lists_before + 1, PAGE_BACK)
        .await?;
    let replaced = window.web_processes();
    assert!(
        !replaced.is_empty() && replaced.iter().all(|pid| !killed.contains(pid)),
        "a new web process runs the page: before {killed:?}, now {replaced:?}"
    );
    let log = window.quit_by_signal().await?;
    let said: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("the window's page ended"))
        .collect();
    assert!(
        said.len() == 1 && said[0].contains("WARN") && said[0].contains("crashed or was killed"),
        "the app says once, as a warning, that the page ended and why: {said:?}"
    );
    Ok(())
}

/// A page that dies again and again is not loaded in a loop: three times within a minute, and
/// the fourth time the app leaves it, says so in its log as an error and in a native dialog.
#[tokio::test]
async fn a_page_that_keeps_dying_is_loaded_three_times_then_a_dialog_says_so() -> anyhow::Result<()>
{
    let window = AppWindow::open("page-crashes").await?;
    for reload in 1..=3 {
        kill_the_page(&window)?;
        window
            .wait_for_log_lines("window interactive", 1 + reload, PAGE_BACK)
            .await?;
    }
    assert!(
        !swdesk_tests::desktop::window_shown(STOPPED)?,
        "no dialog while the page comes back"
    );
    kill_the_page(&window)?;
    window
        .wait_for_log_lines("the window's page ended again: left blank", 1, PAGE_BACK)
        .await?;
    let deadline = std::time::Instant::now() + PAGE_BACK;
    while !swdesk_tests::desktop::window_shown(STOPPED)? {
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "no dialog titled {STOPPED:?} within {PAGE_BACK:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let log = window.quit_by_signal().await?;
    assert_eq!(
        log.lines()
            .filter(|line| line.contains("the window's page ended: loading it again"))
            .count(),
        3,
        "three reloads, no more:\n{log}"
    );
    assert!(
        log.lines()
            .any(|line| line.contains("ERROR") && line.contains("left blank")),
        "the fourth is an error in the log:\n{log}"
    );
    Ok(())
}

/// A page that stops answering (its process frozen, here by SIGSTOP, as a page stuck in a
/// loop would be) is named in the app's log when WebKit's own check notices (a key press
/// unanswered for a few seconds), and again when it answers; so a window that froze is told
/// apart from one nobody touched.
#[tokio::test]
async fn a_page_that_stops_answering_is_named_in_the_log_and_again_when_it_answers()
-> anyhow::Result<()> {
    let window = AppWindow::open("page-frozen").await?;
    let pages = window.web_processes();
    anyhow::ensure!(!pages.is_empty(), "no web process found for the window");
    signal(&pages, "-STOP")?;
    // The key press waits on the frozen page; WebKit's check starts with it.
    let pressed = tokio::time::timeout(PAGE_FROZEN, window.press("Tab")).await;
    let stopped = window
        .wait_for_log_lines("the window's page stopped answering", 1, PAGE_BACK)
        .await;
    signal(&pages, "-CONT")?;
    stopped?;
    window
        .wait_for_log_lines("the window's page answers again", 1, PAGE_BACK)
        .await?;
    let log = window.quit_by_signal().await?;
    assert!(
        log.lines()
            .any(|line| line.contains("WARN") && line.contains("stopped answering")),
        "a warning (the key press: {:?}):\n{log}",
        pressed.map(|done| done.map_err(|error| error.to_string()))
    );
    Ok(())
}

/// How long the frozen page is given to take a key press before the test stops waiting.
const PAGE_FROZEN: std::time::Duration = std::time::Duration::from_secs(8);

/// How long a page that died may take to come back (well under a second here).
const PAGE_BACK: std::time::Duration = std::time::Duration::from_secs(30);

/// The title of the dialog that says the page is left blank.
const STOPPED: &str = "Socialweb Desk's window stopped";

/// Kills the window's page processes as a crash would (SIGKILL); answers their pids.
fn kill_the_page(window: &AppWindow) -> anyhow::Result<Vec<u32>> {
    let pages = window.web_processes();
    anyhow::ensure!(!pages.is_empty(), "no web process found for the window");
    signal(&pages, "-KILL")?;
    Ok(pages)
}

/// Sends `signal` (as `kill` spells it: `-KILL`, `-STOP`) to each of `pids`.
fn signal(pids: &[u32], signal: &str) -> anyhow::Result<()> {
    for pid in pids {
        let sent = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()?;
        anyhow::ensure!(sent.success(), "kill {signal} {pid} failed");
    }
    Ok(())
}

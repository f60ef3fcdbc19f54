//! `deployments-list-bench`: how the deployments list holds up with thousands of rows, in the
//! real app window (tauri-driver, the sandbox PDS), run by `cargo xtask bench list`, which sets
//! up the display, the keyring and the PDS as the end-to-end suite has them.
//!
//! One owner signs in; the list is measured with one deployment (the baseline), then the same
//! window is seeded through its own `declare_deployment` command up to `--deployments` (5,000),
//! the embedded controller publishes every record to the PDS, and once every row is in sync the
//! list is measured again. Each time: a store change to the row on screen (a re-declaration of
//! a visible row with a new description, from just before the command to the second frame after
//! the DOM shows it, when the frame that paints it is done); the time between frames while the
//! list scrolls by a fixed step every animation frame; and the list's own work in each of those
//! frames (the scroll event to the rows re-rendered and laid out). Beside them, the webview
//! alone: a plain box of as many rows scrolled the same way, so a machine whose webview cannot
//! paint at 60 fps (Xvfb, no GPU) is told apart from a slow list. Everything is printed side by
//! side with the targets (a change on screen within 100 ms; scrolling at 60 fps), with whether
//! the controller was idle, and what the repo holds (records, and the index's live entries).

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]

mod figures;
mod repo;
mod window;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use swdesk_devnet::SandboxPds;
use swdesk_tests::{AppWindow, borrowed, sandbox_env};

use crate::figures::{Figures, percent_over};
use crate::window::{ChangeSample, ScrollRun, SyncTally};

/// A change on screen within this (the target).
const CHANGE_TARGET_MS: f64 = 100.0;
/// One frame at 60 fps (the target).
const FRAME_MS: f64 = 1000.0 / 60.0;
/// A frame this long means at least one frame was missed.
const MISSED_FRAME_MS: f64 = FRAME_MS * 1.5;
/// The list's row height in pixels (`ROW_HEIGHT` in `ui/src/sections/Deployments.svelte`).
const ROW_HEIGHT: u32 = 52;
/// The row every change is made to: the first one, in view at the top of the list.
const CHANGED_ROW: &str = "bench-00000";
/// The pause between changes, so each one's publish has settled before the next.
const BETWEEN_CHANGES: Duration = Duration::from_millis(400);
/// How long the controller is watched before measuring, to say whether it is idle.
const IDLE_WATCH: Duration = Duration::from_secs(5);
/// Declarations sent per script, and how many of them at once.
const SEED_CHUNK: usize = 250;
const SEED_PARALLEL: usize = 8;

/// What the command line asks for.
#[derive(Debug, Clone)]
struct Settings {
    deployments: usize,
    changes: usize,
    scroll: Duration,
    scroll_step: u32,
    publish_timeout: Duration,
    app_build: String,
}

impl Settings {
    fn from_args() -> anyhow::Result<Self> {
        let mut settings = Self {
            deployments: 5000,
            changes: 20,
            scroll: Duration::from_secs(3),
            scroll_step: 60,
            publish_timeout: Duration::from_secs(1200),
            app_build: "debug".to_owned(),
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        for pair in args.chunks(2) {
            let [flag, value] = pair else {
                anyhow::bail!("{} has no value", pair[0]);
            };
            settings.set(flag, value)?;
        }
        anyhow::ensure!(
            settings.deployments >= 2,
            "--deployments must be at least 2"
        );
        Ok(settings)
    }

    fn set(&mut self, flag: &str, value: &str) -> anyhow::Result<()> {
        let number = || -> anyhow::Result<u64> {
            value
                .parse()
                .with_context(|| format!("{flag} {value}: not a number"))
        };
        match flag {
            "--deployments" => self.deployments = number()? as usize,
            "--changes" => self.changes = number()? as usize,
            "--scroll-seconds" => self.scroll = Duration::from_secs(number()?),
            "--scroll-step" => self.scroll_step = number()? as u32,
            "--publish-timeout-seconds" => self.publish_timeout = Duration::from_secs(number()?),
            "--app-build" => self.app_build = value.to_owned(),
            _ => anyhow::bail!("unknown option {flag}"),
        }
        Ok(())
    }
}

/// The figures of one list size.
#[derive(Debug, Clone)]
struct Measured {
    rows: usize,
    changes: Vec<ChangeSample>,
    scroll: ScrollRun,
    /// A plain box of as many rows, scrolled the same way: the webview alone.
    plain: ScrollRun,
    idle_steps: u64,
}

/// How the list got to its size.
#[derive(Debug, Clone)]
struct Seeding {
    /// The `deployment-changed` events the window received meanwhile.
    change_events: u64,
    declared_in: Duration,
    published_in: Duration,
    tally: SyncTally,
    repo: repo::RepoCount,
}

#[tokio::main]
async fn main() -> ExitCode {
    let outcome = match Settings::from_args() {
        Ok(settings) => bench(&settings).await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn bench(settings: &Settings) -> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let owner = pds.create_account("benchlist").await?;
    // The window keeps WebKit's default renderer: with the classic one
    // (`WEBKIT_DISABLE_DMABUF_RENDERER=1`), WebKitWebDriver's session hangs at start.
    let env = sandbox_env(&pds, &owner)?;
    let mut window = AppWindow::open_with_env("list-bench", &borrowed(&env)).await?;
    window.sign_in().await?;
    window.wait_for_text("main", "No deployments yet").await?;
    window::listen(&window).await?;

    seed(&window, 0..1, settings).await?;
    let baseline = measure(&window, settings, 1).await?;
    window.screenshot("one-row").await?;
    let seeding = seed(&window, 1..settings.deployments, settings).await?;
    let repo = repo::count(&pds, &owner.did).await?;
    let seeding = Seeding { repo, ..seeding };
    let full = measure(&window, settings, settings.deployments).await?;
    window.screenshot("all-rows").await?;
    print_report(settings, &baseline, &full, &seeding);
    window.close().await
}

/// Declares the deployments `range` (by number) and waits until every row is in sync.
async fn seed(
    window: &AppWindow,
    range: std::ops::Range<usize>,
    settings: &Settings,
) -> anyhow::Result<Seeding> {
    let started = Instant::now();
    let events_before = window::counts(window).await?;
    let names: Vec<String> = range.clone().map(row_name).collect();
    let mut declared = range.start;
    for chunk in names.chunks(SEED_CHUNK) {
        window::declare(window, chunk, SEED_PARALLEL).await?;
        declared += chunk.len();
        eprintln!(
            "declared {declared} of {} ({:.0} s)",
            range.end,
            started.elapsed().as_secs_f64()
        );
    }
    let declared_in = started.elapsed();
    let tally = wait_until_published(window, range.end, settings.publish_timeout).await?;
    let events_after = window::counts(window).await?;
    Ok(Seeding {
        change_events: events_after.changes - events_before.changes,
        declared_in,
        published_in: started.elapsed(),
        tally,
        repo: repo::RepoCount::default(),
    })
}

fn row_name(number: usize) -> String {
    format!("bench-{number:05}")
}

/// Polls the rows' sync states until all `rows` are in sync, or the timeout passes (then the
/// bench goes on, and the report says what was left).
async fn wait_until_published(
    window: &AppWindow,
    rows: usize,
    timeout: Duration,
) -> anyhow::Result<SyncTally> {
    let started = Instant::now();
    loop {
        let tally = window::tally(window).await?;
        if let Some(error) = &tally.error {
            anyhow::bail!("the deployments command failed: {error}");
        }
        let done = tally.rows >= rows && tally.in_sync() >= rows;
        if done || started.elapsed() > timeout {
            return Ok(tally);
        }
        eprintln!(
            "waiting for the controller to publish: {} ({:.0} s)",
            tally.describe(),
            started.elapsed().as_secs_f64()
        );
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// Both figures with `rows` deployments in the list.
async fn measure(window: &AppWindow, settings: &Settings, rows: usize) -> anyhow::Result<Measured> {
    window
        .wait_for_text(
            "[data-testid='deployment-count']",
            &format!("{rows} of {rows}"),
        )
        .await?;
    let idle_steps = controller_steps_during(window, IDLE_WATCH).await?;
    let mut changes = Vec::with_capacity(settings.changes);
    for round in 0..settings.changes {
        let description = format!("changed {rows}-{round:03}");
        changes.push(window::change(window, CHANGED_ROW, &description).await?);
        tokio::time::sleep(BETWEEN_CHANGES).await;
    }
    let scroll = window::scroll(window, settings.scroll_step, settings.scroll).await?;
    let plain = window::scroll_plain(
        window,
        rows,
        ROW_HEIGHT,
        settings.scroll_step,
        settings.scroll,
    )
    .await?;
    Ok(Measured {
        rows,
        changes,
        scroll,
        plain,
        idle_steps,
    })
}

/// How many controller steps the window was told of during `span`.
async fn controller_steps_during(window: &AppWindow, span: Duration) -> anyhow::Result<u64> {
    let before = window::counts(window).await?;
    tokio::time::sleep(span).await;
    let after = window::counts(window).await?;
    Ok(after.steps - before.steps)
}

#[allow(clippy::print_stdout)] // the report is the bench's output
fn print_report(settings: &Settings, baseline: &Measured, full: &Measured, seeding: &Seeding) {
    let line = |label: &str, pick: &dyn Fn(&Measured) -> f64, target: &str| {
        println!(
            "{label:<38} {:>12.1} {:>12.1}   {target}",
            pick(baseline),
            pick(full)
        );
    };
    let changes =
        |m: &Measured| Figures::of(&m.changes.iter().map(|c| c.frame).collect::<Vec<_>>());
    let answers =
        |m: &Measured| Figures::of(&m.changes.iter().map(|c| c.answered).collect::<Vec<_>>());
    let frames = |m: &Measured| frames_of(&m.scroll);
    println!();
    println!(
        "deployments list, {} app, the same window in one run ({} changes, {} s of scrolling by {} px a frame)",
        settings.app_build,
        settings.changes,
        settings.scroll.as_secs(),
        settings.scroll_step
    );
    println!(
        "{:<38} {:>12} {:>12}   target",
        "",
        format!("{} row", baseline.rows),
        format!("{} rows", full.rows)
    );
    line(
        "change → screen, median (ms)",
        &|m| changes(m).median,
        "≤ 100",
    );
    line("change → screen, p95 (ms)", &|m| changes(m).p95, "≤ 100");
    line(
        "change → DOM, median (ms)",
        &|m| Figures::of(&m.changes.iter().map(|c| c.mutation).collect::<Vec<_>>()).median,
        "",
    );
    line("command answered, median (ms)", &|m| answers(m).median, "");
    line(
        "scroll frame time, median (ms)",
        &|m| frames(m).median,
        "16.7 (60 fps)",
    );
    line("scroll frame time, p95 (ms)", &|m| frames(m).p95, "16.7");
    line("scroll frame time, max (ms)", &|m| frames(m).max, "");
    line(
        "frames over 16.7 ms (%)",
        &|m| percent_over(&m.scroll.deltas, FRAME_MS + 0.05),
        "",
    );
    line(
        "frames missed, over 25 ms (%)",
        &|m| percent_over(&m.scroll.deltas, MISSED_FRAME_MS),
        "",
    );
    line("frames measured", &|m| m.scroll.deltas.len() as f64, "");
    line(
        "list's work per scroll frame, median (ms)",
        &|m| Figures::of(&m.scroll.work).median,
        "",
    );
    line(
        "list's work per scroll frame, p95 (ms)",
        &|m| Figures::of(&m.scroll.work).p95,
        "≤ 8 (half a frame)",
    );
    line(
        "rows in the DOM while scrolling",
        &|m| m.scroll.rendered as f64,
        "",
    );
    line("scrolled (px)", &|m| m.scroll.scrolled, "");
    line("scrollable (px)", &|m| m.scroll.scrollable, "");
    line(
        "webview alone: frame time, median (ms)",
        &|m| frames_of(&m.plain).median,
        "",
    );
    line(
        "webview alone: frame time, p95 (ms)",
        &|m| frames_of(&m.plain).p95,
        "",
    );
    line(
        "webview alone: work per frame, p95 (ms)",
        &|m| Figures::of(&m.plain.work).p95,
        "",
    );
    line(
        "controller steps in 5 s before",
        &|m| m.idle_steps as f64,
        "0 = idle",
    );
    println!();
    print_seeding(full, seeding);
    print_verdict(&changes(full), full);
}

#[allow(clippy::print_stdout)]
fn print_seeding(full: &Measured, seeding: &Seeding) {
    println!(
        "seeding {} rows through declare_deployment: declared in {:.0} s, published after {:.0} s ({} change events reached the window); rows now: {}",
        full.rows,
        seeding.declared_in.as_secs_f64(),
        seeding.published_in.as_secs_f64(),
        seeding.change_events,
        seeding.tally.describe()
    );
    println!(
        "the repo: {} infra records besides the index; the index at self lists {} live entries (limit 256)",
        seeding.repo.records, seeding.repo.index_live
    );
    println!(
        "controller before measuring {} rows: {}",
        full.rows,
        if full.idle_steps == 0 {
            "idle (no step in 5 s)".to_owned()
        } else {
            format!("busy ({} steps in 5 s)", full.idle_steps)
        }
    );
}

fn frames_of(run: &ScrollRun) -> Figures {
    Figures::of(&run.deltas)
}

#[allow(clippy::print_stdout)]
fn print_verdict(changes: &Figures, full: &Measured) {
    let at_60 = |run: &ScrollRun| {
        frames_of(run).median <= 17.0 && percent_over(&run.deltas, MISSED_FRAME_MS) < 5.0
    };
    let list_within_budget = Figures::of(&full.scroll.work).p95 <= FRAME_MS / 2.0;
    println!(
        "with {} rows: change on screen within {CHANGE_TARGET_MS:.0} ms at p95: {}; 60 fps (median frame ≤ 17 ms, under 5% missed): {}; the list's work within half a frame at p95: {}",
        full.rows,
        yes_no(changes.p95 <= CHANGE_TARGET_MS),
        yes_no(at_60(&full.scroll)),
        yes_no(list_within_budget),
    );
    if !at_60(&full.plain) && list_within_budget {
        println!(
            "the webview alone does not reach 60 fps here either (a plain box of {} rows: median frame {:.0} ms): on this machine the frame rate is the webview's painting, not the list",
            full.rows,
            frames_of(&full.plain).median
        );
    }
}

fn yes_no(holds: bool) -> &'static str {
    if holds { "yes" } else { "NO" }
}

//! `cargo xtask test`: every check the project has, in one run, ending with one line
//! `N passed, N failed`. Checks that are a single verdict (fmt, clippy, the UI's type check)
//! count as one each; test suites count their tests (read from nextest's JUnit report and
//! Vitest's JSON report). A step that cannot run counts as one failure. Every step runs even
//! when an earlier one failed, unless it needs what that step should have built.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::bundle;
use crate::cmd;
use crate::deny;
use crate::fuzz;
use crate::imports;
use crate::junit;
use crate::layout;
use crate::paths::Paths;
use crate::pins;
use crate::run::{self, APP_BINARY};
use crate::sandbox::{self, SandboxPds};
use crate::setup::{self, Purpose};
use crate::stray_client;

/// Where the Rust tests find the real kubectl they read saved kubeconfigs with.
const KUBECTL_ENV: &str = "SWDESK_KUBECTL";
/// Leaves out the api's checks that need a process of another user, which only root can start
/// (`swdesk_api::instance`'s tests); set when the tests do not run as root.
const NO_SECOND_USER_ENV: &str = "SWDESK_NO_SECOND_USER";

#[derive(Debug)]
struct Tally {
    passed: u64,
    failed: u64,
    failures: Vec<String>,
    /// Why each failed test failed, printed after everything else.
    reasons: Vec<junit::Failure>,
    /// How long each step took, in the order they ran: where a run spends its time.
    timings: Vec<(String, Duration)>,
    /// When the step now running began (the previous one's end: steps run one after another).
    step_began: Instant,
}

impl Tally {
    fn new() -> Self {
        Self {
            passed: 0,
            failed: 0,
            failures: Vec::new(),
            reasons: Vec::new(),
            timings: Vec::new(),
            step_began: Instant::now(),
        }
    }

    /// Notes that the step `name` ended now.
    fn timed(&mut self, name: &str) {
        let now = Instant::now();
        self.timings
            .push((name.to_owned(), now.duration_since(self.step_began)));
        self.step_began = now;
    }

    /// Each step's time and the whole run's, on stderr (CI keeps the log's tail).
    fn print_timings(&self) {
        eprintln!("\ntime by step:");
        for (name, took) in &self.timings {
            eprintln!("{:>7.1} s  {name}", took.as_secs_f64());
        }
        let total: Duration = self.timings.iter().map(|(_, took)| *took).sum();
        eprintln!("{:>7.1} s  in all", total.as_secs_f64());
    }

    fn check(&mut self, name: &str, outcome: anyhow::Result<()>) -> bool {
        self.timed(name);
        match outcome {
            Ok(()) => {
                self.passed += 1;
                true
            }
            Err(error) => {
                eprintln!("FAILED {name}: {error:#}");
                self.failed += 1;
                self.failures.push(name.to_owned());
                false
            }
        }
    }

    fn suite(&mut self, name: &str, counts: anyhow::Result<Counts>) {
        match counts {
            Ok(counts) => {
                self.timed(name);
                self.passed += counts.passed;
                self.failed += counts.failed;
                self.reasons.extend(counts.reasons);
                if counts.failed > 0 {
                    self.failures
                        .push(format!("{name} ({} failed)", counts.failed));
                }
            }
            Err(error) => {
                self.check(name, Err(error));
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Counts {
    passed: u64,
    failed: u64,
    reasons: Vec<junit::Failure>,
}

/// What `cargo xtask test` runs: everything (CI), or one suite while working on it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TestArgs {
    /// Run only this suite: `rust` (every Rust test but the window's, with the sandbox PDS and
    /// a keyring) or `window` (the real window under Xvfb; builds the debug app and its packages
    /// first, as the full run does).
    #[arg(long, value_enum)]
    only: Option<Suite>,
    /// A nextest filter expression for `--only`, e.g. `test(/keyboard/)`.
    #[arg(long, requires = "only")]
    filter: Option<String>,
}

/// A suite `--only` can run alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Suite {
    Rust,
    Window,
}

#[allow(clippy::print_stdout)] // the summary line is the task's output
pub fn test(paths: &Paths, args: &TestArgs) -> anyhow::Result<()> {
    let mut tally = Tally::new();
    setup::ensure(paths, Purpose::Test)?;
    tally.timed("install what is missing");
    if let Some(suite) = args.only {
        return one_suite(paths, suite, args.filter.as_deref());
    }
    std::fs::create_dir_all(paths.reports())?;
    let ui = paths.ui();

    tally.check(
        "cargo fmt --check",
        cmd::run(cmd::cargo().args(["fmt", "--all", "--check"])),
    );
    tally.check(
        "Tauri crates and npm packages on one minor release",
        pins::check(paths),
    );
    tally.check(
        "licences, bans and sources of every locked crate (cargo deny)",
        deny::check(paths),
    );
    tally.check(
        "shipped crates never depend on the sandbox; libraries not on Tauri, the domain not on I/O",
        layout::check(paths),
    );
    tally.check(
        "no circle of imports in a crate; the api never imports the controller's kinds",
        imports::check(paths),
    );
    tally.check(
        "clippy refuses a client built outside crates/net",
        stray_client::refused(paths),
    );
    let ui_built = tally.check("UI build", run::build_ui(paths));
    tally.check(
        "UI type check",
        cmd::run(Command::new("npm").args(["run", "check"]).current_dir(&ui)),
    );
    tally.check(
        "clippy",
        cmd::run(cmd::cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])),
    );
    tally.check("fuzz (short pass)", fuzz::short_pass(paths));
    let built = ui_built
        && tally.check(
            "cargo build",
            cmd::run(cmd::cargo().args(["build", "--workspace", "--all-targets"])),
        );
    if built {
        tally.check(
            "packages (.deb and .rpm of the debug build, and the .deb of its next version)",
            bundle::build_with_next_release(paths).map(drop),
        );
    }
    tally.suite("UI unit tests", vitest(paths));
    if built {
        let pds = SandboxPds::start(paths, None, &[]);
        tally.timed("start the sandbox PDS");
        match pds {
            Ok(pds) => {
                tally.suite("Rust tests", rust_tests(paths, &pds, None));
                tally.suite("end-to-end", end_to_end(paths, &pds, None));
            }
            Err(error) => {
                tally.check(
                    "the sandbox PDS for the Rust and end-to-end tests",
                    Err(error),
                );
            }
        }
    } else {
        tally.check(
            "Rust tests and end-to-end",
            Err(anyhow::anyhow!("not run: the build failed")),
        );
    }

    tally.print_timings();
    for failure in &tally.reasons {
        eprintln!("\nFAILED {}:\n{}", failure.test, failure.why);
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    anyhow::ensure!(tally.failed == 0, "failed: {}", tally.failures.join(", "));
    Ok(())
}

/// One suite alone, for a developer working on it: what it needs built, then its tests
/// (those `filter` selects), ending with the same `N passed, N failed` line.
#[allow(clippy::print_stdout)] // the summary line is the task's output
fn one_suite(paths: &Paths, suite: Suite, filter: Option<&str>) -> anyhow::Result<()> {
    if suite == Suite::Window {
        run::build_ui(paths)?;
        cmd::run(cmd::cargo().args(["build", "--workspace", "--all-targets"]))?;
        bundle::build_with_next_release(paths)?;
    }
    let pds = SandboxPds::start(paths, None, &[])?;
    let counts = match suite {
        Suite::Rust => rust_tests(paths, &pds, filter),
        Suite::Window => end_to_end(paths, &pds, filter),
    }?;
    for failure in &counts.reasons {
        eprintln!("\nFAILED {}:\n{}", failure.test, failure.why);
    }
    println!("{} passed, {} failed", counts.passed, counts.failed);
    anyhow::ensure!(counts.failed == 0, "{} failed", counts.failed);
    Ok(())
}

/// Every Rust test but the window's (those of them `filter` selects), with the sandbox PDS
/// running and a keyring session.
fn rust_tests(paths: &Paths, pds: &SandboxPds, filter: Option<&str>) -> anyhow::Result<Counts> {
    let junit = paths.nextest_report("ci");
    std::fs::remove_file(&junit).ok();
    let mut tests = sandbox::keyring_session(
        &sandbox::keyring_home(paths, "rust-tests"),
        cmd::cargo_program(),
    );
    tests
        .args(["nextest", "run", "--no-fail-fast", "--profile", "ci"])
        .args([
            "--workspace",
            "-E",
            &selected("not binary_id(swdesk-tests::e2e)", filter),
        ])
        .env(sandbox::SANDBOX_PDS_ENV, pds.ready_line())
        .env(KUBECTL_ENV, setup::kubectl_program(paths));
    if !setup::is_root() {
        eprintln!(
            "not root: the one-instance checks against another user's process are left out \
             ({NO_SECOND_USER_ENV}); CI runs them as root"
        );
        tests.env(NO_SECOND_USER_ENV, "1");
    }
    let outcome = cmd::run(&mut tests);
    read_junit(&junit).with_context(|| no_report(outcome))
}

/// `suite`'s tests, narrowed to those `filter` selects.
fn selected(suite: &str, filter: Option<&str>) -> String {
    match filter {
        Some(filter) => format!("({suite}) and ({filter})"),
        None => suite.to_owned(),
    }
}

/// The end-to-end suite (the tests of it `filter` selects): the real app under Xvfb, a D-Bus
/// session with a keyring for it, tauri-driver, the sandbox PDS.
fn end_to_end(paths: &Paths, pds: &SandboxPds, filter: Option<&str>) -> anyhow::Result<Counts> {
    let junit = paths.nextest_report("e2e");
    std::fs::remove_file(&junit).ok();
    let outcome = cmd::run(
        window_session(
            paths,
            "e2e",
            &paths.binary("debug", APP_BINARY),
            pds,
            cmd::cargo_program(),
        )?
        .args([
            "nextest",
            "run",
            "--no-fail-fast",
            "--profile",
            "e2e",
            "--package",
            "swdesk-tests",
            "--test",
            "e2e",
            "-E",
            &selected("all()", filter),
        ])
        // An app's log already fills a failed window test's output; an anyhow backtrace of
        // fifty frames after the error would push the error itself out of a CI log's tail.
        .env("RUST_LIB_BACKTRACE", "0"),
    );
    read_junit(&junit).with_context(|| no_report(outcome))
}

/// `program` where the real window can run and be driven: a keyring session of its own (named
/// after `step`), Xvfb, and the variables the window's support reads (`app` as the app binary,
/// tauri-driver, the screenshot directory, the sandbox PDS).
pub fn window_session(
    paths: &Paths,
    step: &str,
    app: &Path,
    pds: &SandboxPds,
    program: impl AsRef<std::ffi::OsStr>,
) -> anyhow::Result<Command> {
    std::fs::create_dir_all(paths.e2e_output())?;
    let mut command = sandbox::keyring_session(&sandbox::keyring_home(paths, step), "xvfb-run");
    command
        .args(["--auto-servernum", "--server-args=-screen 0 1280x800x24"])
        .arg(program)
        .env("SWDESK_APP_BINARY", app)
        .env("SWDESK_TAURI_DRIVER", setup::tauri_driver_program())
        .env("SWDESK_E2E_OUTPUT", paths.e2e_output())
        .env("SWDESK_APP_BUNDLE", bundle::bundle_directory(paths, true))
        .env("SWDESK_APP_NEXT_RELEASE", bundle::update_directory(paths))
        .env(sandbox::SANDBOX_PDS_ENV, pds.ready_line());
    Ok(command)
}

fn vitest(paths: &Paths) -> anyhow::Result<Counts> {
    let report = paths.reports().join("vitest.json");
    std::fs::remove_file(&report).ok();
    let outcome = cmd::run(
        Command::new("npx")
            .args(["vitest", "run", "--reporter=default", "--reporter=json"])
            .arg(format!("--outputFile.json={}", report.display()))
            .current_dir(paths.ui()),
    );
    read_vitest(&report).with_context(|| no_report(outcome))
}

/// Why a suite has no counts: how its run ended, and that it wrote no report.
fn no_report(outcome: anyhow::Result<()>) -> String {
    match outcome {
        Err(error) => format!("{error:#}, and it wrote no report"),
        Ok(()) => "it wrote no report".to_owned(),
    }
}

fn read_vitest(path: &Path) -> anyhow::Result<Counts> {
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let count = |key: &str| {
        report[key]
            .as_u64()
            .with_context(|| format!("no {key} in {}", path.display()))
    };
    Ok(Counts {
        passed: count("numPassedTests")?,
        // A file that fails to load fails a suite without failing a test: count it too.
        failed: count("numFailedTests")?.max(count("numFailedTestSuites")?),
        reasons: Vec::new(),
    })
}

/// Reads the totals of a JUnit report's `<testsuites>` element and why each failure failed.
fn read_junit(path: &Path) -> anyhow::Result<Counts> {
    let text = std::fs::read_to_string(path)?;
    let counts = junit_counts(&text)
        .with_context(|| format!("{} has no <testsuites> totals", path.display()))?;
    Ok(Counts {
        reasons: junit::failures(&text),
        ..counts
    })
}

fn junit_counts(text: &str) -> Option<Counts> {
    let start = text.find("<testsuites")?;
    let element = &text[start..start + text[start..].find('>')?];
    let attribute = |name: &str| -> Option<u64> {
        let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
        element[at..].split('"').next()?.parse().ok()
    };
    let tests = attribute("tests")?;
    let failed = attribute("failures")? + attribute("errors").unwrap_or(0);
    Some(Counts {
        passed: tests.saturating_sub(failed),
        failed,
        reasons: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::{Counts, junit_counts};

    #[test]
    fn junit_totals_count_failures_and_errors_as_failed() {
        let report = r#"<?xml version="1.0"?><testsuites name="nextest-run" tests="12" failures="2" errors="1" uuid="x"><testsuite/></testsuites>"#;
        assert_eq!(
            junit_counts(report),
            Some(Counts {
                passed: 9,
                failed: 3,
                reasons: Vec::new(),
            })
        );
    }

    #[test]
    fn a_report_without_totals_is_not_read_as_zero() {
        assert_eq!(junit_counts("<testsuite tests=\"3\"/>"), None);
    }
}

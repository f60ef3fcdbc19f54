//! Support for the end-to-end tests: [`AppWindow`] starts the real app binary through
//! tauri-driver (which drives WebKitWebDriver) on the display the suite runs under, on the local
//! sandbox (the run's shared PDS), gives it a home of its own (XDG data, config and cache
//! directories, removed afterwards), and offers the few steps the tests need: find, click,
//! type, read text, press a shortcut, restart the app, save a screenshot.
//!
//! The suite runs through `cargo xtask test`, which builds the app, starts Xvfb, a D-Bus session
//! with a keyring and the sandbox PDS, and sets `SWDESK_APP_BINARY`, `SWDESK_TAURI_DRIVER`,
//! `SWDESK_E2E_OUTPUT` and `SWDESK_SANDBOX_PDS`. Run any other way, a test fails at once and
//! says what is missing.

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]

pub mod axe;
pub mod desktop;
pub mod keyboard;
pub mod layout;
pub mod public_market;
pub mod releases;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use swdesk_devnet::ports::free_ports;
use swdesk_devnet::{Account, Decision, SandboxPds};

/// The app's environment: the shared sandbox with `account` as its demo account, and Chromium
/// playing the owner (signing in as `account`, approving) as the system browser.
pub fn sandbox_env(
    pds: &SandboxPds,
    account: &Account,
) -> anyhow::Result<Vec<(&'static str, String)>> {
    let mut info = pds.info().clone();
    info.accounts = vec![account.clone()];
    let mut env = vec![
        (SANDBOX_ENV, serde_json::to_string(&info)?),
        (
            "BROWSER",
            swdesk_devnet::authorize::script().display().to_string(),
        ),
    ];
    env.extend(swdesk_devnet::authorize::credentials_env(
        account,
        Decision::Approve,
    ));
    Ok(env)
}

/// `env` with `field` set to `value` in its sandbox line (a gateway, bidders, for the app).
pub fn with_sandbox_field(
    mut env: Vec<(&'static str, String)>,
    field: &str,
    value: serde_json::Value,
) -> anyhow::Result<Vec<(&'static str, String)>> {
    for (name, line) in &mut env {
        if *name == SANDBOX_ENV {
            let mut parsed: serde_json::Value = serde_json::from_str(line)?;
            parsed[field] = value.clone();
            *line = parsed.to_string();
        }
    }
    Ok(env)
}

/// `env` as the borrowed pairs [`AppWindow::open_with_env`] takes.
pub fn borrowed<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect()
}

/// `env` with its (last) sandbox line naming `keychain` as the session's keychain entry, so a
/// session one test leaves behind never reaches another test's window.
fn with_own_keychain(
    mut env: Vec<(String, String)>,
    keychain: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    if let Some((_, line)) = env.iter_mut().rev().find(|(name, _)| name == SANDBOX_ENV) {
        let mut value: serde_json::Value = serde_json::from_str(line)?;
        if let Some(fields) = value.as_object_mut() {
            fields
                .entry("keychain")
                .or_insert_with(|| serde_json::Value::from(keychain));
        }
        *line = value.to_string();
    }
    Ok(env)
}

/// How long a sign-in may wait for Chromium to sign in and approve (generous under load).
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The variable that hands the sandbox to the app (see `swdesk-api`'s network).
pub const SANDBOX_ENV: &str = "SWDESK_SANDBOX";

/// How long a step waits for what it expects before the test fails.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(15);

/// Answers `true` when `arguments[0]` can take a click: in view, where it was 60 ms ago (a
/// timer, not animation frames, which WebKit pauses in a window without focus), enabled, and
/// the element hit at its centre; otherwise why not.
const ACTIONABLE_SCRIPT: &str = r#"
const [element, done] = arguments;
element.scrollIntoView({block: 'center'});
const box = () => JSON.stringify(element.getBoundingClientRect());
const before = box();
setTimeout(() => {
  if (!element.isConnected) return done('it left the page');
  if (box() !== before) return done('it is moving');
  if (element.disabled) return done('it is disabled');
  const r = element.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  if (!hit || !(hit === element || element.contains(hit))) {
    return done('it is covered by ' + (hit ? hit.outerHTML.slice(0, 120) : 'nothing'));
  }
  done(true);
}, 60);
"#;

/// The app under test, in its own window, with its own home.
#[derive(Debug)]
pub struct AppWindow {
    client: Client,
    driver: Child,
    /// The app binary it launched.
    binary: String,
    home: PathBuf,
    env: Vec<(String, String)>,
    /// The sandbox the app talks to, kept alive as long as the window (when this test started it).
    sandbox: Option<SandboxPds>,
    test_name: String,
    screenshots: PathBuf,
    shots_taken: usize,
    /// Keys pressed through [`AppWindow::press`] and [`AppWindow::type_keys`].
    keys_pressed: std::sync::atomic::AtomicUsize,
}

impl AppWindow {
    /// Starts tauri-driver and the app on the local sandbox, as `cargo xtask run` does; the
    /// test's name prefixes its screenshots.
    pub async fn open(test_name: &str) -> anyhow::Result<Self> {
        Self::open_with_env(test_name, &[]).await
    }

    /// Starts the app with extra environment variables (a browser, another sandbox line).
    pub async fn open_with_env(test_name: &str, env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let binary = required_env("SWDESK_APP_BINARY")?;
        Self::open_binary(test_name, &binary, env).await
    }

    /// Opens the app on `pds` for a new account of its own (`prefix` names it), Chromium playing
    /// that owner; not signed in yet. `test_name` prefixes its screenshots. Answers the owner too.
    pub async fn open_for_new_owner(
        pds: &SandboxPds,
        prefix: &str,
        test_name: &str,
    ) -> anyhow::Result<(Self, Account)> {
        let owner = pds.create_account(prefix).await?;
        let window = Self::open_with_env(test_name, &borrowed(&sandbox_env(pds, &owner)?)).await?;
        Ok((window, owner))
    }

    /// [`AppWindow::open_for_new_owner`], signed in, on the owner's empty list of deployments.
    pub async fn signed_in_as_new_owner(
        pds: &SandboxPds,
        prefix: &str,
        test_name: &str,
    ) -> anyhow::Result<(Self, Account)> {
        let (window, owner) = Self::open_for_new_owner(pds, prefix, test_name).await?;
        window.sign_in().await?;
        window.wait_for_text("main", "No deployments yet").await?;
        Ok((window, owner))
    }

    /// Starts the app binary at `binary` (an installed one, say) as [`AppWindow::open_with_env`]
    /// starts the built one.
    pub async fn open_binary(
        test_name: &str,
        binary: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let home =
            std::env::temp_dir().join(format!("swdesk-e2e-{}-{test_name}", std::process::id()));
        std::fs::remove_dir_all(&home).ok();
        let sandbox = SandboxPds::from_env_or_start().await?;
        let mut merged = vec![(SANDBOX_ENV.to_owned(), sandbox.ready_line())];
        merged.extend(
            env.iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
        );
        let keychain = format!("e2e-{test_name}-{}", std::process::id());
        let merged = with_own_keychain(merged, &keychain)?;
        let mut window = Self::launch(test_name, binary, home, merged, 0).await?;
        window.sandbox = Some(sandbox);
        Ok(window)
    }

    /// Closes the app and starts it again in the same home with the same environment, as a
    /// person quitting and reopening it would.
    pub async fn restart(mut self) -> anyhow::Result<Self> {
        self.client.clone().close().await?;
        self.stop_driver();
        let (home, env) = (
            std::mem::take(&mut self.home),
            std::mem::take(&mut self.env),
        );
        let (test_name, shots) = (self.test_name.clone(), self.shots_taken);
        let sandbox = self.sandbox.take();
        let binary = self.binary.clone();
        drop(self);
        let mut window = Self::launch(&test_name, &binary, home, env, shots).await?;
        window.sandbox = sandbox;
        Ok(window)
    }

    async fn launch(
        test_name: &str,
        binary: &str,
        home: PathBuf,
        env: Vec<(String, String)>,
        shots_taken: usize,
    ) -> anyhow::Result<Self> {
        anyhow::ensure!(
            Path::new(&binary).is_file(),
            "SWDESK_APP_BINARY={binary} is not a file: build the app first (`cargo xtask test` does)"
        );
        required_env("DISPLAY")
            .context("the window needs a display: run under xvfb-run (`cargo xtask test` does)")?;
        // One instance a data directory: a launch while the last app of this home still exits
        // (a restart) would hand over to it and end.
        wait_until_no_app_runs_in(&home).await?;
        let driver_program =
            std::env::var("SWDESK_TAURI_DRIVER").unwrap_or_else(|_| "tauri-driver".to_owned());
        // Two ports, and two distinct ones: a port just freed may be handed out again at once,
        // and WebKitWebDriver cannot listen where tauri-driver does (seen in a CI run).
        let ports = free_ports(2);
        let (port, native_port) = (ports[0], ports[1]);
        let driver = Command::new(&driver_program)
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            // The app's home is the test's: its `~/.kube` (where kubeconfigs may be saved) and
            // XDG directories below it, nothing of the machine's user.
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            // Later entries win: a test's own sandbox line replaces the default one.
            .envs(env.iter().map(|(name, value)| (name, value)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| {
                format!("cannot start {driver_program} (cargo install tauri-driver --locked)")
            })?;
        let mut window = Self {
            client: connect(port, binary).await?,
            binary: binary.to_owned(),
            driver,
            home,
            env,
            sandbox: None,
            test_name: test_name.to_owned(),
            screenshots: screenshot_dir(),
            shots_taken,
            keys_pressed: std::sync::atomic::AtomicUsize::new(0),
        };
        window.wait_for_shell().await?;
        window.screenshot("opened").await?;
        Ok(window)
    }

    /// The directory the app was given as its home (`HOME`, and the XDG directories below it).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The app binary this window runs.
    pub fn binary(&self) -> &Path {
        Path::new(&self.binary)
    }

    /// How many lines of the app's log files (in its home's data directory) contain `needle`.
    pub fn log_lines_containing(&self, needle: &str) -> usize {
        self.log()
            .lines()
            .filter(|line| line.contains(needle))
            .count()
    }

    /// Waits up to `timeout` until at least `count` lines of the app's log contain `needle`:
    /// what the app did where WebDriver cannot see (a page that died and came back).
    pub async fn wait_for_log_lines(
        &self,
        needle: &str,
        count: usize,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while self.log_lines_containing(needle) < count {
            if Instant::now() > deadline {
                bail!(
                    "the app's log did not have {count} lines with {needle:?} within {timeout:?}:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// The app's log files (in its home's data directory), in the order of their names.
    pub fn log(&self) -> String {
        let logs = self.home.join("data/computer.socialweb.desk/logs");
        let Ok(entries) = std::fs::read_dir(&logs) else {
            return String::new();
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        files.sort();
        files
            .iter()
            .filter_map(|file| std::fs::read_to_string(file).ok())
            .collect()
    }

    /// The app processes running in this window's home (the one it started, or the one an
    /// update restarted into).
    pub fn app_processes(&self) -> Vec<u32> {
        app_processes_in(&self.home)
    }

    /// The window's web processes (WebKit's `WebKitWebProcess`, where its page runs).
    pub fn web_processes(&self) -> Vec<u32> {
        processes_in(&self.home, "WebKitWebProcess")
    }

    /// Asks the app to quit as the desktop does at logout (SIGTERM), waits until it has ended,
    /// and answers its log.
    pub async fn quit_by_signal(mut self) -> anyhow::Result<String> {
        let running = app_processes_in(&self.home);
        anyhow::ensure!(
            !running.is_empty(),
            "no app runs in {}",
            self.home.display()
        );
        for pid in running {
            Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .ok();
        }
        let left = wait_for_no_app_in(&self.home, QUIT_BY_SIGNAL).await;
        anyhow::ensure!(
            left.is_empty(),
            "the app still runs after SIGTERM (pids {left:?})"
        );
        self.stop_driver();
        Ok(self.log())
    }

    /// Launches the app binary again, as the owner clicking its icon a second time would, with
    /// this window's home and environment; answers how that second process ended (it is killed
    /// after `timeout`).
    pub async fn launch_again(
        &self,
        timeout: Duration,
    ) -> anyhow::Result<std::process::ExitStatus> {
        let binary = required_env("SWDESK_APP_BINARY")?;
        let mut second = tokio::process::Command::new(&binary)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot launch {binary} a second time"))?;
        match tokio::time::timeout(timeout, second.wait()).await {
            Ok(status) => Ok(status?),
            Err(_) => bail!("the second launch was still running after {timeout:?}"),
        }
    }

    /// Waits until the window's shell is live: the page paints its first screen before the
    /// app's code has run, and a click on it before then would be lost.
    async fn wait_for_shell(&mut self) -> anyhow::Result<()> {
        self.find("#app[data-interactive] nav[aria-label='Sections']")
            .await?;
        Ok(())
    }

    /// Waits for an element matching the CSS selector.
    pub async fn find(&self, css: &str) -> anyhow::Result<Element> {
        self.client
            .wait()
            .at_most(STEP_TIMEOUT)
            .for_element(Locator::Css(css))
            .await
            .with_context(|| format!("no element matches `{css}` within {STEP_TIMEOUT:?}"))
    }

    /// Every element matching the CSS selector, now.
    pub async fn find_all(&self, css: &str) -> anyhow::Result<Vec<Element>> {
        Ok(self.client.find_all(Locator::Css(css)).await?)
    }

    /// The text of the first element matching the CSS selector, as shown.
    pub async fn text_of(&self, css: &str) -> anyhow::Result<String> {
        self.read_of(css, |element| async move { element.text().await })
            .await
    }

    /// The attribute `name` of the first element matching the CSS selector (`None` when it has
    /// none): the whole value behind a short identifier (`data-value`), a tooltip (`title`).
    pub async fn attr_of(&self, css: &str, name: &str) -> anyhow::Result<Option<String>> {
        self.read_of(css, |element| async move { element.attr(name).await })
            .await
    }

    /// The DOM property `name` of the first element matching the CSS selector: its whole
    /// `textContent` where the line is cut to its width (WebDriver reads a clipped text as empty).
    pub async fn prop_of(&self, css: &str, name: &str) -> anyhow::Result<Option<String>> {
        self.read_of(css, |element| async move { element.prop(name).await })
            .await
    }

    /// The texts of every element matching the CSS selector, now, in document order; read
    /// again from the start when the page replaced one of them meanwhile (see
    /// [`Self::read_of`]).
    pub async fn texts_of(&self, css: &str) -> anyhow::Result<Vec<String>> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        'again: loop {
            let mut texts = Vec::new();
            for element in self.find_all(css).await? {
                match element.text().await {
                    Ok(text) => texts.push(text),
                    Err(error) if is_stale(&error) && Instant::now() < deadline => continue 'again,
                    Err(error) => return Err(error.into()),
                }
            }
            return Ok(texts);
        }
    }

    /// Reads the first element matching the CSS selector with `read`. When the page replaced
    /// the element between the find and the read (a list rendered again: CI, stop 44, the
    /// full-index test's row), WebDriver refuses the stale node; it is found again and read, as
    /// a person would read the row now there.
    async fn read_of<T, Read, Reading>(&self, css: &str, read: Read) -> anyhow::Result<T>
    where
        Read: Fn(Element) -> Reading,
        Reading: std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            match read(self.find(css).await?).await {
                Ok(value) => return Ok(value),
                Err(error) if is_stale(&error) && Instant::now() < deadline => {}
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Clicks the element once a person could: see [`Self::actionable`]. When the page
    /// replaced the element between that check and the click (a list rendered again: CI, the
    /// offline-start test's cluster row), WebDriver refuses the stale node and no click was
    /// dispatched: the element is found again and clicked.
    pub async fn click(&self, css: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            match self.actionable(css).await?.click().await {
                Ok(()) => return Ok(()),
                Err(error) if is_stale(&error) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Waits for the element, scrolls it into view (WebKitWebDriver refuses to touch an element
    /// outside the view) and waits until it holds still, is enabled and is the topmost element
    /// under its centre: the checks Playwright makes before a click. A click dispatched while a
    /// line above the element appears or goes (a sync message, an error) lands on whatever moved
    /// under the pointer, and the test fails later for a reason that is not the product's.
    async fn actionable(&self, css: &str) -> anyhow::Result<Element> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let element = self.find(css).await?;
            let argument = serde_json::to_value(&element)?;
            let answer = self
                .client
                .execute_async(ACTIONABLE_SCRIPT, vec![argument])
                .await;
            let why_not = match answer {
                Ok(serde_json::Value::Bool(true)) => return Ok(element),
                Ok(other) => other.to_string(),
                Err(error) => error.to_string(),
            };
            if Instant::now() > deadline {
                bail!(
                    "`{css}` never became clickable within {STEP_TIMEOUT:?}: {why_not}\n{}",
                    self.what_was_shown().await
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the element's text contains `expected`; fails naming what it saw last.
    pub async fn wait_for_text(&self, css: &str, expected: &str) -> anyhow::Result<String> {
        self.wait_for_text_within(css, expected, STEP_TIMEOUT).await
    }

    /// Waits up to `timeout` until the element's text contains `expected`.
    pub async fn wait_for_text_within(
        &self,
        css: &str,
        expected: &str,
        timeout: Duration,
    ) -> anyhow::Result<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.text_of(css).await.unwrap_or_default();
            if seen.contains(expected) {
                return Ok(seen);
            }
            if Instant::now() > deadline {
                bail!(
                    "`{css}` never showed {expected:?}; it showed {seen:?}\n{}",
                    self.what_was_shown().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the element, then waits until `shown` (what the click brings: a confirmation,
    /// the next action) is shown; clicks once more when it is not within [`CLICK_TAKEN`].
    /// WebKitWebDriver now and then reports a click done that never reached the page (CI,
    /// stop 29: the app logged the declaration and no contract move at all, the page no
    /// error); a person whose click did nothing clicks again, and so does the test, once.
    pub async fn click_until_shown(&self, css: &str, shown: &str) -> anyhow::Result<()> {
        self.click(css).await?;
        let deadline = Instant::now() + CLICK_TAKEN;
        while Instant::now() < deadline {
            if !self.find_all(shown).await?.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        eprintln!("the click on `{css}` was not taken: clicking again");
        self.click(css).await?;
        self.wait_for(shown, STEP_TIMEOUT).await.map(drop)
    }

    /// Signs in from the account area with the sandbox's demo account (Chromium approves in
    /// the authorization page) and waits until the window shows the account.
    pub async fn sign_in(&self) -> anyhow::Result<()> {
        self.click("[data-action='sign-in']").await?;
        self.click("[data-action='continue-in-browser']").await?;
        self.wait_for("[data-account-handle]", BROWSER_TIMEOUT)
            .await?;
        Ok(())
    }

    /// Waits up to `timeout` until the element's whole text is `expected`.
    pub async fn wait_for_exact_text(
        &self,
        css: &str,
        expected: &str,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.text_of(css).await.unwrap_or_default();
            if seen == expected {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "`{css}` never read {expected:?} within {timeout:?}; it read {seen:?}\n{}",
                    self.what_was_shown().await
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Presses Enter where the focus is, as a user would.
    pub async fn press_enter(&self) -> anyhow::Result<()> {
        self.press("Enter").await
    }

    /// Presses Escape where the focus is, as a user would.
    pub async fn press_escape(&self) -> anyhow::Result<()> {
        self.press("Escape").await
    }

    /// Presses Tab (with Shift when `backwards`) where the focus is, as a user would.
    pub async fn press_tab(&self, backwards: bool) -> anyhow::Result<()> {
        self.press(if backwards { "Shift+Tab" } else { "Tab" })
            .await
    }

    /// Whether the element that has the focus matches the CSS selector (or is inside one that
    /// does).
    pub async fn focus_is_in(&self, css: &str) -> anyhow::Result<bool> {
        let script = "const done = arguments[arguments.length - 1]; \
            const active = document.activeElement; \
            done(Boolean(active && active.closest(arguments[0])));";
        let answer = self
            .run_script(script, vec![serde_json::json!(css)], STEP_TIMEOUT)
            .await?;
        Ok(answer.as_bool().unwrap_or(false))
    }

    /// [`Self::declare_and_request_vm`], then waits up to `timeout` until the contract is
    /// Deployed.
    pub async fn declare_and_deploy_vm(&self, name: &str, timeout: Duration) -> anyhow::Result<()> {
        self.declare_and_request_vm(name).await?;
        self.wait_for_exact_text(
            "[data-contract='vm'] [data-testid='contract-phase']",
            "Deployed",
            timeout,
        )
        .await
    }

    /// Releases the contract `vm` of the deployment shown (Release, then Confirm) and waits up
    /// to `timeout` until it is Released: how each market test ends.
    pub async fn release_vm(&self, timeout: Duration) -> anyhow::Result<()> {
        self.click_until_shown(
            "[data-contract='vm'] [data-action='release']",
            "[data-testid='confirm']",
        )
        .await?;
        self.click("[data-testid='confirm'] [data-action='confirm']")
            .await?;
        self.wait_for_exact_text(
            "[data-contract='vm'] [data-testid='contract-phase']",
            "Released",
            timeout,
        )
        .await
    }

    /// Declares the Infra `name` with one staged contract `vm` (a 3 s bid window) in the
    /// editor, opens it and requests the contract: how each market test starts.
    pub async fn declare_and_request_vm(&self, name: &str) -> anyhow::Result<()> {
        self.press_command_key("n").await?;
        let declaration = serde_json::json!({
            "kind": "Infra",
            "metadata": {"name": name},
            "spec": {"contracts": [{"name": "vm", "state": "staged", "policyArgs": {"bidWindowSec": 3}}]}
        });
        self.type_into("[data-testid='declaration-json']", &declaration.to_string())
            .await?;
        self.click("[data-action='save-declaration']").await?;
        self.click(&format!(
            "[data-testid='deployment-row'][data-name='{name}']"
        ))
        .await?;
        // A requested contract offers its release.
        self.click_until_shown(
            "[data-contract='vm'] [data-action='request']",
            "[data-contract='vm'] [data-action='release']",
        )
        .await
    }

    /// Opens the command palette (Ctrl+K), types `query` and waits until the item `item`
    /// (its `data-palette-item`) is offered; Enter then runs it.
    pub async fn find_in_palette(&self, query: &str, item: &str) -> anyhow::Result<Element> {
        self.press_command_key("k").await?;
        self.type_into("[data-testid='command-palette'] input", query)
            .await?;
        self.find(&format!("[data-palette-item='{item}']")).await
    }

    /// Presses a key with the platform's command modifier (Ctrl here), as a user would.
    pub async fn press_command_key(&self, key: &str) -> anyhow::Result<()> {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        use fantoccini::key::Key;
        let control = char::from(Key::Control);
        let character = key.chars().next().context("an empty key")?;
        let keys = KeyActions::new("keyboard".to_owned())
            .then(KeyAction::Down { value: control })
            .then(KeyAction::Down { value: character })
            .then(KeyAction::Up { value: character })
            .then(KeyAction::Up { value: control });
        self.client.perform_actions(keys).await?;
        self.client.release_actions().await?;
        Ok(())
    }

    /// Saves a screenshot as `<test>-<n>-<step>.png` after the next two frames have painted.
    pub async fn screenshot(&mut self, step: &str) -> anyhow::Result<PathBuf> {
        self.client
            .execute_async(
                "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done()));",
                vec![],
            )
            .await?;
        // Bounded: once in a CI run WebKitWebDriver never answered a screenshot (the layout
        // test, stop 43's check), and the test then hung until nextest's 240 s.
        let png = tokio::time::timeout(SCREENSHOT_TIMEOUT, self.client.screenshot())
            .await
            .with_context(|| {
                format!(
                    "WebKitWebDriver gave no screenshot of {step:?} within {SCREENSHOT_TIMEOUT:?}"
                )
            })??;
        self.shots_taken += 1;
        std::fs::create_dir_all(&self.screenshots)?;
        let path = self.screenshots.join(format!(
            "{}-{:02}-{step}.png",
            self.test_name, self.shots_taken
        ));
        std::fs::write(&path, png)?;
        Ok(path)
    }

    /// Types `text` into the field matching the CSS selector, after clearing it.
    pub async fn type_into(&self, css: &str, text: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let field = self.actionable(css).await?;
            let typed = match field.clear().await {
                Ok(()) => field.send_keys(text).await,
                Err(error) => Err(error),
            };
            match typed {
                Ok(()) => return Ok(()),
                // Replaced before anything was typed into it (see `click`): type into the new one.
                Err(error) if is_stale(&error) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Runs `script` in the window (WebDriver's asynchronous script: it ends by calling its last
    /// argument) with `args` before that callback, for up to `timeout`; answers what it passed
    /// to the callback. The window's commands are reachable from a script through
    /// `window.__TAURI_INTERNALS__.invoke(command, args)`.
    pub async fn run_script(
        &self,
        script: &str,
        args: Vec<serde_json::Value>,
        timeout: Duration,
    ) -> anyhow::Result<serde_json::Value> {
        self.client
            .update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
                Some(timeout),
                None,
                None,
            ))
            .await?;
        Ok(self.client.execute_async(script, args).await?)
    }

    /// Waits until no element matches the CSS selector, for up to `timeout`.
    pub async fn wait_for_gone(&self, css: &str, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while !self.find_all(css).await?.is_empty() {
            if Instant::now() >= deadline {
                bail!("`{css}` is still shown after {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// Waits until an element matches the CSS selector, for up to `timeout`.
    pub async fn wait_for(&self, css: &str, timeout: Duration) -> anyhow::Result<Element> {
        match self
            .client
            .wait()
            .at_most(timeout)
            .for_element(Locator::Css(css))
            .await
        {
            Ok(element) => Ok(element),
            Err(error) => Err(anyhow::Error::new(error).context(format!(
                "no element matches `{css}` within {timeout:?}\n{}",
                self.what_was_shown().await
            ))),
        }
    }

    /// What the window showed when a wait failed, for its error: the page's text on one line
    /// (bounded) and a screenshot beside the test's others, so a failure in CI can be read
    /// without running it again.
    async fn what_was_shown(&self) -> String {
        let text = match self
            .client
            .execute("return document.body.innerText", vec![])
            .await
        {
            Ok(serde_json::Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(error) => format!("(unreadable: {})", refusal(&error)),
        };
        let text: String = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(SHOWN_CHARS)
            .collect();
        let shot = self
            .screenshots
            .join(format!("{}-failed.png", self.test_name));
        let saved = match self.client.screenshot().await {
            Ok(png) => std::fs::create_dir_all(&self.screenshots)
                .and_then(|()| std::fs::write(&shot, png))
                .map_or_else(
                    |error| format!("not saved: {error}"),
                    |()| shot.display().to_string(),
                ),
            Err(error) => format!("not taken: {}", refusal(&error)),
        };
        format!(
            "the window showed: {text}\n(screenshot: {saved})\n{}",
            self.what_the_app_said()
        )
    }

    /// Whether the app still runs, and the last warnings and errors of its log: a window that
    /// no longer answers WebDriver is told apart from one that is only slow.
    fn what_the_app_said(&self) -> String {
        let running = app_processes_in(&self.home);
        let state = if running.is_empty() {
            "the app is not running".to_owned()
        } else {
            format!("the app runs (pids {running:?})")
        };
        let log = self.log();
        let troubles: Vec<&str> = log
            .lines()
            .filter(|line| line.contains("WARN") || line.contains("ERROR"))
            .collect();
        let last = &troubles[troubles.len().saturating_sub(LOGGED_TROUBLES)..];
        let quoted: String = last.join("\n").chars().take(SHOWN_CHARS).collect();
        format!("{state}; its last warnings and errors:\n{quoted}")
    }

    /// Ends the WebDriver session (the app closes) and stops tauri-driver.
    pub async fn close(mut self) -> anyhow::Result<()> {
        let client = self.client.clone();
        client.close().await?;
        self.stop_driver();
        wait_until_no_app_runs_in(&self.home).await
    }

    fn stop_driver(&mut self) {
        // SIGTERM lets tauri-driver stop WebKitWebDriver and the app it started.
        Command::new("kill")
            .args(["-TERM", &self.driver.id().to_string()])
            .status()
            .ok();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.driver.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.driver.kill().ok();
        self.driver.wait().ok();
    }
}

impl Drop for AppWindow {
    fn drop(&mut self) {
        if matches!(self.driver.try_wait(), Ok(None)) {
            self.stop_driver();
        }
        // A test that failed before `close` leaves its app running (its WebKit process kept a
        // core busy for the tests after it in one CI run): asked to quit as at logout.
        for pid in app_processes_in(&self.home) {
            Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .ok();
        }
        if !self.home.as_os_str().is_empty() {
            std::fs::remove_dir_all(&self.home).ok();
        }
    }
}

/// Waits until no app process runs with `home`'s data directory: the last app of this home has
/// quit. Ending the WebDriver session closes the window, and closing the window quits the app;
/// but WebKitWebDriver sometimes ends the session without closing the window (the app then
/// logs no close at all), so an app still running after [`QUIT_BY_CLOSE`] is asked to quit as
/// the desktop asks at logout (SIGTERM, which the app handles like closing its window), and
/// must be gone within [`QUIT_BY_SIGNAL`] (its controller's stop grace on a loaded machine).
async fn wait_until_no_app_runs_in(home: &Path) -> anyhow::Result<()> {
    if wait_for_no_app_in(home, QUIT_BY_CLOSE).await.is_empty() {
        return Ok(());
    }
    for pid in app_processes_in(home) {
        eprintln!("the app (pid {pid}) still runs after its session ended: sending SIGTERM");
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .ok();
    }
    let running = wait_for_no_app_in(home, QUIT_BY_SIGNAL).await;
    anyhow::ensure!(
        running.is_empty(),
        "the app from an earlier launch in {} still runs (pids {running:?}) after SIGTERM",
        home.display()
    );
    Ok(())
}

/// How long a click may take to show in the window before it counts as not taken.
const CLICK_TAKEN: Duration = Duration::from_secs(10);

/// How long WebKitWebDriver may take to answer a screenshot (a full window: well under 1 s).
const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);

/// Characters of the page's text a failed wait quotes.
const SHOWN_CHARS: usize = 1500;

/// Warnings and errors of the app's log a failed wait quotes, the last ones.
const LOGGED_TROUBLES: usize = 8;

/// How long an app may take to quit after its WebDriver session ended.
const QUIT_BY_CLOSE: Duration = Duration::from_secs(10);
/// How long an app may take to quit after SIGTERM.
const QUIT_BY_SIGNAL: Duration = Duration::from_secs(20);

/// Polls for up to `patience` until no app runs in `home`; returns the pids still running.
async fn wait_for_no_app_in(home: &Path, patience: Duration) -> Vec<u32> {
    let deadline = Instant::now() + patience;
    loop {
        let running = app_processes_in(home);
        if running.is_empty() || Instant::now() >= deadline {
            return running;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What WebDriver answered a failed command: its error code beside its message, which
/// WebKitWebDriver sometimes leaves empty (every command after the page's process died
/// unnoticed, in CI).
fn refusal(error: &fantoccini::error::CmdError) -> String {
    match error {
        fantoccini::error::CmdError::Standard(webdriver) => {
            format!(
                "WebDriver said {:?}: {:?}",
                webdriver.error.to_string(),
                webdriver.message
            )
        }
        other => other.to_string(),
    }
}

/// Whether WebDriver refused a command because the element it names is no longer in the page
/// (WebKitWebDriver: "Stale element found when trying to create the node handle").
pub fn is_stale(error: &fantoccini::error::CmdError) -> bool {
    use fantoccini::error::{CmdError, ErrorStatus};
    matches!(error, CmdError::Standard(webdriver) if webdriver.error == ErrorStatus::StaleElementReference)
        || error.to_string().to_lowercase().contains("stale element")
}

/// The pids of the app's processes whose `XDG_DATA_HOME` is `home`'s (one, or two while an
/// update restarts it).
fn app_processes_in(home: &Path) -> Vec<u32> {
    processes_in(home, "swdesk")
}

/// The pids of processes running `executable` (Linux: the name of `/proc/<pid>/exe`, with
/// " (deleted)" once an update replaced the file) whose `XDG_DATA_HOME` is `home`'s: WebKit's
/// processes inherit the app's environment, so this finds the window's own.
fn processes_in(home: &Path, executable: &str) -> Vec<u32> {
    let data_home = format!("XDG_DATA_HOME={}", home.join("data").display());
    let replaced = format!("{executable} (deleted)");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| {
                exe.file_name()
                    .is_some_and(|name| name == executable || name.to_string_lossy() == replaced)
            })
        })
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|byte| *byte == 0)
                    .any(|variable| variable == data_home.as_bytes())
            })
        })
        .collect()
}

fn required_env(name: &str) -> anyhow::Result<String> {
    std::env::var(name)
        .with_context(|| format!("{name} is not set: run the suite with `cargo xtask test`"))
}

fn screenshot_dir() -> PathBuf {
    std::env::var_os("SWDESK_E2E_OUTPUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/e2e"))
}

/// Waits for tauri-driver to listen, then opens a session that launches the app.
async fn connect(port: u16, binary: &str) -> anyhow::Result<Client> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        anyhow::ensure!(
            Instant::now() < deadline,
            "tauri-driver did not listen on port {port} within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".to_owned(), "wry".into());
    capabilities.insert(
        "tauri:options".to_owned(),
        serde_json::json!({ "application": binary }),
    );
    let mut builder = ClientBuilder::rustls()?;
    builder.capabilities(capabilities);
    let url = format!("http://127.0.0.1:{port}");
    // tauri-driver listens before WebKitWebDriver behind it does: on a loaded machine the first
    // session requests can find nobody there. Those are retried; a refusal is not.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let attempt = tokio::time::timeout(Duration::from_secs(60), builder.connect(&url))
            .await
            .context(
                "the WebDriver session did not start within 60 s (is the display reachable?)",
            )?;
        match attempt {
            Ok(client) => return Ok(client),
            Err(error) if Instant::now() < deadline && is_not_ready(&error) => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(error) => return Err(error).context("tauri-driver refused the session"),
        }
    }
}

/// Whether a failed session request only met a WebDriver that is not listening yet.
fn is_not_ready(error: &fantoccini::error::NewSessionError) -> bool {
    let text = error.to_string();
    text.contains("did not respond") || text.contains("connection") || text.contains("Connection")
}

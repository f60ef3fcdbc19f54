//! `cargo xtask bundle`: the installable packages, built by the Tauri bundler (its CLI from the
//! UI's npm packages): a `.deb` and an `.rpm` holding the app's one binary, its desktop entry and
//! its icons, with the app's description, license and dependencies (WebKitGTK, GTK; a Secret
//! Service keychain recommended). Release by default; `cargo xtask test` bundles the debug build
//! it already made, and its end-to-end suite installs that `.deb` into a throwaway root and
//! launches it. AppImage is not built: its tools download from outside at build time. On Linux
//! the product name is the app id (`src-tauri/tauri.linux.conf.json`), so the bundler names the
//! desktop entry `computer.socialweb.desk.desktop`, as the desktop specification and `xdg-mime`
//! expect, and the packages after it; the binary in them is stripped (the Cargo profiles).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::cmd;
use crate::paths::Paths;
use crate::run;
use crate::setup::{self, Purpose};

/// What `cargo xtask bundle` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct BundleArgs {
    /// Bundle the debug build (what the tests install) instead of the release build.
    #[arg(long)]
    pub debug: bool,
}

/// The packages of one build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packages {
    /// The Debian package.
    pub deb: PathBuf,
    /// The RPM package.
    pub rpm: PathBuf,
}

/// The task: builds the UI and the packages, and prints where they and the binary they hold
/// are (absolute, in cargo's target directory wherever `CARGO_TARGET_DIR` puts it), their sizes,
/// and the command that installs each (with `sudo` only when not root).
#[allow(clippy::print_stdout)] // the packages, their sizes and how to install them are the output
pub fn bundle(paths: &Paths, args: &BundleArgs) -> anyhow::Result<()> {
    setup::ensure(paths, Purpose::Run)?;
    run::build_ui(paths)?;
    let packages = build(paths, args.debug)?;
    let binary = paths.binary(profile(args.debug), run::APP_BINARY);
    println!(
        "deb     {} ({})",
        packages.deb.display(),
        mebibytes(&packages.deb)?
    );
    println!(
        "rpm     {} ({})",
        packages.rpm.display(),
        mebibytes(&packages.rpm)?
    );
    println!("binary  {} ({})", binary.display(), mebibytes(&binary)?);
    if let Some(installed) = installed_size(&packages.deb) {
        println!("installed size: {installed}");
    }
    let root = if setup::is_root() { "" } else { "sudo " };
    println!(
        "install on Debian or Ubuntu: {root}apt install {}",
        shell_word(&packages.deb)
    );
    println!(
        "         on Fedora or openSUSE: {root}dnf install {}",
        shell_word(&packages.rpm)
    );
    Ok(())
}

/// The space the `.deb` takes once installed, as its control file says.
fn installed_size(deb: &Path) -> Option<String> {
    let kibibytes = cmd::stdout_of(
        Command::new("dpkg-deb")
            .arg("--field")
            .arg(deb)
            .arg("Installed-Size"),
    )?;
    let kibibytes: f64 = kibibytes.trim().parse().ok()?;
    Some(format!("{:.1} MiB", kibibytes / 1024.0))
}

/// `path` as one word of a shell command line: quoted when it holds anything but the
/// characters a path is usually made of.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._+-@%:,".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Builds the app (`debug` or release) and bundles it; answers the two packages. The UI must
/// be built already.
pub fn build(paths: &Paths, debug: bool) -> anyhow::Result<Packages> {
    let directory = bundle_directory(paths, debug);
    std::fs::remove_dir_all(&directory).ok();
    let mut tauri = tauri_build(paths, debug, "deb,rpm");
    cmd::run(&mut tauri)?;
    Ok(Packages {
        deb: only_file(&directory.join("deb"), "deb")?,
        rpm: only_file(&directory.join("rpm"), "rpm")?,
    })
}

/// Builds the debug app as its next version ([`next_version`]) and keeps its `.deb` in
/// [`update_directory`]: the release the update test installs over the debug package. Then
/// builds the debug packages as [`build`] does, so the debug binary is this version again.
pub fn build_with_next_release(paths: &Paths) -> anyhow::Result<Packages> {
    let directory = bundle_directory(paths, true);
    std::fs::remove_dir_all(&directory).ok();
    let config = format!(r#"{{"version":"{}"}}"#, next_version());
    cmd::run(tauri_build(paths, true, "deb").args(["--config", &config]))?;
    let next = only_file(&directory.join("deb"), "deb")?;
    let kept = update_directory(paths);
    std::fs::remove_dir_all(&kept).ok();
    std::fs::create_dir_all(&kept)?;
    let file_name = next.file_name().context("a package has a file name")?;
    std::fs::copy(&next, kept.join(file_name))
        .with_context(|| format!("cannot keep {}", next.display()))?;
    build(paths, true)
}

/// The version after this one (its patch release): what the update test offers.
pub fn next_version() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts: Vec<u64> = version
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect();
    parts.resize(3, 0);
    parts[2] += 1;
    format!("{}.{}.{}", parts[0], parts[1], parts[2])
}

/// Where the `.deb` of the debug build's next version is kept.
pub fn update_directory(paths: &Paths) -> PathBuf {
    paths.target.join("debug").join("next-release")
}

/// `tauri build` of the `bundles` named, debug or release, into the workspace's target.
fn tauri_build(paths: &Paths, debug: bool, bundles: &str) -> Command {
    let mut tauri = Command::new(paths.ui().join("node_modules/.bin/tauri"));
    tauri.args(["build", "--bundles", bundles, "--ci"]);
    if debug {
        tauri.arg("--debug");
    }
    tauri
        .current_dir(&paths.root)
        .env("CARGO_TARGET_DIR", &paths.target);
    tauri
}

/// Where the bundler writes the packages of a build.
pub fn bundle_directory(paths: &Paths, debug: bool) -> PathBuf {
    paths.target.join(profile(debug)).join("bundle")
}

/// The directory cargo builds a profile into.
fn profile(debug: bool) -> &'static str {
    if debug { "debug" } else { "release" }
}

/// The one file ending in `.extension` in `directory`.
fn only_file(directory: &Path, extension: &str) -> anyhow::Result<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(directory)
        .with_context(|| format!("the bundler wrote no {}", directory.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    anyhow::ensure!(
        found.len() == 1,
        "expected one .{extension} in {}, found {found:?}",
        directory.display()
    );
    Ok(found.remove(0))
}

fn mebibytes(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::metadata(path)?.len();
    #[allow(clippy::cast_precision_loss)] // a size in MiB, to one decimal
    Ok(format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0)))
}

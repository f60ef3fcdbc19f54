//! The app as an owner installs it: the debug build's `.deb` (made by `cargo xtask test`; by
//! hand, `cargo xtask bundle --debug`) installed by dpkg into a throwaway root with a package
//! database of its own, its dependencies checked against this system by apt, launched from
//! where it was installed as far as the sign-in screen, then removed; the `.rpm` read by rpm for
//! the same files and metadata.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use swdesk_tests::AppWindow;

/// The package's name in both formats.
const PACKAGE: &str = "socialweb-desk";

/// The files every package holds (the icons at each size the bundle config names).
const FILES: &[&str] = &[
    "/usr/bin/swdesk",
    "/usr/share/applications/Socialweb Desk.desktop",
    "/usr/share/icons/hicolor/32x32/apps/swdesk.png",
    "/usr/share/icons/hicolor/64x64/apps/swdesk.png",
    "/usr/share/icons/hicolor/128x128/apps/swdesk.png",
    "/usr/share/icons/hicolor/256x256@2/apps/swdesk.png",
    "/usr/share/icons/hicolor/512x512/apps/swdesk.png",
];

/// The one package of `extension` the bundler wrote.
fn package(extension: &str) -> anyhow::Result<PathBuf> {
    let directory = std::env::var("SWDESK_APP_BUNDLE")
        .context("SWDESK_APP_BUNDLE is not set: run the suite with `cargo xtask test`")?;
    let directory = Path::new(&directory).join(extension);
    let found: Vec<PathBuf> = std::fs::read_dir(&directory)
        .with_context(|| {
            format!(
                "no {} (build it with `cargo xtask bundle --debug`)",
                directory.display()
            )
        })?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    anyhow::ensure!(found.len() == 1, "one .{extension} expected: {found:?}");
    Ok(found[0].clone())
}

/// Runs `command`; its standard output, or an error with its standard error.
fn output(command: &mut Command) -> anyhow::Result<String> {
    let done = command
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    anyhow::ensure!(
        done.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&done.stderr)
    );
    Ok(String::from_utf8_lossy(&done.stdout).into_owned())
}

/// A throwaway root and a package database of its own for dpkg.
struct ThrowawayRoot {
    _directory: tempfile::TempDir,
    root: PathBuf,
    admin: PathBuf,
}

impl ThrowawayRoot {
    fn new() -> anyhow::Result<Self> {
        let directory = tempfile::tempdir()?;
        let (root, admin) = (
            directory.path().join("root"),
            directory.path().join("admin"),
        );
        for folder in [&root, &admin.join("updates"), &admin.join("info")] {
            std::fs::create_dir_all(folder)?;
        }
        for file in ["status", "available"] {
            std::fs::write(admin.join(file), "")?;
        }
        Ok(Self {
            _directory: directory,
            root,
            admin,
        })
    }

    /// dpkg acting on this root (its dependencies are this system's: apt checks them).
    fn dpkg(&self) -> Command {
        let mut dpkg = Command::new("dpkg");
        dpkg.arg(format!("--instdir={}", self.root.display()))
            .arg(format!("--admindir={}", self.admin.display()))
            .args([
                "--force-not-root",
                "--force-script-chrootless",
                "--force-depends",
            ]);
        dpkg
    }

    /// Every regular file under the root, as an absolute path in the installed system.
    fn files(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut folders = vec![self.root.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if let Ok(inside) = path.strip_prefix(&self.root) {
                    found.push(format!("/{}", inside.display()));
                }
            }
        }
        found.sort();
        found
    }
}

fn expected_files() -> Vec<String> {
    let mut files: Vec<String> = FILES.iter().map(|file| (*file).to_owned()).collect();
    files.sort();
    files
}

#[tokio::test]
async fn the_deb_installs_opens_to_the_sign_in_screen_and_uninstalls_cleanly() -> anyhow::Result<()>
{
    let deb = package("deb")?;
    let field = |name: &str| output(Command::new("dpkg-deb").arg("--field").arg(&deb).arg(name));
    assert_eq!(field("Package")?.trim(), PACKAGE);
    let depends = field("Depends")?;
    assert!(
        depends.contains("libwebkit2gtk-4.1-0") && depends.contains("libgtk-3-0"),
        "{depends}"
    );
    assert!(field("Recommends")?.contains("gnome-keyring"));
    assert!(
        field("Description")?.starts_with("Your socialweb.computer deployments on the desktop")
    );
    output(
        Command::new("apt-get")
            .args(["install", "--simulate"])
            .arg(&deb),
    )
    .context("its dependencies are met on this system")?;

    let installed = ThrowawayRoot::new()?;
    output(installed.dpkg().arg("--install").arg(&deb))?;
    assert_eq!(
        installed.files(),
        expected_files(),
        "the app's one binary, its desktop entry and its icons"
    );
    let entry = std::fs::read_to_string(
        installed
            .root
            .join("usr/share/applications/Socialweb Desk.desktop"),
    )?;
    for line in [
        "Exec=swdesk",
        "Icon=swdesk",
        "Name=Socialweb Desk",
        "Type=Application",
    ] {
        assert!(entry.lines().any(|l| l == line), "{line} in:\n{entry}");
    }
    let binary = installed.root.join("usr/bin/swdesk");
    let help = output(Command::new(&binary).arg("--help"))?;
    assert!(help.contains("Usage: swdesk"), "{help}");

    let window = AppWindow::open_binary("installed", &binary.display().to_string(), &[]).await?;
    window
        .wait_for_text("section[aria-label='Account']", "Signed out")
        .await?;
    window.click("button[data-nav='settings']").await?;
    window
        .wait_for_text("[data-testid='network']", "Local sandbox")
        .await?;
    window.close().await?;

    output(installed.dpkg().args(["--remove", PACKAGE]))?;
    assert_eq!(
        installed.files(),
        Vec::<String>::new(),
        "removed without a trace"
    );
    Ok(())
}

#[test]
fn the_rpm_holds_the_same_files_and_describes_itself() -> anyhow::Result<()> {
    let rpm = package("rpm")?;
    let listed = output(Command::new("rpm").arg("-qlp").arg(&rpm))?;
    let mut files: Vec<String> = listed.lines().map(str::to_owned).collect();
    files.sort();
    assert_eq!(files, expected_files());
    let info = output(Command::new("rpm").arg("-qip").arg(&rpm))?;
    for expected in [
        "Name        : socialweb-desk",
        "License     : MIT OR Apache-2.0",
        "Summary     : Your socialweb.computer deployments on the desktop",
    ] {
        assert!(
            info.lines().any(|line| line == expected),
            "{expected} in:\n{info}"
        );
    }
    Ok(())
}

//! The app as an owner installs it: the debug build's `.deb` (made by `cargo xtask test`; by
//! hand, `cargo xtask bundle --debug`) installed by dpkg into a throwaway root with a package
//! database of its own, its dependencies checked against this system by apt, launched from
//! where it was installed as far as the sign-in screen, then removed; on the way, its desktop
//! entry named by the app id and found by `xdg-mime` as the handler of the app's sign-in link,
//! and its binary stripped. The `.rpm` read by rpm for
//! the same files and metadata. And the installed app updating itself: the next version's `.deb`
//! (also made by `cargo xtask test`), signed and offered by a loopback release server, installed
//! when the owner presses "Restart to update", and the app restarted into it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use swdesk_tests::AppWindow;
use swdesk_tests::releases::{ReleaseServer, SigningKey};

/// The package's name in both formats (the bundler's kebab case of the product name, which on
/// Linux is the app id: `src-tauri/tauri.linux.conf.json`).
const PACKAGE: &str = "computer-socialweb-desk";

/// The app id: the desktop entry's name, and the scheme of the app's sign-in link.
const APP_ID: &str = "computer.socialweb.desk";

/// The files every package holds (the icons at each size the bundle config names).
const FILES: &[&str] = &[
    "/usr/bin/swdesk",
    "/usr/share/applications/computer.socialweb.desk.desktop",
    "/usr/share/icons/hicolor/32x32/apps/swdesk.png",
    "/usr/share/icons/hicolor/64x64/apps/swdesk.png",
    "/usr/share/icons/hicolor/128x128/apps/swdesk.png",
    "/usr/share/icons/hicolor/256x256@2/apps/swdesk.png",
    "/usr/share/icons/hicolor/512x512/apps/swdesk.png",
];

/// The desktop's cache of entries by MIME type that [`ThrowawayRoot::link_handler`] rebuilds.
const MIME_CACHE: &str = "/usr/share/applications/mimeinfo.cache";

/// The one package of `extension` the bundler wrote.
fn package(extension: &str) -> anyhow::Result<PathBuf> {
    let directory = std::env::var("SWDESK_APP_BUNDLE")
        .context("SWDESK_APP_BUNDLE is not set: run the suite with `cargo xtask test`")?;
    only_package(&Path::new(&directory).join(extension), extension)
}

/// The one `.deb` of the debug build's next version.
fn next_release() -> anyhow::Result<PathBuf> {
    let directory = std::env::var("SWDESK_APP_NEXT_RELEASE")
        .context("SWDESK_APP_NEXT_RELEASE is not set: run the suite with `cargo xtask test`")?;
    only_package(Path::new(&directory), "deb")
}

/// The one file ending in `.extension` in `directory`.
fn only_package(directory: &Path, extension: &str) -> anyhow::Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(directory)
        .with_context(|| format!("no {} (`cargo xtask test` builds it)", directory.display()))?
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
        dpkg.args(self.dpkg_options());
        dpkg
    }

    fn dpkg_options(&self) -> [String; 5] {
        [
            format!("--instdir={}", self.root.display()),
            format!("--admindir={}", self.admin.display()),
            "--force-not-root".to_owned(),
            "--force-script-chrootless".to_owned(),
            "--force-depends".to_owned(),
        ]
    }

    /// A folder holding a `pkexec` that runs the updater's privileged step (`/bin/sh` and its
    /// script) with a `dpkg` first in its `PATH` that acts on this root: the test's stand-in
    /// for the system's password prompt (a test cannot answer polkit, nor install into this
    /// machine's own package database).
    fn password_prompt(&self) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let folder = self
            .root
            .parent()
            .context("the root has a parent")?
            .join("bin");
        std::fs::create_dir_all(&folder)?;
        let options = self
            .dpkg_options()
            .map(|option| format!("'{option}'"))
            .join(" ");
        let scripts = [
            ("dpkg", format!("exec /usr/bin/dpkg {options} \"$@\"")),
            (
                "pkexec",
                format!(
                    "[ \"$1\" = /bin/sh ] || exit 126\nPATH='{}':\"$PATH\" exec \"$@\"",
                    folder.display()
                ),
            ),
        ];
        for (name, body) in scripts {
            let path = folder.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n"))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
        Ok(folder)
    }

    /// The version of the app this root's package database holds.
    fn installed_version(&self) -> anyhow::Result<String> {
        let version = output(self.dpkg().args(["--status", PACKAGE]))?;
        version
            .lines()
            .find_map(|line| line.strip_prefix("Version: "))
            .map(str::to_owned)
            .context("dpkg --status names no version")
    }

    /// The desktop entry `xdg-mime` names as the default handler of the app's sign-in link,
    /// with this root as the only system data folder, after the desktop's cache of entries by
    /// MIME type is rebuilt there (what the system's `update-desktop-database` trigger does after
    /// dpkg installs or removes a desktop entry); empty when there is none.
    fn link_handler(&self) -> anyhow::Result<String> {
        let share = self.root.join("usr/share");
        let applications = share.join("applications");
        std::fs::create_dir_all(&applications)?;
        output(Command::new("update-desktop-database").arg(&applications))?;
        let home = self
            .root
            .parent()
            .context("the root has a parent")?
            .join("home");
        let (data, config) = (home.join("data"), home.join("config"));
        for folder in [&data, &config] {
            std::fs::create_dir_all(folder)?;
        }
        let answer = output(
            Command::new("xdg-mime")
                .args(["query", "default"])
                .arg(format!("x-scheme-handler/{APP_ID}"))
                .env("XDG_DATA_DIRS", &share)
                .env("XDG_DATA_HOME", &data)
                .env("XDG_CONFIG_HOME", &config)
                .env("XDG_CONFIG_DIRS", &config)
                // No desktop's own settings tool: the freedesktop.org rules alone.
                .env_remove("XDG_CURRENT_DESKTOP")
                .env_remove("DESKTOP_SESSION")
                .env_remove("KDE_FULL_SESSION"),
        )?;
        Ok(answer.trim().to_owned())
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
    // The outbound client trusts the system's root certificates (reqwest's platform verifier)
    // and cannot be built without them.
    assert!(
        depends.contains("libwebkit2gtk-4.1-0")
            && depends.contains("libgtk-3-0")
            && depends.contains("ca-certificates"),
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
            .join(format!("usr/share/applications/{APP_ID}.desktop")),
    )?;
    for line in [
        // The desktop hands the app its sign-in link (`%u`) and knows the app opens it.
        "Exec=swdesk %u",
        "MimeType=x-scheme-handler/computer.socialweb.desk;",
        "Icon=swdesk",
        "Name=Socialweb Desk",
        "Type=Application",
    ] {
        assert!(entry.lines().any(|l| l == line), "{line} in:\n{entry}");
    }
    assert_eq!(
        installed.link_handler()?,
        format!("{APP_ID}.desktop"),
        "the desktop names the installed entry as the handler of the app's sign-in link"
    );
    let binary = installed.root.join("usr/bin/swdesk");
    let sections = section_names(&binary)?;
    assert!(
        !sections.iter().any(|name| is_symbols_or_debug_info(name)),
        "the installed binary ships stripped (no symbol table, no debug info): {sections:?}"
    );
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
        installed.link_handler()?,
        "",
        "once removed, nothing handles the app's link"
    );
    assert_eq!(
        installed.files(),
        vec![MIME_CACHE.to_owned()],
        "removed without a trace (the desktop's cache is the system's, rebuilt without it)"
    );
    Ok(())
}

/// Whether an ELF section is what stripping takes away: the symbol table and its strings, or
/// DWARF debug info (`.debug_gdb_scripts` is not: rustc's loaded pointer to gdb's helpers).
fn is_symbols_or_debug_info(section: &str) -> bool {
    matches!(section, ".symtab" | ".strtab")
        || (section.starts_with(".debug_") && section != ".debug_gdb_scripts")
}

/// The names of the ELF sections of `binary`, as `readelf` lists its section headers.
fn section_names(binary: &Path) -> anyhow::Result<Vec<String>> {
    let headers = output(
        Command::new("readelf")
            .args(["--section-headers", "--wide"])
            .arg(binary),
    )?;
    let names: Vec<String> = headers
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix('[')?.split_once(']'))
        .filter_map(|(_, rest)| rest.split_whitespace().next().map(str::to_owned))
        .collect();
    anyhow::ensure!(
        names.iter().any(|name| name == ".text"),
        "readelf listed no .text section:\n{headers}"
    );
    Ok(names)
}

#[tokio::test]
async fn the_installed_app_updates_to_a_signed_release_when_asked_and_restarts_into_it()
-> anyhow::Result<()> {
    let (current, next) = (package("deb")?, next_release()?);
    let field = |deb: &Path| {
        output(
            Command::new("dpkg-deb")
                .arg("--field")
                .arg(deb)
                .arg("Version"),
        )
    };
    let next_version = field(&next)?.trim().to_owned();
    let installed = ThrowawayRoot::new()?;
    output(installed.dpkg().arg("--install").arg(&current))?;
    let from_version = installed.installed_version()?;
    assert_ne!(from_version, next_version);

    let project = SigningKey::generate()?;
    let server = ReleaseServer::start().await?;
    let bytes = std::fs::read(&next)?;
    server.offer(&next_version, &bytes, &project.sign(&bytes, &next_version)?);
    let path = format!(
        "{}:{}",
        installed.password_prompt()?.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let endpoint = server.manifest_url();
    let binary = installed.root.join("usr/bin/swdesk").display().to_string();
    let mut window = AppWindow::open_binary(
        "installed-update",
        &binary,
        &[
            ("SWDESK_UPDATE_ENDPOINT", &endpoint),
            ("SWDESK_UPDATE_KEY", &project.public),
            ("PATH", &path),
        ],
    )
    .await?;
    let bar = "[data-testid='update-bar']";
    window
        .wait_for_text(
            bar,
            &format!("Version {next_version} is ready — restart to update"),
        )
        .await?;
    window.screenshot("ready").await?;
    let first = window.app_processes();
    anyhow::ensure!(!first.is_empty(), "the installed app runs");
    window.click(&format!("{bar} button")).await?;

    let started = format!("swdesk started version={next_version}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    let restarted = loop {
        let running = window.app_processes();
        if window.log().contains(&started) && !running.is_empty() && running != first {
            break running;
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "no app of version {next_version} started after the restart (running {running:?}, \
             first {first:?}); its log:\n{}",
            window.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let log = window.log();
    assert_eq!(installed.installed_version()?, next_version);
    assert!(
        log.contains("the update is installed: restarting into it"),
        "{log}"
    );
    window.quit_by_signal().await?;
    assert!(
        first.iter().all(|pid| !restarted.contains(pid)),
        "a new process runs ({first:?} before, {restarted:?} after)"
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
        "Name        : computer-socialweb-desk",
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

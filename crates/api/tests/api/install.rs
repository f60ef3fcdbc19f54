//! Installing an update exactly as verified, with the real `dpkg` on a throwaway root (its own
//! package database) and real `.deb` packages built by `dpkg-deb`: the verified package
//! installs; a file swapped between the check and the install is refused and nothing is
//! installed. `pkexec` is played by a script that runs the privileged step as the test's user
//! (a test cannot answer polkit), with a `dpkg` first in its `PATH` that acts on the root.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use swdesk_api::update::install::{Elevation, InstallError, PackageKind, Staged};

const PACKAGE: &str = "swdesk-install-probe";

/// A throwaway root with a package database of its own, and the stand-in for `pkexec`.
struct Root {
    folder: tempfile::TempDir,
}

impl Root {
    fn new() -> Self {
        let folder = tempfile::tempdir().unwrap();
        let admin = folder.path().join("admin");
        for inside in ["root", "admin/updates", "admin/info", "bin"] {
            std::fs::create_dir_all(folder.path().join(inside)).unwrap();
        }
        for file in ["status", "available"] {
            std::fs::write(admin.join(file), "").unwrap();
        }
        let root = Self { folder };
        let options = root
            .dpkg_options()
            .map(|option| format!("'{option}'"))
            .join(" ");
        root.script("dpkg", &format!("exec /usr/bin/dpkg {options} \"$@\""));
        let bin = root.path("bin");
        root.script(
            "pkexec",
            &format!("PATH='{}':\"$PATH\" exec \"$@\"", bin.display()),
        );
        root
    }

    fn path(&self, inside: &str) -> PathBuf {
        self.folder.path().join(inside)
    }

    fn script(&self, name: &str, body: &str) {
        let path = self.path("bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn dpkg_options(&self) -> [String; 5] {
        [
            format!("--instdir={}", self.path("root").display()),
            format!("--admindir={}", self.path("admin").display()),
            "--force-not-root".to_owned(),
            "--force-script-chrootless".to_owned(),
            "--force-depends".to_owned(),
        ]
    }

    fn elevation(&self) -> Elevation {
        Elevation::through(self.path("bin").join("pkexec"))
    }

    /// The version of the probe package the root's database holds, if any.
    fn installed(&self) -> Option<String> {
        let status = Command::new("/usr/bin/dpkg")
            .args(self.dpkg_options())
            .args(["--status", PACKAGE])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&status.stdout).into_owned();
        text.lines()
            .find_map(|line| line.strip_prefix("Version: "))
            .map(str::to_owned)
    }

    fn holds(&self, file: &str) -> bool {
        self.path("root")
            .join(file.trim_start_matches('/'))
            .exists()
    }
}

/// A real `.deb` of the probe package at `version`, holding one file named after `payload`.
fn deb(version: &str, payload: &str) -> Vec<u8> {
    let folder = tempfile::tempdir().unwrap();
    let tree = folder.path().join("tree");
    std::fs::create_dir_all(tree.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(tree.join("usr/share/swdesk-install-probe")).unwrap();
    std::fs::write(
        tree.join("DEBIAN/control"),
        format!(
            "Package: {PACKAGE}\nVersion: {version}\nArchitecture: all\nMaintainer: test <t@example.com>\nDescription: probe\n"
        ),
    )
    .unwrap();
    std::fs::write(
        tree.join("usr/share/swdesk-install-probe").join(payload),
        payload,
    )
    .unwrap();
    let out = folder.path().join("probe.deb");
    let built = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&tree)
        .arg(&out)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    std::fs::read(out).unwrap()
}

/// Replaces the file at `path` with `bytes` as another program would: a new file renamed over it.
fn swap(path: &Path, bytes: &[u8]) {
    let beside = path.with_extension("swapped");
    std::fs::write(&beside, bytes).unwrap();
    std::fs::rename(&beside, path).unwrap();
}

#[test]
fn the_verified_package_installs_from_roots_copy() {
    let root = Root::new();
    let verified = deb("2.0.0", "verified");
    let staged = Staged::write(&verified, PackageKind::Deb).unwrap();
    staged.install(&root.elevation()).unwrap();
    assert_eq!(root.installed().as_deref(), Some("2.0.0"));
    assert!(root.holds("/usr/share/swdesk-install-probe/verified"));
}

#[test]
fn a_package_swapped_between_its_check_and_its_install_is_refused_and_nothing_is_installed() {
    let root = Root::new();
    let verified = deb("2.0.0", "verified");
    let staged = Staged::write(&verified, PackageKind::Deb).unwrap();
    swap(staged.path(), &deb("6.6.6", "swapped"));
    let refused = staged.install(&root.elevation());
    assert!(matches!(refused, Err(InstallError::Changed)), "{refused:?}");
    assert_eq!(root.installed(), None, "nothing was installed");
    assert!(!root.holds("/usr/share/swdesk-install-probe/swapped"));
    assert!(!root.holds("/usr/share/swdesk-install-probe/verified"));
}

#[test]
fn a_package_grown_or_cut_after_its_check_installs_only_the_verified_bytes_or_nothing() {
    let root = Root::new();
    let verified = deb("2.0.0", "verified");
    let cut = Staged::write(&verified, PackageKind::Deb).unwrap();
    swap(cut.path(), &verified[..verified.len() / 2]);
    assert!(matches!(
        cut.install(&root.elevation()),
        Err(InstallError::Changed)
    ));
    assert_eq!(root.installed(), None);

    let grown = Staged::write(&verified, PackageKind::Deb).unwrap();
    let mut longer = verified.clone();
    longer.extend_from_slice(&deb("6.6.6", "swapped"));
    swap(grown.path(), &longer);
    grown.install(&root.elevation()).unwrap();
    assert_eq!(
        root.installed().as_deref(),
        Some("2.0.0"),
        "only the verified length was copied, and installed"
    );
}

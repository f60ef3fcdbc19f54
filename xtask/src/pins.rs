//! The Tauri crates and their npm packages move together: the Tauri CLI refuses to bundle when
//! a plugin's crate and its `@tauri-apps/plugin-*` package are on different minor releases, so
//! [`drift`] names every pair that differs (read from `Cargo.lock` and `ui/package-lock.json`),
//! or a plugin the shell depends on whose package the UI lacks (but for the few used from Rust
//! only; a plugin pulled in by another, such as the dialog's `fs`, needs none), and
//! `cargo xtask test` fails when one does ([`check`]).

use anyhow::Context;
use serde_json::Value;

use crate::paths::Paths;

/// Fails naming every Tauri crate whose npm package is on another minor release.
pub fn check(paths: &Paths) -> anyhow::Result<()> {
    let cargo_lock =
        std::fs::read_to_string(paths.root.join("Cargo.lock")).context("reading Cargo.lock")?;
    let package_lock = std::fs::read_to_string(paths.ui().join("package-lock.json"))
        .context("reading ui/package-lock.json")?;
    let package_lock: Value =
        serde_json::from_str(&package_lock).context("ui/package-lock.json is not JSON")?;
    let shell = std::fs::read_to_string(paths.root.join("src-tauri/Cargo.toml"))
        .context("reading src-tauri/Cargo.toml")?;
    let drifted = drift(&cargo_lock, &package_lock, &shell);
    anyhow::ensure!(
        drifted.is_empty(),
        "pin them to one minor release: {}",
        drifted.join("; ")
    );
    Ok(())
}

/// The plugins the window never calls: used from Rust only, they have no npm package in the UI
/// (the single-instance plugin has none at all; the save dialog is opened by the shell).
const RUST_ONLY_PLUGINS: &[&str] = &[
    "tauri-plugin-dialog",
    "tauri-plugin-single-instance",
    "tauri-plugin-window-state",
    "tauri-plugin-updater",
];

/// Every Tauri crate whose npm package is on another major or minor release, as
/// "crate x.y.z ≠ package a.b.c", and every plugin the shell (its manifest `shell`) depends on
/// whose package the UI lacks; empty when they match.
pub fn drift(cargo_lock: &str, package_lock: &Value, shell: &str) -> Vec<String> {
    let mut drifted = Vec::new();
    for (name, version) in locked_crates(cargo_lock) {
        let Some(package) = npm_package_of(&name) else {
            continue;
        };
        if RUST_ONLY_PLUGINS.contains(&name.as_str()) {
            continue;
        }
        let key = format!("node_modules/{package}");
        let Some(npm) = package_lock["packages"][&key]["version"].as_str() else {
            if name != "tauri" && depends_on(shell, &name) {
                drifted.push(format!("{name} {version} has no {package} in the UI"));
            }
            continue;
        };
        if minor(&version) != minor(npm) {
            drifted.push(format!("{name} {version} ≠ {package} {npm}"));
        }
    }
    drifted
}

/// Whether the manifest `text` names `crate_name` among its dependencies.
fn depends_on(text: &str, crate_name: &str) -> bool {
    crate::layout::normal_dependencies(text)
        .iter()
        .any(|(name, _)| name == crate_name)
}

/// The npm package that goes with a Tauri crate.
fn npm_package_of(crate_name: &str) -> Option<String> {
    if crate_name == "tauri" {
        return Some("@tauri-apps/api".to_owned());
    }
    let plugin = crate_name.strip_prefix("tauri-plugin-")?;
    Some(format!("@tauri-apps/plugin-{plugin}"))
}

/// `(name, version)` of every package in a `Cargo.lock`.
fn locked_crates(cargo_lock: &str) -> Vec<(String, String)> {
    let mut crates = Vec::new();
    let mut name = None;
    for line in cargo_lock.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_owned());
        } else if let (Some(value), Some(current)) = (line.strip_prefix("version = "), name.take())
        {
            crates.push((current, value.trim_matches('"').to_owned()));
        }
    }
    crates
}

/// `major.minor` of a version.
fn minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tauri_crate_and_its_npm_package_are_on_one_minor_release() {
        let paths = Paths::discover().expect("the workspace");
        check(&paths).expect("no drift");
    }

    #[test]
    fn a_plugin_on_another_minor_release_is_named() {
        let cargo_lock = "[[package]]\nname = \"tauri-plugin-notification\"\nversion = \"2.8.1\"\n\
                          \n[[package]]\nname = \"tauri-plugin-clipboard-manager\"\nversion = \"2.4.0\"\n\
                          \n[[package]]\nname = \"tauri-plugin-window-state\"\nversion = \"2.5.0\"\n\
                          \n[[package]]\nname = \"tauri-plugin-fs\"\nversion = \"2.7.1\"\n";
        let shell = "[dependencies]\ntauri-plugin-notification.workspace = true\n\
                     tauri-plugin-clipboard-manager.workspace = true\ntauri-plugin-window-state.workspace = true\n";
        let package_lock = serde_json::json!({"packages": {
            "node_modules/@tauri-apps/plugin-notification": {"version": "2.5.0"}
        }});
        assert_eq!(
            drift(cargo_lock, &package_lock, shell),
            [
                "tauri-plugin-notification 2.8.1 ≠ @tauri-apps/plugin-notification 2.5.0",
                "tauri-plugin-clipboard-manager 2.4.0 has no @tauri-apps/plugin-clipboard-manager in the UI",
            ]
        );
    }
}

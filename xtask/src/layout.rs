//! What ships and what is test ground stay apart: the crates under `crates/` and the shell in
//! `src-tauri/` are what the app is built from, the crates under `sandbox/` are the local
//! sandbox that only tests and `cargo xtask run` start. [`shipped_on_sandbox`] names every
//! shipped crate whose normal dependencies reach into the sandbox (dev-dependencies, and
//! optional ones that only a `test-support` feature turns on, may); `cargo xtask test` fails
//! when it names one ([`check`]).

use std::path::Path;

use crate::paths::Paths;

/// The packages of the sandbox, as dependencies are named.
const SANDBOX_PACKAGES: &[&str] = &["swdesk-devnet", "swdesk-sandbox-", "swdesk-testkit"];

/// Fails naming every shipped crate that depends on the sandbox.
pub fn check(paths: &Paths) -> anyhow::Result<()> {
    let found = shipped_on_sandbox(&paths.root);
    anyhow::ensure!(
        found.is_empty(),
        "a shipped crate depends on the sandbox (make it a dev-dependency): {}",
        found.join("; ")
    );
    Ok(())
}

/// Every `manifest: dependency` where a shipped crate depends on a sandbox package.
pub fn shipped_on_sandbox(root: &Path) -> Vec<String> {
    let mut manifests = vec![root.join("src-tauri/Cargo.toml")];
    if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
        manifests.extend(
            entries
                .flatten()
                .map(|entry| entry.path().join("Cargo.toml")),
        );
    }
    let mut found = Vec::new();
    for manifest in manifests {
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        for dependency in sandbox_dependencies(&text) {
            found.push(format!("{}: {dependency}", manifest.display()));
        }
    }
    found.sort();
    found
}

/// The sandbox packages named in the `[dependencies]` table of a manifest's `text`, optional
/// ones left out.
fn sandbox_dependencies(text: &str) -> Vec<String> {
    normal_dependencies(text)
        .into_iter()
        .filter(|(name, optional)| {
            !optional && SANDBOX_PACKAGES.iter().any(|p| name.starts_with(p))
        })
        .map(|(name, _)| name)
        .collect()
}

/// Every dependency in the `[dependencies]` table of a manifest's `text` (the line form the
/// workspace uses: `name.workspace = true` or `name = …`), with whether it is optional.
pub fn normal_dependencies(text: &str) -> Vec<(String, bool)> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
        if in_dependencies && !name.is_empty() && !name.starts_with('#') {
            found.push((name.to_owned(), line.contains("optional = true")));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dev_dependencies_reach_into_the_sandbox() {
        let manifest = "[dependencies]\nswdesk-core.workspace = true\n\
            swdesk-devnet = { workspace = true }\n\
            swdesk-sandbox-peer = { workspace = true, optional = true }\n\n\
            [dev-dependencies]\nswdesk-sandbox-bidder.workspace = true\n";
        assert_eq!(sandbox_dependencies(manifest), vec!["swdesk-devnet"]);
    }
}

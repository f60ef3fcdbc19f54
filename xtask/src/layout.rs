//! What ships and what is test ground stay apart: the crates under `crates/` and the shell in
//! `src-tauri/` are what the app is built from, the crates under `sandbox/` are the local
//! sandbox that only tests and `cargo xtask run` start. [`shipped_on_sandbox`] names every
//! shipped crate whose normal dependencies reach into the sandbox (dev-dependencies, and
//! optional ones that only a `test-support` feature turns on, may); `cargo xtask test` fails
//! when it names one ([`check`]). The same check keeps two floors of ARCHITECTURE.md: only the
//! shell depends on Tauri, and the domain (`crates/kernel`, `crates/auction`, `crates/core`,
//! `crates/lexicon`) on no runtime, network, database or keychain crate ([`floors_broken`]).

use std::path::Path;

use crate::paths::Paths;

/// The packages of the sandbox, as dependencies are named.
const SANDBOX_PACKAGES: &[&str] = &["swdesk-devnet", "swdesk-sandbox-", "swdesk-testkit"];

/// The crates of the domain, which do no I/O.
const DOMAIN_CRATES: &[&str] = &["kernel", "auction", "core", "lexicon"];
/// What does I/O or runs it: none of it is a normal dependency of the domain.
const IO_PACKAGES: &[&str] = &[
    "tokio",
    "reqwest",
    "hyper",
    "rusqlite",
    "keyring",
    "swdesk-net",
    "swdesk-store",
    "swdesk-files",
];

/// Fails naming every shipped crate that depends on the sandbox, and every floor broken.
pub fn check(paths: &Paths) -> anyhow::Result<()> {
    let found = shipped_on_sandbox(&paths.root);
    anyhow::ensure!(
        found.is_empty(),
        "a shipped crate depends on the sandbox (make it a dev-dependency): {}",
        found.join("; ")
    );
    let broken = floors_broken(&paths.root);
    anyhow::ensure!(broken.is_empty(), "{}", broken.join("; "));
    Ok(())
}

/// Every library under `crates/` that depends on Tauri, and every domain crate that depends
/// on something doing I/O, each as `manifest: dependency (why not)`.
pub fn floors_broken(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(root.join("crates")) else {
        return found;
    };
    for crate_dir in entries.flatten().map(|entry| entry.path()) {
        let manifest = crate_dir.join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let domain = (crate_dir.file_name())
            .is_some_and(|name| DOMAIN_CRATES.iter().any(|domain| name == *domain));
        for why in floor_breaches(&text, domain) {
            found.push(format!("{}: {why}", manifest.display()));
        }
    }
    found.sort();
    found
}

/// The normal dependencies in a library's manifest `text` that break a floor: Tauri in any,
/// an I/O crate in a `domain` one.
fn floor_breaches(text: &str, domain: bool) -> Vec<String> {
    let mut found = Vec::new();
    for (name, _) in normal_dependencies(text) {
        if name.starts_with("tauri") {
            found.push(format!("{name} (libraries know nothing of Tauri)"));
        } else if domain && IO_PACKAGES.contains(&name.as_str()) {
            found.push(format!("{name} (the domain has no I/O)"));
        }
    }
    found
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

    #[test]
    fn a_library_on_tauri_and_the_domain_on_io_are_named() {
        let manifest = "[dependencies]\nserde.workspace = true\ntauri = { workspace = true }\n\
            tokio.workspace = true\n\n[dev-dependencies]\ntokio.workspace = true\n";
        assert_eq!(
            floor_breaches(manifest, true),
            vec![
                "tauri (libraries know nothing of Tauri)",
                "tokio (the domain has no I/O)"
            ]
        );
        assert_eq!(
            floor_breaches(manifest, false),
            vec!["tauri (libraries know nothing of Tauri)"]
        );
    }

    #[test]
    fn the_libraries_keep_their_floors() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert_eq!(floors_broken(&root), Vec::<String>::new());
    }
}

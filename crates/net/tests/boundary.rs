//! The one-client rule, checked over the workspace's sources: outside this crate, the sandbox
//! (its peers, the devnet harness), benchmarks and tests, no code builds an HTTP client of its
//! own, and only the sandbox's own peers open every loopback port. A client built elsewhere
//! would call without the owner's network policy.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// Where clients may be built: the policy's own crate and the local network's test ground.
const MAY_BUILD_CLIENTS: &[&str] = &["crates/net/", "sandbox/", "tests/", "xtask/", "bench/"];

/// Where every loopback port may be opened: the sandbox's own peers.
const MAY_OPEN_ALL_LOOPBACK: &[&str] =
    &["crates/net/", "sandbox/bidder/src/", "sandbox/gateway/src/"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir` that is product code (not under a `tests/` or `benches/`
/// folder of a crate, not a `#[cfg(test)]` module's own file), with its path from the root.
fn sources(root: &Path, dir: &Path, found: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".git" | "gen") {
                sources(root, &path, found);
            }
        } else if name.ends_with(".rs") {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            found.push((relative.to_string_lossy().replace('\\', "/"), text));
        }
    }
}

/// The text of `source` before its first `#[cfg(test)]` (unit tests may build what they like).
fn product_part(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

fn is_test_ground(path: &str, allowed: &[&str]) -> bool {
    allowed.iter().any(|prefix| path.starts_with(prefix))
        || path.contains("/tests/")
        || path.contains("/benches/")
}

fn offenders(needles: &[&str], allowed: &[&str]) -> Vec<String> {
    let root = workspace();
    let mut files = Vec::new();
    for dir in [
        "crates",
        "sandbox",
        "src-tauri/src",
        "tests",
        "xtask",
        "bench",
    ] {
        sources(&root, &root.join(dir), &mut files);
    }
    assert!(
        files.len() > 50,
        "the sources were found ({} files)",
        files.len()
    );
    files
        .iter()
        .filter(|(path, _)| !is_test_ground(path, allowed))
        .filter(|(_, text)| {
            let product = product_part(text);
            needles.iter().any(|needle| product.contains(needle))
        })
        .map(|(path, _)| path.clone())
        .collect()
}

#[test]
fn no_product_code_builds_an_http_client_of_its_own() {
    let found = offenders(
        &[
            "reqwest::Client::new(",
            "Client::builder(",
            "ClientBuilder::new(",
            "connect_async(",
        ],
        MAY_BUILD_CLIENTS,
    );
    assert_eq!(
        found,
        Vec::<String>::new(),
        "use swdesk_net::Outbound instead"
    );
}

#[test]
fn only_the_sandboxs_own_peers_open_every_loopback_port() {
    let found = offenders(&["with_any_loopback_port("], MAY_OPEN_ALL_LOOPBACK);
    assert_eq!(found, Vec::<String>::new());
}

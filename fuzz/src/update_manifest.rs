//! `update_manifest`: a release manifest (`latest.json`) as the update server answers it, read
//! the way the updater reads it: each `version` (a leading `v` dropped) by `semver` and compared
//! with the running version as the shell's comparator does (`src-tauri/src/update.rs`: newer is
//! offered, older refused), each `signature` (base64 of a minisign signature file) by
//! `minisign-verify` and checked against the package with the fixed public key [`PUBLIC_KEY`].
//! These are the parsers `tauri-plugin-updater` runs on the manifest, at the versions it runs;
//! the plugin's own glue (`RemoteRelease`'s reading, `verify_signature`) is not reachable
//! without building `tauri` and its GTK stack into the fuzz crate, so it is not fuzzed here.
//!
//! Invariants:
//! - a version read prints and reads back to itself, compares the same both ways round, and
//!   is offered exactly when it is newer than the running one, refused exactly when older;
//! - a signature verifies only over the package it was made for (the seed's, made with
//!   `tauri signer sign --app-version 1.2.3`; the fuzzer cannot forge one), never over the
//!   package with one byte more, and a verified one's trusted comment names its version.

use std::str::FromStr as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use minisign_verify::{PublicKey, Signature};
use semver::Version;
use serde_json::Value;

/// The public key of the seeds' signatures (`tauri signer generate`), as `plugins.updater.pubkey`
/// holds it.
pub const PUBLIC_KEY: &str = "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXk6IDkxNThCMkY1NzQyNkYzMzIKUldReTh5WjA5YkpZa1Fqb1U5Ymh2TGdKY3FhdWJRenpRVDMrRG0vN3BBK0ZjL2xNLzV0Nm1tYWYK";
/// The package the seeds' signatures were made over.
pub const PACKAGE: &[u8] = b"swdesk fuzz package 1.2.3\n";
/// The version running.
const RUNNING: &str = "0.4.0";

pub fn check(data: &[u8]) {
    let Some(manifest) = crate::json(data) else {
        return;
    };
    let mut versions = Vec::new();
    let mut signatures = Vec::new();
    collect(&manifest, 0, &mut versions, &mut signatures);
    for text in versions.iter().take(8) {
        version(text);
    }
    for text in signatures.iter().take(8) {
        signature(text);
    }
}

/// The `version` (or `name`) and `signature` strings anywhere in the manifest (a release's own,
/// or its platforms').
fn collect<'v>(
    value: &'v Value,
    depth: usize,
    versions: &mut Vec<&'v str>,
    signatures: &mut Vec<&'v str>,
) {
    if depth > 3 {
        return;
    }
    let Value::Object(members) = value else {
        return;
    };
    for (name, member) in members {
        match (name.as_str(), member) {
            ("version" | "name", Value::String(text)) => versions.push(text),
            ("signature", Value::String(text)) => signatures.push(text),
            (_, Value::Object(_)) => collect(member, depth + 1, versions, signatures),
            _ => {}
        }
    }
}

fn version(text: &str) {
    let Ok(offered) = Version::from_str(text.trim_start_matches('v')) else {
        return;
    };
    let again = Version::from_str(&offered.to_string());
    assert_eq!(
        again.as_ref().ok(),
        Some(&offered),
        "{offered} does not read back"
    );
    let Ok(running) = Version::from_str(RUNNING) else {
        unreachable!("a fixed version")
    };
    assert_eq!(offered.cmp(&running), running.cmp(&offered).reverse());
    let newer = offered > running;
    let older = offered < running;
    assert!(!(newer && older));
    assert_eq!(
        newer || older,
        offered != running,
        "{offered} neither newer, older nor the same"
    );
}

fn signature(text: &str) {
    let Ok(decoded) = STANDARD.decode(text) else {
        return;
    };
    let Ok(decoded) = String::from_utf8(decoded) else {
        return;
    };
    let Ok(signature) = Signature::decode(&decoded) else {
        return;
    };
    let key = public_key();
    let mut longer = PACKAGE.to_vec();
    longer.push(b'!');
    assert!(
        key.verify(&longer, &signature, true).is_err(),
        "a signature verified over another package"
    );
    if key.verify(PACKAGE, &signature, true).is_ok() {
        assert!(
            signature.trusted_comment().contains("version:1.2.3"),
            "a verified signature names no version: {:?}",
            signature.trusted_comment()
        );
    }
}

fn public_key() -> PublicKey {
    let decoded = STANDARD
        .decode(PUBLIC_KEY)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| PublicKey::decode(&text).ok());
    match decoded {
        Some(key) => key,
        None => unreachable!("a fixed public key"),
    }
}

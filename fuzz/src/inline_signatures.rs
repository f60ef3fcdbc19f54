//! `inline_signatures`: a peer's record with its inline signatures (`network.attested.signature`),
//! checked by `swdesk_atproto::attestation::{verify_inline_signatures, verified_signers,
//! is_signed_by}` as a record of [`REPO`], signed again with `sign_record` / `sign_record_as`;
//! then each signer's key bound to the author by `swdesk_auction::trust::bind` over a
//! directory the input describes (`directory`: `published` and `listed` as `[did, key]` pairs,
//! `endpoints` the author's service endpoints).
//!
//! Invariants:
//! - each check is of an inline entry at its index and names its `key` and `issuer`;
//!   `verified_signers` is some exactly when there are checks and all verify; `is_signed_by`
//!   agrees with the checks;
//! - a signature added by a fixed key verifies, names its issuer when given one, leaves the
//!   earlier checks as they were, and fails as another repo's record (on one input in 16,
//!   chosen by its bytes: signing is what makes a run slow);
//! - a binding binds the key asked about; published by the author first, then listed by the
//!   author's document, then listed by an issuer other than the author that is tied to it: a
//!   host-only `did:web` whose host is, as a URL reads it, the host of one of the author's
//!   endpoints; nothing else binds.

use std::future::Future;

use serde_json::Value;
use swdesk_atproto::attestation::{
    AttestationKey, Curve, INLINE_SIGNATURE_TYPE, SignatureCheck, is_signed_by, sign_record,
    sign_record_as, verified_signers, verify_inline_signatures,
};
use swdesk_auction::trust::{KeyBinding, KeyDirectory, bind, is_tied};
use url::Url;

/// The repo the record is read as from (its author).
pub const REPO: &str = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
const SIGNED_AT: &str = "2026-12-05T10:00:00.000Z";
/// One input in this many is also signed again and verified (ECDSA: see `crate::sampled`).
const SIGN_ONE_IN: u64 = 16;

pub fn check(data: &[u8]) {
    let Some(input) = crate::json(data) else {
        return;
    };
    let record = input.get("record").unwrap_or(&input);
    let checks = verify_inline_signatures(record, REPO);
    consistent(record, &checks);
    if crate::sampled(data, SIGN_ONE_IN) {
        resign(record, &checks, input["issuer"].as_str());
    }
    let directory = Directory::from(&input["directory"]);
    let mut keys: Vec<(String, Option<String>)> = checks
        .iter()
        .map(|check| (check.key.clone(), check.issuer.clone()))
        .collect();
    if let Some(key) = input["key"].as_str() {
        keys.push((key.to_owned(), input["issuer"].as_str().map(str::to_owned)));
    }
    for (key, issuer) in keys.iter().take(8) {
        binding(&directory, key, issuer.as_deref());
    }
}

fn consistent(record: &Value, checks: &[SignatureCheck]) {
    let entries = record["signatures"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for check in checks {
        let entry = &entries[check.index];
        assert_eq!(entry["$type"], INLINE_SIGNATURE_TYPE);
        assert_eq!(entry["key"].as_str().unwrap_or_default(), check.key);
        assert_eq!(entry["issuer"].as_str(), check.issuer.as_deref());
        let signed = is_signed_by(record, REPO, &check.key);
        if check.result.is_ok() {
            assert!(signed, "a verified signature is not signed by its key");
        }
    }
    let all = !checks.is_empty() && checks.iter().all(|check| check.result.is_ok());
    assert_eq!(verified_signers(record, REPO).is_some(), all);
}

/// The record signed once more: the new signature verifies, the others are unchanged.
fn resign(record: &Value, checks: &[SignatureCheck], issuer: Option<&str>) {
    let Some(key) = AttestationKey::from_secret_bytes(Curve::P256, &[0x11; 32]) else {
        unreachable!("a fixed valid scalar")
    };
    let signed = match issuer {
        Some(issuer) => sign_record_as(record, &key, REPO, SIGNED_AT, Some(issuer)),
        None => sign_record(record, &key, REPO, SIGNED_AT),
    };
    let Ok(signed) = signed else {
        return;
    };
    let again = verify_inline_signatures(&signed, REPO);
    let Some(ours) = again.last() else {
        panic!("a signed record has no signature")
    };
    assert_eq!(ours.key, key.did_key());
    assert_eq!(ours.issuer.as_deref(), issuer);
    assert_eq!(ours.result, Ok(()), "our own signature does not verify");
    assert!(is_signed_by(&signed, REPO, &key.did_key()));
    let before: Vec<_> = checks
        .iter()
        .map(|check| (&check.key, &check.result))
        .collect();
    let after: Vec<_> = again[..again.len() - 1]
        .iter()
        .map(|check| (&check.key, &check.result))
        .collect();
    if record.get("signatures").is_some_and(Value::is_array) {
        assert_eq!(before, after, "signing changed the earlier checks");
    }
    let elsewhere = verify_inline_signatures(&signed, "did:plc:copycat");
    assert!(
        elsewhere.last().is_some_and(|check| check.result.is_err()),
        "verified in another repo"
    );
}

/// `key` bound to [`REPO`] by the rule, checked against what the directory holds.
fn binding(directory: &Directory, key: &str, issuer: Option<&str>) {
    let Ok(bound) = ready(bind(directory, REPO, key, issuer)) else {
        unreachable!("the directory always answers")
    };
    let published = directory.has(&directory.published, REPO, key);
    let listed = directory.has(&directory.listed, REPO, key);
    match &bound {
        Some(KeyBinding::Published { key: bound }) => assert!(published && bound == key),
        Some(KeyBinding::AuthorDocument { key: bound }) => {
            assert!(!published && listed && bound == key);
        }
        Some(KeyBinding::IssuerDocument {
            key: bound,
            issuer: by,
        }) => {
            assert!(!published && !listed && bound == key);
            assert_eq!(Some(by.as_str()), issuer);
            assert_ne!(by, REPO);
            assert!(directory.has(&directory.listed, by, key));
            assert!(
                tied_by_url(directory, by),
                "{by} bound but not tied to {:?}",
                directory.endpoints
            );
        }
        None => assert!(
            !published && !listed,
            "a key the author vouches for is not bound"
        ),
    }
    if let Some(issuer) = issuer {
        if ready(is_tied(directory, REPO, issuer)) {
            assert!(
                tied_by_url(directory, issuer),
                "{issuer} tied to {:?}",
                directory.endpoints
            );
        }
    }
}

/// Whether `issuer` is a host-only `did:web` whose document URL has the host (and port) of
/// one of the author's endpoints, both read as URLs.
fn tied_by_url(directory: &Directory, issuer: &str) -> bool {
    let Some(host) = issuer.strip_prefix("did:web:") else {
        return false;
    };
    if host.contains(':') || host.contains('/') || host.contains('@') {
        return false;
    }
    let host = host.replace("%3A", ":").replace("%3a", ":");
    let Ok(document) = Url::parse(&format!("https://{host}/.well-known/did.json")) else {
        // The resolver cannot build its document URL: nothing of it is ever fetched.
        return true;
    };
    directory.endpoints.iter().any(|endpoint| {
        Url::parse(endpoint).is_ok_and(|endpoint| {
            matches!(endpoint.scheme(), "https" | "http")
                && endpoint.host() == document.host()
                && endpoint.port_or_known_default() == document.port_or_known_default()
        })
    })
}

/// The author's and other DIDs' keys and endpoints, as the input describes them.
#[derive(Debug, Default)]
struct Directory {
    published: Vec<(String, String)>,
    listed: Vec<(String, String)>,
    endpoints: Vec<String>,
}

impl Directory {
    fn from(value: &Value) -> Self {
        let pairs = |name: &str| {
            value[name]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|pair| {
                    Some((pair[0].as_str()?.to_owned(), pair[1].as_str()?.to_owned()))
                })
                .collect()
        };
        let endpoints = value["endpoints"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        Self {
            published: pairs("published"),
            listed: pairs("listed"),
            endpoints: endpoints
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        }
    }

    fn has(&self, pairs: &[(String, String)], did: &str, key: &str) -> bool {
        pairs
            .iter()
            .any(|(named, listed)| named == did && listed == key)
    }
}

impl KeyDirectory for Directory {
    type Error = ();

    async fn publishes(&self, author: &str, key: &str) -> Result<bool, ()> {
        Ok(self.has(&self.published, author, key))
    }

    async fn document_lists(&self, did: &str, key: &str) -> bool {
        self.has(&self.listed, did, key)
    }

    async fn document_endpoints(&self, did: &str) -> Vec<String> {
        if did == REPO {
            self.endpoints.clone()
        } else {
            Vec::new()
        }
    }
}

/// Runs a future whose every step is ready at once (the directory's).
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => unreachable!("the directory never waits"),
    }
}

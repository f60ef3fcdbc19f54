//! What the owner's DID document should say about the market key, worked out without I/O: the
//! verification methods a PLC operation names (fragment → `did:key`) read off the current
//! document, the same map with the market key added, replaced or removed ([`desired_methods`]),
//! whether a document lists a key under [`ATTESTATION_FRAGMENT`] ([`listing`]), the check that
//! the operation the PDS signed changes nothing but that ([`check_operation`]), and the entry a
//! `did:web` owner adds to their `did.json` by hand ([`did_web_entry`]).
//!
//! Invariants: every method but the market key's is carried over as the document has it; a
//! method whose key cannot be read refuses the change (dropping it would remove it from the
//! owner's document); the `atproto` repo signing key is never touched.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::PlcError;
use crate::did_key::PublicKey;
use crate::identity::DidDocument;

/// The fragment under which the public market reads an attestation key from a DID document
/// (`attestationVerificationMethod` in its `attest.ts`: `<did>#attestation`, a `Multikey`).
pub const ATTESTATION_FRAGMENT: &str = "attestation";

/// The fragment of the repo signing key, which no change here touches.
pub const ATPROTO_FRAGMENT: &str = "atproto";

/// A DID's verification methods as a PLC operation names them: fragment → `did:key:…`.
pub type VerificationMethods = BTreeMap<String, String>;

/// What to do with the market key in the owner's DID document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyChange {
    /// List this `did:key` under [`ATTESTATION_FRAGMENT`], adding it or replacing the one there.
    Publish(String),
    /// Take the market key out (a lost device).
    Remove,
}

/// How a document stands with the market key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The key asked about is listed under [`ATTESTATION_FRAGMENT`].
    Listed,
    /// Another key is listed there (as a `did:key`), or one that cannot be read (its reason).
    Other(String),
    /// Nothing is listed there.
    Absent,
}

/// The verification methods of `document`, each key as a `did:key` (the form a PLC operation
/// takes), whatever form the document serves it in.
pub fn current_methods(document: &DidDocument) -> Result<VerificationMethods, PlcError> {
    document
        .verification_method
        .iter()
        .map(|method| {
            let fragment = fragment_of(&document.id, &method.id);
            let unreadable = |reason: String| PlcError::UnreadableMethod {
                id: method.id.clone(),
                reason,
            };
            let fragment = fragment.ok_or_else(|| unreadable("its id has no #fragment".into()))?;
            let multibase = method.public_key_multibase.as_deref().unwrap_or_default();
            let key = PublicKey::from_verification_method(&method.kind, multibase)
                .map_err(|error| unreadable(error.to_string()))?;
            Ok((fragment.to_owned(), did_key(&key)))
        })
        .collect()
}

/// The verification methods `document` should have after `change`: the current ones with the
/// market key added, replaced or removed, everything else as it is.
pub fn desired_methods(
    document: &DidDocument,
    change: &KeyChange,
) -> Result<VerificationMethods, PlcError> {
    let mut methods = current_methods(document)?;
    match change {
        KeyChange::Publish(key) => {
            methods.insert(ATTESTATION_FRAGMENT.to_owned(), normalized(key)?);
        }
        KeyChange::Remove => {
            methods.remove(ATTESTATION_FRAGMENT);
        }
    }
    Ok(methods)
}

/// Whether `document` lists `key` (a `did:key`) under [`ATTESTATION_FRAGMENT`].
pub fn listing(document: &DidDocument, key: &str) -> Listing {
    let Some(listed) = document.key(ATTESTATION_FRAGMENT) else {
        return Listing::Absent;
    };
    match listed {
        Ok(listed) if normalized(key).is_ok_and(|key| key == did_key(&listed)) => Listing::Listed,
        Ok(listed) => Listing::Other(did_key(&listed)),
        Err(error) => Listing::Other(error.to_string()),
    }
}

/// Checks that `operation` (as the PDS signed it) names exactly `desired` and keeps the
/// document's handles and services: anything else it would change is refused before it is
/// submitted.
pub fn check_operation(
    operation: &Value,
    document: &DidDocument,
    desired: &VerificationMethods,
) -> Result<(), PlcError> {
    let unexpected = |what: &str| PlcError::UnexpectedOperation {
        what: what.to_owned(),
    };
    if operation["type"] != "plc_operation" || !operation["prev"].is_string() {
        return Err(unexpected("it is not an update of the current operation"));
    }
    let methods: Option<VerificationMethods> =
        serde_json::from_value(operation["verificationMethods"].clone()).ok();
    if methods.as_ref() != Some(desired) {
        return Err(unexpected(
            "its verification methods are not the ones asked",
        ));
    }
    if operation["alsoKnownAs"] != json!(document.also_known_as) {
        return Err(unexpected("it changes the handle (alsoKnownAs)"));
    }
    if operation["services"] != services_of(document) {
        return Err(unexpected("it changes the services"));
    }
    Ok(())
}

/// The entry a `did:web` owner adds to `verificationMethod` in their `did.json`: the market
/// key under [`ATTESTATION_FRAGMENT`], as the public market reads it.
pub fn did_web_entry(did: &str, key: &str) -> Result<Value, PlcError> {
    let key = normalized(key)?;
    Ok(json!({
        "id": format!("{did}#{ATTESTATION_FRAGMENT}"),
        "type": "Multikey",
        "controller": did,
        "publicKeyMultibase": key.trim_start_matches("did:key:"),
    }))
}

/// The document's services as a PLC operation names them: fragment → `{type, endpoint}`.
fn services_of(document: &DidDocument) -> Value {
    let services = document.service.iter().map(|service| {
        let fragment = fragment_of(&document.id, &service.id).unwrap_or(&service.id);
        let entry = json!({"type": service.kind, "endpoint": service.service_endpoint});
        (fragment.to_owned(), entry)
    });
    Value::Object(services.collect())
}

/// `key` read and written back as a compressed `did:key`, or why it is not one.
fn normalized(key: &str) -> Result<String, PlcError> {
    PublicKey::from_did_key(key)
        .map(|key| did_key(&key))
        .map_err(|error| PlcError::BadKey {
            reason: error.to_string(),
        })
}

fn did_key(key: &PublicKey) -> String {
    format!("did:key:{}", key.to_multibase())
}

/// The fragment of `id` (`#x` or `<did>#x`) in the document of `did`.
fn fragment_of<'a>(did: &str, id: &'a str) -> Option<&'a str> {
    id.strip_prefix(did).unwrap_or(id).strip_prefix('#')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attestation::{AttestationKey, Curve};

    const DID: &str = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
    const ATPROTO: &str = "did:key:zQ3shunBKsXixLxKtC5qeSG9E4J5RkGN57im31pcTzbNQnm5w";

    fn document(extra: &[Value]) -> DidDocument {
        let mut methods = vec![json!({
            "id": format!("{DID}#atproto"),
            "type": "Multikey",
            "controller": DID,
            "publicKeyMultibase": ATPROTO.trim_start_matches("did:key:"),
        })];
        methods.extend_from_slice(extra);
        serde_json::from_value(json!({
            "id": DID,
            "alsoKnownAs": ["at://alice.test"],
            "verificationMethod": methods,
            "service": [{
                "id": "#atproto_pds",
                "type": "AtprotoPersonalDataServer",
                "serviceEndpoint": "https://pds.example.com"
            }]
        }))
        .unwrap()
    }

    fn market_key() -> String {
        AttestationKey::generate(Curve::P256).did_key()
    }

    fn listed(key: &str) -> Value {
        json!({
            "id": "#attestation",
            "type": "Multikey",
            "controller": DID,
            "publicKeyMultibase": key.trim_start_matches("did:key:"),
        })
    }

    #[test]
    fn publishing_adds_the_key_under_attestation_and_keeps_the_atproto_key() {
        let key = market_key();
        let desired = desired_methods(&document(&[]), &KeyChange::Publish(key.clone())).unwrap();
        let expected: VerificationMethods = [
            ("atproto".to_owned(), ATPROTO.to_owned()),
            ("attestation".to_owned(), key),
        ]
        .into();
        assert_eq!(desired, expected);
    }

    #[test]
    fn publishing_again_replaces_and_removing_takes_out_only_the_market_key() {
        let (old, new) = (market_key(), market_key());
        let other = json!({"id": "#other", "type": "Multikey", "publicKeyMultibase":
            market_key().trim_start_matches("did:key:")});
        let doc = document(&[listed(&old), other]);
        let replaced = desired_methods(&doc, &KeyChange::Publish(new.clone())).unwrap();
        assert_eq!(replaced["attestation"], new);
        assert_eq!(replaced["atproto"], ATPROTO);
        assert!(replaced.contains_key("other"));
        let removed = desired_methods(&doc, &KeyChange::Remove).unwrap();
        assert_eq!(removed.keys().collect::<Vec<_>>(), vec!["atproto", "other"]);
    }

    #[test]
    fn a_key_the_app_cannot_read_refuses_the_change_rather_than_dropping_it() {
        let strange = json!({"id": "#ed", "type": "Ed25519VerificationKey2020",
            "publicKeyMultibase": "z6Mk"});
        let refused = desired_methods(&document(&[strange]), &KeyChange::Remove);
        assert!(matches!(refused, Err(PlcError::UnreadableMethod { id, .. }) if id == "#ed"));
        let bad = desired_methods(&document(&[]), &KeyChange::Publish("zQ3s".into()));
        assert!(matches!(bad, Err(PlcError::BadKey { .. })));
    }

    #[test]
    fn the_listing_says_whether_the_key_asked_about_is_the_one_under_attestation() {
        let (key, other) = (market_key(), market_key());
        assert_eq!(listing(&document(&[]), &key), Listing::Absent);
        assert_eq!(listing(&document(&[listed(&key)]), &key), Listing::Listed);
        assert_eq!(
            listing(&document(&[listed(&other)]), &key),
            Listing::Other(other)
        );
    }

    #[test]
    fn keys_in_the_older_suites_are_carried_over_as_did_keys() {
        // The sandbox's PLC directory serves its keys in the 2019 suites, the point uncompressed.
        let key = PublicKey::from_did_key(ATPROTO).unwrap();
        let PublicKey::K256(point) = &key else {
            unreachable!("the constant is a secp256k1 key")
        };
        let bare = point.to_encoded_point(false);
        let legacy = json!({"id": "#atproto", "type": "EcdsaSecp256k1VerificationKey2019",
            "publicKeyMultibase": format!("z{}", bs58::encode(bare.as_bytes()).into_string())});
        let mut doc = document(&[]);
        doc.verification_method = vec![serde_json::from_value(legacy).unwrap()];
        assert_eq!(current_methods(&doc).unwrap()["atproto"], ATPROTO);
    }

    #[test]
    fn an_operation_that_changes_more_than_the_methods_asked_is_refused() {
        let doc = document(&[]);
        let desired = desired_methods(&doc, &KeyChange::Publish(market_key())).unwrap();
        let good = json!({
            "type": "plc_operation", "prev": "bafyprev", "sig": "…",
            "rotationKeys": ["did:key:zQ3shrotation"],
            "verificationMethods": desired,
            "alsoKnownAs": ["at://alice.test"],
            "services": {"atproto_pds": {"type": "AtprotoPersonalDataServer",
                "endpoint": "https://pds.example.com"}},
        });
        assert_eq!(check_operation(&good, &doc, &desired), Ok(()));
        let mut moved = good.clone();
        moved["services"]["atproto_pds"]["endpoint"] = json!("https://elsewhere.example");
        let mut renamed = good.clone();
        renamed["alsoKnownAs"] = json!(["at://mallory.test"]);
        let mut other_keys = good;
        other_keys["verificationMethods"]["attestation"] = json!(market_key());
        for refused in [moved, renamed, other_keys] {
            assert!(matches!(
                check_operation(&refused, &doc, &desired),
                Err(PlcError::UnexpectedOperation { .. })
            ));
        }
    }

    #[test]
    fn a_did_web_owner_is_shown_the_entry_the_public_market_reads() {
        let key = market_key();
        let entry = did_web_entry("did:web:example.com", &key).unwrap();
        assert_eq!(entry["id"], "did:web:example.com#attestation");
        assert_eq!(entry["type"], "Multikey");
        assert_eq!(
            format!("did:key:{}", entry["publicKeyMultibase"].as_str().unwrap()),
            key
        );
    }
}

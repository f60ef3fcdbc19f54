//! Reading records the bidder is told about: an at-uri names its author's repo, the author's
//! DID document (resolved through the local PLC) names the PDS, and
//! `com.atproto.repo.getRecord` there gives the record; a strong reference's `cid` must be the
//! CID the PDS answers, so the bidder acts on exactly the version it was shown.
//!
//! Invariant: [`fetch`] never answers a record of another version, author or collection than
//! the reference names.

use serde_json::Value;
use swdesk_atproto::identity::Resolver;
use swdesk_core::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::market::badge_blue_key;
use swdesk_lexicon::syntax::AtUri;

use crate::account::{send, xrpc_url};
use crate::xrpc::Refusal;

/// A record as its author's PDS holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// Its at-uri and CID.
    pub reference: StrongRef,
    /// The author's DID (the repo).
    pub author: String,
    /// Its collection NSID.
    pub collection: String,
    /// The record's value (with its `$type`).
    pub value: Value,
}

/// The parts of a record's at-uri: author DID, collection, record key.
pub fn parts(uri: &str) -> Result<(String, String, String), Refusal> {
    let not_a_record = || Refusal::invalid(format!("{uri:?} is not the at-uri of a record"));
    let parsed: AtUri = uri.parse().map_err(|_| not_a_record())?;
    let collection = parsed.collection().ok_or_else(not_a_record)?.to_owned();
    let rkey = parsed.rkey().ok_or_else(not_a_record)?.to_owned();
    let author = parsed.authority().to_owned();
    if !author.starts_with("did:") {
        return Err(not_a_record());
    }
    Ok((author, collection, rkey))
}

/// The record `reference` names, from its author's PDS, at exactly that CID.
pub async fn fetch(
    resolver: &Resolver,
    http: &reqwest::Client,
    reference: &StrongRef,
) -> Result<Fetched, Refusal> {
    let (author, collection, rkey) = parts(&reference.uri)?;
    let answer = get_record(resolver, http, &author, &collection, &rkey)
        .await
        .map_err(|error| Refusal::invalid(format!("{} cannot be read: {error}", reference.uri)))?;
    let found = answer["cid"].as_str().unwrap_or_default();
    if found != reference.cid {
        return Err(Refusal::invalid(format!(
            "{} is at {found}, not at the cid given ({})",
            reference.uri, reference.cid
        )));
    }
    Ok(Fetched {
        reference: reference.clone(),
        author,
        collection,
        value: answer["value"].clone(),
    })
}

/// `com.atproto.repo.getRecord` of `author`'s record at its PDS, as the PDS answers it.
async fn get_record(
    resolver: &Resolver,
    http: &reqwest::Client,
    author: &str,
    collection: &str,
    rkey: &str,
) -> Result<Value, String> {
    let identity = resolver
        .resolve_did(author)
        .await
        .map_err(|error| format!("the author {author} cannot be resolved: {error}"))?;
    let url = xrpc_url(&identity.pds, "com.atproto.repo.getRecord");
    let query = [("repo", author), ("collection", collection), ("rkey", rkey)];
    send("com.atproto.repo.getRecord", http.get(url).query(&query))
        .await
        .map_err(|error| error.to_string())
}

/// Whether `fetched` carries inline signatures that verify as its author's, each by a key the
/// author publishes (`market.badgeBlueKey` keyed by the `did:key`); otherwise `InvalidRequest`
/// naming the problem.
pub async fn check_attested(
    resolver: &Resolver,
    http: &reqwest::Client,
    fetched: &Fetched,
    what: &str,
) -> Result<(), Refusal> {
    for key in check_signed(&fetched.value, &fetched.author, what)? {
        let published = get_record(resolver, http, &fetched.author, badge_blue_key::NSID, &key)
            .await
            .is_ok_and(|answer| answer["value"]["key"].as_str() == Some(key.as_str()));
        if !published {
            return Err(Refusal::invalid(format!(
                "the {what} is signed with {key}, a key its author {} does not publish",
                fetched.author
            )));
        }
    }
    Ok(())
}

/// A strong reference read from `value[field]`, or `InvalidRequest`.
pub fn strong_ref(value: &Value, field: &str) -> Result<StrongRef, Refusal> {
    let reference = &value[field];
    match (reference["uri"].as_str(), reference["cid"].as_str()) {
        (Some(uri), Some(cid)) => Ok(StrongRef {
            uri: uri.to_owned(),
            cid: cid.to_owned(),
        }),
        _ => Err(Refusal::invalid(format!(
            "the record has no strong reference {field:?}"
        ))),
    }
}

/// Whether `value` carries at least one inline signature and every inline signature verifies
/// as a record of `author`'s repo (their keys); otherwise `InvalidRequest` naming the problem.
pub fn check_signed(value: &Value, author: &str, what: &str) -> Result<Vec<String>, Refusal> {
    let checks = swdesk_atproto::attestation::verify_inline_signatures(value, author);
    if checks.is_empty() {
        return Err(Refusal::invalid(format!(
            "the {what} carries no inline signature"
        )));
    }
    match checks.iter().find_map(|check| check.result.as_ref().err()) {
        Some(problem) => Err(Refusal::invalid(format!(
            "the {what}'s signature does not verify: {problem}"
        ))),
        None => Ok(checks.into_iter().map(|check| check.key).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_uri_splits_into_author_collection_and_key() {
        let parts = parts("at://did:plc:abc/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2a");
        assert_eq!(
            parts.ok(),
            Some((
                "did:plc:abc".into(),
                "com.publicdomainrelay.temp.market.rfp".into(),
                "3lbjpbyznfc2a".into()
            ))
        );
        assert!(super::parts("at://did:plc:abc/com.publicdomainrelay.temp.market.rfp").is_err());
        assert!(
            super::parts("at://alice.test/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2a")
                .is_err()
        );
    }

    #[test]
    fn an_unsigned_record_is_refused() {
        let value =
            serde_json::json!({"$type": "com.publicdomainrelay.temp.market.rfp", "signatures": []});
        assert!(check_signed(&value, "did:plc:abc", "RFP").is_err());
    }
}

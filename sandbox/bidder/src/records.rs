//! Reading records the bidder is told about: an at-uri names its author's repo, the author's
//! DID document (resolved through the local PLC) names the PDS, and
//! `com.atproto.repo.getRecord` there gives the record; a strong reference's `cid` must be the
//! CID the PDS answers, so the bidder acts on exactly the version it was shown. Every call goes
//! through the resolver's outbound client, under the sandbox's network policy (a public-market
//! peer's `*.localhost` PDS is reached through the ingress the sandbox names, nowhere else).
//!
//! A signed record's keys are bound to its author by the market's rule
//! ([`swdesk_auction::trust::bind`]): published as a `market.badgeBlueKey` in its repo
//! (ours), or listed by its author's or its signature issuer's DID document (the public
//! implementation's). A strict bidder (`Behaviour::bind_keys`) takes only the DID documents'
//! word, as the public bidder's `BIND_KEYS=1` does.
//!
//! Invariant: [`fetch`] never answers a record of another version, author or collection than
//! the reference names.

use serde_json::Value;
use swdesk_atproto::attestation::SignatureCheck;
use swdesk_atproto::identity::{IdentityError, Resolver};
use swdesk_auction::compute::StrongRef;
use swdesk_auction::trust::{KeyDirectory, bind};
use swdesk_kernel::retry::transient_status;
use swdesk_lexicon::com::publicdomainrelay::temp::market::badge_blue_key;
use swdesk_lexicon::syntax::AtUri;

use crate::account::{AccountError, send, xrpc_url};
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
pub async fn fetch(resolver: &Resolver, reference: &StrongRef) -> Result<Fetched, Refusal> {
    let (author, collection, rkey) = parts(&reference.uri)?;
    let answer = get_record(resolver, &author, &collection, &rkey)
        .await
        .map_err(|refusal| refusal.about(&format!("{} cannot be read", reference.uri)))?;
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

/// `com.atproto.repo.getRecord` of `author`'s record at its PDS, as the PDS answers it. A PLC
/// or PDS that does not answer for now is an `UpstreamFailure` (the caller may try again); only
/// what the record or its author is makes the call invalid.
async fn get_record(
    resolver: &Resolver,
    author: &str,
    collection: &str,
    rkey: &str,
) -> Result<Value, Refusal> {
    let identity = resolver.resolve_did(author).await.map_err(|error| {
        let reason = format!("the author {author} cannot be resolved: {error}");
        match error {
            IdentityError::DidUnreachable { .. } => Refusal::upstream(reason),
            _ => Refusal::invalid(reason),
        }
    })?;
    let url = xrpc_url(&identity.pds, "com.atproto.repo.getRecord");
    let request = resolver.http().get(url.as_str()).map_err(|refused| {
        Refusal::invalid(format!("the PDS of {author} cannot be called: {refused}"))
    })?;
    let query = [("repo", author), ("collection", collection), ("rkey", rkey)];
    send("com.atproto.repo.getRecord", request.query(&query))
        .await
        .map_err(|error| match error {
            AccountError::Unreachable { .. } => Refusal::upstream(error.to_string()),
            AccountError::Refused { status, .. } if transient_status(status) => {
                Refusal::upstream(error.to_string())
            }
            _ => Refusal::invalid(error.to_string()),
        })
}

/// Whether `fetched` carries inline signatures that verify as its author's, each by a key
/// bound to its author (see the module doc; by DID documents only when `documents_only`);
/// otherwise `InvalidRequest` naming the problem.
pub async fn check_attested(
    resolver: &Resolver,
    fetched: &Fetched,
    what: &str,
    documents_only: bool,
) -> Result<(), Refusal> {
    let directory = Directory {
        resolver,
        documents_only,
    };
    for signer in check_signed(&fetched.value, &fetched.author, what)? {
        let bound = bind(
            &directory,
            &fetched.author,
            &signer.key,
            signer.issuer.as_deref(),
        )
        .await?;
        if bound.is_none() {
            let strict = if documents_only {
                "; this bidder binds keys by DID documents only"
            } else {
                ""
            };
            return Err(Refusal::invalid(format!(
                "the {what} is signed with {}, a key its author {} neither publishes nor lists \
                 in its DID document (nor does an issuer tied to it){strict}",
                signer.key, fetched.author
            )));
        }
    }
    Ok(())
}

/// Keys as the bidder looks them up: authors' repos on their PDSes, DID documents through the
/// resolver.
struct Directory<'a> {
    resolver: &'a Resolver,
    /// A strict bidder's: keys an author's repo publishes do not count.
    documents_only: bool,
}

impl KeyDirectory for Directory<'_> {
    type Error = Refusal;

    async fn publishes(&self, author: &str, key: &str) -> Result<bool, Refusal> {
        if self.documents_only {
            return Ok(false);
        }
        match get_record(self.resolver, author, badge_blue_key::NSID, key).await {
            Ok(answer) => Ok(answer["value"]["key"].as_str() == Some(key)),
            Err(refusal) if refusal.status.is_server_error() => Err(refusal),
            Err(_) => Ok(false),
        }
    }

    async fn document_lists(&self, did: &str, key: &str) -> bool {
        match self.resolver.did_document(did).await {
            Ok(document) => document.did_keys().iter().any(|listed| listed == key),
            Err(error) => {
                tracing::debug!(%did, %error, "no DID document to bind a key with");
                false
            }
        }
    }

    async fn document_endpoints(&self, did: &str) -> Vec<String> {
        match self.resolver.did_document(did).await {
            Ok(document) => document.service_endpoints(),
            Err(error) => {
                tracing::debug!(%did, %error, "no DID document to tie an issuer with");
                Vec::new()
            }
        }
    }
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
/// as a record of `author`'s repo (each check, with its key and issuer); otherwise
/// `InvalidRequest` naming the problem.
pub fn check_signed(
    value: &Value,
    author: &str,
    what: &str,
) -> Result<Vec<SignatureCheck>, Refusal> {
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
        None => Ok(checks),
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the sandbox bidder's tests reach DID documents on loopback as it does"
)]
mod tests {
    use super::*;
    use swdesk_atproto::identity::IdentityConfig;

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

    /// A PLC that does not answer is the bidder's trouble, not the caller's: an
    /// `UpstreamFailure` the caller may retry, never an `InvalidRequest` that ends its flow.
    #[tokio::test]
    async fn an_unreachable_directory_is_an_upstream_failure_not_an_invalid_request() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let plc: url::Url = format!("http://{}", closed.local_addr().unwrap())
            .parse()
            .unwrap();
        drop(closed);
        let identity = IdentityConfig::sandbox(plc.clone(), plc);
        let http = swdesk_net::Outbound::new(identity.net_policy().with_any_loopback_port());
        let resolver = Resolver::new(identity, http);
        let reference = StrongRef {
            uri: "at://did:plc:abc/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2a".into(),
            cid: "bafyreiclljjrhpwdk6jyeeei6t2tsmao4y6bq54mbogbqr2yyizwn7hwri".into(),
        };
        let refusal = fetch(&resolver, &reference).await.unwrap_err();
        assert_eq!(
            (refusal.status.as_u16(), refusal.error.as_str()),
            (502, "UpstreamFailure"),
            "{refusal:?}"
        );
        assert!(
            refusal.message.starts_with("at://did:plc:abc/"),
            "{refusal:?}"
        );
    }
}

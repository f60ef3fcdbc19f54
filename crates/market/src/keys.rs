//! Binding attestation keys to their repos, as the market's two dialects do. An inline
//! signature names a `did:key`; a verifier trusts it for a record of an author's ([`binding`])
//! when the author's repo publishes the key as a `market.badgeBlueKey` record keyed by the
//! `did:key` (ours), or when the author's DID document lists it among its verification methods
//! (the public implementation's `#attestation`), or when the signature's `issuer` is tied to
//! the author and its DID document lists it: the rule, and which issuers are tied, is the
//! auction's ([`swdesk_auction::trust`]). The requester publishes its own key before its
//! first signed record goes out.
//!
//! Publishing is idempotent by construction: the record key is the `did:key`, and the record is
//! written only when it is missing or names another key, so a restart never rewrites it.

use serde_json::Value;
use swdesk_atproto::attestation::SignatureCheck;
pub use swdesk_auction::trust::KeyBinding;
use swdesk_auction::trust::{KeyDirectory, bind};
use swdesk_kernel::repo::{RecordRepo, RepoError, Swap};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::com::publicdomainrelay::temp::market::badge_blue_key::{self, BadgeBlueKey};

use crate::peers::Peers;

/// Why a key's publication could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The `did:key` cannot be a record key or a record uri.
    #[error("the key {did_key} cannot be looked up: {problem}")]
    Unaddressable {
        /// The key.
        did_key: String,
        /// Why.
        problem: String,
    },
    /// The repo did not answer.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// Publishes `did_key` in the owner's repo unless it is published there already.
pub async fn publish<R: RecordRepo>(
    repo: &R,
    did_key: &str,
    now: Timestamp,
) -> Result<(), KeyError> {
    if is_published(repo, repo.owner(), did_key).await? {
        return Ok(());
    }
    let record = BadgeBlueKey {
        key: did_key.to_owned(),
        created_at: now.to_rfc3339(),
        ..BadgeBlueKey::default()
    };
    let mut value = serde_json::to_value(&record).map_err(|error| KeyError::Unaddressable {
        did_key: did_key.to_owned(),
        problem: error.to_string(),
    })?;
    value["$type"] = Value::from(badge_blue_key::NSID);
    repo.put(
        badge_blue_key::NSID,
        &record_key(did_key)?,
        &value,
        Swap::Any,
    )
    .await?;
    Ok(())
}

/// Whether `author`'s repo publishes `did_key`.
pub async fn is_published<R: RecordRepo>(
    repo: &R,
    author: &str,
    did_key: &str,
) -> Result<bool, KeyError> {
    let uri =
        RecordUri::new(author, badge_blue_key::NSID, &record_key(did_key)?).map_err(|error| {
            KeyError::Unaddressable {
                did_key: did_key.to_owned(),
                problem: error.to_string(),
            }
        })?;
    let found = repo.get(&uri).await?;
    Ok(found.is_some_and(|record| record.value["key"].as_str() == Some(did_key)))
}

/// How `signer`'s key is bound to `author`, or `None` when it is not (the rule:
/// [`swdesk_auction::trust::bind`]).
pub async fn binding<R: RecordRepo, P: Peers>(
    repo: &R,
    peers: &P,
    author: &str,
    signer: &SignatureCheck,
) -> Result<Option<KeyBinding>, KeyError> {
    let directory = Directory { repo, peers };
    bind(&directory, author, &signer.key, signer.issuer.as_deref()).await
}

/// The owner's repo (which reads any author's published keys) and the peers' DID documents.
struct Directory<'a, R, P> {
    repo: &'a R,
    peers: &'a P,
}

impl<R: RecordRepo, P: Peers> KeyDirectory for Directory<'_, R, P> {
    type Error = KeyError;

    async fn publishes(&self, author: &str, key: &str) -> Result<bool, KeyError> {
        is_published(self.repo, author, key).await
    }

    async fn document_lists(&self, did: &str, key: &str) -> bool {
        match self.peers.document_keys(did).await {
            Ok(keys) => keys.iter().any(|listed| listed == key),
            Err(error) => {
                tracing::debug!(%did, %error, "no DID document to bind a key with");
                false
            }
        }
    }

    async fn document_endpoints(&self, did: &str) -> Vec<String> {
        self.peers
            .document_endpoints(did)
            .await
            .unwrap_or_else(|error| {
                tracing::debug!(%did, %error, "no DID document to tie an issuer with");
                Vec::new()
            })
    }
}

/// Those of `keys` (the keys that signed a record of `author`'s) that `author`'s repo does not
/// publish.
pub async fn unpublished_keys<R: RecordRepo>(
    repo: &R,
    author: &str,
    keys: Vec<String>,
) -> Result<Vec<String>, KeyError> {
    let mut unpublished = Vec::new();
    for key in keys {
        if !unpublished.contains(&key) && !is_published(repo, author, &key).await? {
            unpublished.push(key);
        }
    }
    Ok(unpublished)
}

fn record_key(did_key: &str) -> Result<Rkey, KeyError> {
    Rkey::parse(did_key).map_err(|error| KeyError::Unaddressable {
        did_key: did_key.to_owned(),
        problem: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use swdesk_atproto::attestation::{AttestationKey, Curve, sign_record, verified_keys};
    use swdesk_kernel::repo::memory::MemoryRepo;

    const OWNER: &str = "did:plc:owner";

    fn now() -> Timestamp {
        Timestamp::parse_rfc3339("2026-12-03T10:00:00Z").expect("time")
    }

    #[tokio::test]
    async fn a_key_is_published_once_under_its_did_key() {
        let repo = MemoryRepo::new(OWNER);
        let key = AttestationKey::generate(Curve::P256).did_key();
        assert!(!is_published(&repo, OWNER, &key).await.expect("reads"));
        publish(&repo, &key, now()).await.expect("published");
        publish(&repo, &key, now()).await.expect("published again");
        assert!(is_published(&repo, OWNER, &key).await.expect("reads"));
        let page = repo
            .list(OWNER, badge_blue_key::NSID, None, 10)
            .await
            .expect("lists");
        assert_eq!(page.records.len(), 1);
        assert_eq!(page.records[0].uri.rkey().to_string(), key);
    }

    fn signers(record: &Value) -> Vec<String> {
        verified_keys(record, OWNER).expect("signed")
    }

    #[tokio::test]
    async fn a_signature_by_an_unpublished_key_is_named() {
        let repo = MemoryRepo::new(OWNER);
        let published = AttestationKey::generate(Curve::P256);
        let other = AttestationKey::generate(Curve::K256);
        publish(&repo, &published.did_key(), now())
            .await
            .expect("published");
        let record = serde_json::json!({"$type": "com.example.record", "text": "hi"});
        let once = sign_record(&record, &published, OWNER, "2026-12-03T10:00:00Z").expect("signs");
        assert_eq!(
            unpublished_keys(&repo, OWNER, signers(&once))
                .await
                .expect("reads"),
            Vec::<String>::new()
        );
        let twice = sign_record(&once, &other, OWNER, "2026-12-03T10:00:00Z").expect("signs");
        assert_eq!(
            unpublished_keys(&repo, OWNER, signers(&twice))
                .await
                .expect("reads"),
            vec![other.did_key()]
        );
    }
}

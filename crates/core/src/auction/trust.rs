//! How far a peer's record was checked before the flow acted on it, kept with the bid or the
//! receipt so the window can say it: whether its bytes were proven by its repo's signed commit
//! ([`Provenance`]) and how each key that signed it is bound to its author ([`KeyBinding`]: the
//! market's two dialects bind keys differently, and the owner should see which one held).
//!
//! The rule of which binding counts lives here, once, in [`bind`]: the requester (market) and
//! the sandbox bidder both look keys up through their own [`KeyDirectory`] and ask it.
//!
//! Invariant: a check is written once, when the record is fetched and counted, from what was
//! verified then; the peer's own words in it (why a record is unproven) are cut by the adapter
//! before they get here.

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::repo::Provenance;

/// How a key that signed a record of an author's is bound to that author.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum KeyBinding {
    /// The author's repo publishes it as a `market.badgeBlueKey` (this app's binding).
    Published {
        /// The `did:key`.
        key: String,
    },
    /// The author's DID document lists it (the public implementation's binding).
    AuthorDocument {
        /// The `did:key`.
        key: String,
    },
    /// The DID document of the signature's `issuer` lists it (the public implementation
    /// signing through an ingress DID).
    IssuerDocument {
        /// The `did:key`.
        key: String,
        /// The issuer whose document lists it.
        issuer: String,
    },
}

impl KeyBinding {
    /// The key bound.
    pub fn key(&self) -> &str {
        match self {
            Self::Published { key }
            | Self::AuthorDocument { key }
            | Self::IssuerDocument { key, .. } => key,
        }
    }

    /// Where the binding was found, in words for the owner.
    pub fn describe(&self) -> String {
        match self {
            Self::Published { .. } => "a key the author's repo publishes".to_owned(),
            Self::AuthorDocument { .. } => "a key the author's DID document lists".to_owned(),
            Self::IssuerDocument { issuer, .. } => {
                format!("a key the DID document of its issuer {issuer} lists")
            }
        }
    }
}

/// Where a verifier looks signing keys up: an author's published keys and the keys DID
/// documents list.
pub trait KeyDirectory: Sync {
    /// Why a lookup could not be made (the author's repo did not answer).
    type Error;

    /// Whether `author`'s repo publishes `key` as a `market.badgeBlueKey` keyed by it.
    fn publishes(
        &self,
        author: &str,
        key: &str,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;

    /// Whether `did`'s document lists `key` among its verification methods (a document that
    /// does not resolve lists nothing).
    fn document_lists(&self, did: &str, key: &str) -> impl Future<Output = bool> + Send;
}

/// How `key`, which signed a record of `author`'s naming `issuer` in its signature, is bound to
/// `author`, in the order the dialects are tried: published by the author's repo (ours), listed
/// by the author's DID document, or by the DID document of a signature issuer other than the
/// author (the public implementation's). `None` when no binding holds.
pub async fn bind<D: KeyDirectory>(
    directory: &D,
    author: &str,
    key: &str,
    issuer: Option<&str>,
) -> Result<Option<KeyBinding>, D::Error> {
    let key = key.to_owned();
    if directory.publishes(author, &key).await? {
        return Ok(Some(KeyBinding::Published { key }));
    }
    if directory.document_lists(author, &key).await {
        return Ok(Some(KeyBinding::AuthorDocument { key }));
    }
    match issuer {
        Some(issuer) if issuer != author && directory.document_lists(issuer, &key).await => {
            Ok(Some(KeyBinding::IssuerDocument {
                key,
                issuer: issuer.to_owned(),
            }))
        }
        _ => Ok(None),
    }
}

/// What was verified of a peer's record when it was counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordCheck {
    /// Whether its bytes were proven by its repo's signed commit.
    pub provenance: Provenance,
    /// How each key that signed it is bound to its author (empty for an unsigned record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<KeyBinding>,
    /// The records it links to (and, for a receipt, those of the winning bid), as fetched:
    /// kept raw with their cids, known collection or not, at most [`LINKED_CAP`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked: Vec<LinkedRecord>,
}

/// The most linked records a check keeps.
pub const LINKED_CAP: usize = 8;
/// The most bytes of a linked record's value kept (one cut line of JSON).
pub const LINKED_VALUE_MAX: usize = 8 * 1024;

/// A record a peer's record links to, kept as fetched: never refused for being of a collection
/// this app has no lexicon for, shown raw for the owner to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedRecord {
    /// Which link named it (`payload`, `config`, `bid.payload`).
    pub link: String,
    /// Its at-uri and cid, as the link names them.
    pub uri: String,
    /// The cid the link names (and the fetched record has).
    pub cid: String,
    /// Its collection.
    pub collection: String,
    /// Whether this app has a lexicon for the collection.
    pub known: bool,
    /// Proven by its repo, or not; `None` when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Its value as compact JSON, cut to [`LINKED_VALUE_MAX`] bytes and marked when cut; or
    /// why it could not be read.
    pub value: String,
}

impl RecordCheck {
    /// Whether the record's bytes were proven.
    pub fn is_proven(&self) -> bool {
        matches!(self.provenance, Provenance::Proven { .. })
    }

    /// The check in one line for the owner: "proven by the repo's signed commit (rev …); signed
    /// with a key the author's repo publishes".
    pub fn describe(&self) -> String {
        let proof = match &self.provenance {
            Provenance::Proven { rev } => {
                format!("proven by its repo's signed commit (rev {rev})")
            }
            Provenance::Unproven { why } => format!("unproven: {why}"),
        };
        let keys: Vec<String> = self.bindings.iter().map(KeyBinding::describe).collect();
        if keys.is_empty() {
            proof
        } else {
            format!("{proof}; signed with {}", keys.join(" and "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of fixed answers: what each author publishes, what each document lists.
    struct Fixed {
        published: Vec<(&'static str, &'static str)>,
        listed: Vec<(&'static str, &'static str)>,
    }

    impl KeyDirectory for Fixed {
        type Error = ();

        async fn publishes(&self, author: &str, key: &str) -> Result<bool, ()> {
            Ok(self.published.contains(&(author, key)))
        }

        async fn document_lists(&self, did: &str, key: &str) -> bool {
            self.listed.contains(&(did, key))
        }
    }

    /// Runs a future whose every step is ready at once (the fixed directory's).
    fn ready<T>(future: impl Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(value) => value,
            std::task::Poll::Pending => unreachable!("the fixed directory never waits"),
        }
    }

    #[test]
    fn a_key_binds_by_publication_first_then_the_authors_document_then_the_issuers() {
        let directory = Fixed {
            published: vec![("did:plc:a", "did:key:zPub")],
            listed: vec![
                ("did:plc:a", "did:key:zPub"),
                ("did:plc:a", "did:key:zDoc"),
                ("did:web:ingress", "did:key:zIssuer"),
                ("did:web:ingress", "did:key:zDoc"),
            ],
        };
        let bound = |key: &str, issuer: Option<&str>| {
            ready(bind(&directory, "did:plc:a", key, issuer)).expect("the directory answers")
        };
        assert_eq!(
            bound("did:key:zPub", None),
            Some(KeyBinding::Published {
                key: "did:key:zPub".into()
            })
        );
        assert_eq!(
            bound("did:key:zDoc", Some("did:web:ingress")),
            Some(KeyBinding::AuthorDocument {
                key: "did:key:zDoc".into()
            })
        );
        assert_eq!(
            bound("did:key:zIssuer", Some("did:web:ingress")),
            Some(KeyBinding::IssuerDocument {
                key: "did:key:zIssuer".into(),
                issuer: "did:web:ingress".into()
            })
        );
        assert_eq!(bound("did:key:zIssuer", None), None, "no issuer named");
        assert_eq!(bound("did:key:zStranger", Some("did:web:ingress")), None);
    }

    #[test]
    fn a_check_reads_as_one_line_naming_the_proof_and_each_binding() {
        let check = RecordCheck {
            provenance: Provenance::Proven { rev: "3l2".into() },
            bindings: vec![
                KeyBinding::Published {
                    key: "did:key:zA".into(),
                },
                KeyBinding::IssuerDocument {
                    key: "did:key:zB".into(),
                    issuer: "did:web:ingress.example".into(),
                },
            ],
            linked: Vec::new(),
        };
        assert!(check.is_proven());
        assert_eq!(
            check.describe(),
            "proven by its repo's signed commit (rev 3l2); signed with a key the author's repo \
             publishes and a key the DID document of its issuer did:web:ingress.example lists"
        );
        let unproven = RecordCheck {
            provenance: Provenance::Unproven {
                why: "the PDS serves no proof".into(),
            },
            bindings: Vec::new(),
            linked: Vec::new(),
        };
        assert!(!unproven.is_proven());
        assert_eq!(unproven.describe(), "unproven: the PDS serves no proof");
    }

    #[test]
    fn a_check_keeps_its_form_through_the_store() {
        let check = RecordCheck {
            provenance: Provenance::Unproven {
                why: "JSON, not a CAR".into(),
            },
            bindings: vec![KeyBinding::AuthorDocument {
                key: "did:key:zA".into(),
            }],
            linked: Vec::new(),
        };
        let stored = serde_json::to_value(&check).expect("serializes");
        assert_eq!(
            stored,
            serde_json::json!({
                "provenance": {"kind": "unproven", "why": "JSON, not a CAR"},
                "bindings": [{"kind": "authorDocument", "key": "did:key:zA"}]
            })
        );
        assert_eq!(
            serde_json::from_value::<RecordCheck>(stored).ok(),
            Some(check)
        );
    }
}

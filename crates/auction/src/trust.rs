//! How far a peer's record was checked before the flow acted on it, kept with the bid or the
//! receipt so the window can say it: whether its bytes were proven by its repo's signed commit
//! ([`Provenance`]) and how each key that signed it is bound to its author ([`KeyBinding`]: the
//! market's two dialects bind keys differently, and the owner should see which one held).
//!
//! The rule of which binding counts lives here, once, in [`bind`]: the requester (market) and
//! the sandbox bidder both look keys up through their own [`KeyDirectory`] and ask it. A key
//! that signed a record in an author's repo counts for that author only when
//! - the author's repo publishes it (`market.badgeBlueKey` keyed by the `did:key`: ours), or
//! - the author's DID document lists it among its verification methods (the public
//!   implementation's `#attestation` method), or
//! - the signature's `issuer` is provably tied to the author and its document lists it. The one
//!   tie: the issuer is a host-only `did:web:<host>` (port as `%3A`) and the author's own DID
//!   document names `<host>` as the host of one of its service endpoints ([`is_tied`]). The
//!   author's document, signed under its rotation keys, chose that host; a PDS host, which can
//!   write a `market.badgeBlueKey` anyway, gains nothing by it.
//!
//! Nothing else ties: any other issuer's document, however it lists the key, vouches for
//! nothing about the author. In particular the public implementation's ingress DID,
//! `did:web:did-key-<did:key with ':' as '-', lower-cased>.<relay host>`, is derived from a key
//! (in its harness a fresh ingress key, not the attestation key) and registered with the relay
//! by whoever holds that key: it is self-certifying, so it binds only when the author's
//! document names its host. The public bidder's own records bind by its DID document's
//! `#attestation` method, whatever issuer they name.
//!
//! Invariant: a check is written once, when the record is fetched and counted, from what was
//! verified then; the peer's own words in it (why a record is unproven) are cut by the adapter
//! before they get here.

use std::future::Future;

use serde::{Deserialize, Serialize};

use swdesk_kernel::repo::Provenance;

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
    /// The DID document of the signature's `issuer` lists it, and that issuer is tied to the
    /// author: its host is a service host of the author's DID document ([`is_tied`]).
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
                format!(
                    "a key the DID document of its issuer {issuer} lists, a service host the \
                     author's DID document names"
                )
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

    /// The service endpoints `did`'s document names, as written (a document that does not
    /// resolve names none).
    fn document_endpoints(&self, did: &str) -> impl Future<Output = Vec<String>> + Send;
}

/// How `key`, which signed a record of `author`'s naming `issuer` in its signature, is bound to
/// `author`, in the order the dialects are tried: published by the author's repo (ours), listed
/// by the author's DID document, or by the DID document of an issuer tied to the author (see
/// the module's rule). `None` when no binding holds.
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
    let Some(issuer) = issuer.filter(|issuer| *issuer != author) else {
        return Ok(None);
    };
    let bound =
        is_tied(directory, author, issuer).await && directory.document_lists(issuer, &key).await;
    Ok(bound.then(|| KeyBinding::IssuerDocument {
        key,
        issuer: issuer.to_owned(),
    }))
}

/// Whether `issuer` is tied to `author`: a host-only `did:web` whose host (with its port) is the
/// host of a service endpoint `author`'s DID document names.
pub async fn is_tied<D: KeyDirectory>(directory: &D, author: &str, issuer: &str) -> bool {
    let Some(host) = did_web_host(issuer) else {
        return false;
    };
    let endpoints = directory.document_endpoints(author).await;
    endpoints
        .iter()
        .filter_map(|endpoint| endpoint_host(endpoint))
        .any(|named| named.eq_ignore_ascii_case(&host))
}

/// The host (and port) of a host-only `did:web` (`did:web:example.com%3A8080`); `None` for any
/// other DID, a `did:web` with a path, or an encoding other than the port's `%3A`.
fn did_web_host(did: &str) -> Option<String> {
    let encoded = did.strip_prefix("did:web:")?;
    let host = encoded.replace("%3A", ":").replace("%3a", ":");
    let plain = !host.is_empty() && !encoded.contains(':') && !host.contains(['%', '/', '@']);
    plain.then_some(host)
}

/// The host (and port) of an `https` or `http` endpoint; `None` for anything else.
fn endpoint_host(endpoint: &str) -> Option<&str> {
    let rest = endpoint
        .strip_prefix("https://")
        .or_else(|| endpoint.strip_prefix("http://"))?;
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty() && !host.contains('@')).then_some(host)
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

    /// A directory of fixed answers: what each author publishes, what each document lists,
    /// which service endpoints each document names.
    #[derive(Default)]
    struct Fixed {
        published: Vec<(&'static str, &'static str)>,
        listed: Vec<(&'static str, &'static str)>,
        endpoints: Vec<(&'static str, &'static str)>,
    }

    impl KeyDirectory for Fixed {
        type Error = ();

        async fn publishes(&self, author: &str, key: &str) -> Result<bool, ()> {
            Ok(self.published.contains(&(author, key)))
        }

        async fn document_lists(&self, did: &str, key: &str) -> bool {
            self.listed.contains(&(did, key))
        }

        async fn document_endpoints(&self, did: &str) -> Vec<String> {
            let named = self.endpoints.iter().filter(|(named, _)| *named == did);
            named.map(|(_, endpoint)| (*endpoint).to_owned()).collect()
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

    const AUTHOR: &str = "did:plc:a";

    fn bound(directory: &Fixed, key: &str, issuer: Option<&str>) -> Option<KeyBinding> {
        ready(bind(directory, AUTHOR, key, issuer)).expect("the directory answers")
    }

    fn by_issuer(key: &str, issuer: &str) -> Option<KeyBinding> {
        Some(KeyBinding::IssuerDocument {
            key: key.into(),
            issuer: issuer.into(),
        })
    }

    #[test]
    fn a_key_binds_by_publication_first_then_the_authors_document_then_a_tied_issuers() {
        let directory = Fixed {
            published: vec![(AUTHOR, "did:key:zPub")],
            listed: vec![
                (AUTHOR, "did:key:zPub"),
                (AUTHOR, "did:key:zDoc"),
                ("did:web:ingress.example", "did:key:zIssuer"),
                ("did:web:ingress.example", "did:key:zDoc"),
            ],
            endpoints: vec![(AUTHOR, "https://ingress.example/xrpc")],
        };
        assert_eq!(
            bound(&directory, "did:key:zPub", None),
            Some(KeyBinding::Published {
                key: "did:key:zPub".into()
            })
        );
        assert_eq!(
            bound(&directory, "did:key:zDoc", Some("did:web:ingress.example")),
            Some(KeyBinding::AuthorDocument {
                key: "did:key:zDoc".into()
            })
        );
        assert_eq!(
            bound(
                &directory,
                "did:key:zIssuer",
                Some("did:web:ingress.example")
            ),
            by_issuer("did:key:zIssuer", "did:web:ingress.example")
        );
        assert_eq!(bound(&directory, "did:key:zIssuer", None), None);
        let stranger = bound(
            &directory,
            "did:key:zStranger",
            Some("did:web:ingress.example"),
        );
        assert_eq!(stranger, None, "the tied issuer does not list it");
    }

    #[test]
    fn a_third_did_vouching_for_a_key_does_not_bind_it() {
        let directory = Fixed {
            listed: vec![
                ("did:web:stranger.example", "did:key:zMallory"),
                ("did:plc:stranger", "did:key:zMallory"),
                ("did:web:stranger.example:users:a", "did:key:zMallory"),
            ],
            endpoints: vec![(AUTHOR, "https://pds.example")],
            ..Fixed::default()
        };
        for issuer in [
            "did:web:stranger.example",
            "did:plc:stranger",
            "did:web:stranger.example:users:a",
        ] {
            assert_eq!(
                bound(&directory, "did:key:zMallory", Some(issuer)),
                None,
                "{issuer}"
            );
        }
    }

    #[test]
    fn an_ingress_did_derived_from_the_key_binds_only_where_the_author_names_its_host() {
        let key = "did:key:zQ3shMallory";
        let ingress = "did:web:did-key-zq3shmallory.relay.example";
        let mut directory = Fixed {
            listed: vec![(ingress, key)],
            ..Fixed::default()
        };
        assert_eq!(
            bound(&directory, key, Some(ingress)),
            None,
            "self-certifying"
        );
        directory.endpoints = vec![(AUTHOR, "https://did-key-zq3shmallory.relay.example")];
        assert_eq!(
            bound(&directory, key, Some(ingress)),
            by_issuer(key, ingress)
        );
    }

    #[test]
    fn a_tie_compares_the_host_with_its_port() {
        let issuer = "did:web:localhost%3A7801";
        let directory = Fixed {
            listed: vec![(issuer, "did:key:zK")],
            endpoints: vec![(AUTHOR, "http://localhost:7801")],
            ..Fixed::default()
        };
        assert_eq!(
            bound(&directory, "did:key:zK", Some(issuer)),
            by_issuer("did:key:zK", issuer)
        );
        let elsewhere = Fixed {
            endpoints: vec![(AUTHOR, "http://localhost:7802")],
            ..directory
        };
        assert_eq!(bound(&elsewhere, "did:key:zK", Some(issuer)), None);
        for bad in ["did:web:", "did:web:a%2Fb", "did:web:user@host"] {
            assert_eq!(did_web_host(bad), None, "{bad}");
        }
        for bad in [
            "ftp://localhost:7801",
            "https://user@localhost:7801",
            "https://",
        ] {
            assert_eq!(endpoint_host(bad), None, "{bad}");
        }
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
             publishes and a key the DID document of its issuer did:web:ingress.example lists, \
             a service host the author's DID document names"
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

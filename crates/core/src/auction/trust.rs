//! How far a peer's record was checked before the flow acted on it, kept with the bid or the
//! receipt so the window can say it: whether its bytes were proven by its repo's signed commit
//! ([`Provenance`]) and how each key that signed it is bound to its author ([`KeyBinding`]: the
//! market's two dialects bind keys differently, and the owner should see which one held).
//!
//! Invariant: a check is written once, when the record is fetched and counted, from what was
//! verified then; the peer's own words in it (why a record is unproven) are cut by the adapter
//! before they get here.

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

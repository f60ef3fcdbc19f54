//! Record URIs: a binding (`spec.record.uri`, `status.record.uri`) names exactly one record,
//! `at://<authority>/<collection>/<rkey>`.
//!
//! Invariants: a [`RecordUri`] passed the lexicon crate's strict at-uri syntax
//! (`swdesk_lexicon::syntax::AtUri`: a DID or handle, an NSID, a record key) and has all three
//! parts, its rkey as an [`Rkey`]; it prints back as `at://authority/collection/rkey`.

use std::fmt;

use serde::{Deserialize, Serialize};
use swdesk_lexicon::syntax::AtUri;
use thiserror::Error;

use crate::rkey::Rkey;

/// A URI naming one record.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RecordUri {
    authority: String,
    collection: String,
    rkey: Rkey,
}

/// The text does not name one record.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "{text:?} is not a record URI such as at://did:plc:abc123/computer.socialweb.infra/web ({reason})"
)]
pub struct RecordUriError {
    /// The text that was given.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl RecordUri {
    /// Parses `at://<authority>/<collection>/<rkey>`.
    pub fn parse(text: &str) -> Result<Self, RecordUriError> {
        let error = |reason: String| RecordUriError {
            text: text.to_owned(),
            reason,
        };
        let uri: AtUri = text
            .parse()
            .map_err(|e: swdesk_lexicon::syntax::SyntaxError| error(e.to_string()))?;
        let (Some(collection), Some(rkey)) = (uri.collection(), uri.rkey()) else {
            return Err(error("it names no record key".to_owned()));
        };
        let rkey = Rkey::parse(rkey).map_err(|e| error(e.to_string()))?;
        let authority = uri.authority().to_owned();
        Ok(Self {
            authority,
            collection: collection.to_owned(),
            rkey,
        })
    }

    /// The URI of `rkey` in `collection` of `authority`'s repo.
    pub fn new(authority: &str, collection: &str, rkey: &Rkey) -> Result<Self, RecordUriError> {
        Self::parse(&format!("at://{authority}/{collection}/{rkey}"))
    }

    /// The repo's DID (or handle).
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The collection NSID.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// The record key.
    pub fn rkey(&self) -> &Rkey {
        &self.rkey
    }
}

impl TryFrom<String> for RecordUri {
    type Error = RecordUriError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<RecordUri> for String {
    fn from(uri: RecordUri) -> Self {
        uri.to_string()
    }
}

impl fmt::Display for RecordUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at://{}/{}/{}",
            self.authority, self.collection, self.rkey
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_uri_splits_into_its_three_parts_and_prints_back() {
        let text = "at://did:plc:abc123/computer.socialweb.infra/web-0f8e3c1a";
        let uri = RecordUri::parse(text).unwrap();
        assert_eq!(uri.authority(), "did:plc:abc123");
        assert_eq!(uri.collection(), "computer.socialweb.infra");
        assert_eq!(uri.rkey().as_str(), "web-0f8e3c1a");
        assert_eq!(uri.to_string(), text);
        let rkey = uri.rkey().clone();
        assert_eq!(
            RecordUri::new("did:plc:abc123", "computer.socialweb.infra", &rkey).unwrap(),
            uri
        );
    }

    #[test]
    fn a_uri_that_does_not_name_one_record_is_refused() {
        for bad in [
            "https://example.com/a/b",
            "at://did:plc:abc123/computer.socialweb.infra",
            "at://did:plc:abc123/computer.socialweb.infra/web/extra",
            "at://did:plc:abc123/infra/web",
            "at:///computer.socialweb.infra/web",
            "at://did:plc:abc123/computer.socialweb.infra/a b",
        ] {
            assert!(RecordUri::parse(bad).is_err(), "{bad}");
        }
    }
}

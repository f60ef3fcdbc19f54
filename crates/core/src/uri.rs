//! Record URIs (`at://<authority>/<collection>/<rkey>`) as the domain uses them: a binding
//! (`spec.record.uri`, `status.record.uri`) names exactly one record.
//!
//! Invariants: an [`AtUri`] always has all three parts; the authority is a DID or a handle
//! (checked loosely: no `/`, `?` or `#`, not empty), the collection an NSID-shaped text (at
//! least three dot-separated segments), the rkey a valid record key. It prints back exactly as
//! `at://authority/collection/rkey`.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::rkey::Rkey;

/// A URI naming one record.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AtUri {
    authority: String,
    collection: String,
    rkey: Rkey,
}

/// The text does not name one record.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{text:?} is not a record URI such as at://did:plc:abc123/computer.socialweb.infra/web")]
pub struct AtUriError {
    /// The text that was given.
    pub text: String,
}

impl AtUri {
    /// Parses `at://<authority>/<collection>/<rkey>`.
    pub fn parse(text: &str) -> Result<Self, AtUriError> {
        let error = || AtUriError {
            text: text.to_owned(),
        };
        let rest = text.strip_prefix("at://").ok_or_else(error)?;
        let mut parts = rest.split('/');
        let (Some(authority), Some(collection), Some(rkey), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(error());
        };
        if !is_authority(authority) || !is_nsid_shaped(collection) {
            return Err(error());
        }
        let rkey = Rkey::parse(rkey).map_err(|_| error())?;
        Ok(Self {
            authority: authority.to_owned(),
            collection: collection.to_owned(),
            rkey,
        })
    }

    /// The URI of `rkey` in `collection` of `authority`'s repo.
    pub fn new(authority: &str, collection: &str, rkey: Rkey) -> Result<Self, AtUriError> {
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

fn is_authority(text: &str) -> bool {
    !text.is_empty() && !text.contains(['?', '#', ' '])
}

fn is_nsid_shaped(text: &str) -> bool {
    let segments: Vec<&str> = text.split('.').collect();
    segments.len() >= 3
        && segments
            .iter()
            .all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

impl TryFrom<String> for AtUri {
    type Error = AtUriError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<AtUri> for String {
    fn from(uri: AtUri) -> Self {
        uri.to_string()
    }
}

impl fmt::Display for AtUri {
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
        let uri = AtUri::parse(text).unwrap();
        assert_eq!(uri.authority(), "did:plc:abc123");
        assert_eq!(uri.collection(), "computer.socialweb.infra");
        assert_eq!(uri.rkey().as_str(), "web-0f8e3c1a");
        assert_eq!(uri.to_string(), text);
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
            assert!(AtUri::parse(bad).is_err(), "{bad}");
        }
    }
}

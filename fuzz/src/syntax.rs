//! `syntax`: one string through every identifier check of `swdesk_lexicon::syntax` (DID, handle,
//! NSID, record key, TID, CID, at-identifier, URI, at-uri, datetime, language) and `AtUri`'s
//! parser, with the cross-checks they promise each other.
//!
//! Invariants:
//! - the length limits: DID ≤ 2048, handle ≤ 253, NSID ≤ 317, record key 1-512, TID 13, CID 8-256,
//!   at-uri and URI ≤ 8192, datetime ≤ 64;
//! - an at-identifier is exactly a DID (when it starts with `did:`) or a handle; a TID is a record
//!   key; a handle is valid in any letter case; an NSID and a CID have no whitespace;
//! - `at_uri` and `AtUri::from_str` agree; a parsed at-uri prints back the text, its authority is
//!   an at-identifier, its collection an NSID, its record key a record key, and
//!   `AtUri::record(authority, collection, rkey)` builds the same value;
//! - every at-uri and DID is a URI;
//! - a datetime that the lexicon accepts is one the domain reads (`Timestamp::parse_rfc3339`),
//!   or one outside the years the domain holds — never a syntax error.

use swdesk_kernel::timestamp::{Timestamp, TimestampError};
use swdesk_lexicon::syntax::{self, AtUri};

pub fn check(data: &[u8]) {
    let text = crate::text(data);
    check_text(&text);
}

pub fn check_text(text: &str) {
    let length = text.len();
    let did = syntax::did(text).is_ok();
    let handle = syntax::handle(text).is_ok();
    let nsid = syntax::nsid(text).is_ok();
    let rkey = syntax::record_key(text).is_ok();
    let tid = syntax::tid(text).is_ok();
    let cid = syntax::cid(text).is_ok();
    let identifier = syntax::at_identifier(text).is_ok();
    let uri = syntax::uri(text).is_ok();
    let at_uri = syntax::at_uri(text).is_ok();
    let datetime = syntax::datetime(text).is_ok();
    let _ = syntax::language(text);

    assert!(!did || length <= 2048);
    assert!(!handle || length <= 253);
    assert!(!nsid || length <= 317);
    assert!(!rkey || (1..=512).contains(&length));
    assert!(!tid || length == 13);
    assert!(!cid || (8..=256).contains(&length));
    assert!(!uri || length <= 8192);
    assert!(!at_uri || length <= 8192);
    assert!(!datetime || length <= 64);

    let expected_identifier = if text.starts_with("did:") {
        did
    } else {
        handle
    };
    assert_eq!(identifier, expected_identifier, "at-identifier {text:?}");
    assert!(!tid || rkey, "a TID that is no record key: {text:?}");
    if handle {
        for variant in [text.to_ascii_lowercase(), text.to_ascii_uppercase()] {
            assert!(syntax::handle(&variant).is_ok(), "{variant:?}");
        }
    }
    assert!(!nsid || !text.contains(char::is_whitespace));
    assert!(!cid || !text.contains(char::is_whitespace));
    assert!(!did || uri, "a DID that is no URI: {text:?}");
    assert!(!at_uri || uri, "an at-uri that is no URI: {text:?}");

    let parsed = text.parse::<AtUri>();
    assert_eq!(
        parsed.is_ok(),
        at_uri,
        "at_uri and AtUri disagree on {text:?}"
    );
    if let Ok(parsed) = parsed {
        assert_eq!(parsed.to_string(), text);
        assert!(syntax::at_identifier(parsed.authority()).is_ok());
        if let Some(collection) = parsed.collection() {
            assert!(syntax::nsid(collection).is_ok());
        }
        if let Some(key) = parsed.rkey() {
            assert!(syntax::record_key(key).is_ok());
        }
        if let (Some(collection), Some(key)) = (parsed.collection(), parsed.rkey()) {
            assert_eq!(
                AtUri::record(parsed.authority(), collection, key).as_ref(),
                Ok(&parsed)
            );
        }
        let json = serde_json::to_value(&parsed).ok();
        let back = json.and_then(|json| serde_json::from_value::<AtUri>(json).ok());
        assert_eq!(back.as_ref(), Some(&parsed));
    }

    if datetime {
        match Timestamp::parse_rfc3339(text) {
            Ok(_) | Err(TimestampError::OutOfRange { .. }) => {}
            Err(error) => panic!("a lexicon datetime the domain cannot read: {error}"),
        }
    }
}

//! `relay_grant`: a JSON answer read as a relay's `listReposByCollection` page by
//! `swdesk_market::peers::listed_page`, and as a bidder's free-grant answer by
//! `swdesk_market::peers::grant_reference`.
//!
//! Invariants:
//! - a page keeps only well-formed DIDs, in the relay's order, each the `did` of one of its
//!   entries, at most `MAX_OFFERING_REPOS`; it counts every entry; its cursor, when kept, is
//!   the answer's, non-empty, at most `CURSOR_MAX` bytes, with no control character;
//! - a grant is taken only as the answer's own `uri` (an at-uri) and `cid` (a CID); a refusal
//!   is final (not transient) and quotes the peer on one line of at most `PEER_WORDS_MAX` bytes
//!   of its words, with no control, line separator or bidi character.

use swdesk_auction::bidders::MAX_OFFERING_REPOS;
use swdesk_lexicon::syntax;
use swdesk_market::peers::{CURSOR_MAX, PEER_WORDS_MAX, grant_reference, listed_page};

pub fn check(data: &[u8]) {
    let Some(answer) = crate::json(data) else {
        return;
    };
    let page = listed_page(&answer);
    let entries = answer["repos"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    assert_eq!(page.entries, entries.len());
    assert!(page.repos.len() <= MAX_OFFERING_REPOS);
    let mut listed = entries.iter().filter_map(|entry| entry["did"].as_str());
    for repo in &page.repos {
        assert!(syntax::did(repo).is_ok(), "{repo:?} kept");
        assert!(
            listed.any(|did| did == repo),
            "{repo:?} is not the relay's, in order"
        );
    }
    if let Some(cursor) = &page.cursor {
        assert_eq!(answer["cursor"].as_str(), Some(cursor.as_str()));
        assert!(!cursor.is_empty() && cursor.len() <= CURSOR_MAX);
        assert!(!cursor.chars().any(char::is_control), "{cursor:?}");
    }

    match grant_reference(&answer) {
        Ok(reference) => {
            assert_eq!(answer["uri"].as_str(), Some(reference.uri.as_str()));
            assert_eq!(answer["cid"].as_str(), Some(reference.cid.as_str()));
            assert!(
                syntax::at_uri(&reference.uri).is_ok(),
                "{:?}",
                reference.uri
            );
            assert!(syntax::cid(&reference.cid).is_ok(), "{:?}", reference.cid);
        }
        Err(refusal) => {
            assert!(!refusal.transient, "a bad grant answer is retried");
            let quoted_max =
                PEER_WORDS_MAX + "the grant endpoint answered no strong reference: ".len();
            assert!(
                refusal.message.len() <= quoted_max,
                "{} bytes",
                refusal.message.len()
            );
            assert!(
                !refusal.message.chars().any(crate::peer_text::is_unclean),
                "{:?}",
                refusal.message
            );
        }
    }
}

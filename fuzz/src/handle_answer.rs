//! `handle_answer`: what a handle-resolution method answers, read by
//! `swdesk_atproto::identity::did_of_answer`, the one rule for every method. The first byte picks
//! the method: DNS (the rest: TXT values, one a line), the HTTPS well-known file (the rest: its
//! body), or `resolveHandle` (two bytes of status, then its body, JSON or not).
//!
//! Invariants:
//! - a DID taken is a well-formed `did:plc` or `did:web` with nothing around it: for DNS, the
//!   one value of every `did=` TXT value; for the well-known file, its first line trimmed; for
//!   `resolveHandle`, the `did` of a 2xx answer trimmed;
//! - why an answer was not taken is one line of at most 200 bytes, with no control, line
//!   separator or bidi character, whatever the peer said.

use serde_json::Value;
use swdesk_atproto::identity::{HandleAnswer, did_of_answer};
use swdesk_lexicon::syntax;

/// The longest reason kept for an answer not taken.
const REASON_MAX: usize = 200;

pub fn check(data: &[u8]) {
    let Some((&method, rest)) = data.split_first() else {
        return;
    };
    let answer = match method % 3 {
        0 => HandleAnswer::Txt(crate::text(rest).lines().map(str::to_owned).collect()),
        1 => HandleAnswer::WellKnown(rest.to_vec()),
        _ => {
            let (status, body) = rest.split_at(rest.len().min(2));
            let status = match *status {
                [low, high] => u16::from_le_bytes([low, high]) % 600,
                _ => 200,
            };
            let body = serde_json::from_slice(body).unwrap_or(Value::Null);
            HandleAnswer::Xrpc { status, body }
        }
    };
    match did_of_answer(&answer) {
        Ok(did) => taken(&answer, &did),
        Err(why) => {
            assert!(why.len() <= REASON_MAX, "a reason of {} bytes", why.len());
            assert!(!why.chars().any(crate::peer_text::is_unclean), "{why:?}");
        }
    }
}

fn taken(answer: &HandleAnswer, did: &str) {
    assert!(syntax::did(did).is_ok(), "{did:?}");
    assert!(
        did.starts_with("did:plc:") || did.starts_with("did:web:"),
        "{did:?}"
    );
    assert_eq!(did.trim(), did);
    match answer {
        HandleAnswer::Txt(texts) => {
            let values: Vec<&str> = texts
                .iter()
                .filter_map(|text| text.strip_prefix("did="))
                .collect();
            assert!(!values.is_empty(), "a DID from no did= value");
            assert!(
                values.iter().all(|value| value.trim() == did),
                "{values:?} gave {did}"
            );
        }
        HandleAnswer::WellKnown(body) => {
            let body = String::from_utf8_lossy(body);
            assert_eq!(body.lines().next().unwrap_or_default().trim(), did);
        }
        HandleAnswer::Xrpc { status, body } => {
            assert!((200..300).contains(status), "a DID from HTTP {status}");
            assert_eq!(body["did"].as_str().map(str::trim), Some(did));
        }
    }
}

//! `sealed_secret`: what a bidder reports about the guest's key and the key record itself, as
//! the requester reads them before sealing a secret to the guest. The input is a JSON object:
//! `event` is a `market.event` record of the bidder's (signed here with a fixed key as the
//! bidder's repo, so it passes the signature check and its words reach the parse), `key` the
//! `secret.guestKey` record it names. Read by `swdesk_market::guest::about_receipt`,
//! `sealing::latest_key_report`, `sealing::guest_key` (the age recipient) and `sealing::seal`.
//!
//! Invariants:
//! - an event about our receipt, with a payload reference and no signature but ours, is taken,
//!   its payload exactly the event's; an event about another receipt never is (on one input
//!   in 8, chosen by its bytes: signing is what makes a run slow; the others report the
//!   event's payload as is);
//! - a report names a guest key exactly when its payload is a `secret.guestKey` record;
//! - a key taken is the record's own `recipient`, at most 90 characters, an age X25519
//!   recipient a secret seals to (and the fixed identity opens, when it is its recipient);
//! - why a key does not count is at most [`REASON_MAX`] bytes with no control, line separator
//!   or bidi character, whatever the bidder wrote.

use std::str::FromStr as _;

use serde_json::Value;
use swdesk_atproto::attestation::{AttestationKey, Curve, sign_record};
use swdesk_auction::compute::StrongRef;
use swdesk_auction::flow::Held;
use swdesk_kernel::secret::SecretValue;
use swdesk_auction::trust::{KeyBinding, RecordCheck};
use swdesk_kernel::repo::{Provenance, StoredRecord};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::computer::socialweb::secret::guest_key;
use swdesk_market::guest::{Reported, about_receipt};
use swdesk_market::sealing::{guest_key as read_guest_key, latest_key_report, seal};

/// The bidder.
pub const BIDDER: &str = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
/// Our receipt, in the bidder's repo.
pub const RECEIPT: &str =
    "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/com.publicdomainrelay.temp.market.receipt/3lbjpbyznfc2a";
/// Its cid.
pub const RECEIPT_CID: &str = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq";
/// The fixed guest identity (the scalar 0x44 repeated) and its recipient.
pub const IDENTITY: &str =
    "AGE-SECRET-KEY-1G3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZYG3ZQP8LETR";
pub const RECIPIENT: &str = "age1luhwg4spasdkwvgvw7gyq3v94e5hxv0wu8ql3neyr9e3c8ll8e4s63g9lr";
/// The longest reason a key does not count.
const REASON_MAX: usize = 1024;
/// One input in this many has its event signed and read by the requester's rule (ECDSA: see
/// `crate::sampled`); the others make their report from the event's payload directly.
const SIGN_ONE_IN: u64 = 8;

pub fn check(data: &[u8]) {
    let Some(input) = crate::json(data) else {
        return;
    };
    let held = Held {
        receipt: StrongRef {
            uri: RECEIPT.into(),
            cid: RECEIPT_CID.into(),
        },
        submit_event: format!("{BIDDER}#temp_market"),
        bidder: BIDDER.into(),
        checked: None,
    };
    let event = &input["event"];
    let signed = crate::sampled(data, SIGN_ONE_IN)
        .then(|| reported(event, &held))
        .flatten();
    let report = signed.unwrap_or_else(|| unsigned(event));
    let names_key = report.payload_nsid() == guest_key::NSID;
    let reports = [report];
    assert_eq!(latest_key_report(&reports).is_some(), names_key);
    let [report] = reports;
    key(&held, report, &input["key"]);
}

/// The report the event `value` makes without its signature checked: its payload when it
/// names one, else a key record's.
fn unsigned(value: &Value) -> Reported {
    let named = |field: &str, otherwise: String| {
        value["payload"][field]
            .as_str()
            .map_or(otherwise, str::to_owned)
    };
    Reported {
        event: format!("at://{BIDDER}/com.publicdomainrelay.temp.market.event/3lfuzz"),
        payload: StrongRef {
            uri: named("uri", format!("at://{BIDDER}/{}/3lkey", guest_key::NSID)),
            cid: named("cid", "bafykey".into()),
        },
        bindings: Vec::new(),
    }
}

/// The event `value` as the bidder's, read by the requester's rule; `None` when not taken.
fn reported(value: &Value, held: &Held) -> Option<Reported> {
    let key = AttestationKey::from_secret_bytes(Curve::K256, &[0x22; 32])?;
    let signed = sign_record(value, &key, BIDDER, "2026-12-05T10:00:00.000Z").ok()?;
    let record = StoredRecord {
        uri: uri(&format!(
            "at://{BIDDER}/com.publicdomainrelay.temp.market.event/3lfuzz"
        )),
        cid: "bafyevent".into(),
        value: signed,
    };
    let taken = about_receipt(std::slice::from_ref(&record), held);
    let about_ours = value["receipt"]["uri"].as_str() == Some(RECEIPT);
    let payload = (
        value["payload"]["uri"].as_str(),
        value["payload"]["cid"].as_str(),
    );
    let only_ours = value.get("signatures").is_none();
    if !about_ours {
        assert!(taken.is_empty(), "an event about another receipt was taken");
    }
    if let (true, true, (Some(uri), Some(cid))) = (about_ours, only_ours, payload) {
        assert_eq!(
            taken.len(),
            1,
            "an event about our receipt, signed, was not taken"
        );
        assert_eq!(
            (
                taken[0].report.payload.uri.as_str(),
                taken[0].report.payload.cid.as_str()
            ),
            (uri, cid)
        );
    }
    let mut report = taken.into_iter().next()?.report;
    report.bindings = vec![KeyBinding::Published { key: key.did_key() }];
    Some(report)
}

/// The key record `value` read for `report`.
fn key(held: &Held, report: Reported, value: &Value) {
    let record = StoredRecord {
        uri: uri(&format!("at://{BIDDER}/{}/3lkey", guest_key::NSID)),
        cid: report.payload.cid.clone(),
        value: value.clone(),
    };
    let proven = RecordCheck {
        provenance: Provenance::Proven {
            rev: "3lrev".into(),
        },
        bindings: Vec::new(),
        linked: Vec::new(),
    };
    let Some(now) = Timestamp::parse_rfc3339("2026-12-05T10:00:00Z").ok() else {
        unreachable!("a fixed time")
    };
    match read_guest_key(held, &report, &record, proven, now) {
        Ok(key) => {
            assert_eq!(value["recipient"].as_str(), Some(key.recipient.as_str()));
            assert!(key.recipient.chars().count() <= 90);
            sealed(&key.recipient);
        }
        Err(why) => {
            assert!(why.len() <= REASON_MAX, "a reason of {} bytes", why.len());
            assert!(!why.chars().any(crate::peer_text::is_unclean), "{why:?}");
        }
    }
}

/// A secret sealed to `recipient`; opened when it is the fixed identity's.
fn sealed(recipient: &str) {
    let secret = b"hunter2 \x00\xff".to_vec();
    let sealed = match seal(&SecretValue::new(secret.clone()), recipient) {
        Ok(sealed) => sealed,
        Err(error) => panic!("a recipient taken does not seal: {error}"),
    };
    assert!(!sealed.windows(7).any(|window| window == b"hunter2"));
    if recipient == RECIPIENT {
        let Ok(identity) = age::x25519::Identity::from_str(IDENTITY) else {
            unreachable!("a fixed identity")
        };
        assert_eq!(identity.to_public().to_string(), RECIPIENT);
        let opened = age::decrypt(&identity, &sealed).ok();
        assert_eq!(opened, Some(secret), "the guest cannot open its secret");
    }
}

fn uri(text: &str) -> RecordUri {
    match RecordUri::parse(text) {
        Ok(uri) => uri,
        Err(error) => unreachable!("a fixed uri: {error}"),
    }
}

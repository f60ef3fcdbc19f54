//! Secrets sealed to their guest, the rules without the I/O: which of the bidder's reports
//! names the guest's key, whether the key record read for it can be trusted, and the sealing
//! itself: age (age-encryption.org/v1) to the guest's X25519 recipient.
//!
//! Why age and X25519: age is small, audited and interoperable (rage, the Go reference, typage
//! in the browser), and its own docs prefer native X25519 recipients to SSH keys (an SSH
//! recipient stanza names the key; the `ssh` feature adds an RSA implementation we have no use
//! for).
//!
//! Invariants: a guest key counts only when the receipt's bidder wrote it in its own repo,
//! about our receipt, and reported it in a `market.event` signed with keys bound to the bidder
//! (the report's signatures are verified and bound where the reports are read,
//! [`crate::guest::about_receipt`] and the requester); the key record itself must be proven by
//! the bidder's repo or, where the repo serves no proof, carry inline signatures bound to the
//! bidder ([`guest_key`]: a record proven by neither is never taken). Of several reports the
//! latest (highest record key, a TID) wins: a re-keyed guest. The recipient is bounded and
//! parsed before use; what a peer wrote is quoted back only cut ([`peer_text`]).

use std::str::FromStr;

use age::x25519::Recipient;
use serde_json::Value;
use swdesk_auction::flow::Held;
use swdesk_auction::secret::{GuestKey, MAX_SECRET_BYTES};
use swdesk_auction::trust::RecordCheck;
use swdesk_kernel::repo::StoredRecord;
use swdesk_kernel::secret::SecretValue;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::computer::socialweb::secret::guest_key;
use swdesk_lexicon::text::peer_text;

use crate::guest::Reported;

/// The longest recipient text read from a peer (an X25519 recipient is 62 characters).
const RECIPIENT_MAX: usize = 90;
/// The most bytes of the bidder's reference to its key record quoted in why it does not count.
const REFERENCE_MAX: usize = 256;

/// The latest of `reports` that names a guest key record.
pub fn latest_key_report(reports: &[Reported]) -> Option<&Reported> {
    reports
        .iter()
        .filter(|report| report.payload_nsid() == guest_key::NSID)
        .max_by_key(|report| rkey_of(&report.event))
}

fn rkey_of(uri: &str) -> String {
    RecordUri::parse(uri)
        .map(|uri| uri.rkey().to_string())
        .unwrap_or_default()
}

/// The guest key `record` holds, read for `report` (at the cid it names) with what was verified
/// of it (`checked`: its proof, and its own signatures' bindings to the bidder where it is
/// unproven), once it proves to be `held`'s bidder's key for `held`'s receipt; every problem
/// otherwise, at once.
pub fn guest_key(
    held: &Held,
    report: &Reported,
    record: &StoredRecord,
    checked: RecordCheck,
    seen_at: Timestamp,
) -> Result<GuestKey, String> {
    let value = &record.value;
    let mut problems = Vec::new();
    if !checked.is_proven() && checked.bindings.is_empty() {
        problems.push(
            "it is read without its repo's proof and carries no signature bound to the bidder"
                .to_owned(),
        );
    }
    if record.uri.authority() != held.bidder {
        problems.push(format!(
            "it is in {}'s repo, not the bidder's",
            peer_text(record.uri.authority(), 64)
        ));
    }
    if record.cid != report.payload.cid {
        problems.push("it is not at the cid its event names".to_owned());
    }
    if value["receipt"]["uri"].as_str() != Some(held.receipt.uri.as_str())
        || value["receipt"]["cid"].as_str() != Some(held.receipt.cid.as_str())
    {
        problems.push("it is about another receipt".to_owned());
    }
    let recipient = recipient_text(value);
    if let Err(problem) = &recipient {
        problems.push(problem.clone());
    }
    match recipient {
        Ok(recipient) if problems.is_empty() => Ok(GuestKey {
            recipient,
            event: report.event.clone(),
            seen_at,
            checked: Some(RecordCheck {
                bindings: [report.bindings.clone(), checked.bindings].concat(),
                ..checked
            }),
        }),
        _ => Err(format!(
            "the guest key {} does not count: {}",
            peer_text(&report.payload.uri, REFERENCE_MAX),
            problems.join("; ")
        )),
    }
}

fn recipient_text(value: &Value) -> Result<String, String> {
    let text = value["recipient"].as_str().ok_or("it names no recipient")?;
    if text.len() > RECIPIENT_MAX {
        return Err(format!(
            "its recipient is longer than {RECIPIENT_MAX} characters"
        ));
    }
    parse_recipient(text)?;
    Ok(text.to_owned())
}

fn parse_recipient(text: &str) -> Result<Recipient, String> {
    Recipient::from_str(text)
        .map_err(|_| format!("{} is not an age X25519 recipient", peer_text(text, 24)))
}

/// `value` sealed to `recipient`: an age file only the holder of its identity opens.
pub fn seal(value: &SecretValue, recipient: &str) -> Result<Vec<u8>, String> {
    if value.expose().len() > MAX_SECRET_BYTES {
        return Err(format!(
            "the value is larger than {} KiB",
            MAX_SECRET_BYTES / 1024
        ));
    }
    let recipient = parse_recipient(recipient)?;
    age::encrypt(&recipient, value.expose()).map_err(|error| format!("sealing failed: {error}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use swdesk_auction::compute::StrongRef;
    use swdesk_auction::trust::KeyBinding;
    use swdesk_kernel::repo::Provenance;

    use super::*;

    const BIDDER: &str = "did:plc:bidder";
    const RECEIPT: &str = "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/3r";

    fn held() -> Held {
        Held {
            receipt: StrongRef {
                uri: RECEIPT.into(),
                cid: "bafyreceipt".into(),
            },
            submit_event: "did:plc:bidder#temp_market".into(),
            bidder: BIDDER.into(),
            checked: None,
        }
    }

    fn report(event_rkey: &str, payload: &str) -> Reported {
        Reported {
            event: format!("at://{BIDDER}/com.publicdomainrelay.temp.market.event/{event_rkey}"),
            payload: StrongRef {
                uri: payload.into(),
                cid: "bafykey".into(),
            },
            bindings: vec![published()],
        }
    }

    fn published() -> KeyBinding {
        KeyBinding::Published {
            key: "did:key:zBidder".into(),
        }
    }

    fn proven() -> RecordCheck {
        RecordCheck {
            provenance: Provenance::Proven { rev: "3rev".into() },
            bindings: Vec::new(),
            linked: Vec::new(),
        }
    }

    fn unproven(bindings: Vec<KeyBinding>) -> RecordCheck {
        RecordCheck {
            provenance: Provenance::Unproven {
                why: "its PDS serves no proof".into(),
            },
            bindings,
            linked: Vec::new(),
        }
    }

    fn key_value() -> Value {
        let recipient = age::x25519::Identity::generate().to_public().to_string();
        json!({"receipt": {"uri": RECEIPT, "cid": "bafyreceipt"}, "recipient": recipient})
    }

    fn key_uri(repo: &str) -> String {
        format!("at://{repo}/{}/3k", guest_key::NSID)
    }

    fn record(repo: &str, value: Value) -> StoredRecord {
        StoredRecord {
            uri: RecordUri::parse(&key_uri(repo)).expect("uri"),
            cid: "bafykey".into(),
            value,
        }
    }

    fn now() -> Timestamp {
        Timestamp::parse_rfc3339("2026-12-05T10:00:00Z").expect("time")
    }

    #[test]
    fn the_latest_key_report_wins_and_other_events_are_not_keys() {
        let reports = [
            report("3laaa", &key_uri(BIDDER)),
            report(
                "3lzzz",
                "at://did:plc:bidder/com.publicdomainrelay.temp.compute.events.vm.started/3s",
            ),
            report("3lccc", &key_uri(BIDDER)),
        ];
        let latest = latest_key_report(&reports).expect("a key report");
        assert!(latest.event.ends_with("/3lccc"));
    }

    #[test]
    fn a_key_is_sealed_to_and_opens_only_with_its_identity() {
        let identity = age::x25519::Identity::generate();
        let recipient = identity.to_public().to_string();
        let value =
            json!({"receipt": {"uri": RECEIPT, "cid": "bafyreceipt"}, "recipient": recipient});
        let key = guest_key(
            &held(),
            &report("3l", &key_uri(BIDDER)),
            &record(BIDDER, value),
            proven(),
            now(),
        )
        .expect("the key counts");

        let sealed = seal(&SecretValue::new(b"hunter2".to_vec()), &key.recipient).expect("sealed");
        assert!(!sealed.windows(7).any(|window| window == b"hunter2"));
        let opened = age::decrypt(&identity, &sealed).expect("the guest opens it");
        assert_eq!(opened, b"hunter2");
        let stranger = age::x25519::Identity::generate();
        assert!(age::decrypt(&stranger, &sealed).is_err());
    }

    #[test]
    fn a_key_from_another_repo_about_another_receipt_names_every_problem() {
        let value = json!({
            "receipt": {"uri": "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/other", "cid": "x"},
            "recipient": "ssh-ed25519 AAAAC3Nza",
        });
        let problem = guest_key(
            &held(),
            &report("3l", &key_uri("did:plc:mallory")),
            &record("did:plc:mallory", value),
            unproven(Vec::new()),
            now(),
        )
        .expect_err("refused");
        for part in [
            "without its repo's proof",
            "not the bidder's",
            "another receipt",
            "not an age X25519 recipient",
        ] {
            assert!(problem.contains(part), "{problem}");
        }
    }

    #[test]
    fn an_unproven_key_record_counts_only_with_its_own_bound_signature() {
        let report = report("3l", &key_uri(BIDDER));
        let held = held();
        let refused = guest_key(
            &held,
            &report,
            &record(BIDDER, key_value()),
            unproven(vec![]),
            now(),
        )
        .expect_err("proven by neither its repo nor a bound signature");
        assert!(refused.contains("without its repo's proof"), "{refused}");

        let signed = unproven(vec![published()]);
        let key = guest_key(&held, &report, &record(BIDDER, key_value()), signed, now())
            .expect("signed with a key bound to the bidder");
        let checked = key.checked.expect("what vouched for it is kept");
        assert_eq!(checked.bindings, vec![published(), published()]);
        assert!(!checked.is_proven());
    }

    #[test]
    fn a_proven_key_keeps_its_proof_and_its_reports_binding() {
        let report = report("3l", &key_uri(BIDDER));
        let key = guest_key(
            &held(),
            &report,
            &record(BIDDER, key_value()),
            proven(),
            now(),
        )
        .expect("proven by the bidder's repo");
        let checked = key.checked.expect("what vouched for it is kept");
        assert!(checked.is_proven());
        assert_eq!(checked.bindings, vec![published()]);
    }

    /// Found by the `sealed_secret` fuzz target (seed `hostile`): the payload reference of the
    /// bidder's event was quoted raw, 557 bytes of U+202E, NUL and newlines at a time.
    #[test]
    fn why_a_key_does_not_count_quotes_the_bidders_reference_cut_on_one_line() {
        let hostile = "\u{202E}evil\u{0}\n<script>\u{2028}".repeat(50);
        let mut report = report("3l", &key_uri(BIDDER));
        report.payload.uri = hostile;
        let why = guest_key(
            &held(),
            &report,
            &record(BIDDER, json!({"recipient": "\u{202E}\n"})),
            proven(),
            now(),
        )
        .expect_err("its recipient is no age recipient");
        assert!(why.len() <= 1024, "{} bytes", why.len());
        assert!(
            !why.chars()
                .any(|c| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2028}')),
            "{why:?}"
        );
        assert!(why.contains("does not count"), "{why}");
    }

    #[test]
    fn an_oversized_value_or_recipient_is_refused() {
        let recipient = age::x25519::Identity::generate().to_public().to_string();
        let big = SecretValue::new(vec![b'x'; MAX_SECRET_BYTES + 1]);
        assert!(seal(&big, &recipient).expect_err("too big").contains("KiB"));
        let long = json!({"recipient": "age1".repeat(40)});
        assert!(
            recipient_text(&long)
                .expect_err("too long")
                .contains("longer")
        );
    }
}

//! The simulated guest's sealed secrets. Once on the network the guest makes an age X25519
//! identity (in this process's memory only), writes its recipient as a
//! `computer.socialweb.secret.guestKey` about its receipt and reports it with a signed
//! `market.event`, as a real provider would for the guest it runs. A sealed secret delivered
//! to it (`submitEvent`, checked by [`crate::guest`]) must be about its receipt and sealed to
//! its key; the guest opens it and notes what it opened as a SHA-256 of the value, which the
//! tests compare with the value they set. The value itself goes nowhere: not in a record, a
//! log line or the ledger.

use age::x25519::Identity;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::computer::socialweb::secret::{guest_key, sealed};

use crate::bidder::{Bidder, now_rfc3339, strong_json};
use crate::records::strong_ref;
use crate::state::{Guest, Opened};
use crate::xrpc::Refusal;

/// Makes the guest of `receipt` its key and reports it; logged and dropped when it cannot be
/// written (the requester then keeps waiting for a key).
pub async fn publish_key(bidder: &Bidder, receipt: &StrongRef, requester_events: Option<&str>) {
    let identity = Identity::generate();
    let recipient = identity.to_public().to_string();
    let payload = json!({
        "$type": guest_key::NSID,
        "receipt": strong_json(receipt),
        "recipient": recipient,
        "createdAt": now_rfc3339(),
    });
    bidder
        .guest_keys
        .lock()
        .insert(receipt.uri.clone(), identity);
    match bidder.write_event(receipt, guest_key::NSID, &payload).await {
        Ok((event_ref, record)) => {
            bidder.ledger.set_key(receipt, recipient);
            bidder
                .tell_requester(requester_events, &event_ref, &record)
                .await;
        }
        Err(refusal) => {
            tracing::warn!(receipt = %receipt.uri, error = %refusal.message, "the guest's key cannot be written");
        }
    }
}

/// Opens the sealed secret `record` for `guest` and notes its hash.
pub fn open(bidder: &Bidder, guest: &Guest, record: &Value) -> Result<(), Refusal> {
    let sealed: sealed::Sealed = serde_json::from_value(record.clone())
        .map_err(|error| Refusal::invalid(format!("not a {}: {error}", sealed::NSID)))?;
    let about = strong_ref(record, "receipt")?;
    if about != guest.receipt {
        return Err(Refusal::invalid(format!(
            "the secret is sealed for {}, not for this guest",
            about.uri
        )));
    }
    if guest.key.as_deref() != Some(sealed.recipient.as_str()) {
        return Err(Refusal::invalid(
            "the secret is sealed to another key than this guest's",
        ));
    }
    let value = {
        let keys = bidder.guest_keys.lock();
        let identity = keys
            .get(&guest.receipt.uri)
            .ok_or_else(|| Refusal::invalid("this guest has no key"))?;
        age::decrypt(identity, &sealed.ciphertext.0)
            .map_err(|error| Refusal::invalid(format!("the secret does not open: {error}")))?
    };
    let sha256: String = Sha256::digest(&value)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    tracing::info!(receipt = %guest.receipt.uri, name = %sealed.name, version = sealed.version, "the simulated guest opened a secret");
    bidder.ledger.note_opened(
        &guest.receipt,
        Opened {
            name: sealed.name,
            version: sealed.version,
            sha256,
        },
    );
    Ok(())
}

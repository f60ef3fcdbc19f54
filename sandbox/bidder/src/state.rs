//! What the bidder remembers, and what tests read of it: the RFPs it was sent, the ones it
//! refused, the bids it made (free, or paid with their price), the free grants it minted, and
//! its simulated guests with their phase, and (never in a snapshot) each guest's secret key. [`Ledger`] holds it behind a lock never held across an
//! `await`; [`Snapshot`] is a copy at one moment.
//!
//! Guest lifecycle (one per receipt): `Provisioning` → `Started` (after `vm.started` is
//! written) → `OnNetwork` (after `vm.onNetwork`); `Failed` instead when the bidder was told to
//! fail after an accept; `TornDown` from any phase on a `vm.delete` by the accept's author.
//! `TornDown` is final: a boot step that finishes after it changes nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use age::x25519::Identity;

use swdesk_auction::compute::StrongRef;

/// Where a simulated guest is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestPhase {
    /// The receipt is written; the guest is booting.
    Provisioning,
    /// `vm.started` is written.
    Started,
    /// `vm.onNetwork` is written: the guest is "reachable".
    OnNetwork,
    /// The guest failed after the accept (the test control).
    Failed,
    /// Released by the accept's author.
    TornDown,
}

/// An RFP the bidder was sent (and whose checks passed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenRfp {
    /// The RFP.
    pub rfp: StrongRef,
    /// Its author, the requester.
    pub requester: String,
}

/// A bid the bidder wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BidMade {
    /// The RFP it answers.
    pub rfp: StrongRef,
    /// The RFP's author.
    pub requester: String,
    /// The `market.bid`.
    pub bid: StrongRef,
    /// Its terms: `market.bids.free`, or `market.bids.x402` when it asks a price.
    pub terms: StrongRef,
    /// The price asked (`cost` on the terms' strong reference and on the paid terms), `None`
    /// when the terms are free.
    pub cost: Option<String>,
}

impl BidMade {
    /// Whether its terms are free (`market.bids.free`): only those are settled by a free grant.
    pub fn is_free(&self) -> bool {
        self.cost.is_none()
    }
}

/// A free grant (`market.receipts.free`) the bidder minted for an `accepts.free`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantMade {
    /// The requester's `accepts.free`.
    pub accepts: StrongRef,
    /// The bid it accepts.
    pub bid: StrongRef,
    /// The grant.
    pub grant: StrongRef,
}

/// A simulated guest: one accepted bid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guest {
    /// The receipt: the handle of the contract.
    pub receipt: StrongRef,
    /// The accept it answers.
    pub accept: StrongRef,
    /// The accept's author: the only account that may release the guest.
    pub accept_author: String,
    /// The accepted bid.
    pub bid: StrongRef,
    /// Where it is.
    pub phase: GuestPhase,
    /// The `market.event`s the bidder wrote about it (`vm.started`, `vm.onNetwork`).
    pub events: Vec<StrongRef>,
    /// The requester's release event, once acted on.
    pub released_by: Option<StrongRef>,
    /// The simulated address it reports on the network.
    pub address: String,
    /// The age recipient of the key it published for its secrets, once on the network.
    pub key: Option<String>,
    /// The secrets it opened, in arrival order.
    pub opened: Vec<Opened>,
}

/// A secret the guest opened: what it knows it by and a hash of the value, never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The secret's name.
    pub name: String,
    /// Its version.
    pub version: i64,
    /// The SHA-256 of the value opened, in hex.
    pub sha256: String,
}

/// Everything the bidder remembers, at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// RFPs sent to it whose checks passed, in arrival order.
    pub rfps_seen: Vec<SeenRfp>,
    /// RFPs it declined (policy or the refusal control).
    pub rfps_refused: Vec<StrongRef>,
    /// Its bids.
    pub bids: Vec<BidMade>,
    /// Its free grants.
    pub grants: Vec<GrantMade>,
    /// Its guests.
    pub guests: Vec<Guest>,
}

impl Snapshot {
    /// The guest of `receipt_uri`.
    pub fn guest(&self, receipt_uri: &str) -> Option<&Guest> {
        self.guests
            .iter()
            .find(|guest| guest.receipt.uri == receipt_uri)
    }

    /// Guests not torn down (nor failed).
    pub fn running(&self) -> usize {
        self.guests
            .iter()
            .filter(|guest| !matches!(guest.phase, GuestPhase::TornDown | GuestPhase::Failed))
            .count()
    }
}

/// The bidder's memory.
#[derive(Debug, Default)]
pub struct Ledger {
    inner: Mutex<Snapshot>,
}

impl Ledger {
    /// A copy of everything now.
    pub fn snapshot(&self) -> Snapshot {
        self.lock().clone()
    }

    /// Remembers an RFP whose checks passed.
    pub fn saw_rfp(&self, rfp: &StrongRef, requester: &str) {
        self.lock().rfps_seen.push(SeenRfp {
            rfp: rfp.clone(),
            requester: requester.to_owned(),
        });
    }

    /// Remembers a declined RFP.
    pub fn refused(&self, rfp: &StrongRef) {
        self.lock().rfps_refused.push(rfp.clone());
    }

    /// Remembers a bid.
    pub fn bid_made(&self, bid: BidMade) {
        self.lock().bids.push(bid);
    }

    /// The bid already made on `rfp` (uri and cid), if any.
    pub fn bid_on(&self, rfp: &StrongRef) -> Option<BidMade> {
        self.lock()
            .bids
            .iter()
            .find(|made| &made.rfp == rfp)
            .cloned()
    }

    /// The bid `bid` (uri and cid), if it is one of ours.
    pub fn bid(&self, bid: &StrongRef) -> Option<BidMade> {
        self.lock()
            .bids
            .iter()
            .find(|made| &made.bid == bid)
            .cloned()
    }

    /// Remembers a grant.
    pub fn grant_made(&self, grant: GrantMade) {
        self.lock().grants.push(grant);
    }

    /// The grant minted for `accepts`, if any.
    pub fn grant_for(&self, accepts: &StrongRef) -> Option<GrantMade> {
        self.lock()
            .grants
            .iter()
            .find(|made| &made.accepts == accepts)
            .cloned()
    }

    /// The grant `grant` (uri and cid), if it is one of ours.
    pub fn grant(&self, grant: &StrongRef) -> Option<GrantMade> {
        self.lock()
            .grants
            .iter()
            .find(|made| &made.grant == grant)
            .cloned()
    }

    /// Remembers a new guest.
    pub fn add_guest(&self, guest: Guest) {
        self.lock().guests.push(guest);
    }

    /// The guest matching `find`, if any.
    pub fn guest_where(&self, find: impl Fn(&Guest) -> bool) -> Option<Guest> {
        self.lock().guests.iter().find(|guest| find(guest)).cloned()
    }

    /// Moves the guest of `receipt` from `from` to `to` (recording `event`); false when it is
    /// no longer at `from` (torn down meanwhile).
    pub fn advance(
        &self,
        receipt: &StrongRef,
        from: GuestPhase,
        to: GuestPhase,
        event: Option<StrongRef>,
    ) -> bool {
        let mut inner = self.lock();
        let Some(guest) = inner
            .guests
            .iter_mut()
            .find(|guest| &guest.receipt == receipt)
        else {
            return false;
        };
        if guest.phase != from {
            return false;
        }
        guest.phase = to;
        guest.events.extend(event);
        true
    }

    /// Gives the guest of `receipt` the key it published.
    pub fn set_key(&self, receipt: &StrongRef, recipient: String) {
        self.with_guest(receipt, |guest| guest.key = Some(recipient));
    }

    /// Notes a secret the guest of `receipt` opened.
    pub fn note_opened(&self, receipt: &StrongRef, opened: Opened) {
        self.with_guest(receipt, |guest| guest.opened.push(opened));
    }

    fn with_guest(&self, receipt: &StrongRef, change: impl FnOnce(&mut Guest)) {
        let mut inner = self.lock();
        if let Some(guest) = inner
            .guests
            .iter_mut()
            .find(|guest| &guest.receipt == receipt)
        {
            change(guest);
        }
    }

    /// Tears the guest of `receipt` down, released by `event`.
    pub fn tear_down(&self, receipt: &StrongRef, event: &StrongRef) {
        self.with_guest(receipt, |guest| {
            guest.phase = GuestPhase::TornDown;
            guest.released_by.get_or_insert_with(|| event.clone());
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Each guest's identity, by its receipt's at-uri.
#[derive(Default)]
pub struct GuestKeys(Mutex<HashMap<String, Identity>>);

impl std::fmt::Debug for GuestKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GuestKeys(<redacted>)")
    }
}

impl GuestKeys {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Identity>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strong(name: &str) -> StrongRef {
        StrongRef {
            uri: format!("at://did:plc:b/c/{name}"),
            cid: format!("cid-{name}"),
        }
    }

    fn guest() -> Guest {
        Guest {
            receipt: strong("receipt"),
            accept: strong("accept"),
            accept_author: "did:plc:owner".into(),
            bid: strong("bid"),
            phase: GuestPhase::Provisioning,
            events: Vec::new(),
            released_by: None,
            address: "192.0.2.1".into(),
            key: None,
            opened: Vec::new(),
        }
    }

    #[test]
    fn a_torn_down_guest_stays_down_when_a_boot_step_finishes_late() {
        let ledger = Ledger::default();
        ledger.add_guest(guest());
        assert!(ledger.advance(
            &strong("receipt"),
            GuestPhase::Provisioning,
            GuestPhase::Started,
            Some(strong("e1"))
        ));
        ledger.tear_down(&strong("receipt"), &strong("delete"));
        assert!(!ledger.advance(
            &strong("receipt"),
            GuestPhase::Started,
            GuestPhase::OnNetwork,
            Some(strong("e2"))
        ));
        let snapshot = ledger.snapshot();
        let guest = snapshot.guest(&strong("receipt").uri).expect("the guest");
        assert_eq!(guest.phase, GuestPhase::TornDown);
        assert_eq!(guest.events, vec![strong("e1")]);
        assert_eq!(guest.released_by, Some(strong("delete")));
        assert_eq!(snapshot.running(), 0);
    }
}

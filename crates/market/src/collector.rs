//! The answers to one RFP while its window is open: `submitRfp` goes to every asked bidder at
//! once, each answer (a bid reference, or none) lands in an [`Inbox`] with the time it arrived,
//! and the step driver drains the inbox into counted bids. Inboxes live in memory only: after a
//! restart the driver asks again the bidders whose bid it has not counted (the same RFP record,
//! which a bidder answers with the same bid).
//!
//! Invariant: an arrival is handed out once ([`Inbox::drain`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use swdesk_auction::compute::StrongRef;
use swdesk_kernel::timestamp::{Clock, Timestamp};
use tokio::sync::Notify;

use crate::peers::{PeerError, Peers};

/// One bidder's answer to `submitRfp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// The bidder asked.
    pub bidder: String,
    /// Its bid, none, or why the call failed.
    pub answer: Result<Option<StrongRef>, PeerError>,
    /// When the answer arrived.
    pub received_at: Timestamp,
}

/// The answers to one RFP.
#[derive(Debug, Default)]
pub struct Inbox {
    arrivals: Mutex<Vec<Arrival>>,
    pending: Mutex<usize>,
    notify: Notify,
}

impl Inbox {
    /// Every arrival not handed out yet.
    pub fn drain(&self) -> Vec<Arrival> {
        std::mem::take(&mut *lock(&self.arrivals))
    }

    /// How many bidders have not answered yet.
    pub fn pending(&self) -> usize {
        *lock(&self.pending)
    }

    /// Waits at most `limit` for an arrival (returns at once when one is there or no bidder is
    /// pending).
    pub async fn wait(&self, limit: Duration) {
        let notified = self.notify.notified();
        if !lock(&self.arrivals).is_empty() || self.pending() == 0 {
            return;
        }
        let _ = tokio::time::timeout(limit, notified).await;
    }

    fn arrive(&self, arrival: Arrival) {
        lock(&self.arrivals).push(arrival);
        let mut pending = lock(&self.pending);
        *pending = pending.saturating_sub(1);
        self.notify.notify_waiters();
    }
}

/// Every open RFP's inbox, by the RFP's uri.
#[derive(Debug, Default)]
pub struct Collector {
    inboxes: Mutex<HashMap<String, Arc<Inbox>>>,
}

impl Collector {
    /// The inbox of `rfp`, if its answers are being collected.
    pub fn inbox(&self, rfp: &StrongRef) -> Option<Arc<Inbox>> {
        lock(&self.inboxes).get(&rfp.uri).cloned()
    }

    /// Sends `rfp` to each `(bidder, service)` in the background; their answers go to the
    /// returned inbox.
    pub fn ask<P: Peers>(
        &self,
        peers: &Arc<P>,
        clock: &Arc<dyn Clock>,
        rfp: &StrongRef,
        bidders: Vec<(String, String)>,
    ) -> Arc<Inbox> {
        let inbox = Arc::new(Inbox::default());
        *lock(&inbox.pending) = bidders.len();
        for (bidder, service) in bidders {
            let (peers, clock, inbox, rfp) = (
                Arc::clone(peers),
                Arc::clone(clock),
                Arc::clone(&inbox),
                rfp.clone(),
            );
            tokio::spawn(async move {
                let answer = peers.submit_rfp(&service, &rfp).await;
                inbox.arrive(Arrival {
                    bidder,
                    answer,
                    received_at: clock.now(),
                });
            });
        }
        lock(&self.inboxes).insert(rfp.uri.clone(), Arc::clone(&inbox));
        inbox
    }

    /// Forgets the inbox of `rfp` (its window closed).
    pub fn close(&self, rfp: &StrongRef) {
        lock(&self.inboxes).remove(&rfp.uri);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

//! Whether the market signs as the owner. A strict peer trusts a signature only when its key is
//! listed in the DID document of the signature's `issuer` (issue 33), so once the owner's live
//! DID document lists the app's attestation key under `#attestation`, the records the owner
//! signs (RFP, accept, release and events) name `issuer` = the owner's DID. The rule of when
//! that fact is read lives here, once ([`OwnerListing`]):
//! - it is read from the live document (never a kept copy) when a record is first signed, and
//!   kept for [`LISTING_LIFETIME`]; a flow's records signed within that time agree;
//! - a bidder's refusal of what we sent drops it ([`OwnerListing::forget`]), so the next record
//!   signed reads it afresh;
//! - a document that does not list the key (never published, removed, or replaced by another
//!   device's key), or that cannot be read, means no issuer: the record is signed as before and
//!   its key is bound by the owner's `market.badgeBlueKey` record, which stays published.
//!
//! Invariant: the owner's DID is named as issuer only after its live document was seen listing
//! this very key, at most [`LISTING_LIFETIME`] ago.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use swdesk_atproto::plc::Listing;
use swdesk_kernel::timestamp::Timestamp;

use crate::peers::Peers;

/// How long a reading of the owner's DID document is trusted.
pub const LISTING_LIFETIME: Duration = Duration::from_secs(60);

/// The last reading of whether the owner's live DID document lists the market's key.
#[derive(Debug, Default)]
pub struct OwnerListing {
    seen: Mutex<Option<Seen>>,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    listed: bool,
    at: Timestamp,
}

impl OwnerListing {
    /// The issuer to name for `owner` at `now`: `owner` when the listing (kept, or read with
    /// `read` when none is fresh) says its document lists the key; none otherwise.
    pub async fn issuer<F>(&self, owner: &str, now: Timestamp, read: F) -> Option<String>
    where
        F: Future<Output = bool>,
    {
        let listed = match self.fresh(now) {
            Some(listed) => listed,
            None => {
                let listed = read.await;
                *self.lock() = Some(Seen { listed, at: now });
                listed
            }
        };
        listed.then(|| owner.to_owned())
    }

    /// Drops the kept reading: a peer refused what we sent, so the next signature reads the
    /// document afresh.
    pub fn forget(&self) {
        *self.lock() = None;
    }

    fn fresh(&self, now: Timestamp) -> Option<bool> {
        let seen = (*self.lock())?;
        (now >= seen.at && now.since(seen.at) < LISTING_LIFETIME).then_some(seen.listed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Seen>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether `owner`'s live DID document lists `key` under `#attestation`, as `peers` read it; a
/// document that cannot be read lists nothing.
pub async fn read_listing<P: Peers>(peers: &P, owner: &str, key: &str) -> bool {
    match peers.attestation_listing(owner, key).await {
        Ok(Listing::Listed) => true,
        Ok(listing) => {
            tracing::debug!(%owner, ?listing, "the owner's DID document does not list our key");
            false
        }
        Err(error) => {
            tracing::warn!(%owner, %error, "the owner's DID document could not be read");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const OWNER: &str = "did:plc:owner";

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    async fn ask(listing: &OwnerListing, reads: &AtomicUsize, now: i64, listed: bool) -> bool {
        let read = async {
            reads.fetch_add(1, Ordering::SeqCst);
            listed
        };
        listing.issuer(OWNER, at(now), read).await.is_some()
    }

    #[tokio::test]
    async fn the_listing_is_read_once_per_lifetime_and_again_after_a_refusal() {
        let (listing, reads) = (OwnerListing::default(), AtomicUsize::new(0));
        assert!(ask(&listing, &reads, 0, true).await);
        assert!(
            ask(&listing, &reads, 59, false).await,
            "kept for its lifetime"
        );
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        assert!(
            !ask(&listing, &reads, 60, false).await,
            "read again: removed"
        );
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        listing.forget();
        assert!(
            ask(&listing, &reads, 61, true).await,
            "read again after a refusal"
        );
        assert_eq!(reads.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_reading_from_the_future_is_not_trusted() {
        let (listing, reads) = (OwnerListing::default(), AtomicUsize::new(0));
        assert!(ask(&listing, &reads, 100, true).await);
        assert!(!ask(&listing, &reads, 10, false).await);
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }
}

//! A deployed contract's drift, looked for at each of its looks: the receipt read again from
//! its author's repo and compared with the CID verified when it arrived
//! ([`swdesk_kernel::drift`] decides what counts).
//!
//! Invariants: a read that cannot tell (the provider's PDS unreachable or refusing) changes
//! nothing: the drift found before stays, none is invented.

use swdesk_auction::flow::Held;
use swdesk_kernel::drift::{Drift, receipt_drift};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::uri::RecordUri;

use super::RequesterMarket;
use crate::peers::Peers;

impl<R: RecordRepo + std::fmt::Debug + 'static, P: Peers> RequesterMarket<R, P> {
    /// `drift` as the receipt of `held` stands now.
    pub(super) async fn look_for_drift(&self, held: &Held, drift: &mut Vec<Drift>) {
        let Ok(uri) = RecordUri::parse(&held.receipt.uri) else {
            return;
        };
        let found = match self.repo.get(&uri).await {
            Ok(found) => found,
            Err(error) => {
                tracing::debug!(receipt = %held.receipt.uri, %error, "the receipt could not be read for drift");
                return;
            }
        };
        let cid = found.as_ref().map(|record| record.cid.as_str());
        let now = self.clock.now();
        *drift = receipt_drift(&held.receipt.cid, cid, drift, now)
            .into_iter()
            .collect();
    }
}

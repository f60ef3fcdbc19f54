//! What starting the sandbox bidder takes: where identities resolve (the local PLC), the
//! bidder's own account on the local PDS (where its offering, bids, grants, receipts and events
//! are written), its attestation key, and its behaviour: the price it asks (none or zero: free
//! terms; above zero: paid x402 terms, see [`crate::bidding`]), and the test controls (refuse
//! every RFP, bid slowly, fail the guest after an accept, bind keys strictly).
//!
//! Invariants: the account password is a `Secret` and the attestation key shows only its
//! `did:key`; neither appears in `Debug`.

use std::time::Duration;

use serde_json::Value;
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::IdentityConfig;
use swdesk_auction::bids::Cost;

/// The bidder's own account on the local PDS (the sandbox peers' shared account type).
pub type BidderAccount = swdesk_sandbox_peer::PeerAccount;

/// How the bidder answers: its price and the test controls.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Behaviour {
    /// The price of a guest, a decimal such as `"0.25"`: `None` or zero bids free terms
    /// (`bids.free`); anything else bids paid terms (`bids.x402`) asking it as `cost`, sent as
    /// written (so a test can make the bidder ask an unreadable or negative price).
    pub cost: Option<String>,
    /// Refuse every RFP (answer `ok: false`, write no bid).
    pub refuse: bool,
    /// Wait this long before bidding.
    pub bid_delay: Duration,
    /// Write the receipt on accept, then let the guest fail instead of starting.
    pub fail_after_accept: bool,
    /// Hostile: answer with its bid's at-uri but another cid (one of another record), as a
    /// peer that claims a record its repo does not hold.
    pub misstate_bid_cid: bool,
    /// Strict, as the public bidder's `BIND_KEYS=1`: a signature on an RFP, accept or event
    /// counts only when its key is listed in the DID document of its author (or of an issuer
    /// tied to it); a key the author's repo publishes (`market.badgeBlueKey`) is not enough.
    pub bind_keys: bool,
}

impl Behaviour {
    /// Free bids at once, binding keys strictly ([`Behaviour::bind_keys`]).
    pub fn strict() -> Self {
        Self {
            bind_keys: true,
            ..Self::default()
        }
    }

    /// The price the bidder asks, when it bids paid terms: the configured cost unless it is
    /// absent or reads as exactly zero.
    pub fn paid_cost(&self) -> Option<&str> {
        let cost = self.cost.as_deref()?;
        let zero = Cost::read(&Value::String(cost.to_owned())) == Ok(Cost::ZERO);
        (!zero).then_some(cost)
    }
}

/// Everything [`crate::start`] takes.
#[derive(Debug, Clone)]
pub struct Config {
    /// The loopback port; 0 for any free one.
    pub port: u16,
    /// Where callers' DIDs resolve (the sandbox's PLC, http on localhost).
    pub identity: IdentityConfig,
    /// The bidder's own account.
    pub account: BidderAccount,
    /// The key of its inline signatures.
    pub attestation_key: AttestationKey,
    /// Its price and test controls (changeable while it runs).
    pub behaviour: Behaviour,
    /// How long a simulated guest takes from the receipt to `vm.started`, and again to
    /// `vm.onNetwork`.
    pub boot_step: Duration,
    /// Added to the bidder's clock when checking a token's `exp` (tests of expired tokens).
    pub clock_skew_seconds: i64,
    /// The loopback port of the sandbox's `*.localhost` ingress (the public market peer's
    /// dispatcher), when the sandbox runs one: a requester of the public implementation serves
    /// its PDS and services under such names. A sandbox setting, never taken from a peer.
    pub localhost_ingress: Option<u16>,
}

impl Config {
    /// A configuration with the defaults: any port, a fresh P-256 attestation key, free bids
    /// at once, 300 ms boot steps, no clock skew, no ingress.
    pub fn new(identity: IdentityConfig, account: BidderAccount) -> Self {
        Self {
            port: 0,
            identity,
            account,
            attestation_key: AttestationKey::generate(Curve::P256),
            behaviour: Behaviour::default(),
            boot_step: Duration::from_millis(300),
            clock_skew_seconds: 0,
            localhost_ingress: None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use swdesk_atproto::oauth::Secret;
    use url::Url;

    use super::*;

    #[test]
    fn only_a_price_above_zero_bids_paid_terms() {
        let asking = |cost: Option<&str>| Behaviour {
            cost: cost.map(str::to_owned),
            ..Behaviour::default()
        };
        for free in [None, Some("0"), Some("0.000"), Some(" 0 ")] {
            assert_eq!(asking(free).paid_cost(), None, "{free:?}");
        }
        for paid in ["0.35", "2", "0.000000001", "-1", "lots"] {
            assert_eq!(asking(Some(paid)).paid_cost(), Some(paid));
        }
    }

    #[test]
    fn the_password_and_the_key_never_show_in_debug() {
        let account = BidderAccount {
            pds_url: Url::parse("http://localhost:2583").unwrap(),
            identifier: "bidder.test".into(),
            password: Secret::new("hunter2-very-secret"),
        };
        let config = Config::new(IdentityConfig::public(), account);
        let debug = format!("{config:?}");
        assert!(!debug.contains("hunter2"));
        let secret: String = config
            .attestation_key
            .to_secret_bytes()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        assert!(!debug.to_lowercase().contains(&secret));
        assert!(debug.contains(&config.attestation_key.did_key()));
    }
}

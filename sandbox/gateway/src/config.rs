//! What starting the sandbox gateway takes: where identities resolve (the local PLC), the
//! gateway's own account on the local PDS (for the Infra records of its clusters' nodes), and
//! the timings of the simulated clusters and Jobs, short in tests and human-scale in
//! `cargo xtask run`.
//!
//! Invariant: the account password is a `Secret` and never shows in `Debug`.

use std::time::Duration;

use swdesk_atproto::identity::IdentityConfig;

/// The gateway's own account on the local PDS (the sandbox peers' shared account type).
pub type GatewayAccount = swdesk_sandbox_peer::PeerAccount;

/// How long each simulated step takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// `Initializing` → `Ready`.
    pub initialize: Duration,
    /// `Draining` → gone.
    pub drain: Duration,
    /// A Job's pod `Pending` → `Running`.
    pub job_pending: Duration,
    /// A Job's pod `Running` → finished.
    pub job_running: Duration,
}

impl Timings {
    /// Human-scale timings for `cargo xtask run`.
    pub fn interactive() -> Self {
        Self {
            initialize: Duration::from_secs(5),
            drain: Duration::from_secs(3),
            job_pending: Duration::from_secs(2),
            job_running: Duration::from_secs(5),
        }
    }

    /// Short timings for tests (still long enough to observe each phase by polling).
    pub fn fast() -> Self {
        Self {
            initialize: Duration::from_millis(600),
            drain: Duration::from_millis(600),
            job_pending: Duration::from_millis(500),
            job_running: Duration::from_millis(700),
        }
    }
}

/// How a hostile gateway's `subscribeClusters` stream misbehaves, in place of the real one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostileStream {
    /// A snapshot that never completes: the same `#cluster` frame, one every `every` (as fast
    /// as the socket takes them when zero), forever.
    Endless {
        /// The pause between frames.
        every: Duration,
    },
    /// Nothing at all after the handshake, and no answer to a ping: the socket is never read.
    Silent,
    /// A complete snapshot of this many clusters (more than any account may have).
    Clusters(usize),
    /// A complete snapshot whose texts hold controls and bidi overrides: a cluster named with
    /// one, a member whose DID holds one, and a cluster `text` whose phase, instance, server,
    /// member and node texts all do.
    Texts,
}

/// Everything [`crate::start`] takes.
#[derive(Debug, Clone)]
pub struct Config {
    /// The loopback port; 0 for any free one.
    pub port: u16,
    /// Where callers' DIDs resolve (the sandbox's PLC, http on localhost).
    pub identity: IdentityConfig,
    /// The gateway's own account.
    pub account: GatewayAccount,
    /// Step timings.
    pub timings: Timings,
    /// Nodes (NodeClaims, contract entries of the cluster's Infra) per cluster.
    pub nodes_per_cluster: usize,
    /// Clusters an account may have.
    pub max_clusters: usize,
    /// Whether `getKubeconfig` with `noExpiry` is honoured.
    pub allow_no_expiry: bool,
    /// Added to the gateway's clock when checking a token's `exp` (tests of expired tokens).
    pub clock_skew_seconds: i64,
    /// Hostile mode: every `subscribeClusters` stream opens with one binary frame of this many
    /// bytes (a gateway flooding the client's socket); `None` in a well-behaved gateway.
    pub hostile_frame_bytes: Option<usize>,
    /// Hostile mode: every `subscribeClusters` stream misbehaves so (see [`HostileStream`]);
    /// `None` in a well-behaved gateway.
    pub hostile_stream: Option<HostileStream>,
    /// Hostile mode: every kubeconfig it issues also asks for an `exec` plugin, an
    /// `auth-provider`, a token file, a proxy, skipped TLS checks, and a second context made
    /// current (what the app must never save); `false` in a well-behaved gateway.
    pub hostile_kubeconfig: bool,
    /// Identities granted on every cluster created besides its owner (a team member, each
    /// named `member-…`); none by default.
    pub members: Vec<String>,
}

impl Config {
    /// A configuration with the defaults: any port, two nodes a cluster, five clusters an
    /// account, `noExpiry` honoured, no clock skew.
    pub fn new(identity: IdentityConfig, account: GatewayAccount, timings: Timings) -> Self {
        Self {
            port: 0,
            identity,
            account,
            timings,
            nodes_per_cluster: 2,
            max_clusters: 5,
            allow_no_expiry: true,
            clock_skew_seconds: 0,
            hostile_frame_bytes: None,
            hostile_stream: None,
            hostile_kubeconfig: false,
            members: Vec::new(),
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
    fn the_account_password_never_shows_in_debug() {
        let account = GatewayAccount {
            pds_url: Url::parse("http://localhost:2583").unwrap(),
            identifier: "gateway.test".into(),
            password: Secret::new("hunter2-very-secret"),
        };
        let config = Config::new(IdentityConfig::public(), account, Timings::fast());
        assert!(!format!("{config:?}").contains("hunter2"));
    }
}

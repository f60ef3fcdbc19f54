//! Our sandbox bidder traded with by the public market's own requester (`peer.sh requester`,
//! third-party Deno code run by `swdesk_devnet::PublicMarketPeer`): the public dialect seen from
//! the provider's side. The requester resolves its DID at the sandbox's PLC and serves its PDS
//! and services under `https://did-key-….localhost` names; the bidder reaches them only because
//! its sandbox configuration names the peer's dispatcher as the `*.localhost` ingress. The
//! requester signs with a key its DID document lists (never a `market.badgeBlueKey`), calls with
//! the audience `did:web:` + the bidder's host, and accepts a free bid with no grant.

use swdesk_devnet::{PublicMarketPeer, RequesterResult};
use swdesk_sandbox_bidder::{Behaviour, GuestPhase, RunningBidder};

use crate::support::{Sandbox, eventually, sandbox};

struct World {
    sandbox: Sandbox,
    peer: PublicMarketPeer,
}

async fn world() -> World {
    let sandbox = sandbox().await;
    let peer = PublicMarketPeer::start_with_temporary_logs(&sandbox.kit.pds.info().plc_url)
        .await
        .expect("the public market peer starts (../shared/peers/atproto-market/peer.sh)");
    World { sandbox, peer }
}

impl World {
    /// A sandbox bidder whose network setting names the peer's dispatcher as the ingress
    /// (`ingress: false`: the sandbox names none).
    async fn bidder(&self, ingress: bool) -> RunningBidder {
        self.bidder_behaving(ingress, Behaviour::default()).await
    }

    /// A sandbox bidder as [`World::bidder`], behaving as told.
    async fn bidder_behaving(&self, ingress: bool, behaviour: Behaviour) -> RunningBidder {
        let mut config = self.sandbox.kit.bidder_config("bidder", behaviour).await;
        config.localhost_ingress = ingress.then_some(self.peer.dispatcher_port);
        swdesk_sandbox_bidder::start(config)
            .await
            .expect("the bidder starts")
    }

    async fn requester_against(&self, bidder: &RunningBidder) -> (RequesterResult, String) {
        let result = self
            .peer
            .run_requester(&bidder.account)
            .await
            .expect("the public requester runs");
        let log = std::fs::read_to_string(self.peer.requester_log()).unwrap_or_default();
        (result, log)
    }
}

/// The requester's log lines that name `event`.
fn logged<'a>(log: &'a str, event: &str) -> Vec<&'a str> {
    let quoted = format!("\"{event}\"");
    log.lines().filter(|line| line.contains(&quoted)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_requester_completes_a_flow_with_the_sandbox_bidder() {
    let world = world().await;
    let bidder = world.bidder(true).await;
    completes_a_flow(&world, &bidder).await;
}

/// Strict, the sandbox bidder takes the requester's signatures on the word of its DID document
/// alone (the public requester publishes no `market.badgeBlueKey`, so it does anyway).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_requester_completes_a_flow_with_a_strict_sandbox_bidder() {
    let world = world().await;
    let bidder = world.bidder_behaving(true, Behaviour::strict()).await;
    completes_a_flow(&world, &bidder).await;
}

/// The public requester's flow with `bidder` ends complete: our bid wins, its receipt
/// verifies, and the guest reports on the network.
async fn completes_a_flow(world: &World, bidder: &RunningBidder) {
    let (result, log) = world.requester_against(bidder).await;
    let tail: Vec<&str> = log.lines().rev().take(25).collect();
    assert_eq!(
        result.event,
        "compute_request_complete",
        "{result:?}\nthe requester's log ends with:\n{}",
        tail.join("\n")
    );
    assert_eq!(result.winner_did.as_deref(), Some(bidder.account.as_str()));
    assert_eq!(result.bids, 1, "our bid reached its submitBid service");
    assert!(
        result.receipt_ok,
        "the requester verified our receipt: {:?}",
        logged(&log, "receipt_verified")
    );

    let receipt = result.receipt_uri.clone().expect("a receipt");
    assert!(receipt.starts_with(&format!("at://{}/", bidder.account)));
    let state = bidder.state();
    let seen = state.rfps_seen.first().expect("the RFP passed our checks");
    assert!(
        seen.requester.starts_with("did:plc:"),
        "the requester's own DID: {}",
        seen.requester
    );
    assert_eq!(
        state.bids.first().map(|made| made.bid.uri.clone()),
        result.bid_uri,
        "the bid it won with is ours"
    );
    assert!(
        state.grants.is_empty(),
        "a free bid is accepted with no grant"
    );
    let guest = state.guest(&receipt).expect("a guest on that receipt");
    assert_eq!(guest.accept_author, seen.requester);
    eventually("the guest to report on the network", || {
        let phase = bidder.state().guest(&receipt)?.phase;
        (phase == GuestPhase::OnNetwork).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_ingress_the_sandbox_bidder_cannot_read_the_public_requesters_rfp() {
    let world = world().await;
    let bidder = world.bidder(false).await;
    let (result, log) = world.requester_against(&bidder).await;
    assert_eq!(result.event, "no_bids", "{result:?}");
    assert!(bidder.state().rfps_seen.is_empty());
    let answered = logged(&log, "submitRfp_result");
    assert!(
        answered.iter().any(|line| line.contains("\"status\":502")),
        "our bidder answered that the requester's PDS could not be reached: {answered:?}"
    );
}

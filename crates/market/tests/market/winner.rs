//! The winner's repo followed live while the contract waits for its guest, against the real
//! PDS and a local bidder: the bidder's `vm.onNetwork` wakes the wait within a second although
//! the timed reads are minutes apart, and the stream closes once the contract is Deployed;
//! where the winner's stream is refused, the timed reads still see the guest; a commit to the
//! winner's events names the contracts waiting on it (for the controller to run them at once),
//! and a commit elsewhere in its repo does not.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use swdesk_auction::compute::ComputeContractObject;
use swdesk_auction::deadline::Deadlines;
use swdesk_auction::flow::Step;
use swdesk_auction::market::Market;
use swdesk_kernel::timestamp::Clock;
use swdesk_market::winner_stream::WinnerStreams;
use swdesk_market::{OfferingSource, RequesterMarket, Settings, SystemClock};
use swdesk_net::Outbound;
use swdesk_sandbox_bidder::{Behaviour, GuestPhase, RunningBidder};
use tokio::io::AsyncWriteExt as _;
use url::Url;

use crate::support::*;

/// Minutes between timed reads: only the stream can wake the wait in a test's time.
const MINUTES: Duration = Duration::from_secs(600);
/// Each boot step of the bidder's guest: the wait is under way when it reports.
const BOOT_STEP: Duration = Duration::from_millis(1_500);

/// One advance waits up to a minute for the guest; timed reads `guest_poll` apart while the
/// winner's stream is down, minutes apart while it is live.
fn waiting(guest_poll: Duration) -> Settings {
    Settings {
        longest_wait: Duration::from_secs(60),
        guest_poll,
        live_guest_poll: MINUTES,
        deadlines: Deadlines::DEFAULT,
    }
}

async fn slow_booting_bidder(sandbox: &Sandbox) -> RunningBidder {
    let mut config = sandbox
        .kit
        .bidder_config("bidder", Behaviour::default())
        .await;
    config.boot_step = BOOT_STEP;
    swdesk_sandbox_bidder::start(config)
        .await
        .expect("the bidder starts")
}

/// Drives the contract to its verified receipt: the next advance waits for the guest.
async fn to_the_wait(market: &TestMarket, contract: &mut ComputeContractObject) {
    drive(market, contract, Duration::from_secs(90), |status| {
        status
            .flow
            .as_ref()
            .is_some_and(|flow| matches!(flow.step, Step::ReceiptVerified { .. }))
    })
    .await;
}

/// When the bidder's guest went on the network (its `vm.onNetwork` written), watched closely.
async fn on_network_at(bidder: &RunningBidder) -> Instant {
    loop {
        let state = bidder.state();
        if state
            .guests
            .iter()
            .any(|guest| guest.phase == GuestPhase::OnNetwork)
        {
            return Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The one advance that waits for the guest, beside the moment the guest reported; the
/// advance's status, when it returned, and when the guest reported.
async fn wait_for_the_guest(
    market: &TestMarket,
    contract: &ComputeContractObject,
    bidder: &RunningBidder,
) -> (
    swdesk_auction::compute::ComputeContractStatus,
    Instant,
    Instant,
) {
    let advance = async {
        let status = tokio::time::timeout(
            Duration::from_secs(20),
            market.advance(contract, SystemClock.now()),
        )
        .await
        .expect("the wait ends within 20 s of its start (its timed reads are minutes apart)")
        .expect("the market advances");
        (status, Instant::now())
    };
    let ((status, returned), reported) = tokio::join!(advance, on_network_at(bidder));
    (status, returned, reported)
}

#[tokio::test]
async fn the_winners_vm_on_network_wakes_the_wait_within_a_second_and_the_stream_then_closes() {
    let sandbox = sandbox().await;
    let bidder = slow_booting_bidder(&sandbox).await;
    let owner = sandbox.owner().await;
    let market = owner.market(&[&bidder]).with_settings(waiting(MINUTES));
    let mut contract = contract(window(2, true), None, None);
    to_the_wait(&market, &mut contract).await;

    let winners = market.winner_streams().expect("the winners are followed");
    let (status, returned, reported) = wait_for_the_guest(&market, &contract, &bidder).await;
    assert!(deployed(&status), "Deployed: {:?}", status.message);
    let lag = returned.saturating_duration_since(reported);
    assert!(
        lag < Duration::from_secs(2),
        "Deployed {lag:?} after the bidder wrote vm.onNetwork"
    );
    assert!(
        !winners.follows(&bidder.account),
        "the winner's stream closes once no contract waits on it"
    );
}

#[tokio::test]
async fn where_the_winners_stream_is_refused_the_timed_reads_still_see_the_guest() {
    let sandbox = sandbox().await;
    let bidder = slow_booting_bidder(&sandbox).await;
    let owner = sandbox.owner().await;
    let (refusing, asked) = refusing_websockets().await;
    let policy = resolver(&owner.identity, &[&bidder])
        .http()
        .policy()
        .clone()
        .with_loopback_service(&refusing);
    let streams =
        swdesk_atproto::identity::Resolver::new(owner.identity.clone(), Outbound::new(policy));
    let market = RequesterMarket::connect(
        owner.agent.clone(),
        resolver(&owner.identity, &[&bidder]),
        OfferingSource::Repos(vec![bidder.account.clone()]),
        owner.key.clone(),
    )
    .following_winners(WinnerStreams::at(streams, refusing))
    .with_settings(waiting(Duration::from_millis(200)));
    let mut contract = contract(window(2, true), None, None);
    to_the_wait(&market, &mut contract).await;

    let (status, returned, reported) = wait_for_the_guest(&market, &contract, &bidder).await;
    assert!(deployed(&status), "Deployed: {:?}", status.message);
    assert!(
        returned.saturating_duration_since(reported) < Duration::from_secs(2),
        "the timed reads saw the guest soon"
    );
    assert!(
        asked.load(Ordering::SeqCst) >= 1,
        "the winner's stream was asked for (and refused)"
    );
}

/// A service on loopback that answers every connection with `400 Bad Request` (a PDS that
/// serves no `subscribeRepos`), and how many connections it refused.
async fn refusing_websockets() -> (Url, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let refusal =
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(refusal).await;
        }
    });
    (
        Url::parse(&format!("http://localhost:{port}")).unwrap(),
        asked,
    )
}

#[tokio::test]
async fn a_commit_to_the_winners_events_names_the_contracts_waiting_on_it_and_others_do_not() {
    let sandbox = sandbox().await;
    let winner = sandbox.kit.pds.create_account("winner").await.unwrap();
    let streams = WinnerStreams::new(resolver(&sandbox.kit.identity, &[]));
    let mut woken = streams.woken();
    let mut wake = streams.hold("web-vm", &winner.did);
    let live = tokio::time::timeout(Duration::from_secs(20), async {
        while !wake.live_now() {
            wake.heard().await;
        }
    });
    live.await.expect("the winner's stream is live within 20 s");
    // The first connect's listing wakes it too, and so may the new account's own `#identity`
    // and `#account` events if the PDS sequences them after the stream opened: let every
    // wake-up pass (quiet for 2 s) before the commits.
    let quiet = async {
        while tokio::time::timeout(Duration::from_secs(2), woken.recv())
            .await
            .is_ok()
        {}
    };
    tokio::time::timeout(Duration::from_secs(30), quiet)
        .await
        .expect("the stream's first wake-ups end within 30 s");

    let other = serde_json::json!({"$type": "app.bsky.actor.profile", "displayName": "w"});
    (sandbox.kit.pds)
        .put_record_as(&winner, "app.bsky.actor.profile", "self", &other)
        .await
        .unwrap();
    let event = serde_json::json!({"$type": swdesk_lexicon::com::publicdomainrelay::temp::market::event::NSID});
    (sandbox.kit.pds)
        .put_record_as(
            &winner,
            swdesk_lexicon::com::publicdomainrelay::temp::market::event::NSID,
            "3lwake",
            &event,
        )
        .await
        .unwrap();
    let named = tokio::time::timeout(Duration::from_secs(5), woken.recv())
        .await
        .expect("the contract is named within 5 s of the commit")
        .unwrap();
    assert_eq!(named, "web-vm");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        woken.try_recv().is_err(),
        "named once: the profile's commit woke nothing"
    );
    streams.release("web-vm");
    assert!(
        !streams.follows(&winner.did),
        "the last hold closes the stream"
    );
}

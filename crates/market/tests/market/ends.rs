//! Every contract ends: the hostile bidder of `hostile.rs` on loopback, through the requester's
//! whole flow (`RequesterMarket::advance`, the status persisted between calls as the controller
//! does). A receipt that never appears fails the contract at its deadline, saying while it
//! waits why, when the next try is and when it gives up; an answer at one byte a second ends at
//! its call's total time and its step at the step's deadline, as does a name that never
//! resolves. A release to an address the owner's policy refuses, a URL no client can send, a
//! bidder's definite refusal (a 4xx) and a name that resolves to a place the policy refuses fail
//! at once, naming why, and are not tried again. Deadlines are seconds here; the owner's repo
//! is in memory (what is under test is the bidder's side).

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_auction::bids::{Cost, CountedBid};
use swdesk_auction::compute::{ComputeContractObject, ComputePhase, StrongRef};
use swdesk_auction::deadline::Deadlines;
use swdesk_auction::flow::{Flow, Held, Step, Won};
use swdesk_auction::market::Market;
use swdesk_devnet::canary::Canary;
use swdesk_kernel::repo::memory::MemoryRepo;
use swdesk_kernel::timestamp::Clock;
use swdesk_market::{HttpPeers, OfferingSource, Peers, RequesterMarket, Settings, SystemClock};
use swdesk_net::{Dns, NetPolicy, Outbound};
use url::Url;

use crate::hostile::{FixedToken, Hostile, phantom_receipt};
use crate::support::{contract, persisted, quick_settings, release, window};

type HostileMarket = RequesterMarket<MemoryRepo, HttpPeers<FixedToken>>;

/// The requester over an in-memory repo, reaching the other parties through `peers`, with
/// these `deadlines`.
fn market(peers: HttpPeers<FixedToken>, deadlines: Deadlines) -> HostileMarket {
    let settings = Settings {
        deadlines,
        ..quick_settings()
    };
    RequesterMarket::new(
        Arc::new(MemoryRepo::new("did:plc:owner")),
        Arc::new(peers),
        AttestationKey::generate(Curve::P256),
        Arc::new(SystemClock),
        settings,
    )
}

fn strong(uri: &str) -> StrongRef {
    StrongRef {
        uri: uri.to_owned(),
        cid: "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm".to_owned(),
    }
}

/// A contract whose flow is at `step`.
fn at_step(step: Step) -> ComputeContractObject {
    let mut contract = contract(window(1, false), None, None);
    contract.status.flow = Some(Flow {
        step,
        ..Flow::start(SystemClock.now())
    });
    contract
}

/// Our accept is written; the winning bid names `submit_accept` as its service.
fn accept_written(submit_accept: String) -> Step {
    let bid = strong("at://did:plc:phantom/com.publicdomainrelay.temp.market.bid/3lbid");
    let winner = CountedBid {
        bidder: "did:plc:phantom".to_owned(),
        bid: bid.clone(),
        terms: bid,
        cost: Cost::ZERO,
        free: true,
        submit_accept: Some(submit_accept),
        received_at: SystemClock.now(),
        checked: None,
    };
    Step::AcceptWritten {
        won: Won {
            rfp: strong("at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lrfp"),
            winner,
            bid_count: 1,
        },
        accept: strong("at://did:plc:owner/com.publicdomainrelay.temp.market.accept/3lacc"),
    }
}

/// Advances `contract` (persisting each status) until it is finished or `limit` passed;
/// every message it showed on the way.
async fn drive(
    market: &HostileMarket,
    contract: &mut ComputeContractObject,
    limit: Duration,
) -> Vec<String> {
    let deadline = Instant::now() + limit;
    let mut said = Vec::new();
    while !contract.status.is_finished() && Instant::now() < deadline {
        let status = market
            .advance(contract, SystemClock.now())
            .await
            .expect("the market advances");
        contract.status = persisted(&status);
        said.extend(contract.status.message.clone());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    said
}

#[tokio::test]
async fn a_receipt_that_never_appears_fails_the_contract_at_its_deadline() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let deadlines = Deadlines {
        receipt: Duration::from_secs(2),
        ..Deadlines::DEFAULT
    };
    let market = market(hostile.peers(), deadlines);
    let mut contract = at_step(accept_written(hostile.service("phantom")));
    let started = Instant::now();
    let said = drive(&market, &mut contract, Duration::from_secs(20)).await;

    assert_eq!(contract.status.phase, ComputePhase::Failed, "{said:?}");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(2), "{waited:?}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    let retrying = said
        .iter()
        .find(|message| message.starts_with("retrying: "))
        .expect("the wait was shown as retrying");
    assert!(
        retrying.contains("is not there yet") && retrying.contains("; next try at "),
        "{retrying}"
    );
    assert!(retrying.contains(", gives up at "), "{retrying}");
    let reason = contract.status.message.clone().unwrap();
    assert!(reason.starts_with("gave up at "), "{reason}");
    assert!(
        reason.contains("acceptSent waited 2 s for the receipt to appear and verify"),
        "{reason}"
    );
    assert_eq!(
        contract.status.receipt,
        Some(strong(phantom_receipt()["uri"].as_str().unwrap())),
        "the receipt named is kept, so a guest it may stand for can be released"
    );
    assert_eq!(contract.status.retrying, None);
}

/// Accepting through `peers` at `service` is retried, shown as `retrying: ` with `why`, and
/// fails at a step deadline of 2 s, naming it, well within 10 s.
async fn gives_up_at_the_steps_deadline(peers: HttpPeers<FixedToken>, service: String, why: &str) {
    let deadlines = Deadlines {
        step: Duration::from_secs(2),
        ..Deadlines::DEFAULT
    };
    let market = market(peers, deadlines);
    let mut contract = at_step(accept_written(service));
    let started = Instant::now();
    let said = drive(&market, &mut contract, Duration::from_secs(30)).await;
    assert_eq!(contract.status.phase, ComputePhase::Failed, "{said:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{said:?}");
    let retried = |message: &String| message.starts_with("retrying: ") && message.contains(why);
    assert!(said.iter().any(retried), "{said:?}");
    let reason = contract.status.message.clone().unwrap();
    assert!(
        reason.contains("acceptWritten waited 2 s for the step to succeed"),
        "{reason}"
    );
}

#[tokio::test]
async fn an_answer_at_one_byte_a_second_ends_at_its_total_time_and_the_step_at_its_deadline() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let peers = hostile.peers().with_timeout(Duration::from_millis(700));
    gives_up_at_the_steps_deadline(peers, hostile.service("trickle"), "timed out").await;
}

#[tokio::test]
async fn a_name_that_never_resolves_gives_up_at_its_steps_deadline() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let nowhere = "did:web:nowhere.invalid#temp_market".to_owned();
    let why = "did:web:nowhere.invalid does not resolve";
    gives_up_at_the_steps_deadline(hostile.peers(), nowhere, why).await;
}

#[tokio::test]
async fn a_bidders_definite_refusal_fails_the_step_at_once() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let market = market(hostile.peers(), Deadlines::DEFAULT);
    let mut contract = at_step(accept_written(hostile.service("shout")));
    let said = drive(&market, &mut contract, Duration::from_secs(20)).await;
    assert_eq!(contract.status.phase, ComputePhase::Failed, "{said:?}");
    assert_eq!(said.len(), 1, "one try, no retry: {said:?}");
    let reason = contract.status.message.clone().unwrap();
    assert!(
        reason.contains("answered 400 Bad Request: Nope"),
        "{reason}"
    );
}

/// A deployed contract whose guest's events go to `submit_event`, released now.
fn deployed_and_released(submit_event: String) -> ComputeContractObject {
    let held = Held {
        receipt: strong(phantom_receipt()["uri"].as_str().unwrap()),
        submit_event,
        bidder: "did:plc:phantom".to_owned(),
        checked: None,
    };
    let mut contract = at_step(Step::Deployed { held });
    contract.status.phase = ComputePhase::Deployed;
    release(&mut contract, SystemClock.now());
    contract
}

#[tokio::test]
async fn a_release_to_an_address_the_policy_refuses_fails_at_once_and_is_not_sent_again() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    for mode in ["canary", "to-canary", "to-metadata"] {
        let market = market(hostile.peers(), Deadlines::DEFAULT);
        let mut contract = deployed_and_released(hostile.service(mode));
        let said = drive(&market, &mut contract, Duration::from_secs(20)).await;
        assert_eq!(
            contract.status.phase,
            ComputePhase::Failed,
            "{mode}: {said:?}"
        );
        assert!(
            !said.iter().any(|message| message.starts_with("retrying")),
            "{mode}: not retried: {said:?}"
        );
        let reason = contract.status.message.clone().unwrap();
        assert!(
            reason.starts_with("the release was not acknowledged: "),
            "{mode}: {reason}"
        );
        assert!(
            reason.contains("not called") || reason.contains("redirect"),
            "{mode}: {reason}"
        );
        assert!(contract.status.holds_guest(), "{mode}: the receipt is kept");
        let again = market.advance(&contract, SystemClock.now()).await.unwrap();
        assert_eq!(
            again, contract.status,
            "{mode}: the same request is not sent again"
        );
    }
    assert_eq!(canary.connections(), 0, "no connection reached the canary");
}

#[tokio::test]
async fn a_url_no_client_can_send_fails_the_step_at_once() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let long = format!(
        "http://localhost:{}/{}",
        hostile.port(),
        "a".repeat(100 * 1024)
    );
    let refused = hostile
        .peers()
        .fetch_grant(&long, &strong("at://did:plc:owner/x.y.z/3l"))
        .await
        .expect_err("a 100 KiB URL cannot be sent");
    assert!(!refused.transient, "{refused:?}");
    assert!(
        refused.message.contains("the request cannot be made"),
        "{refused:?}"
    );

    let market = market(hostile.peers(), Deadlines::DEFAULT);
    let mut contract = at_step(accept_written(long));
    let said = drive(&market, &mut contract, Duration::from_secs(20)).await;
    assert_eq!(contract.status.phase, ComputePhase::Failed, "{said:?}");
    assert_eq!(said.len(), 1, "one try, no retry: {said:?}");
    let reason = contract.status.message.clone().unwrap();
    assert!(reason.contains("the request cannot be made"), "{reason}");
    assert!(reason.len() < 4096, "the URL is not quoted whole");
    assert_eq!(canary.connections(), 0);
}

/// A DNS that answers every name with this machine's loopback address, as a peer's own
/// nameserver may.
#[derive(Debug)]
struct ToLoopback;

impl Dns for ToLoopback {
    fn lookup(
        &self,
        _name: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        Box::pin(async { Ok(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]) })
    }
}

#[tokio::test]
async fn a_name_the_policy_refuses_once_resolved_fails_at_once_not_as_an_outage() {
    let canary = Canary::start().await.unwrap();
    let unused = Url::parse("http://localhost:1").unwrap();
    let identity = IdentityConfig::sandbox(unused.clone(), unused);
    let outbound = Outbound::with_dns(NetPolicy::public(), Arc::new(ToLoopback));
    let peers = HttpPeers::new(
        Resolver::new(identity, outbound),
        FixedToken,
        OfferingSource::Repos(Vec::new()),
    );
    let grant = format!("https://grants.example:{}/grant", canary.port);
    let refused = peers
        .fetch_grant(&grant, &strong("at://did:plc:owner/x.y.z/3l"))
        .await
        .expect_err("a name resolving to loopback is not called");
    assert!(!refused.transient, "{refused:?}");
    assert!(
        refused.message.contains("not called") && refused.message.contains("loopback"),
        "{refused:?}"
    );
    assert_eq!(canary.connections(), 0);
}

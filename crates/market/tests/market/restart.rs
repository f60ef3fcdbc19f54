//! Real kills of the requester (issue 8): the requester runs as a process of its own
//! (`headless.rs`: the controller's engine over a real SQLite store file, the
//! `RequesterMarket`, the owner's real repo on the sandbox PDS) and is SIGKILLed at every step
//! of the flow, twice a step: right after the step was persisted, and right after its next
//! action was done but before that action's result was persisted. A fresh process on the same
//! file takes over each time. The same contract deploys and releases with exactly one RFP and
//! one accept in the owner's repo, one guest at the bidder (an in-process sandbox bidder),
//! torn down once, and a receipt that verifies. The bidder bids free terms: only a free bid can
//! win, as this app does not pay.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use swdesk_atproto::attestation::verify_inline_signatures;
use swdesk_auction::compute::{
    ComputeContractObject, ComputeContractSpec, ComputePhase, StrongRef,
};
use swdesk_auction::flow::Step;
use swdesk_kernel::timestamp::Clock;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::delete;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{accept, accepts, event, receipt, rfp};
use swdesk_market::SystemClock;
use swdesk_sandbox_bidder::{Behaviour, GuestPhase, RunningBidder};
use swdesk_store::Store;
use tokio::io::{AsyncBufReadExt, BufReader};
use url::Url;

use crate::headless::{ANNOUNCE, CHILD_ARGS, Hold, SETUP_ENV, Setup, step_label};
use crate::support::*;

/// The steps to a deployed guest, in order.
const TO_DEPLOYED: [&str; 13] = [
    "planned",
    "vmWritten",
    "policyWritten",
    "rfpWritten",
    "rfpSent",
    "bidsCollected",
    "winnerChosen",
    "freeAcceptWritten",
    "grantReceived",
    "acceptWritten",
    "acceptSent",
    "receiptVerified",
    "deployed",
];
/// The release's steps, in order.
const TO_RELEASED: [&str; 4] = [
    "releasing",
    "releasing:deleteWritten",
    "releasing:eventWritten",
    "released",
];
/// A safety limit on one child's silence; a step takes far less.
const CHILD_SILENCE_LIMIT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_requester_killed_at_every_step_completes_the_same_contract_with_one_rfp_and_one_accept()
{
    let sandbox = sandbox().await;
    let bidder = sandbox
        .bidder(Behaviour {
            bid_delay: Duration::from_millis(300),
            ..Behaviour::default()
        })
        .await;
    let owner = sandbox.owner().await;
    let dir = tempfile::tempdir().unwrap();
    // The window outlasts the restarts around it: a bid counted late would reject the contract.
    let requester = Requester::new(dir.path().join("objects.sqlite"), &sandbox, &owner, &bidder);
    let started = Instant::now();

    let mut kills = requester.kill_at_each(&TO_DEPLOYED).await;
    let deployed = requester.contract();
    assert_eq!(deployed.status.phase, ComputePhase::Deployed);
    let receipt = deployed.status.receipt.clone().expect("a receipt");
    assert_one_deal(&owner, &bidder, &receipt).await;
    requester.ask_release();
    kills.extend(requester.kill_at_each(&TO_RELEASED).await);

    let released = requester.contract();
    let flow = released.status.flow.as_ref().map(|flow| &flow.step);
    assert_eq!(
        flow,
        Some(&Step::Released {
            receipt: Some(receipt.clone())
        })
    );
    assert_eq!(released.status.phase, ComputePhase::Released);
    assert!(!released.status.holds_guest());
    assert_one_deal(&owner, &bidder, &receipt).await;
    assert_released_once(&owner, &bidder, &receipt).await;
    // Each step killed once persisted, and once its action was done (the resting ones have none).
    assert_eq!(kills.len(), 2 * (TO_DEPLOYED.len() + TO_RELEASED.len()) - 2);
    eprintln!(
        "{} kills in {:?}: {kills:?}",
        kills.len(),
        started.elapsed()
    );
}

/// The requester of one contract, run as processes over one store file.
struct Requester {
    store: PathBuf,
    setup: Setup,
    contract: ComputeContractObject,
}

impl Requester {
    /// A store file holding a requested contract, and what its processes need.
    fn new(store: PathBuf, sandbox: &Sandbox, owner: &Owner, bidder: &RunningBidder) -> Self {
        let contract = contract(window(10, false), None, None);
        Store::open(&store).unwrap().create(&contract).unwrap();
        let setup = Setup {
            store: store.clone(),
            plc_url: Url::parse(&sandbox.kit.pds.info().plc_url).unwrap(),
            pds_url: Url::parse(&sandbox.kit.pds.info().pds_url).unwrap(),
            session: owner.stored_session(),
            key: owner.key.to_secret_bytes(),
            bidder: bidder.account.clone(),
            bidder_url: bidder.url.clone(),
            hold: Hold::Persisted("none".to_owned()),
        };
        Self {
            store,
            setup,
            contract,
        }
    }

    /// Kills a fresh process right after each of `steps` was persisted and, but for the
    /// resting last one, again right after its next action was done; checks that each kill
    /// left the store at that step; answers where each process held.
    async fn kill_at_each(&self, steps: &[&str]) -> Vec<String> {
        let mut kills = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            let mut holds = vec![Hold::Persisted((*step).to_owned())];
            if index + 1 < steps.len() {
                holds.push(Hold::Done((*step).to_owned()));
            }
            for hold in holds {
                let held = self.run_until_held(hold).await;
                let left = step_label(&self.contract().status);
                assert_eq!(left, *step, "killed when it held at {held}");
                kills.push(held);
            }
        }
        kills
    }

    /// Starts a requester process told to `hold`, reads its announcements until it holds,
    /// SIGKILLs it there; answers where it held.
    async fn run_until_held(&self, hold: Hold) -> String {
        let setup = Setup {
            hold: hold.clone(),
            ..self.setup.clone()
        };
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args(CHILD_ARGS)
            .env(SETUP_ENV, serde_json::to_string(&setup).unwrap())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = tokio::time::timeout(CHILD_SILENCE_LIMIT, lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("the requester went quiet, told {hold:?}"))
                .unwrap()
                .unwrap_or_else(|| panic!("the requester exited, told {hold:?}"));
            let Some(said) = line.strip_prefix(ANNOUNCE) else {
                continue;
            };
            if let Some(held) = said.strip_prefix("holding ") {
                child.kill().await.unwrap();
                return held.to_owned();
            }
            let ended = matches!(said, "at failed" | "at rejected");
            assert!(!ended, "the contract ended: {:?}", self.contract().status);
        }
    }

    /// The contract as the store file has it now.
    fn contract(&self) -> ComputeContractObject {
        Store::open(&self.store)
            .unwrap()
            .get::<ComputeContractSpec>(&self.contract.metadata.name)
            .unwrap()
            .expect("the contract is in the store")
    }

    /// The owner asks for the release, as the deployment's lifecycle does.
    fn ask_release(&self) {
        let mut contract = self.contract();
        release(&mut contract, SystemClock.now());
        Store::open(&self.store)
            .unwrap()
            .replace::<ComputeContractSpec>(&contract)
            .unwrap();
    }
}

/// One payload, one RFP (open: no policy), one `accepts.free` and one accept in the owner's
/// repo; one bid, one grant and one guest at the bidder; one receipt, signed by the bidder and
/// bound to our RFP and accept.
async fn assert_one_deal(owner: &Owner, bidder: &RunningBidder, held: &StrongRef) {
    for collection in [vm::NSID, accepts::free::NSID] {
        assert_eq!(owner.records(collection).await.len(), 1, "{collection}");
    }
    let rfp = only(owner.records(rfp::NSID).await);
    assert!(rfp["value"].get("policy").is_none(), "{rfp}");
    let accept = only(owner.records(accept::NSID).await);
    let seen = bidder.state();
    assert_eq!(seen.bids.len(), 1, "one bid on the one RFP");
    assert_eq!(seen.grants.len(), 1, "one free grant");
    assert_eq!(seen.guests.len(), 1, "one guest: {:?}", seen.guests);
    assert_eq!(&seen.guests[0].receipt, held);
    assert_eq!(seen.guests[0].accept_author, owner.agent.did());

    let receipt = only(list_records(&owner.identity, &bidder.account, receipt::NSID).await);
    assert_eq!(strong(&receipt), *held);
    let checks = verify_inline_signatures(&receipt["value"], &bidder.account);
    assert!(!checks.is_empty(), "the receipt is signed");
    assert!(
        checks.iter().all(|check| check.result.is_ok()),
        "{checks:?}"
    );
    assert_eq!(strong(&receipt["value"]["rfp"]), strong(&rfp));
    assert_eq!(strong(&receipt["value"]["accept"]), strong(&accept));
}

/// The guest was torn down by our one release (one `vm.delete`, one `market.event`).
async fn assert_released_once(owner: &Owner, bidder: &RunningBidder, held: &StrongRef) {
    assert_eq!(owner.records(delete::NSID).await.len(), 1);
    let event = only(owner.records(event::NSID).await);
    let seen = bidder.state();
    let guest = seen.guest(&held.uri).expect("the guest");
    assert_eq!(guest.phase, GuestPhase::TornDown);
    assert_eq!(guest.released_by.as_ref(), Some(&strong(&event)));
    assert_eq!(seen.running(), 0);
}

/// The one record of a listing.
fn only(mut records: Vec<Value>) -> Value {
    assert_eq!(records.len(), 1, "{records:?}");
    records.remove(0)
}

/// The `{uri, cid}` of a listed record or of a strong ref in a record.
fn strong(value: &Value) -> StrongRef {
    StrongRef {
        uri: value["uri"].as_str().unwrap_or_default().to_owned(),
        cid: value["cid"].as_str().unwrap_or_default().to_owned(),
    }
}

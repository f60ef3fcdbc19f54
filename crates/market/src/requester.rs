//! [`RequesterMarket`]: the auction's `Market` port, the requester side of the RFP flow. Each
//! `advance` reads the contract's persisted [`Flow`] from its status, takes ONE step (what
//! [`Flow::next`] says: write a record, send the RFP, count bids, choose, settle, accept,
//! verify, wait for the guest, release), applies its outcome, and returns the status with the
//! new flow; the controller persists it before calling again, so a restart resumes exactly
//! there.
//!
//! Records are written with `putRecord` under the flow's fixed record keys
//! ([`record_key`]) and signed with `issuedAt` = the key's own time, so the same step redone
//! after a crash writes byte-identical records (deterministic ECDSA): never a second RFP or
//! accept. The step's record kinds: `compute.vm` (unsigned), the policy, `market.rfp`,
//! `market.accepts.free`, `market.accept`, `market.event` (signed inline), and
//! `compute.events.vm.delete` (unsigned).
//!
//! Once Deployed, each look also reads the receipt again for drift ([`drift`]) and seals and
//! delivers the contract's secrets to its guest ([`deliver`]).
//!
//! Failures: a failure worth retrying (unreachable PDS or bidder, 5xx, a call past its total
//! time) leaves the flow where it is, and the status says why, when the next try is and when
//! the step gives up (the auction's `deadline`: the receipt within minutes of the accept,
//! the release within an hour, any other step within its own); past that the contract fails
//! naming the step and its deadline. What cannot heal fails the step at once: a refusal (4xx
//! other than 408, 425, 429), an address the owner's policy refuses, a URL no client can send
//! (the kernel's `retry::Failure`). A failed contract keeps any receipt, so its guest can be
//! released; a failed release is sent again when the owner asks again.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use swdesk_atproto::attestation::{
    AttestationKey, SignatureCheck, sign_record_as, verified_signers,
};
use swdesk_auction::bidders::{FoundOffering, asked_bidders, offering_repos};
use swdesk_auction::bids::{
    Auction, CountedBid, Decision, Declined, ReceivedBid, admit, author_of, decide,
};
use swdesk_auction::compute::{
    self, ComputeContractObject, ComputeContractStatus, ComputePhase, GuestEvent, StrongRef,
};
use swdesk_auction::deadline::{Deadlines, after_failure};
use swdesk_auction::flow::{Flow, Held, Next, Outcome, RecordRole, Step, record_key};
use swdesk_auction::market::{Market, MarketError};
use swdesk_auction::receipt::{Deal, FreeAcceptance, verify_grant, verify_stored_receipt};
use swdesk_auction::records;
use swdesk_auction::request::{RequestPlan, plan, rfp};
use swdesk_auction::trust::{KeyBinding, LINKED_CAP, LINKED_VALUE_MAX, LinkedRecord, RecordCheck};
use swdesk_kernel::repo::{ProvenRecord, Provenance, RecordRepo, RepoError, StoredRecord, Swap};
use swdesk_kernel::retry::Fault;
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::secret::SecretVault;
use swdesk_kernel::timestamp::{Clock, SystemClock, Timestamp};
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::Record;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::delete;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    accept, accepts, bid, event, offering, receipt, receipts, rfp as rfp_nsid,
};
use swdesk_lexicon::text::peer_text;

use swdesk_atproto::identity::Resolver;
use swdesk_atproto::service_auth::ServiceAuth;
use swdesk_atproto::{Agent, PdsRepo};

use crate::collector::Collector;
use crate::guest::{Reported, Unbound, about_receipt};
use crate::issuer::{OwnerListing, read_listing};
use crate::keys;
use crate::peers::{HttpPeers, OfferingSource, PEER_WORDS_MAX, PeerError, Peers};
use crate::status::project;
use crate::winner_stream::{Wake, WinnerStreams};

mod deliver;
mod drift;

/// The fragment of a bidder's market service when its offering names none.
pub const MARKET_SERVICE: &str = "#temp_market";
/// Where the accept says the guest's events go: the owner's compute-event service in the
/// public implementation's naming. The app serves none: a provider writes its events to its own
/// repo before it pushes them (the public one only when the accept names a place), and the app
/// reads them there.
pub const EVENT_SERVICE: &str = "#pdr_temp_compute_event";
/// How long the guest may take to report `vm.onNetwork` when `vmReadyTimeoutSec` is absent.
pub const DEFAULT_GUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// The least time between two reads of the guest's events woken by the winner's stream.
const WOKEN_READS_APART: Duration = Duration::from_millis(100);

/// The requester's knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The longest one `advance` waits for a bid or for the guest before it returns.
    pub longest_wait: Duration,
    /// How often the guest's events are looked for while waiting and the winner's repo is
    /// not followed live (no stream, or it is down).
    pub guest_poll: Duration,
    /// The same while the winner's repo is followed live: a safety net only, since the
    /// stream wakes the wait when the bidder's events change.
    pub live_guest_poll: Duration,
    /// How long each step may keep failing before the contract fails.
    pub deadlines: Deadlines,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            longest_wait: Duration::from_secs(5),
            guest_poll: Duration::from_millis(250),
            live_guest_poll: Duration::from_secs(10),
            deadlines: Deadlines::DEFAULT,
        }
    }
}

/// What one step produced: the outcomes to apply, in order, the guest events newly seen and
/// the bids that arrived and do not count.
#[derive(Debug, Default)]
struct Stepped {
    outcomes: Vec<Outcome>,
    events: Vec<GuestEvent>,
    refused: Vec<compute::Bid>,
}

impl From<Vec<Outcome>> for Stepped {
    fn from(outcomes: Vec<Outcome>) -> Self {
        Self {
            outcomes,
            ..Self::default()
        }
    }
}

/// Why a step did not produce an outcome.
#[derive(Debug)]
enum Stop {
    /// Try again later; shown in the status.
    Retry(String),
    /// The contract fails for good.
    Fail(String),
}

impl Stop {
    /// Why, whichever it is (for what is retried at the next look either way).
    fn into_text(self) -> String {
        match self {
            Self::Retry(why) | Self::Fail(why) => why,
        }
    }
}

impl From<RepoError> for Stop {
    fn from(error: RepoError) -> Self {
        if error.is_transient() {
            Self::Retry(format!("the repo: {error}"))
        } else {
            Self::Fail(format!("the repo: {error}"))
        }
    }
}

impl From<PeerError> for Stop {
    fn from(error: PeerError) -> Self {
        if error.transient {
            Self::Retry(error.message)
        } else {
            Self::Fail(error.message)
        }
    }
}

/// The requester side of the compute market over the owner's repo `R` and the peers `P`.
#[derive(Debug)]
pub struct RequesterMarket<R, P> {
    repo: Arc<R>,
    peers: Arc<P>,
    key: AttestationKey,
    clock: Arc<dyn Clock>,
    settings: Settings,
    collector: Collector,
    /// Set once the owner's repo is known to publish `key` (see [`crate::keys`]).
    key_published: tokio::sync::OnceCell<()>,
    /// Whether the owner's DID document lists `key`: the issuer our signatures name.
    listing: OwnerListing,
    /// Where the values of secrets sealed to guests are read; none: secrets wait.
    vault: Option<Arc<dyn SecretVault>>,
    /// The winners' repos followed while contracts wait for their guests; none: timed reads.
    winners: Option<WinnerStreams>,
}

impl RequesterMarket<PdsRepo, HttpPeers<ServiceAuth>> {
    /// The market of the signed-in `agent` (its repo through [`PdsRepo`], service auth through
    /// atproto's cached [`ServiceAuth`]), resolving identities and reaching the other parties
    /// with `resolver` (its client carries the owner's network policy), finding offerings at
    /// `offerings`, signing with `key`, on the wall clock with the default settings.
    pub fn connect(
        agent: Agent,
        resolver: Resolver,
        offerings: OfferingSource,
        key: AttestationKey,
    ) -> Self {
        let repo = Arc::new(PdsRepo::new(agent.clone(), resolver.clone()));
        RequesterMarket::connect_over(repo, agent, resolver, offerings, key)
    }
}

impl<R: RecordRepo + std::fmt::Debug + 'static> RequesterMarket<R, HttpPeers<ServiceAuth>> {
    /// The market of the signed-in `agent` writing through `repo` (the agent's repo, possibly
    /// wrapped, e.g. journaled for the Activity view), otherwise as [`RequesterMarket::connect`].
    pub fn connect_over(
        repo: Arc<R>,
        agent: Agent,
        resolver: Resolver,
        offerings: OfferingSource,
        key: AttestationKey,
    ) -> Self {
        let tokens = ServiceAuth::new(agent);
        let winners = WinnerStreams::new(resolver.clone());
        let peers = HttpPeers::new(resolver, tokens, offerings);
        Self::new(
            repo,
            Arc::new(peers),
            key,
            Arc::new(SystemClock),
            Settings::default(),
        )
        .following_winners(winners)
    }
}

impl<R: RecordRepo + std::fmt::Debug + 'static, P: Peers> RequesterMarket<R, P> {
    /// A market writing to `repo`, reaching `peers`, signing with `key` (injected: keeping it
    /// in the keychain is the caller's), timing arrivals with `clock`.
    pub fn new(
        repo: Arc<R>,
        peers: Arc<P>,
        key: AttestationKey,
        clock: Arc<dyn Clock>,
        settings: Settings,
    ) -> Self {
        Self {
            repo,
            peers,
            key,
            clock,
            settings,
            collector: Collector::default(),
            key_published: tokio::sync::OnceCell::new(),
            listing: OwnerListing::default(),
            vault: None,
            winners: None,
        }
    }

    /// The same market reading secret values from `vault` (the OS keychain in the app).
    pub fn with_vault(mut self, vault: Arc<dyn SecretVault>) -> Self {
        self.vault = Some(vault);
        self
    }

    /// The same market following each winner's repo live while a contract waits for its
    /// guest (`subscribeRepos` at `winners`), so the wait wakes when the bidder writes.
    pub fn following_winners(mut self, winners: WinnerStreams) -> Self {
        self.winners = Some(winners);
        self
    }

    /// The same market waiting for guests by timed reads only (`guest_poll`), following no
    /// winner's repo.
    pub fn timed_reads_only(mut self) -> Self {
        self.winners = None;
        self
    }

    /// The winners followed, when they are (for a controller to hear which contracts woke).
    pub fn winner_streams(&self) -> Option<&WinnerStreams> {
        self.winners.as_ref()
    }

    /// The same market with other `settings`.
    pub fn with_settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    async fn advance_flow(
        &self,
        contract: &ComputeContractObject,
        now: Timestamp,
    ) -> Result<ComputeContractStatus, MarketError> {
        let before = &contract.status;
        let Some(flow) = before.flow.clone() else {
            return Ok(self.start(contract, now));
        };
        let requested = self.release_request(contract, &flow);
        if let Some(at) = requested {
            let released = flow
                .clone()
                .apply(Outcome::ReleaseRequested(at))
                .map_err(invalid)?;
            if released != flow {
                return Ok(project(before, released, None));
            }
        }
        match self.step(contract, &flow, now).await {
            Ok(Stepped {
                outcomes,
                events,
                refused,
            }) => {
                let mut next = flow;
                for outcome in outcomes {
                    next = next.apply(outcome).map_err(invalid)?;
                }
                let held = next.held().cloned();
                let mut status = project(before, next, None);
                status.add_guest_events(events);
                status.add_refused_bids(refused);
                status.note_answers();
                match held.filter(|_| status.phase == ComputePhase::Deployed) {
                    Some(held) => {
                        self.look_for_drift(&held, &mut status.drift).await;
                        self.deliver_secrets(contract, &held, &mut status.secrets)
                            .await;
                    }
                    None => status.drift.clear(),
                }
                Ok(status)
            }
            Err(Stop::Retry(why)) => {
                let attempt = before.retries.saturating_add(1);
                let retried = after_failure(
                    before.retrying.as_ref(),
                    &flow.step,
                    why,
                    Fault::TRANSIENT,
                    attempt,
                    &self.settings.deadlines,
                    now,
                );
                match retried {
                    Ok(retrying) => Ok(project(before, flow, Some(retrying))),
                    Err(reason) => fail(before, flow, reason),
                }
            }
            Err(Stop::Fail(reason)) => fail(before, flow, reason),
        }
    }

    /// The first step: the flow starts (fixing its record keys) and is persisted before any
    /// write; a contract released before it started ends at once.
    fn start(&self, contract: &ComputeContractObject, now: Timestamp) -> ComputeContractStatus {
        let mut status = contract.status.clone();
        if contract.spec.release {
            status.phase = ComputePhase::Released;
            status.message = Some("released before any guest was rented".to_owned());
            status.release_sent_at = Some(contract.spec.release_requested_at.unwrap_or(now));
            return status;
        }
        project(&status, Flow::start(now), None)
    }

    /// The release asked for, as a time that stays the same until the owner asks again.
    fn release_request(&self, contract: &ComputeContractObject, flow: &Flow) -> Option<Timestamp> {
        contract.spec.release.then(|| {
            contract
                .spec
                .release_requested_at
                .unwrap_or(flow.started_at)
        })
    }

    /// Does what `flow.next` says; its outcomes, in order (none when there is nothing to
    /// apply yet; several when bids arrived together), and the guest events newly seen.
    async fn step(
        &self,
        contract: &ComputeContractObject,
        flow: &Flow,
        now: Timestamp,
    ) -> Result<Stepped, Stop> {
        let one = |outcome: Outcome| Stepped::from(vec![outcome]);
        Ok(match flow.next(now) {
            Next::Write(role) => one(self.write(contract, flow, role).await?),
            Next::SendRfp => one(self.open_auction(contract, flow, now).await?),
            Next::CollectBidsUntil(until) => self.collect(flow, until, now).await,
            Next::CloseBidding | Next::ChooseWinner => {
                Stepped::from(self.decide(flow).into_iter().collect::<Vec<_>>())
            }
            Next::FetchGrant => one(self.fetch_grant(flow).await?),
            Next::SendAccept => one(self.send_accept(flow).await?),
            Next::VerifyReceipt => one(self.verify(flow).await?),
            Next::AwaitGuest => self.await_guest(contract, flow).await?,
            Next::SendRelease => one(self.send_release(flow).await?),
            Next::Rest => Stepped::default(),
        })
    }

    // ---- writes -------------------------------------------------------------------------

    async fn write(
        &self,
        contract: &ComputeContractObject,
        flow: &Flow,
        role: RecordRole,
    ) -> Result<Outcome, Stop> {
        let started = flow.started_at;
        let (collection, value, at, signed) = match (role, &flow.step) {
            (RecordRole::Vm, _) => {
                let plan = planned(contract)?;
                (vm::NSID, record_value(&plan.vm)?, started, false)
            }
            (RecordRole::Policy, _) => match planned(contract)?.policy {
                None => return Ok(Outcome::NoPolicy),
                Some(policy) => {
                    let value = policy.record(self.repo.owner());
                    (policy.collection(), value, started, true)
                }
            },
            (RecordRole::Rfp, Step::PolicyWritten { vm, policy }) => {
                let value = record_value(&rfp(vm, policy.as_ref(), None))?;
                (rfp_nsid::NSID, value, started, true)
            }
            (RecordRole::FreeAccept, Step::WinnerChosen(won)) => {
                let value = record_value(&records::free_accept(won))?;
                (accepts::free::NSID, value, started, true)
            }
            (RecordRole::Accept, Step::GrantReceived { won, grant }) => {
                let events = format!("{}{EVENT_SERVICE}", self.repo.owner());
                let value = record_value(&records::accept(won, grant.as_ref(), Some(&events)))?;
                (accept::NSID, value, started, true)
            }
            (RecordRole::Delete, Step::Releasing { requested_at, .. }) => {
                let value = record_value(&records::delete_event(*requested_at))?;
                (delete::NSID, value, *requested_at, false)
            }
            (
                RecordRole::Event,
                Step::Releasing {
                    held,
                    requested_at,
                    delete: Some(delete),
                    ..
                },
            ) => {
                let value = record_value(&records::event_about(held, delete))?;
                (event::NSID, value, *requested_at, true)
            }
            (role, _) => {
                return Err(Stop::Fail(format!(
                    "the flow asks for a {role:?} record at a step that cannot write it"
                )));
            }
        };
        let value = if signed {
            self.publish_key().await?;
            self.sign(&value, at).await?
        } else {
            value
        };
        let written = self.put(collection, record_key(at, role), &value).await?;
        Ok(Outcome::Written(role, written))
    }

    /// Makes sure the owner's repo publishes the attestation key before a record signed with
    /// it goes out; looked up once per market, written only when missing.
    async fn publish_key(&self) -> Result<(), Stop> {
        let did_key = self.key.did_key();
        self.key_published
            .get_or_try_init(|| keys::publish(&*self.repo, &did_key, self.clock.now()))
            .await
            .map(|_| ())
            .map_err(|error| {
                Stop::Retry(format!(
                    "the attestation key could not be published: {error}"
                ))
            })
    }

    /// `value` signed as a record of the owner's repo, issued at `at` (the record key's time),
    /// naming the owner as issuer while the owner's DID document lists the key
    /// ([`crate::issuer`]).
    async fn sign(&self, value: &Value, at: Timestamp) -> Result<Value, Stop> {
        let issuer = self.issuer().await;
        sign_record_as(
            value,
            &self.key,
            self.repo.owner(),
            &at.to_rfc3339(),
            issuer.as_deref(),
        )
        .map_err(|error| Stop::Fail(format!("a record could not be signed: {error}")))
    }

    /// The owner's DID when its live document lists our key (read at most once a lifetime).
    async fn issuer(&self) -> Option<String> {
        let owner = self.repo.owner();
        let did_key = self.key.did_key();
        let read = read_listing(&*self.peers, owner, &did_key);
        self.listing.issuer(owner, self.clock.now(), read).await
    }

    async fn put(&self, collection: &str, rkey: String, value: &Value) -> Result<StrongRef, Stop> {
        let rkey = Rkey::parse(&rkey)
            .map_err(|error| Stop::Fail(format!("the record key {rkey}: {error}")))?;
        let written = self.repo.put(collection, &rkey, value, Swap::Any).await?;
        Ok(StrongRef {
            uri: written.uri.to_string(),
            cid: written.cid,
        })
    }

    // ---- the auction --------------------------------------------------------------------

    /// Finds the bidders and opens the window; the RFP goes out at the next step, after the
    /// auction is persisted.
    async fn open_auction(
        &self,
        contract: &ComputeContractObject,
        flow: &Flow,
        now: Timestamp,
    ) -> Result<Outcome, Stop> {
        let Step::RfpWritten { rfp } = &flow.step else {
            return Err(Stop::Fail("no RFP to send".to_owned()));
        };
        let plan = planned(contract)?;
        let offerings = self.offerings(&plan).await?;
        let asked = asked_bidders(
            &plan.bidder_dids,
            &offerings,
            &plan.deny_bidder_dids,
            vm::NSID,
        );
        tracing::info!(rfp = %rfp.uri, asked = asked.len(), "the RFP goes to the bidders");
        Ok(Outcome::RfpSent(Auction {
            rfp: rfp.clone(),
            asked,
            denied: plan.deny_bidder_dids,
            opened_at: now,
            bidding: plan.bidding,
            declined: Vec::new(),
        }))
    }

    /// Offerings in the explicit bidders' repos and those the relay lists (never in a denied
    /// one's), at most core's `MAX_OFFERING_REPOS` repos.
    async fn offerings(&self, plan: &RequestPlan) -> Result<Vec<FoundOffering>, Stop> {
        let listed = self.peers.repos_with(offering::NSID).await?;
        let repos = offering_repos(&plan.bidder_dids, listed, &plan.deny_bidder_dids);
        let mut found = Vec::new();
        for repo in repos {
            match self.repo.list(&repo, offering::NSID, None, 100).await {
                Ok(page) => found.extend(page.records.into_iter().filter_map(|record| {
                    let offering = offering::Offering::from_record_value(record.value).ok()?;
                    Some(FoundOffering {
                        bidder_did: repo.clone(),
                        offering,
                    })
                })),
                Err(error) => tracing::warn!(%repo, %error, "offerings unreadable; not asked"),
            }
        }
        Ok(found)
    }

    /// Sends the RFP (again, after a restart) to the bidders without a counted bid, waits a
    /// little for answers, counts every bid that arrived, and closes the window when it is
    /// over (or `firstFree` decided).
    async fn collect(&self, flow: &Flow, until: Timestamp, now: Timestamp) -> Stepped {
        let Step::RfpSent { auction, bids } = &flow.step else {
            return Stepped::default();
        };
        let inbox = match self.collector.inbox(&auction.rfp) {
            Some(inbox) => inbox,
            None => {
                let unanswered = auction
                    .asked
                    .iter()
                    .filter(|asked| !bids.iter().any(|bid| bid.bidder == asked.did))
                    .map(|asked| {
                        let service = asked
                            .endpoint
                            .clone()
                            .unwrap_or_else(|| format!("{}{MARKET_SERVICE}", asked.did));
                        (asked.did.clone(), service)
                    })
                    .collect();
                self.collector
                    .ask(&self.peers, &self.clock, &auction.rfp, unanswered)
            }
        };
        let left = until.since(now).min(self.settings.longest_wait);
        inbox.wait(left).await;
        let mut auction = auction.clone();
        let mut counted = bids.clone();
        let mut outcomes = Vec::new();
        let mut refused = Vec::new();
        for arrival in inbox.drain() {
            match arrival.answer {
                Ok(Some(bid)) => match self.count(&auction, bid, arrival.received_at).await {
                    Ok(bid) => {
                        counted.push(bid.clone());
                        outcomes.push(Outcome::BidCounted(bid));
                    }
                    Err(bid) => refused.push(bid),
                },
                Ok(None) => tracing::info!(bidder = %arrival.bidder, "no bid"),
                Err(error) if error.transient => {
                    tracing::warn!(bidder = %arrival.bidder, %error, "submitRfp failed");
                }
                Err(error) => {
                    let declined = self.declined(arrival.bidder, &error);
                    auction.keep_declined(declined.clone());
                    outcomes.push(Outcome::Declined(declined));
                }
            }
        }
        match decide(&auction, &counted, self.clock.now()) {
            Decision::CollectUntil(_) => {}
            decision => {
                self.collector.close(&auction.rfp);
                outcomes.push(Outcome::Decided(decision));
            }
        }
        Stepped {
            outcomes,
            refused,
            ..Stepped::default()
        }
    }

    /// A bidder's refusal of `submitRfp`, as the auction keeps it: it may be of our
    /// signature, so the owner's DID document is read afresh before the next one.
    fn declined(&self, bidder: String, error: &PeerError) -> Declined {
        tracing::warn!(%bidder, %error, "the bidder refused the RFP");
        self.listing.forget();
        Declined {
            bidder,
            reason: peer_text(&error.message, PEER_WORDS_MAX),
            signature_untrusted: error.signature_untrusted,
        }
    }

    /// The bid at `reference` as it counts, or as it is shown refused, with why.
    async fn count(
        &self,
        auction: &Auction,
        reference: StrongRef,
        received_at: Timestamp,
    ) -> Result<CountedBid, compute::Bid> {
        let refuse = |reference: &StrongRef, why: &str| {
            tracing::warn!(bid = %reference.uri, %why, "the bid does not count");
            refused_bid(reference, received_at, why)
        };
        let (fetched, checked) = match self.fetch_signed(&reference).await {
            Ok(fetched) => fetched,
            Err(Stop::Retry(why) | Stop::Fail(why)) => return Err(refuse(&reference, &why)),
        };
        let record = bid::Bid::from_record_value(fetched.value)
            .map_err(|error| refuse(&reference, &format!("not a market.bid: {error}")))?;
        let terms = self
            .terms_of(&record)
            .await
            .map_err(|why| refuse(&reference, &why))?;
        let received = ReceivedBid {
            reference,
            record,
            received_at,
            checked: Some(checked),
            terms: Some(terms),
        };
        admit(auction, &received).map_err(|refusals| {
            let why: Vec<String> = refusals.iter().map(ToString::to_string).collect();
            refuse(&received.reference, &why.join("; "))
        })
    }

    /// The terms record `bid` names (its `payload`), read at the cid named: core reads free
    /// terms for their own price.
    async fn terms_of(&self, bid: &bid::Bid) -> Result<Value, String> {
        let terms = StrongRef {
            uri: bid.payload.uri.clone(),
            cid: bid.payload.cid.clone(),
        };
        match self.fetch(&terms).await {
            Ok(terms) => Ok(terms.value),
            Err(stop) => Err(format!("its terms cannot be read: {}", stop.into_text())),
        }
    }

    fn decide(&self, flow: &Flow) -> Option<Outcome> {
        let (Step::RfpSent { auction, bids } | Step::BidsCollected { auction, bids }) = &flow.step
        else {
            return None;
        };
        self.collector.close(&auction.rfp);
        Some(Outcome::Decided(decide(auction, bids, self.clock.now())))
    }

    // ---- settlement ---------------------------------------------------------------------

    async fn fetch_grant(&self, flow: &Flow) -> Result<Outcome, Stop> {
        let Step::FreeAcceptWritten { won, free_accept } = &flow.step else {
            return Err(Stop::Fail("no accepts.free to settle".to_owned()));
        };
        let terms = self.fetch(&won.winner.terms).await?;
        let Some(url) = terms.value["url"].as_str() else {
            tracing::info!(terms = %won.winner.terms.uri, "free terms without a grant endpoint");
            return Ok(Outcome::GrantReceived(None));
        };
        let grant_ref = self.peers.fetch_grant(url, free_accept).await?;
        let (grant, _) = self.fetch_signed(&grant_ref).await?;
        let grant = receipts::free::Free::from_record_value(grant.value)
            .map_err(|error| Stop::Fail(format!("the grant is not a receipts.free: {error}")))?;
        let ours = self.fetch(free_accept).await?;
        let mismatches = verify_grant(
            &grant_ref.uri,
            &grant,
            &FreeAcceptance {
                bidder: &won.winner.bidder,
                accept: free_accept,
                accept_record: &ours.value,
                requester: self.repo.owner(),
            },
        );
        checked(mismatches, "the free grant")?;
        Ok(Outcome::GrantReceived(Some(grant_ref)))
    }

    async fn send_accept(&self, flow: &Flow) -> Result<Outcome, Stop> {
        let Step::AcceptWritten { won, accept } = &flow.step else {
            return Err(Stop::Fail("no accept to send".to_owned()));
        };
        let service = won
            .winner
            .submit_accept
            .clone()
            .unwrap_or_else(|| format!("{}{MARKET_SERVICE}", won.winner.bidder));
        let answer = self
            .peers
            .submit_accept(&service, accept)
            .await
            .inspect_err(|_| self.listing.forget())?;
        Ok(Outcome::AcceptAnswered(Held {
            receipt: answer.receipt,
            submit_event: answer.submit_event,
            bidder: won.winner.bidder.clone(),
            checked: None,
        }))
    }

    async fn verify(&self, flow: &Flow) -> Result<Outcome, Stop> {
        let Step::AcceptSent { won, accept, held } = &flow.step else {
            return Err(Stop::Fail("no receipt to verify".to_owned()));
        };
        let (fetched, check) = self.fetch_signed(&held.receipt).await?;
        let receipt = receipt::Receipt::from_record_value(fetched.value.clone())
            .map_err(|error| Stop::Fail(format!("the receipt is not a market.receipt: {error}")))?;
        let ours = self.fetch(accept).await?;
        let deal = Deal {
            rfp: &won.rfp,
            bid: &won.winner.bid,
            bidder: &won.winner.bidder,
            accept,
            accept_record: &ours.value,
            requester: self.repo.owner(),
        };
        checked(
            verify_stored_receipt(&held.receipt.uri, &receipt, &fetched.value, &deal),
            "the receipt",
        )?;
        let linked = self.linked_records(&fetched.value, &won.winner.bid).await;
        let check = RecordCheck { linked, ..check };
        Ok(Outcome::ReceiptVerified(self.clock.now(), check))
    }

    /// Looks (for a little while) for the provider's `vm.onNetwork` about our receipt in its
    /// repo, keeping every event of the guest seen on the way; fails the contract once the
    /// guest's ready timeout passed.
    async fn await_guest(
        &self,
        contract: &ComputeContractObject,
        flow: &Flow,
    ) -> Result<Stepped, Stop> {
        let Some(held) = flow.held() else {
            return Ok(Stepped::default());
        };
        let timeout = contract
            .spec
            .fields
            .vm_ready_timeout_sec
            .and_then(|seconds| u64::try_from(seconds).ok())
            .map_or(DEFAULT_GUEST_TIMEOUT, Duration::from_secs);
        let give_up = self.clock.now().saturating_add(self.settings.longest_wait);
        let mut wake = self
            .winners
            .as_ref()
            .map(|winners| winners.hold(contract.metadata.name.as_str(), &held.bidder));
        let mut seen = Stepped::default();
        let mut known: HashSet<String> = contract
            .status
            .events
            .iter()
            .map(|e| e.uri.clone())
            .collect();
        loop {
            let live = wake.as_mut().is_some_and(Wake::live_now);
            let read_at = tokio::time::Instant::now();
            let reported = self.guest_reports(held).await?;
            for report in reported
                .iter()
                .filter(|report| known.insert(report.event.clone()))
            {
                seen.events.push(self.guest_event(report).await);
            }
            if reported.iter().any(Reported::is_on_network) {
                seen.outcomes.push(Outcome::GuestReady);
                return Ok(seen);
            }
            let now = self.clock.now();
            if flow
                .guest_deadline(timeout)
                .is_some_and(|deadline| now >= deadline)
            {
                return Err(Stop::Fail(format!(
                    "the guest did not report vm.onNetwork within {} s; release it",
                    timeout.as_secs()
                )));
            }
            if now >= give_up {
                return Ok(seen);
            }
            let pace = if live {
                self.settings.live_guest_poll
            } else {
                self.settings.guest_poll
            };
            let nap = tokio::time::sleep(pace.min(give_up.since(now)));
            match wake.as_mut() {
                Some(wake) => tokio::select! {
                    () = nap => {}
                    () = wake.heard() => {
                        // A flood of commits reads no more than ten times a second.
                        tokio::time::sleep_until(read_at + WOKEN_READS_APART).await;
                    }
                },
                None => nap.await,
            }
        }
    }

    /// The bidder's `market.event`s about our receipt, each signed with keys bound to the
    /// bidder (a report signed otherwise is left out, and logged).
    async fn guest_reports(&self, held: &Held) -> Result<Vec<Reported>, Stop> {
        let page = self.repo.list(&held.bidder, event::NSID, None, 100).await?;
        let mut reports = Vec::new();
        for Unbound {
            mut report,
            signers,
        } in about_receipt(&page.records, held)
        {
            match self
                .bind_signers(&held.bidder, &signers, &report.event)
                .await
            {
                Ok(bindings) => {
                    report.bindings = bindings;
                    reports.push(report);
                }
                Err(Stop::Fail(why)) => tracing::info!(%why, "a report does not count"),
                Err(retry) => return Err(retry),
            }
        }
        Ok(reports)
    }

    /// The event to keep of `report`, its payload read when it can be (at the cid named).
    async fn guest_event(&self, report: &Reported) -> GuestEvent {
        let payload = match RecordUri::parse(&report.payload.uri) {
            Ok(uri) => self.repo.get(&uri).await.ok().flatten(),
            Err(_) => None,
        };
        let value = payload
            .as_ref()
            .filter(|record| record.cid == report.payload.cid)
            .map(|record| &record.value);
        report.to_event(value, self.clock.now())
    }

    // ---- release ------------------------------------------------------------------------

    async fn send_release(&self, flow: &Flow) -> Result<Outcome, Stop> {
        let Step::Releasing {
            held,
            event: Some(event),
            ..
        } = &flow.step
        else {
            return Err(Stop::Fail("no release event to send".to_owned()));
        };
        let written = self.fetch(event).await?;
        self.peers
            .submit_event(&held.submit_event, event, &written.value)
            .await
            .map_err(|error| PeerError {
                message: format!("the release was not acknowledged: {}", error.message),
                ..error
            })?;
        Ok(Outcome::ReleaseAcknowledged)
    }

    // ---- reading records ----------------------------------------------------------------

    /// The record `reference` names, at exactly its cid: proven by its repo's signed commit
    /// (its cid computed from its bytes), or read unproven where the repo serves no proof.
    async fn fetch(&self, reference: &StrongRef) -> Result<StoredRecord, Stop> {
        Ok(self.fetch_proven(reference).await?.record)
    }

    /// [`Self::fetch`], with how far the record is proven (a peer's why cut to one line).
    async fn fetch_proven(&self, reference: &StrongRef) -> Result<ProvenRecord, Stop> {
        let uri = RecordUri::parse(&reference.uri)
            .map_err(|error| Stop::Fail(format!("{}: {error}", reference.uri)))?;
        let ProvenRecord { record, provenance } = self
            .repo
            .prove(&uri)
            .await?
            .ok_or_else(|| Stop::Retry(format!("{} is not there yet", reference.uri)))?;
        if record.cid != reference.cid {
            return Err(Stop::Fail(format!(
                "{} is at {}, not at the cid we were given ({})",
                reference.uri, record.cid, reference.cid
            )));
        }
        let provenance = match provenance {
            Provenance::Unproven { why } => {
                let why = peer_text(&why, PEER_WORDS_MAX);
                tracing::info!(uri = %reference.uri, %why, "read without a proof");
                Provenance::Unproven { why }
            }
            proven => proven,
        };
        Ok(ProvenRecord { record, provenance })
    }

    /// The record, when it carries inline signatures that verify as its author's, each by a
    /// key bound to its author ([`keys::KeyBinding`]); with what was verified of it.
    async fn fetch_signed(
        &self,
        reference: &StrongRef,
    ) -> Result<(StoredRecord, RecordCheck), Stop> {
        let ProvenRecord { record, provenance } = self.fetch_proven(reference).await?;
        let bindings = self.author_bindings(&record).await?;
        Ok((
            record,
            RecordCheck {
                provenance,
                bindings,
                linked: Vec::new(),
            },
        ))
    }

    /// How each inline signature of `record` is bound to its author, when it carries some, all
    /// verify as its author's and all bind.
    async fn author_bindings(&self, record: &StoredRecord) -> Result<Vec<KeyBinding>, Stop> {
        let author = record.uri.authority();
        let Some(signers) = verified_signers(&record.value, author) else {
            return Err(Stop::Fail(format!(
                "{} carries no verifying inline signature of its author",
                record.uri
            )));
        };
        self.bind_signers(author, &signers, &record.uri.to_string())
            .await
    }

    /// How each of `signers` (verified signatures on `what`, a record of `author`'s) is bound
    /// to `author` ([`keys::binding`]); a refusal naming every key that is not.
    async fn bind_signers(
        &self,
        author: &str,
        signers: &[SignatureCheck],
        what: &str,
    ) -> Result<Vec<KeyBinding>, Stop> {
        let mut unbound = Vec::new();
        let mut bindings = Vec::new();
        for signer in signers {
            let binding = keys::binding(&*self.repo, &*self.peers, author, signer)
                .await
                .map_err(|error| Stop::Retry(format!("{what}: {error}")))?;
            match binding {
                Some(binding) => bindings.push(binding),
                None => unbound.push(signer.key.clone()),
            }
        }
        if !unbound.is_empty() {
            return Err(Stop::Fail(format!(
                "{what} is signed with a key neither its author {author} publishes nor its DID \
                 document or a tied issuer's lists ({})",
                unbound.join(", ")
            )));
        }
        Ok(bindings)
    }

    /// The peers' records the receipt and the winning bid link to (not the owner's own), each
    /// fetched at the cid named and kept raw, whatever its collection: the owner sees what the
    /// provider attached (its terms, a config, an allowlist) even where no lexicon knows it.
    async fn linked_records(&self, receipt: &Value, bid: &StrongRef) -> Vec<LinkedRecord> {
        let mut links = strong_links(receipt, "");
        if let Ok(bid) = self.fetch(bid).await {
            links.extend(strong_links(&bid.value, "bid."));
        }
        let owner = self.repo.owner();
        let mut seen = HashSet::new();
        links.retain(|(_, link)| {
            author_of(&link.uri).as_deref() != Some(owner) && seen.insert(link.uri.clone())
        });
        let mut linked = Vec::new();
        for (name, link) in links.into_iter().take(LINKED_CAP) {
            linked.push(self.linked_record(name, link).await);
        }
        linked
    }

    async fn linked_record(&self, link: String, reference: StrongRef) -> LinkedRecord {
        let collection = RecordUri::parse(&reference.uri)
            .map(|uri| uri.collection().to_owned())
            .unwrap_or_default();
        let known = swdesk_lexicon::validate::builtin()
            .is_ok_and(|catalog| catalog.knows_record(&collection));
        let (provenance, value) = match self.fetch_proven(&reference).await {
            Ok(ProvenRecord { record, provenance }) => (
                Some(provenance),
                peer_text(&record.value.to_string(), LINKED_VALUE_MAX),
            ),
            Err(Stop::Retry(why) | Stop::Fail(why)) => {
                (None, peer_text(&format!("not read: {why}"), PEER_WORDS_MAX))
            }
        };
        LinkedRecord {
            link,
            uri: reference.uri,
            cid: reference.cid,
            collection,
            known,
            provenance,
            value,
        }
    }
}

/// The strong references among `value`'s top-level fields (`{uri, cid}` objects), each named
/// `prefix` + its field.
fn strong_links(value: &Value, prefix: &str) -> Vec<(String, StrongRef)> {
    let Some(fields) = value.as_object() else {
        return Vec::new();
    };
    fields
        .iter()
        .filter_map(|(field, link)| {
            let uri = link.get("uri")?.as_str()?;
            let cid = link.get("cid")?.as_str()?;
            let reference = StrongRef {
                uri: uri.to_owned(),
                cid: cid.to_owned(),
            };
            Some((format!("{prefix}{field}"), reference))
        })
        .collect()
}

impl<R: RecordRepo + std::fmt::Debug + 'static, P: Peers> Market for RequesterMarket<R, P> {
    async fn advance(
        &self,
        contract: &ComputeContractObject,
        now: Timestamp,
    ) -> Result<ComputeContractStatus, MarketError> {
        let status = self.advance_flow(contract, now).await?;
        let waits = status
            .flow
            .as_ref()
            .is_some_and(|flow| matches!(flow.next(self.clock.now()), Next::AwaitGuest));
        if let Some(winners) = self.winners.as_ref().filter(|_| !waits) {
            winners.release(contract.metadata.name.as_str());
        }
        Ok(status)
    }
}

/// A bid shown refused: its author (when its uri names one), its record, `why` as one cut line.
fn refused_bid(reference: &StrongRef, received_at: Timestamp, why: &str) -> compute::Bid {
    compute::Bid {
        bidder: author_of(&reference.uri).unwrap_or_default(),
        record: reference.clone(),
        received_at,
        cost: None,
        refused: Some(peer_text(why, PEER_WORDS_MAX)),
        checked: None,
    }
}

/// The status of `flow` failed for `reason` (keeping any receipt).
fn fail(
    before: &ComputeContractStatus,
    flow: Flow,
    reason: String,
) -> Result<ComputeContractStatus, MarketError> {
    let failed = flow.apply(Outcome::Failed(reason)).map_err(invalid)?;
    Ok(project(before, failed, None))
}

fn planned(contract: &ComputeContractObject) -> Result<RequestPlan, Stop> {
    plan(&contract.spec.fields).map_err(|problems| {
        let all: Vec<String> = problems.iter().map(ToString::to_string).collect();
        Stop::Fail(format!(
            "the contract cannot be requested: {}",
            all.join("; ")
        ))
    })
}

fn record_value<T: Record>(record: &T) -> Result<Value, Stop> {
    record
        .to_record_value()
        .map_err(|error| Stop::Fail(format!("a {} record: {error}", T::NSID)))
}

fn checked<E: std::fmt::Display>(mismatches: Vec<E>, what: &str) -> Result<(), Stop> {
    if mismatches.is_empty() {
        return Ok(());
    }
    let all: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    Err(Stop::Fail(format!(
        "{what} does not match the deal: {}",
        all.join("; ")
    )))
}

fn invalid(error: swdesk_auction::flow::InvalidTransition) -> MarketError {
    MarketError {
        message: format!("the persisted flow cannot take this step: {error}"),
        transient: false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::VecDeque;
    use std::sync::Mutex;

    use super::*;
    use crate::peers::AcceptAnswer;
    use swdesk_atproto::attestation::sign_record;
    use swdesk_atproto::plc::Listing;
    use swdesk_auction::bids::FREE_TERMS_NSID;
    use swdesk_auction::compute::{ComputeContractSpec, DeploymentRef};
    use swdesk_auction::request::Bidding;
    use swdesk_auction::secret::SecretsStatus;
    use swdesk_kernel::deployment_kind::DeploymentKind;
    use swdesk_kernel::name::Name;
    use swdesk_kernel::object::{Metadata, Object, Uid};
    use swdesk_kernel::repo::memory::MemoryRepo;
    use swdesk_kernel::secret::SecretRef;
    use swdesk_lexicon::com::publicdomainrelay::temp::market::badge_blue_key;
    use swdesk_lexicon::computer::socialweb::infra::ContractComputeKind;
    use swdesk_lexicon::computer::socialweb::infra::{Contract, ContractState};
    use swdesk_lexicon::computer::socialweb::secret::guest_key;

    const OWNER: &str = "did:plc:owner";

    /// Peers a relay lists (`listed`, none by default) that never bid (or refuse the RFP with
    /// `rfp_refusal`); `submitEvent` answers from a queue (then `Ok`); the owner's DID document
    /// lists our key when `owner_lists_key`.
    #[derive(Debug, Default)]
    struct FakePeers {
        listed: Vec<String>,
        rfp_refusal: Option<PeerError>,
        owner_lists_key: bool,
        rfps_sent: std::sync::atomic::AtomicUsize,
        event_answers: Mutex<VecDeque<Result<(), PeerError>>>,
        events_sent: Mutex<Vec<StrongRef>>,
    }

    impl Peers for FakePeers {
        async fn repos_with(&self, _collection: &str) -> Result<Vec<String>, PeerError> {
            Ok(self.listed.clone())
        }
        async fn submit_rfp(&self, _: &str, _: &StrongRef) -> Result<Option<StrongRef>, PeerError> {
            (self.rfps_sent).fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.rfp_refusal.clone().map_or(Ok(None), Err)
        }
        async fn attestation_listing(&self, _: &str, _: &str) -> Result<Listing, PeerError> {
            Ok(if self.owner_lists_key {
                Listing::Listed
            } else {
                Listing::Absent
            })
        }
        async fn document_keys(&self, _: &str) -> Result<Vec<String>, PeerError> {
            Ok(Vec::new())
        }
        async fn document_endpoints(&self, _: &str) -> Result<Vec<String>, PeerError> {
            Ok(Vec::new())
        }
        async fn fetch_grant(&self, _: &str, _: &StrongRef) -> Result<StrongRef, PeerError> {
            Err(PeerError::refused("no grants here"))
        }
        async fn submit_accept(&self, _: &str, _: &StrongRef) -> Result<AcceptAnswer, PeerError> {
            Err(PeerError::refused("no accepts here"))
        }
        async fn submit_event(
            &self,
            _: &str,
            event: &StrongRef,
            _: &Value,
        ) -> Result<(), PeerError> {
            self.events_sent.lock().unwrap().push(event.clone());
            self.event_answers
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(Ok(()))
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).unwrap()
    }

    fn market(
        peers: FakePeers,
    ) -> (
        RequesterMarket<MemoryRepo, FakePeers>,
        Arc<MemoryRepo>,
        Arc<FakePeers>,
    ) {
        let repo = Arc::new(MemoryRepo::new(OWNER));
        let peers = Arc::new(peers);
        let key = AttestationKey::generate(swdesk_atproto::attestation::Curve::P256);
        let market = RequesterMarket::new(
            Arc::clone(&repo),
            Arc::clone(&peers),
            key,
            Arc::new(SystemClock),
            Settings {
                longest_wait: Duration::from_millis(10),
                guest_poll: Duration::from_millis(5),
                live_guest_poll: Duration::from_millis(5),
                deadlines: Deadlines::DEFAULT,
            },
        );
        (market, repo, peers)
    }

    fn contract(fields: Contract) -> ComputeContractObject {
        let name = Name::parse("c").unwrap();
        Object {
            metadata: Metadata::new(name.clone(), Uid::from_bytes([1; 16]), at(0)),
            spec: ComputeContractSpec {
                deployment: DeploymentRef {
                    kind: DeploymentKind::Infra,
                    name: name.clone(),
                },
                contract: name,
                fields,
                secrets: Vec::new(),
                release: false,
                release_requested_at: None,
            },
            status: ComputeContractStatus::default(),
        }
    }

    fn requested() -> Contract {
        Contract {
            name: "c".into(),
            state: ContractState::Requested,
            ..Contract::default()
        }
    }

    fn held() -> Held {
        Held {
            receipt: StrongRef {
                uri: "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/3l".into(),
                cid: "bafyreceipt".into(),
            },
            submit_event: "did:web:bidder#compute_event".into(),
            bidder: "did:plc:bidder".into(),
            checked: None,
        }
    }

    async fn step(
        market: &RequesterMarket<MemoryRepo, FakePeers>,
        contract: &mut ComputeContractObject,
        now: Timestamp,
    ) {
        contract.status = market.advance(contract, now).await.unwrap();
    }

    /// The bid `did:plc:bidder` signed with a key it publishes, naming free terms `terms` of
    /// its own: how it counts in an auction that asked it.
    async fn count_free_terms(terms: Value) -> Result<CountedBid, compute::Bid> {
        count_with_terms(Some(terms)).await
    }

    /// A signed bid counted whose terms are `terms` in the bidder's repo, or a record the repo
    /// does not hold (`None`).
    async fn count_with_terms(terms: Option<Value>) -> Result<CountedBid, compute::Bid> {
        let (market, repo, _) = market(FakePeers::default());
        let bidder = "did:plc:bidder";
        let key = AttestationKey::generate(swdesk_atproto::attestation::Curve::P256);
        publish_in(&repo, bidder, &key);
        let terms_cid = match terms {
            Some(terms) => repo.write_directly(bidder, FREE_TERMS_NSID, "3lterms", terms),
            None => "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm".to_owned(),
        };
        let rfp = StrongRef {
            uri: format!("at://{OWNER}/{}/3lrfp", rfp_nsid::NSID),
            cid: "bafyrfp".into(),
        };
        let bid = serde_json::json!({
            "$type": bid::NSID,
            "rfp": {"uri": rfp.uri, "cid": rfp.cid},
            "payload": {"uri": format!("at://{bidder}/{FREE_TERMS_NSID}/3lterms"), "cid": terms_cid},
        });
        let signed = sign_record(&bid, &key, bidder, "2026-12-05T10:00:00Z").unwrap();
        let bid_cid = repo.write_directly(bidder, bid::NSID, "3lbid", signed);
        let bidding = Bidding {
            window: Duration::from_secs(30),
            first_free: false,
        };
        let auction = Auction::asking(rfp, &[bidder], at(0), bidding);
        let reference = StrongRef {
            uri: format!("at://{bidder}/{}/3lbid", bid::NSID),
            cid: bid_cid,
        };
        market.count(&auction, reference, at(1)).await
    }

    #[tokio::test]
    async fn a_bid_is_refused_when_its_free_terms_record_asks_a_price() {
        let terms = |cost: Value| serde_json::json!({"$type": FREE_TERMS_NSID, "reason": "a gift", "cost": cost});
        let refused = count_free_terms(terms(Value::from(5000)))
            .await
            .unwrap_err();
        let why = refused.refused.unwrap_or_default();
        assert!(why.contains("priced free terms"), "{why}");
        let counted = count_free_terms(terms(Value::from(0))).await.unwrap();
        assert_eq!(counted.cost, swdesk_auction::bids::Cost::ZERO);
    }

    #[tokio::test]
    async fn a_bid_whose_terms_cannot_be_read_does_not_count() {
        let refused = count_with_terms(None).await.unwrap_err();
        let why = refused.refused.unwrap_or_default();
        assert!(why.starts_with("its terms cannot be read"), "{why}");
    }

    #[tokio::test]
    async fn a_contract_released_before_it_started_ends_at_once_without_a_write() {
        let (market, repo, _) = market(FakePeers::default());
        let mut contract = contract(requested());
        contract.spec.release = true;
        contract.spec.release_requested_at = Some(at(3));
        step(&market, &mut contract, at(5)).await;
        assert_eq!(contract.status.phase, ComputePhase::Released);
        assert_eq!(contract.status.release_sent_at, Some(at(3)));
        assert_eq!(repo.calls().writes(), 0);
    }

    /// A `market.event` about `held`'s receipt naming `payload`, signed in the bidder's repo by
    /// `key`.
    fn report_signed_by(held: &Held, payload: &StrongRef, key: &AttestationKey) -> Value {
        let event = serde_json::json!({
            "$type": event::NSID,
            "receipt": {"uri": held.receipt.uri, "cid": held.receipt.cid},
            "payload": {"uri": payload.uri, "cid": payload.cid},
        });
        sign_record(&event, key, &held.bidder, "2026-12-05T10:00:00.000Z").unwrap()
    }

    /// `key` published in `repo`'s repo as a `market.badgeBlueKey`.
    fn publish_in(memory: &MemoryRepo, repo: &str, key: &AttestationKey) {
        let did_key = key.did_key();
        let value = serde_json::json!({
            "$type": badge_blue_key::NSID, "key": did_key, "createdAt": "2026-12-05T10:00:00Z",
        });
        memory.write_directly(repo, badge_blue_key::NSID, &did_key, value);
    }

    fn key_payload(held: &Held) -> StrongRef {
        StrongRef {
            uri: format!("at://{}/{}/3lkey", held.bidder, guest_key::NSID),
            cid: "bafykey".into(),
        }
    }

    #[tokio::test]
    async fn a_guest_report_counts_only_when_its_key_binds_to_the_bidder() {
        let (market, repo, _) = market(FakePeers::default());
        let held = held();
        let stranger = AttestationKey::generate(swdesk_atproto::attestation::Curve::K256);
        let report = report_signed_by(&held, &key_payload(&held), &stranger);
        repo.write_directly(&held.bidder, event::NSID, "3lreport", report);
        let reports = market.guest_reports(&held).await.unwrap();
        assert_eq!(
            reports,
            vec![],
            "self-signed by a key the bidder never bound"
        );

        publish_in(&repo, &held.bidder, &stranger);
        let reports = market.guest_reports(&held).await.unwrap();
        assert_eq!(reports.len(), 1);
        let published = KeyBinding::Published {
            key: stranger.did_key(),
        };
        assert_eq!(reports[0].bindings, vec![published]);
    }

    /// The guest key record `held`'s bidder wrote, and a bound report of it; what a look for
    /// the key then keeps.
    async fn look_for_a_key(key_record: Value) -> SecretsStatus {
        let (market, repo, _) = market(FakePeers::default());
        let held = held();
        let bidder = AttestationKey::generate(swdesk_atproto::attestation::Curve::P256);
        publish_in(&repo, &held.bidder, &bidder);
        let signed = match key_record.get("signatures") {
            Some(_) => sign_record(&key_record, &bidder, &held.bidder, "2026-12-05T10:00:00Z"),
            None => Ok(key_record),
        };
        let cid = repo.write_directly(&held.bidder, guest_key::NSID, "3lkey", signed.unwrap());
        let payload = StrongRef {
            cid,
            ..key_payload(&held)
        };
        let report = report_signed_by(&held, &payload, &bidder);
        repo.write_directly(&held.bidder, event::NSID, "3lreport", report);
        let mut contract = contract(requested());
        contract.spec.secrets = vec![SecretRef {
            name: "db".into(),
            keychain_entry: "swdesk/db".into(),
            contracts: Vec::new(),
            version: 1,
        }];
        let mut secrets = SecretsStatus::default();
        market.deliver_secrets(&contract, &held, &mut secrets).await;
        secrets
    }

    fn guest_key_record(signed: bool) -> Value {
        let held = held();
        let recipient = age::x25519::Identity::generate().to_public().to_string();
        let mut value = serde_json::json!({
            "$type": guest_key::NSID,
            "receipt": {"uri": held.receipt.uri, "cid": held.receipt.cid},
            "recipient": recipient,
            "createdAt": "2026-12-05T10:00:00Z",
        });
        if signed {
            value["signatures"] = serde_json::json!([]);
        }
        value
    }

    #[tokio::test]
    async fn an_unproven_guest_key_is_taken_only_with_its_own_signature_bound_to_the_bidder() {
        let unsigned = look_for_a_key(guest_key_record(false)).await;
        assert_eq!(
            unsigned.guest_key, None,
            "the in-memory repo proves nothing"
        );
        let problem = unsigned.problem.unwrap_or_default();
        assert!(problem.contains("without its repo's proof"), "{problem}");

        let signed = look_for_a_key(guest_key_record(true)).await;
        let key = signed.guest_key.expect("its own signature binds it");
        let checked = key.checked.expect("what vouched for it");
        assert!(!checked.is_proven());
        assert_eq!(checked.bindings.len(), 2, "the report's and the record's");
    }

    #[tokio::test]
    async fn the_flow_is_persisted_before_the_first_write_and_a_bad_contract_fails_with_its_problem()
     {
        let (market, repo, _) = market(FakePeers::default());
        let mut contract = contract(Contract {
            compute_kind: Some(ContractComputeKind::Deno),
            ..requested()
        });
        step(&market, &mut contract, at(0)).await;
        assert_eq!(contract.status.flow, Some(Flow::start(at(0))));
        assert_eq!(
            repo.calls().writes(),
            0,
            "nothing written before the flow is kept"
        );
        step(&market, &mut contract, at(1)).await;
        assert_eq!(contract.status.phase, ComputePhase::Failed);
        let message = contract.status.message.clone().unwrap();
        assert!(message.contains("computeKind"), "{message}");
        assert_eq!(repo.calls().writes(), 0);
    }

    #[tokio::test]
    async fn a_step_redone_after_a_crash_rewrites_the_same_records_at_the_same_cids() {
        let (market, repo, _) = market(FakePeers::default());
        let mut contract = contract(requested());
        step(&market, &mut contract, at(0)).await;
        let mut twice = Vec::new();
        for _ in 0..3 {
            let before = contract.clone();
            step(&market, &mut contract, at(1)).await;
            let mut again = before;
            step(&market, &mut again, at(1)).await;
            assert_eq!(
                again.status, contract.status,
                "the redone step ends the same"
            );
            twice.push(contract.status.flow.clone().unwrap().step);
        }
        let Step::RfpWritten { rfp } = &twice[2] else {
            panic!("the RFP is written: {twice:?}");
        };
        let value = repo
            .value(OWNER, rfp_nsid::NSID, rfp.uri.rsplit('/').next().unwrap())
            .unwrap();
        assert!(
            verified_signers(&value, OWNER).is_some(),
            "the RFP carries our signature"
        );
        assert_eq!(
            repo.calls().puts,
            5,
            "vm and rfp, each written twice at one key, and the attestation key published once"
        );
        let published = repo.value(OWNER, badge_blue_key::NSID, &market.key.did_key());
        assert!(
            published.is_some(),
            "the key that signed the RFP is published"
        );
    }

    /// An offering of `did` for the VM payload, at an endpoint of its own, in its repo.
    fn offer_vm(repo: &MemoryRepo, did: &str) {
        let offering = serde_json::json!({
            "$type": offering::NSID,
            "endpointUrl": format!("https://{}.example/xrpc", did.replace(':', "-")),
            "appliesTo": [vm::NSID],
            "createdAt": "2026-12-05T00:00:00.000Z",
        });
        repo.write_directly(did, offering::NSID, "self", offering);
    }

    /// A relay listing 10,000 strangers, each with an offering for the payload: the auction
    /// reads at most `MAX_OFFERING_REPOS` repos and sends the RFP to at most `MAX_ASKED`.
    #[tokio::test]
    async fn a_crowd_of_offerings_is_read_and_asked_only_up_to_the_limits() {
        use swdesk_auction::bidders::{MAX_ASKED, MAX_OFFERING_REPOS};
        let listed: Vec<String> = (0..10_000).map(|n| format!("did:plc:crowd{n}")).collect();
        let (market, repo, peers) = market(FakePeers {
            listed: listed.clone(),
            ..FakePeers::default()
        });
        for did in listed.iter().take(MAX_OFFERING_REPOS + 50) {
            offer_vm(&repo, did);
        }
        let before = repo.calls();
        let mut contract = contract(requested());
        for second in 0..8 {
            step(&market, &mut contract, at(second)).await;
        }
        let auction = contract
            .status
            .flow
            .as_ref()
            .and_then(|flow| match &flow.step {
                Step::RfpSent { auction, .. } | Step::BidsCollected { auction, .. } => {
                    Some(auction.clone())
                }
                _ => None,
            });
        let asked = auction.expect("the auction is open").asked.len();
        assert_eq!(asked, MAX_ASKED);
        assert!(repo.calls().since(before).lists <= MAX_OFFERING_REPOS);
        let sent = peers.rfps_sent.load(std::sync::atomic::Ordering::SeqCst);
        assert!(sent <= MAX_ASKED, "{sent} RFPs sent");
    }

    /// Two bidders, one of them listed twice, that never bid: however often the contract is
    /// stepped while its window is open, each is sent the RFP once.
    #[tokio::test]
    async fn each_bidder_is_asked_once_per_rfp() {
        let listed: Vec<String> = ["did:plc:once", "did:plc:once", "did:plc:twice"]
            .map(str::to_owned)
            .into();
        let (market, repo, peers) = market(FakePeers {
            listed: listed.clone(),
            ..FakePeers::default()
        });
        for did in &listed {
            offer_vm(&repo, did);
        }
        let contract = one_second_auction(&market).await;
        assert_eq!(contract.status.phase, ComputePhase::Failed, "none bid");
        let asked = contract.status.asked.len();
        let sent = peers.rfps_sent.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!((asked, sent), (2, 2), "two bidders asked, one RFP each");
    }

    /// A contract with a one-second bid window, stepped on the wall clock until it ends.
    async fn one_second_auction(
        market: &RequesterMarket<MemoryRepo, FakePeers>,
    ) -> ComputeContractObject {
        let mut contract = contract(Contract {
            policy_args: Some(serde_json::from_str(r#"{"bidWindowSec": 1}"#).unwrap()),
            ..requested()
        });
        for _ in 0..300 {
            step(market, &mut contract, SystemClock.now()).await;
            if contract.status.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        contract
    }

    #[tokio::test]
    async fn without_bidders_the_window_closes_with_no_bids() {
        let (market, _, _) = market(FakePeers::default());
        let start = SystemClock.now();
        let contract = one_second_auction(&market).await;
        assert_eq!(contract.status.phase, ComputePhase::Failed);
        assert!(
            contract
                .status
                .message
                .as_deref()
                .unwrap()
                .starts_with("no bids")
        );
        assert!(
            SystemClock.now().since(start) >= Duration::from_secs(1),
            "after the window"
        );
    }

    /// The issuer the RFP's signature names, the owner's document listing our key or not.
    async fn rfp_issuer(owner_lists_key: bool) -> Option<String> {
        let (market, repo, _) = market(FakePeers {
            owner_lists_key,
            ..FakePeers::default()
        });
        let mut contract = contract(requested());
        for second in 0..4 {
            step(&market, &mut contract, at(second)).await;
        }
        let Some(Step::RfpWritten { rfp }) = contract.status.flow.map(|flow| flow.step) else {
            panic!("the RFP is written");
        };
        let value = repo
            .value(OWNER, rfp_nsid::NSID, rfp.uri.rsplit('/').next().unwrap())
            .unwrap();
        let signers = verified_signers(&value, OWNER).expect("our signature verifies");
        signers[0].issuer.clone()
    }

    #[tokio::test]
    async fn the_rfp_names_the_owner_as_issuer_only_while_its_document_lists_our_key() {
        assert_eq!(rfp_issuer(true).await.as_deref(), Some(OWNER));
        assert_eq!(rfp_issuer(false).await, None);
    }

    #[tokio::test]
    async fn a_bidders_refusal_of_the_rfp_is_named_when_none_bid() {
        let strict = "did:plc:strict";
        let words = "submitRfp answered 400 Bad Request: InvalidRequest record is missing a \
                     valid badge.blue signature\u{202e}";
        let (market, repo, _) = market(FakePeers {
            listed: vec![strict.into()],
            rfp_refusal: Some(PeerError::refused(words)),
            ..FakePeers::default()
        });
        let offering = serde_json::json!({
            "$type": offering::NSID,
            "endpointUrl": "https://strict.example/xrpc",
            "appliesTo": [vm::NSID],
            "createdAt": "2026-12-05T00:00:00.000Z",
        });
        repo.write_directly(strict, offering::NSID, "self", offering);
        let contract = one_second_auction(&market).await;
        assert_eq!(contract.status.phase, ComputePhase::Failed);
        let message = contract.status.message.unwrap_or_default();
        assert_eq!(
            message,
            "no bids: 1 bidder(s) asked, none bid within 1 s; did:plc:strict refused the RFP: \
             submitRfp answered 400 Bad Request: InvalidRequest record is missing a valid \
             badge.blue signature"
        );
    }

    #[tokio::test]
    async fn an_unacknowledged_release_is_retried_a_refused_one_fails_and_a_newer_request_sends_anew()
     {
        let peers = FakePeers::default();
        peers.event_answers.lock().unwrap().extend([
            Err(PeerError::transient("the bidder is unreachable")),
            Err(PeerError::refused("Forbidden")),
        ]);
        let (market, _, peers) = market(peers);
        let mut contract = contract(requested());
        contract.status.flow = Some(Flow {
            step: Step::Deployed { held: held() },
            ..Flow::start(at(0))
        });
        contract.spec.release = true;
        contract.spec.release_requested_at = Some(at(10));
        for _ in 0..4 {
            step(&market, &mut contract, at(11)).await;
        }
        assert_eq!(contract.status.phase, ComputePhase::Releasing);
        let retrying = contract.status.retrying.clone().expect("retrying");
        assert_eq!(
            (retrying.step.as_str(), retrying.since),
            ("releasing", at(11))
        );
        assert_eq!(retrying.gives_up_at, at(11 + 3600));
        let message = contract.status.message.clone().unwrap();
        assert!(
            message.starts_with(
                "retrying: the release was not acknowledged: the bidder is unreachable; next try at"
            ),
            "{message}"
        );
        step(&market, &mut contract, at(12)).await;
        assert_eq!(
            contract.status.phase,
            ComputePhase::Failed,
            "Forbidden cannot heal"
        );
        let message = contract.status.message.clone().unwrap();
        assert!(message.contains("Forbidden"), "{message}");
        assert!(contract.status.holds_guest(), "the receipt is kept");
        step(&market, &mut contract, at(13)).await;
        assert_eq!(
            peers.events_sent.lock().unwrap().len(),
            2,
            "not sent again for the same request"
        );

        contract.spec.release_requested_at = Some(at(20));
        for _ in 0..4 {
            step(&market, &mut contract, at(21)).await;
        }
        assert_eq!(contract.status.phase, ComputePhase::Released);
        assert_eq!(contract.status.release_sent_at, Some(at(20)));
        let sent = peers.events_sent.lock().unwrap().clone();
        assert_eq!(sent.len(), 3);
        assert_eq!(sent[0], sent[1]);
        assert_ne!(
            sent[1].uri, sent[2].uri,
            "the newer request wrote a new event"
        );
        assert!(
            sent[2]
                .uri
                .ends_with(&record_key(at(20), RecordRole::Event))
        );
    }
}

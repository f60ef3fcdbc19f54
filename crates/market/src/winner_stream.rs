//! The winning bidders' repos followed live while a contract waits for its guest:
//! [`WinnerStreams`] runs one `subscribeRepos` follower per winner DID (atproto's
//! [`Follower`]: through the owner's outbound policy, each commit verified against the DID's
//! key, frames and rates bounded, gaps resynced) for as long as some contract holds it, and
//! says when to look again: a verified commit touching the bidder's `market.event` collection,
//! a resync, or the stream going live or down. The stream only says *when*: the wait then reads
//! the events as before (listing and bound signers), so no trust moves to the stream.
//!
//! Invariants: one follower per winner DID, shared by that winner's waiting contracts; a
//! contract holds it from its first wait for the guest until its flow leaves that wait
//! (Deployed, failed, released: [`WinnerStreams::release`]); the last hold dropped closes the
//! stream. Every wake-up of a contract is also announced by name ([`WinnerStreams::woken`]),
//! so a controller can run a contract whose wait is not in progress at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use swdesk_atproto::firehose::{FollowConfig, Follower};
use swdesk_atproto::identity::Resolver;
use swdesk_kernel::repo::live::{LiveState, RepoFeed};
use swdesk_lexicon::com::publicdomainrelay::temp::market::event;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use url::Url;

/// How many wake-ups by name may wait for a slow listener before the oldest are dropped.
const WOKEN_BACKLOG: usize = 64;

/// What a winner's stream has said so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heard {
    /// Whether the stream is open (commits arrive as they are made).
    pub live: bool,
    /// How many times it said the bidder's events may have changed.
    pub changes: u64,
}

/// Followers of the winners' repos, shared by the contracts waiting on them.
#[derive(Debug, Clone)]
pub struct WinnerStreams {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    resolver: Resolver,
    /// A service to follow every winner at instead of its PDS (a relay); none: its PDS.
    service: Option<Url>,
    /// The followers running, by winner DID (alive while a hold keeps them).
    followed: Mutex<HashMap<String, Weak<Followed>>>,
    /// Each waiting contract's hold, by contract name.
    holds: Mutex<HashMap<String, Arc<Followed>>>,
    woken: broadcast::Sender<String>,
}

/// One winner followed: dropping the last hold closes its stream.
#[derive(Debug)]
struct Followed {
    did: String,
    heard: watch::Receiver<Heard>,
    _follower: Follower,
    pump: JoinHandle<()>,
}

impl Drop for Followed {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

/// One contract's view of its winner's stream.
#[derive(Debug)]
pub struct Wake {
    heard: watch::Receiver<Heard>,
}

impl Wake {
    /// Whether the stream is live now; marks what was heard so far as seen.
    pub fn live_now(&mut self) -> bool {
        self.heard.borrow_and_update().live
    }

    /// Returns once the stream says something not yet seen (never, once it has ended).
    pub async fn heard(&mut self) {
        if self.heard.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl WinnerStreams {
    /// Followers reaching each winner's PDS (found and reached with `resolver`, which
    /// carries the owner's outbound policy).
    pub fn new(resolver: Resolver) -> Self {
        Self::build(resolver, None)
    }

    /// Followers reading every winner's commits at `service` (a relay) instead.
    pub fn at(resolver: Resolver, service: Url) -> Self {
        Self::build(resolver, Some(service))
    }

    fn build(resolver: Resolver, service: Option<Url>) -> Self {
        Self {
            inner: Arc::new(Inner {
                resolver,
                service,
                followed: Mutex::default(),
                holds: Mutex::default(),
                woken: broadcast::channel(WOKEN_BACKLOG).0,
            }),
        }
    }

    /// The contract `contract`'s hold on `winner`'s stream (started, or shared with the
    /// winner's other waiting contracts), kept until [`Self::release`].
    pub fn hold(&self, contract: &str, winner: &str) -> Wake {
        let mut holds = lock(&self.inner.holds);
        if let Some(held) = holds.get(contract).filter(|held| held.did == winner) {
            return Wake {
                heard: held.heard.clone(),
            };
        }
        let followed = self.follower(winner);
        let heard = followed.heard.clone();
        holds.insert(contract.to_owned(), followed);
        Wake { heard }
    }

    /// The contract no longer waits: its hold goes (and the stream, when it was the last).
    pub fn release(&self, contract: &str) {
        let released = lock(&self.inner.holds).remove(contract);
        if let Some(followed) = released {
            tracing::debug!(winner = %followed.did, "a contract stops following its winner");
        }
    }

    /// Whether `winner`'s repo is followed now.
    pub fn follows(&self, winner: &str) -> bool {
        lock(&self.inner.followed)
            .get(winner)
            .is_some_and(|followed| followed.strong_count() > 0)
    }

    /// The names of contracts whose winner's stream said something, as it happens.
    pub fn woken(&self) -> broadcast::Receiver<String> {
        self.inner.woken.subscribe()
    }

    /// The running follower of `winner`, or a new one.
    fn follower(&self, winner: &str) -> Arc<Followed> {
        let mut followed = lock(&self.inner.followed);
        followed.retain(|_, running| running.strong_count() > 0);
        if let Some(running) = followed.get(winner).and_then(Weak::upgrade) {
            return running;
        }
        let config = FollowConfig {
            did: winner.to_owned(),
            cursor: None,
            service: self.inner.service.clone(),
            limits: Default::default(),
        };
        tracing::info!(winner, "following the winner's repo live");
        let (follower, events) = Follower::start(self.inner.resolver.clone(), config);
        let (told, heard) = watch::channel(Heard::default());
        let pump = tokio::spawn(pump(
            events,
            told,
            winner.to_owned(),
            Arc::downgrade(&self.inner),
        ));
        let running = Arc::new(Followed {
            did: winner.to_owned(),
            heard,
            _follower: follower,
            pump,
        });
        followed.insert(winner.to_owned(), Arc::downgrade(&running));
        running
    }
}

impl Inner {
    /// Announces the contracts holding `winner`'s stream.
    fn wake_holders(&self, winner: &str) {
        let names: Vec<String> = lock(&self.holds)
            .iter()
            .filter(|(_, followed)| followed.did == winner)
            .map(|(name, _)| name.clone())
            .collect();
        for name in names {
            let _no_listener = self.woken.send(name);
        }
    }
}

/// What the winner's follower says, as [`Heard`]; ends with the follower.
async fn pump(
    mut events: mpsc::Receiver<RepoFeed>,
    told: watch::Sender<Heard>,
    winner: String,
    streams: Weak<Inner>,
) {
    while let Some(feed) = events.recv().await {
        let changed = told.send_if_modified(|heard| hear(heard, &feed));
        if changed && let Some(streams) = streams.upgrade() {
            streams.wake_holders(&winner);
        }
    }
}

/// Takes `feed` into `heard`; whether a waiting contract should look again.
fn hear(heard: &mut Heard, feed: &RepoFeed) -> bool {
    match feed {
        RepoFeed::Commit { ops, .. } => {
            let touched = ops.iter().any(|op| op.collection == event::NSID);
            heard.changes += u64::from(touched);
            touched
        }
        RepoFeed::Resync { .. } => {
            heard.changes += 1;
            true
        }
        RepoFeed::State(state) => {
            let live = *state == LiveState::Live;
            let moved = heard.live != live;
            heard.live = live;
            moved
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use swdesk_kernel::repo::live::{FeedCursor, RepoOp};

    fn commit(collection: &str) -> RepoFeed {
        RepoFeed::Commit {
            ops: vec![RepoOp {
                collection: collection.to_owned(),
                rkey: "3l".to_owned(),
                record: None,
            }],
            cursor: FeedCursor { seq: 1, rev: None },
        }
    }

    #[test]
    fn only_the_bidders_events_a_resync_or_a_change_of_state_wake_the_wait() {
        let mut heard = Heard::default();
        assert!(!hear(&mut heard, &commit("app.bsky.feed.post")));
        assert!(hear(&mut heard, &commit(event::NSID)));
        let resync = RepoFeed::Resync {
            why: "a gap".to_owned(),
            cursor: None,
        };
        assert!(hear(&mut heard, &resync));
        assert_eq!(heard.changes, 2);
        assert!(hear(&mut heard, &RepoFeed::State(LiveState::Live)));
        assert!(heard.live);
        assert!(!hear(&mut heard, &RepoFeed::State(LiveState::Live)));
        let down = LiveState::Polling {
            why: "closed".to_owned(),
        };
        assert!(hear(&mut heard, &RepoFeed::State(down)));
        assert!(!heard.live);
        assert!(!hear(&mut heard, &RepoFeed::State(LiveState::Connecting)));
    }
}

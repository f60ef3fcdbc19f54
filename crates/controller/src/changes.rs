//! How edits made elsewhere (another device, another app) reach the controller's view of the
//! owner's repo, in one place: the live feed ([`follow`]: each verified commit's ops applied
//! to the view, a listing where the stream cannot say what changed, the cursor kept after
//! each) and the poll ([`poll`]: the deployment collections listed every `remote_poll` while
//! the feed is not live, every `live_poll` as a safety net while it is). Either way a change
//! the view did not hold is one kind of news: every object is looked at again (`relist`).
//!
//! Invariants: a cursor is kept only once what it covers is in the view and the reconcilers
//! are scheduled, so a restart replays from there (a commit applied twice changes nothing: the
//! view compares cids); the view counts as current without requests only while the feed
//! says it is live.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::repo::live::{FeedCursor, LiveState, RepoFeed, RepoOp};
use swdesk_store::Store;
use tokio::sync::{mpsc, watch};

use crate::remote::{RemoteRecord, RemoteView};

/// The owner's repo followed live, as the engine takes it.
#[derive(Debug)]
pub struct LiveFeed {
    /// What the follower sends.
    pub events: mpsc::Receiver<RepoFeed>,
    /// The name its cursor is kept under in the store.
    pub stream: String,
}

/// The collections the view holds and the poll lists.
fn collections() -> [&'static str; 2] {
    [DeploymentKind::Infra, DeploymentKind::EphemeralInfra].map(DeploymentKind::collection)
}

/// Applies `feed` to `view` until the follower stops, telling `state` how it stands and
/// calling `relist` whenever the view changed.
pub(crate) async fn follow<R, F, Fut>(
    mut feed: LiveFeed,
    view: Arc<RemoteView<R>>,
    store: Arc<Store>,
    state: watch::Sender<LiveState>,
    relist: F,
) where
    R: RecordRepo + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    while let Some(event) = feed.events.recv().await {
        let (changed, cursor) = match event {
            RepoFeed::Commit { ops, cursor } => {
                (apply(&view, ops, cursor.rev.as_deref()).await, Some(cursor))
            }
            RepoFeed::Resync { why, cursor } => {
                tracing::info!(%why, "the owner's collections are listed again");
                (refresh(&view).await, cursor)
            }
            RepoFeed::State(now) => {
                view.set_live(now == LiveState::Live);
                state.send_replace(now);
                (false, None)
            }
        };
        if changed {
            relist().await;
        }
        if let Some(cursor) = cursor {
            keep(&store, &feed.stream, cursor).await;
        }
    }
}

/// Applies the ops of the view's collections, committed at `rev`; answers whether the view
/// changed.
async fn apply<R: RecordRepo>(view: &RemoteView<R>, ops: Vec<RepoOp>, rev: Option<&str>) -> bool {
    let mut changed = false;
    for op in ops {
        if !collections().contains(&op.collection.as_str()) {
            continue;
        }
        let record = op.record.map(|record| RemoteRecord {
            cid: record.cid,
            value: record.value,
        });
        changed |= view.apply(&op.collection, &op.rkey, record, rev).await;
    }
    changed
}

/// Lists every collection again; answers whether any differed. One that could not be listed
/// is read afresh by its next reader.
async fn refresh<R: RecordRepo>(view: &RemoteView<R>) -> bool {
    let mut changed = false;
    for collection in collections() {
        match view.refresh(collection).await {
            Ok(differs) => changed |= differs,
            Err(error) => {
                tracing::debug!(%error, collection, "the owner's records could not be listed");
                view.invalidate(collection).await;
                changed = true;
            }
        }
    }
    changed
}

async fn keep(store: &Arc<Store>, stream: &str, cursor: FeedCursor) {
    let stream = stream.to_owned();
    let kept = store
        .call(move |store| store.keep_cursor(&stream, &cursor))
        .await;
    if let Err(error) = kept.and_then(|kept| kept) {
        tracing::warn!(%error, "the stream's cursor could not be kept");
    }
}

/// Lists the owner's deployment collections every `period` while `state` is not live, every
/// `live_period` while it is; calls `relist` when a record differs from what the view held.
pub(crate) async fn poll<R, F, Fut>(
    view: Arc<RemoteView<R>>,
    mut state: watch::Receiver<LiveState>,
    period: Duration,
    live_period: Duration,
    relist: F,
) where
    R: RecordRepo + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    loop {
        let mut changed = false;
        for collection in collections() {
            match view.refresh(collection).await {
                Ok(differs) => changed |= differs,
                Err(error) => {
                    tracing::debug!(%error, collection, "the owner's records could not be listed")
                }
            }
        }
        if changed {
            tracing::debug!("a record changed elsewhere; looking at every object again");
            relist().await;
        }
        loop {
            let live = *state.borrow_and_update() == LiveState::Live;
            let wait = if live { live_period } else { period };
            tokio::select! {
                () = tokio::time::sleep(wait.max(Duration::from_millis(100))) => break,
                changed = state.changed() => {
                    if changed.is_err() {
                        // No feed: poll on the period alone.
                        tokio::time::sleep(period.max(Duration::from_millis(100))).await;
                        break;
                    }
                }
            }
        }
    }
}

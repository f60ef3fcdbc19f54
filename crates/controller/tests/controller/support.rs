//! A store in a temporary directory, the in-memory repo, a clock the test moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use swdesk_auction::compute::ComputeContractSpec;
use swdesk_auction::market::Unconnected;
use swdesk_controller::Context;
use swdesk_controller::index_writer::IndexWriter;
use swdesk_controller::kinds::collection::CollectionReconciler;
use swdesk_controller::kinds::compute::ComputeReconciler;
use swdesk_controller::kinds::deployment::DeploymentReconciler;
use swdesk_controller::kinds::record::RecordReconciler;
use swdesk_controller::remote::RemoteView;
use swdesk_controller::runtime::{ObjectKey, Reconciler};
use swdesk_core::collection::InfraCollectionSpec;
use swdesk_core::infra::{EphemeralInfraSpec, InfraSpec};
use swdesk_core::record::AtprotoRecordSpec;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;
use swdesk_kernel::object::{Metadata, Uid};
use swdesk_kernel::repo::memory::MemoryRepo;
use swdesk_kernel::timestamp::{Clock, Timestamp};
use swdesk_store::Store;

pub const OWNER: &str = "did:plc:ownerownerownerowner";

/// A clock that stands still until the test moves it.
#[derive(Debug)]
pub struct TestClock(AtomicI64);

impl TestClock {
    pub fn advance_seconds(&self, seconds: i64) {
        self.0.fetch_add(seconds * 1000, Ordering::SeqCst);
    }
}

impl Clock for TestClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst)).unwrap()
    }
}

/// Everything a reconciler test needs.
#[derive(Debug)]
pub struct World {
    pub store: Arc<Store>,
    pub repo: Arc<MemoryRepo>,
    pub clock: Arc<TestClock>,
    pub context: Context<MemoryRepo>,
    _dir: tempfile::TempDir,
}

impl World {
    pub fn new() -> Self {
        Self::with_repo(Arc::new(MemoryRepo::new(OWNER)))
    }

    /// A device of its own (its own store and clock) on the account whose repo is `repo`.
    pub fn with_repo(repo: Arc<MemoryRepo>) -> Self {
        let (dir, store) = swdesk_testkit::store_file();
        let store = Arc::new(store);
        // 2026-12-03T00:00:00Z
        let clock = Arc::new(TestClock(AtomicI64::new(1_796_256_000_000)));
        let context = Context::new(store.clone(), repo.clone(), clock.clone());
        Self {
            store,
            repo,
            clock,
            context,
            _dir: dir,
        }
    }

    /// Now, on the test's clock.
    pub fn clock_now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Fresh metadata for an object called `name`, with a uid of its own.
    pub fn metadata(&self, name: &str) -> Metadata {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let mut bytes = [0_u8; 16];
        bytes[8..].copy_from_slice(&NEXT.fetch_add(1, Ordering::SeqCst).to_be_bytes());
        Metadata::new(
            Name::parse(name).unwrap(),
            Uid::from_bytes(bytes),
            self.clock.now(),
        )
    }
}

/// The whole controller of one world, driven by hand: each `settle` runs every reconciler over
/// every object, a few rounds, the way the runtime would after each change.
pub struct Core {
    pub infra: DeploymentReconciler<InfraSpec, MemoryRepo>,
    pub ephemeral: DeploymentReconciler<EphemeralInfraSpec, MemoryRepo>,
    pub records: RecordReconciler<MemoryRepo>,
    pub compute: ComputeReconciler<MemoryRepo, Unconnected>,
    pub collections: CollectionReconciler<InfraCollectionSpec, InfraSpec, MemoryRepo>,
    pub view: Arc<RemoteView<MemoryRepo>>,
    pub index: Arc<IndexWriter<MemoryRepo>>,
    _index_task: tokio::task::JoinHandle<()>,
}

impl Core {
    pub fn new(world: &World) -> Self {
        let view = Arc::new(RemoteView::new(
            world.repo.clone(),
            std::time::Duration::from_secs(3600),
        ));
        let index = IndexWriter::new(world.repo.clone(), view.clone(), world.clock.clone());
        let index_task = tokio::spawn(index.clone().run());
        Self {
            infra: DeploymentReconciler::new(world.context.clone(), view.clone(), index.clone()),
            ephemeral: DeploymentReconciler::new(
                world.context.clone(),
                view.clone(),
                index.clone(),
            ),
            records: RecordReconciler::new(world.context.clone()),
            compute: ComputeReconciler::new(world.context.clone(), Arc::new(Unconnected)),
            collections: CollectionReconciler::new(world.context.clone(), view.clone()),
            view,
            index,
            _index_task: index_task,
        }
    }

    /// Runs every reconciler over every object, `ROUNDS` times, letting the index writer write
    /// (each round waits out its 200 ms batch window: on paused time, as the deployment tests
    /// run, that wait costs nothing).
    pub async fn settle(&self, world: &World) {
        const ROUNDS: usize = 6;
        for _ in 0..ROUNDS {
            for object in world.store.list::<InfraCollectionSpec>().unwrap() {
                self.run(
                    &self.collections,
                    Kind::InfraCollection,
                    &object.metadata.name,
                )
                .await;
            }
            for object in world.store.list::<InfraSpec>().unwrap() {
                self.run(&self.infra, Kind::Infra, &object.metadata.name)
                    .await;
            }
            for object in world.store.list::<EphemeralInfraSpec>().unwrap() {
                self.run(&self.ephemeral, Kind::EphemeralInfra, &object.metadata.name)
                    .await;
            }
            for object in world.store.list::<ComputeContractSpec>().unwrap() {
                self.run(&self.compute, Kind::ComputeContract, &object.metadata.name)
                    .await;
            }
            for object in world.store.list::<AtprotoRecordSpec>().unwrap() {
                self.run(&self.records, Kind::AtprotoRecord, &object.metadata.name)
                    .await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(260)).await;
        }
    }

    /// One reconcile of `name` by `reconciler` (of `kind`), its error left to the next round.
    pub async fn run<Rec: Reconciler>(&self, reconciler: &Rec, kind: Kind, name: &Name) {
        // Errors are retried by the runtime; here the next round is the retry.
        let _ = reconciler
            .reconcile(&ObjectKey::new(kind, name.clone()))
            .await;
    }
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Core")
    }
}

/// The index at `self` as another client wrote it, listing `live` deployments of its own
/// (`other-0`, `other-1`, …): full at `swdesk_core::index::MAX_LIVE`.
pub fn index_listing_others(live: usize) -> serde_json::Value {
    let live: Vec<serde_json::Value> = (0..live)
        .map(|n| {
            serde_json::json!({
                "collection": "computer.socialweb.infra",
                "rkey": format!("other-{n}"),
                "createdAt": "2026-12-01T00:00:00.000Z",
                "addedAt": "2026-12-01T00:00:00.000Z",
                "writer": "cli",
            })
        })
        .collect();
    serde_json::json!({
        "$type": "computer.socialweb.infra",
        "createdAt": "2026-12-01T00:00:00.000Z",
        "index": {"updatedAt": "2026-12-01T00:00:00.000Z", "live": live},
    })
}

/// Waits up to `within` until no deployment waits for room in the index, then answers the
/// index's live entries, `web` among them.
pub async fn web_takes_the_room(
    world: &World,
    health: &mut tokio::sync::watch::Receiver<swdesk_core::index_health::IndexHealth>,
    within: std::time::Duration,
) -> Vec<serde_json::Value> {
    tokio::time::timeout(
        within,
        health.wait_for(|health| health.waiting_for_room.is_empty()),
    )
    .await
    .expect("the waiting deployment is listed once there is room")
    .unwrap();
    let index = world
        .repo
        .value(OWNER, "computer.socialweb.infra", "self")
        .unwrap();
    let live = index["index"]["live"].as_array().unwrap().clone();
    assert!(live.iter().any(|entry| entry["rkey"] == "web"), "{live:?}");
    live
}

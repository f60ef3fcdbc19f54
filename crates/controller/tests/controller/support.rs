//! A store in a temporary directory, the in-memory repo, a clock the test moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use swdesk_controller::Context;
use swdesk_core::name::Name;
use swdesk_core::object::{Metadata, Uid};
use swdesk_core::repo::memory::MemoryRepo;
use swdesk_core::timestamp::{Clock, Timestamp};
use swdesk_store::Store;

pub const OWNER: &str = "did:plc:ownerownerownerowner";

/// A clock that stands still until the test moves it.
#[derive(Debug)]
pub struct TestClock(AtomicI64);

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
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path().join("objects.sqlite")).unwrap());
        let repo = Arc::new(MemoryRepo::new(OWNER));
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

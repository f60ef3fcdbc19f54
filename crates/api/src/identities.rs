//! [`Identities`]: the handles and PDSes of the DIDs the window shows (bidders, winners,
//! receipt authors), resolved once and kept, so a deployment's detail does not wait on the
//! network each time it is read.
//!
//! Invariants: a handle is shown only when it is bidirectionally verified (the DID document
//! claims it and the handle resolves back to that DID, as `swdesk_atproto::identity` checks);
//! a DID whose document claims no verified handle is still known by its PDS. A failed
//! resolution is remembered for [`RETRY_AFTER`] and the DID shown as itself meanwhile. A read
//! waits for new DIDs at most its budget; a resolution that takes longer finishes in the
//! background, is there the next time, and is told to [`Identities::when_named_late`]'s
//! listener, so whoever showed the DID as itself can read again.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use swdesk_atproto::identity::{IdentityError, Resolver};
use url::Url;

/// How long a DID that did not resolve is shown as itself before it is tried again.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// What is known of a DID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Its handle, when verified both ways.
    pub handle: Option<String>,
    /// Its PDS.
    pub pds: Url,
}

/// The known DIDs, by DID.
pub type Names = BTreeMap<String, Named>;

#[derive(Debug, Clone)]
enum Entry {
    /// Being resolved; `late` once a read stopped waiting for it.
    Pending {
        late: bool,
    },
    Known(Named),
    Failed {
        at: Instant,
    },
}

/// Who hears of a DID named after the read that asked for it stopped waiting.
#[derive(Clone)]
struct NamedLate(Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for NamedLate {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("NamedLate")
    }
}

/// A cache of DID → handle and PDS, shared by clones.
#[derive(Debug, Clone)]
pub struct Identities {
    resolver: Resolver,
    entries: Arc<Mutex<HashMap<String, Entry>>>,
    named_late: Option<NamedLate>,
}

impl Identities {
    /// A cache resolving with `resolver`.
    pub fn new(resolver: Resolver) -> Self {
        Self {
            resolver,
            entries: Arc::default(),
            named_late: None,
        }
    }

    /// Calls `listener` with each DID named after the read that asked for it stopped waiting
    /// (a DID that fails to resolve is not told: it is shown as itself either way).
    #[must_use]
    pub fn when_named_late(mut self, listener: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.named_late = Some(NamedLate(Arc::new(listener)));
        self
    }

    /// The resolver it names DIDs with (also how the desk reaches a repo it only reads).
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// What is known of `dids`, after waiting at most `budget` for those never resolved (or
    /// whose failure is older than [`RETRY_AFTER`]); DIDs not known are left out.
    pub async fn names(&self, dids: impl IntoIterator<Item = String>, budget: Duration) -> Names {
        let dids: Vec<String> = dids.into_iter().collect();
        let started: Vec<_> = dids
            .iter()
            .filter(|did| self.claim(did, false))
            .map(|did| tokio::spawn(self.clone().resolve(did.clone())))
            .collect();
        let waited = tokio::time::timeout(budget, async {
            for task in started {
                let _finished = task.await;
            }
        })
        .await;
        if waited.is_err() {
            self.mark_late(&dids);
        }
        self.known(&dids)
    }

    /// What is known of `dids` now, waiting for nothing (for views pushed to the window as they
    /// change, such as a cluster's members): those never resolved (or whose failure is older
    /// than [`RETRY_AFTER`]) are resolved in the background and told to the listener of
    /// [`Identities::when_named_late`] once named. Outside a tokio runtime nothing is started.
    pub fn names_now(&self, dids: impl IntoIterator<Item = String>) -> Names {
        let dids: Vec<String> = dids.into_iter().collect();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            for did in dids.iter().filter(|did| self.claim(did, true)) {
                runtime.spawn(self.clone().resolve(did.clone()));
            }
        }
        self.known(&dids)
    }

    /// Marks those of `dids` still being resolved as late: a read stopped waiting for them.
    fn mark_late(&self, dids: &[String]) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        for did in dids {
            if let Some(Entry::Pending { late }) = entries.get_mut(did) {
                *late = true;
            }
        }
    }

    /// Marks `did` pending (`late` when nobody waits for it) when it should be resolved now;
    /// false when it is known, pending, or failed a moment ago.
    fn claim(&self, did: &str, late: bool) -> bool {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let due = match entries.get(did) {
            None => true,
            Some(Entry::Failed { at }) => at.elapsed() >= RETRY_AFTER,
            Some(Entry::Pending { .. } | Entry::Known(_)) => false,
        };
        if due {
            entries.insert(did.to_owned(), Entry::Pending { late });
        }
        due
    }

    async fn resolve(self, did: String) {
        let entry = match lookup(&self.resolver, &did).await {
            Ok(named) => Entry::Known(named),
            Err(error) => {
                tracing::info!(%did, %error, "a DID is shown as itself: it did not resolve");
                Entry::Failed { at: Instant::now() }
            }
        };
        let named = matches!(entry, Entry::Known(_));
        let before = self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(did.clone(), entry);
        if named
            && matches!(before, Some(Entry::Pending { late: true }))
            && let Some(NamedLate(listener)) = &self.named_late
        {
            listener(&did);
        }
    }

    fn known(&self, dids: &[String]) -> Names {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        dids.iter()
            .filter_map(|did| match entries.get(did) {
                Some(Entry::Known(named)) => Some((did.clone(), named.clone())),
                _ => None,
            })
            .collect()
    }
}

/// The DID's PDS, and its handle when the handle resolves back to the DID.
async fn lookup(resolver: &Resolver, did: &str) -> Result<Named, IdentityError> {
    let identity = resolver.resolve_did(did).await?;
    let handle = match identity.handle {
        Some(handle) => resolver
            .resolve(&handle)
            .await
            .ok()
            .filter(|back| back.did == did)
            .map(|_| handle),
        None => None,
    };
    Ok(Named {
        handle,
        pds: identity.pds,
    })
}

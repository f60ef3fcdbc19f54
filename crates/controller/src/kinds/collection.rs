//! The InfraCollection / EphemeralInfraCollection reconciler: follows an account's index at
//! `self` and keeps one follower deployment per live entry of its collection that no local
//! deployment is bound to (another device wrote it), bound to the entry's record with sync
//! `Both`. A follower whose entry left the live list goes (its record stays).
//!
//! Invariants: a record is followed at most once; a local deployment (this device's) is never
//! followed; a follower's first run pulls the record (its last agreed declaration is the empty
//! one), so it never starts in conflict; the index is read through the shared view for the
//! owner's own repo and fetched directly for another account's.

use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use swdesk_core::collection::{CollectionSpec, CollectionStatus, FOLLOWER_LABEL, FollowedEntry};
use swdesk_core::declaration::Declaration;
use swdesk_core::infra::InfraSpec;
use swdesk_kernel::name::{self, Name};
use swdesk_kernel::object::{Metadata, Object, OwnerRef};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::rkey::{RESERVED, Rkey};
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::computer::socialweb::infra::IndexEntry;
use swdesk_lexicon::{Infra, Record as _};
use swdesk_store::{ObjectOf, Resource};

use crate::context::{Context, ReconcileError};
use crate::index_writer::INDEX_COLLECTION;
use crate::remote::RemoteView;
use crate::runtime::{Action, ObjectKey, Reconciler};
use swdesk_core::deployment::{Deployment, is_follower};
use swdesk_store::random_uid;

/// How often the index is read again.
const FOLLOW_EVERY: Duration = Duration::from_secs(60);

/// Reconciles the collection kind `C`, whose followers are deployments of kind `D`.
#[derive(Debug)]
pub struct CollectionReconciler<C, D, R> {
    context: Context<R>,
    view: Arc<RemoteView<R>>,
    kinds: PhantomData<fn() -> (C, D)>,
}

impl<C, D, R> CollectionReconciler<C, D, R>
where
    C: CollectionSpec + Resource<Status = CollectionStatus> + Clone + Sync,
    D: Deployment,
    R: RecordRepo + 'static,
{
    /// A reconciler over `context`, reading the owner's index through `view`.
    pub fn new(context: Context<R>, view: Arc<RemoteView<R>>) -> Self {
        Self {
            context,
            view,
            kinds: PhantomData,
        }
    }

    async fn apply(&self, collection: &ObjectOf<C>) -> Result<Action, ReconcileError> {
        let entries = match self.live_entries(collection.spec.repo()).await {
            Ok(entries) => entries,
            Err(error) => {
                let mut status = collection.status.clone();
                status.error = Some(error.to_string());
                self.write_status(collection, status).await?;
                return Err(error);
            }
        };
        let deployments = self.context.store(|store| store.list::<D>()).await?;
        let bound: BTreeSet<String> = deployments.iter().filter_map(bound_rkey).collect();
        let mut following = Vec::new();
        for entry in &entries {
            let name = match deployments
                .iter()
                .find(|d| is_follower(&d.metadata) && bound_rkey(d).as_deref() == Some(&entry.rkey))
            {
                Some(follower) => follower.metadata.name.clone(),
                None if bound.contains(&entry.rkey) => continue,
                None => {
                    self.create_follower(collection, entry, &deployments)
                        .await?
                }
            };
            following.push(FollowedEntry {
                rkey: entry.rkey.clone(),
                name: name.to_string(),
                writer: entry.writer.to_string(),
            });
        }
        self.drop_unfollowed(collection, &deployments, &entries)
            .await?;
        let status = CollectionStatus {
            following,
            error: None,
        };
        self.write_status(collection, status).await?;
        Ok(Action::RequeueAfter(FOLLOW_EVERY))
    }

    /// The live entries of `D`'s collection in `repo`'s index.
    async fn live_entries(&self, repo: &str) -> Result<Vec<IndexEntry>, ReconcileError> {
        let value = if repo == self.context.repo().owner() {
            self.view
                .record(INDEX_COLLECTION, RESERVED)
                .await?
                .map(|record| record.value)
        } else {
            let rkey = Rkey::parse(RESERVED)
                .map_err(|error| ReconcileError::Invalid(error.to_string()))?;
            let uri = RecordUri::new(repo, INDEX_COLLECTION, &rkey)
                .map_err(|error| ReconcileError::Invalid(error.to_string()))?;
            self.context
                .repo()
                .get(&uri)
                .await?
                .map(|record| record.value)
        };
        let index = value
            .and_then(|value| Infra::from_record_value(value).ok())
            .and_then(|record| record.index);
        let collection = D::DEPLOYMENT.collection();
        Ok(index
            .and_then(|index| index.live)
            .unwrap_or_default()
            .into_iter()
            .filter(|entry| entry.collection.to_string() == collection)
            .collect())
    }

    async fn create_follower(
        &self,
        collection: &ObjectOf<C>,
        entry: &IndexEntry,
        deployments: &[ObjectOf<D>],
    ) -> Result<Name, ReconcileError> {
        let invalid = |error: String| ReconcileError::Invalid(error);
        let rkey = Rkey::parse(&entry.rkey).map_err(|error| invalid(error.to_string()))?;
        let uri = RecordUri::new(collection.spec.repo(), D::DEPLOYMENT.collection(), &rkey)
            .map_err(|error| invalid(error.to_string()))?;
        let name = free_name(&entry.rkey, deployments);
        let mut metadata = Metadata::new(name.clone(), random_uid()?, self.context.now());
        metadata
            .labels
            .insert(FOLLOWER_LABEL.to_owned(), "true".to_owned());
        metadata.owner_refs.push(OwnerRef {
            kind: C::KIND,
            name: collection.metadata.name.clone(),
            uid: collection.metadata.uid.clone(),
            controller: true,
        });
        let spec = D::follower(uri);
        let mut status: D::Status = Default::default();
        let empty = Declaration::of_spec(&InfraSpec::default())
            .hash()
            .map_err(|error| invalid(error.to_string()))?;
        D::status_mut(&mut status).last_declaration_hash = Some(empty);
        let follower = Object {
            metadata,
            spec,
            status,
        };
        self.context
            .store(move |store| store.create::<D>(&follower))
            .await?;
        Ok(name)
    }

    /// Followers of this collection whose entries are no longer live go.
    async fn drop_unfollowed(
        &self,
        collection: &ObjectOf<C>,
        deployments: &[ObjectOf<D>],
        entries: &[IndexEntry],
    ) -> Result<(), ReconcileError> {
        let live: BTreeSet<&str> = entries.iter().map(|entry| entry.rkey.as_str()).collect();
        let owner = &collection.metadata.uid;
        for follower in deployments.iter().filter(|d| {
            is_follower(&d.metadata)
                && d.metadata.owner_refs.iter().any(|r| &r.uid == owner)
                && !d.metadata.is_deleting()
                && bound_rkey(d).is_some_and(|rkey| !live.contains(rkey.as_str()))
        }) {
            let (name, now) = (follower.metadata.name.clone(), self.context.now());
            self.context
                .store(move |store| store.delete::<D>(&name, now))
                .await?;
        }
        Ok(())
    }

    async fn write_status(
        &self,
        collection: &ObjectOf<C>,
        status: CollectionStatus,
    ) -> Result<(), ReconcileError> {
        if status == collection.status {
            return Ok(());
        }
        let mut updated = collection.clone();
        updated.status = status;
        self.context
            .store(move |store| store.update_status::<C>(&updated))
            .await
            .map(drop)
    }
}

impl<C, D, R> Reconciler for CollectionReconciler<C, D, R>
where
    C: CollectionSpec + Resource<Status = CollectionStatus> + Clone + Sync,
    D: Deployment,
    R: RecordRepo + 'static,
{
    type Error = ReconcileError;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Action, ReconcileError> {
        let name = key.name.clone();
        let Some(collection) = self
            .context
            .store(move |store| store.get::<C>(&name))
            .await?
        else {
            return Ok(Action::AwaitChange);
        };
        if collection.metadata.is_deleting() {
            return Ok(Action::AwaitChange);
        }
        self.apply(&collection).await
    }
}

/// The rkey a deployment is bound to: declared, or bound by a write.
fn bound_rkey<D: Deployment>(deployment: &ObjectOf<D>) -> Option<String> {
    let declared = deployment
        .spec
        .infra()
        .record
        .uri
        .as_ref()
        .map(|uri| uri.rkey().to_string());
    declared.or_else(|| {
        D::status(&deployment.status)
            .record
            .as_ref()
            .map(|bound| bound.rkey.to_string())
    })
}

/// A name for the follower of `rkey`: the rkey as a DNS label, numbered when taken.
fn free_name<D: Deployment>(rkey: &str, deployments: &[ObjectOf<D>]) -> Name {
    name::free_name(rkey, "followed", |candidate| {
        deployments
            .iter()
            .any(|d| d.metadata.name.as_str() == candidate)
    })
}

//! The gateway's state: each account's clusters, apart (every method is keyed by the caller's
//! DID, so an account sees and touches only its own), their lifecycle on timers, and the frames
//! `subscribeClusters` streams.
//!
//! Lifecycle: `createCluster` → `Initializing` → (after `initialize`) `Ready`;
//! `controlPlaneDown` → `Unavailable` at once, the object store kept; `controlPlaneUp` →
//! `Initializing` → `Ready`; `deleteCluster` → `Draining` (teardown blocked while the nodes are
//! released) → (after `drain`, the Infra's final write) gone. A cluster made by `getKubeconfig`
//! ("created on read, not started") starts `Unavailable`. Each change bumps the cluster's
//! `epoch`, so a timer scheduled before a later change does nothing.
//!
//! Invariants: the state lock is never held across an await; every change of what a
//! subscriber sees is broadcast as the frames that describe it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use swdesk_net::Outbound;

use rand_core::{OsRng, RngCore};
use serde_json::Map;
use swdesk_atproto::identity::Resolver;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::{ClusterView, Phase};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::revoke_identity::{
    RevokedGrant, RevokedGrantState,
};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{
    self as frames, MemberState, Message, NodeClaimPhase,
};
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side as ssa};
use time::format_description::well_known::Rfc3339;
use tokio::sync::broadcast;
use url::Url;

use crate::apply::{ApplyError, ApplyRequest, ObjectKey, ObjectStore};
use crate::config::Config;
use crate::jobs::JobRun;
use crate::nodes::{InfraEntry, InfraRecords, InfraStage};
use crate::pki::{ClusterCa, Lifetime, hostile};
use crate::xrpc::{Refusal, cluster_name, dns_label_problem};

/// One change, for the subscribers of `owner`.
#[derive(Debug, Clone)]
pub struct Event {
    /// The account whose cluster changed.
    pub owner: String,
    /// The frame.
    pub message: Message,
}

/// A grant of an identity on a cluster.
#[derive(Debug, Clone)]
struct Grant {
    did: String,
    name: String,
    state: MemberState,
}

/// One simulated cluster.
#[derive(Debug)]
struct Cluster {
    name: String,
    phase: Phase,
    running: bool,
    instance: String,
    teardown_blocked: bool,
    epoch: u64,
    ca: Arc<ClusterCa>,
    objects: ObjectStore,
    jobs: HashMap<(String, String), JobRun>,
    grants: Vec<Grant>,
    infra: InfraEntry,
    /// Contract entries whose node is lost: their NodeClaims are gone, the Infra holds them.
    lost: BTreeSet<String>,
}

impl Cluster {
    fn server(&self) -> String {
        format!("https://{}.clusters.localhost:6443", self.instance)
    }

    fn view(&self) -> ClusterView {
        ClusterView {
            name: self.name.clone(),
            phase: self.phase.clone(),
            running: Some(self.running),
            instance: Some(self.instance.clone()),
            teardown_blocked: Some(self.teardown_blocked),
            server: Some(self.server()),
            extra: Map::new(),
        }
    }

    fn cluster_frame(&self, deleted: bool) -> Message {
        let view = self.view();
        Message::Cluster(frames::Cluster {
            name: view.name,
            phase: view.phase,
            running: view.running,
            instance: view.instance,
            teardown_blocked: view.teardown_blocked,
            server: view.server,
            deleted: deleted.then_some(true),
            extra: Map::new(),
        })
    }

    fn member_frames(&self, deleted: bool) -> Vec<Message> {
        self.grants
            .iter()
            .map(|grant| {
                Message::Member(frames::Member {
                    cluster: self.name.clone(),
                    did: grant.did.clone(),
                    name: Some(grant.name.clone()),
                    state: Some(grant.state.clone()),
                    deleted: deleted.then_some(true),
                    extra: Map::new(),
                })
            })
            .collect()
    }

    fn node_frames(&self, deleted: bool) -> Vec<Message> {
        let (phase, message) = match self.phase {
            Phase::Ready => (NodeClaimPhase::Ready, None),
            Phase::Draining => (
                NodeClaimPhase::Releasing,
                Some("the cluster is being deleted: releasing the node's contract"),
            ),
            Phase::Initializing => (
                NodeClaimPhase::Pending,
                Some("waiting for the control plane to start"),
            ),
            _ => (
                NodeClaimPhase::Pending,
                Some("waiting for the control plane: it is down"),
            ),
        };
        self.infra
            .contracts
            .iter()
            .filter(|contract| !self.lost.contains(*contract))
            .map(|contract| self.node_frame(contract, &phase, message, deleted))
            .collect()
    }

    fn node_frame(
        &self,
        contract: &str,
        phase: &NodeClaimPhase,
        message: Option<&str>,
        deleted: bool,
    ) -> Message {
        let ready = *phase == NodeClaimPhase::Ready;
        Message::NodeClaim(frames::NodeClaim {
            cluster: self.name.clone(),
            name: format!("{}-{contract}", self.name),
            phase: Some(phase.clone()),
            node_name: ready.then(|| format!("{}-{contract}-{}", self.name, &self.instance[..8])),
            message: message.map(str::to_owned),
            infra: Some(frames::NodeClaimInfra {
                workspace: Some(self.infra.workspace.clone()),
                name: self.infra.name.clone(),
                contract: contract.to_owned(),
                compute_contract: Some(self.infra.compute_contract(contract)),
                extra: Map::new(),
            }),
            deleted: deleted.then_some(true),
            extra: Map::new(),
        })
    }

    fn frames(&self, deleted: bool) -> Vec<Message> {
        let mut all = vec![self.cluster_frame(deleted)];
        all.extend(self.member_frames(deleted));
        all.extend(self.node_frames(deleted));
        all
    }
}

type Accounts = HashMap<String, BTreeMap<String, Cluster>>;

/// The gateway: configuration, identity resolution, every account's clusters, the frames.
#[derive(Debug)]
pub struct Gateway {
    config: Config,
    did: String,
    url: Url,
    resolver: Resolver,
    accounts: Mutex<Accounts>,
    events: broadcast::Sender<Event>,
    records: InfraRecords,
    closing: tokio::sync::watch::Sender<bool>,
}

/// RFC 3339 now.
pub fn now_text() -> String {
    time::OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_default()
}

fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    OsRng.fill_bytes(&mut buffer);
    buffer.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn not_found(name: &str) -> Refusal {
    Refusal::bad(
        "ClusterNotFound",
        format!("you have no cluster named {name}"),
    )
}

impl Gateway {
    /// The size of the frame a hostile gateway opens each stream with, when it is one.
    pub fn hostile_frame_bytes(&self) -> Option<usize> {
        self.config.hostile_frame_bytes
    }

    /// How each stream misbehaves, when the gateway is hostile so.
    pub fn hostile_stream(&self) -> Option<crate::config::HostileStream> {
        self.config.hostile_stream
    }

    /// The gateway for `config`, known as `did` at `url`, writing records with `records`.
    #[allow(
        clippy::disallowed_methods,
        reason = "the sandbox gateway follows references the tests name on loopback"
    )]
    pub fn new(config: Config, did: String, url: Url, records: InfraRecords) -> Self {
        let outbound = Outbound::new(config.identity.net_policy().with_any_loopback_port());
        let resolver = Resolver::new(config.identity.clone(), outbound);
        Self {
            config,
            did,
            url,
            resolver,
            accounts: Mutex::new(HashMap::new()),
            events: broadcast::channel(1024).0,
            records,
            closing: tokio::sync::watch::channel(false).0,
        }
    }

    /// Its DID.
    pub fn did(&self) -> &str {
        &self.did
    }

    /// Its URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The resolver callers' DIDs resolve with.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// The gateway's clock for token expiry (Unix seconds, with the configured skew).
    pub fn token_clock(&self) -> i64 {
        time::OffsetDateTime::now_utc().unix_timestamp() + self.config.clock_skew_seconds
    }

    /// Tells every open subscription to close (the gateway is stopping).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Becomes `true` when the gateway stops.
    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// A receiver of every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Accounts> {
        self.accounts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, owner: &str, messages: Vec<Message>) {
        for message in messages {
            let _ = self.events.send(Event {
                owner: owner.to_owned(),
                message,
            });
        }
    }

    /// The snapshot `owner` subscribes to: frames of every cluster, or of `name` only.
    pub fn snapshot(&self, owner: &str, name: Option<&str>) -> Result<Vec<Message>, Refusal> {
        let accounts = self.lock();
        let clusters = accounts.get(owner);
        let chosen: Vec<&Cluster> = clusters
            .into_iter()
            .flat_map(|all| all.values())
            .filter(|cluster| name.is_none_or(|name| cluster.name == name))
            .collect();
        if let (Some(name), true) = (name, chosen.is_empty()) {
            return Err(not_found(name));
        }
        Ok(chosen
            .iter()
            .flat_map(|cluster| cluster.frames(false))
            .collect())
    }

    /// `listClusters`.
    pub fn list(&self, owner: &str) -> Vec<ClusterView> {
        self.lock()
            .get(owner)
            .map(|clusters| clusters.values().map(Cluster::view).collect())
            .unwrap_or_default()
    }

    /// `createCluster`: a new cluster starts; an existing one answers its phase.
    pub async fn create_cluster(
        self: &Arc<Self>,
        owner: &str,
        name: &str,
    ) -> Result<Phase, Refusal> {
        cluster_name(name)?;
        if let Some(phase) = self.phase_of(owner, name) {
            return Ok(phase);
        }
        self.add_cluster(owner, name, true).await
    }

    fn phase_of(&self, owner: &str, name: &str) -> Option<Phase> {
        self.lock()
            .get(owner)?
            .get(name)
            .map(|cluster| cluster.phase.clone())
    }

    /// The grants a new cluster of `owner` starts with: the owner's, then each configured
    /// member's.
    fn grants_of(&self, owner: &str) -> Vec<Grant> {
        let grant = |did: &str, role: &str| Grant {
            did: did.to_owned(),
            name: format!("{role}-{}", &random_hex(4)),
            state: MemberState::Active,
        };
        let members = self.config.members.iter().filter(|did| *did != owner);
        std::iter::once(grant(owner, "owner"))
            .chain(members.map(|did| grant(did, "member")))
            .collect()
    }

    /// Adds a cluster (publishing its nodes' Infra first); `running` starts its control plane.
    async fn add_cluster(
        self: &Arc<Self>,
        owner: &str,
        name: &str,
        running: bool,
    ) -> Result<Phase, Refusal> {
        self.check_quota(owner)?;
        let instance = random_hex(16);
        let ca = ClusterCa::generate(name, &instance).map_err(internal)?;
        let infra = InfraEntry::new(
            self.records.account_did(),
            owner,
            name,
            self.config.nodes_per_cluster,
            now_text(),
        );
        self.records
            .publish(&infra, InfraStage::Deploying, &now_text())
            .await
            .map_err(internal)?;
        let cluster = Cluster {
            name: name.to_owned(),
            phase: if running {
                Phase::Initializing
            } else {
                Phase::Unavailable
            },
            running,
            instance,
            teardown_blocked: false,
            epoch: 0,
            ca: Arc::new(ca),
            objects: ObjectStore::default(),
            jobs: HashMap::new(),
            grants: self.grants_of(owner),
            infra,
            lost: BTreeSet::new(),
        };
        let phase = {
            let mut accounts = self.lock();
            let clusters = accounts.entry(owner.to_owned()).or_default();
            if let Some(existing) = clusters.get(name) {
                return Ok(existing.phase.clone());
            }
            if clusters.len() >= self.config.max_clusters {
                return Err(quota_exceeded(clusters.len(), self.config.max_clusters));
            }
            self.emit(owner, cluster.frames(false));
            let phase = cluster.phase.clone();
            clusters.insert(name.to_owned(), cluster);
            phase
        };
        if running {
            self.schedule_ready(owner, name, 0);
        }
        Ok(phase)
    }

    /// Refuses early (before the Infra is published) when `owner` is at the quota; the insert
    /// checks again under the lock.
    fn check_quota(&self, owner: &str) -> Result<(), Refusal> {
        let count = self.lock().get(owner).map_or(0, BTreeMap::len);
        if count >= self.config.max_clusters {
            return Err(quota_exceeded(count, self.config.max_clusters));
        }
        Ok(())
    }

    /// Runs `change` on `owner`'s cluster `name` under the lock, then broadcasts its frames.
    fn change<T>(
        &self,
        owner: &str,
        name: &str,
        change: impl FnOnce(&mut Cluster) -> Result<T, Refusal>,
    ) -> Result<T, Refusal> {
        let mut accounts = self.lock();
        let cluster = accounts
            .get_mut(owner)
            .and_then(|clusters| clusters.get_mut(name))
            .ok_or_else(|| not_found(name))?;
        let before = cluster.frames(false);
        let result = change(cluster)?;
        let after = cluster.frames(false);
        let changed: Vec<Message> = after
            .into_iter()
            .filter(|frame| !before.contains(frame))
            .collect();
        self.emit(owner, changed);
        Ok(result)
    }

    fn refuse_draining(cluster: &Cluster) -> Result<(), Refusal> {
        if cluster.phase == Phase::Draining {
            return Err(Refusal::bad(
                "ClusterDraining",
                format!(
                    "the cluster {} is being deleted; it can no longer be changed",
                    cluster.name
                ),
            ));
        }
        Ok(())
    }

    /// `controlPlaneUp`.
    pub fn control_plane_up(self: &Arc<Self>, owner: &str, name: &str) -> Result<Phase, Refusal> {
        cluster_name(name)?;
        let started = self.change(owner, name, |cluster| {
            Self::refuse_draining(cluster)?;
            if cluster.running {
                return Ok((cluster.phase.clone(), None));
            }
            cluster.running = true;
            cluster.phase = Phase::Initializing;
            cluster.epoch += 1;
            Ok((cluster.phase.clone(), Some(cluster.epoch)))
        })?;
        if let (_, Some(epoch)) = started {
            self.schedule_ready(owner, name, epoch);
        }
        Ok(started.0)
    }

    /// Simulates the node of `contract` lost (its machine gone without a release): its
    /// NodeClaim goes while the Infra record still holds the contract, deployed. With `lost`
    /// false the node rejoins.
    pub fn set_node_lost(
        &self,
        owner: &str,
        name: &str,
        contract: &str,
        lost: bool,
    ) -> Result<(), Refusal> {
        let gone = self.change(owner, name, |cluster| {
            if !cluster
                .infra
                .contracts
                .iter()
                .any(|entry| entry == contract)
            {
                return Err(not_found(contract));
            }
            if lost {
                cluster.lost.insert(contract.to_owned());
            } else {
                cluster.lost.remove(contract);
            }
            Ok(cluster.node_frame(contract, &NodeClaimPhase::Ready, None, true))
        })?;
        if lost {
            self.emit(owner, vec![gone]);
        }
        Ok(())
    }

    /// `controlPlaneDown`: `Unavailable` at once, the store kept.
    pub fn control_plane_down(&self, owner: &str, name: &str) -> Result<Phase, Refusal> {
        cluster_name(name)?;
        self.change(owner, name, |cluster| {
            Self::refuse_draining(cluster)?;
            cluster.running = false;
            cluster.phase = Phase::Unavailable;
            cluster.epoch += 1;
            Ok(Phase::Unavailable)
        })
    }

    /// `deleteCluster`: `Draining`, then gone after the nodes are released.
    pub fn delete_cluster(self: &Arc<Self>, owner: &str, name: &str) -> Result<Phase, Refusal> {
        cluster_name(name)?;
        let epoch = self.change(owner, name, |cluster| {
            if cluster.phase == Phase::Draining {
                return Ok(None);
            }
            cluster.phase = Phase::Draining;
            cluster.running = false;
            cluster.teardown_blocked = true;
            cluster.epoch += 1;
            Ok(Some(cluster.epoch))
        })?;
        if let Some(epoch) = epoch {
            self.schedule_gone(owner, name, epoch);
        }
        Ok(Phase::Draining)
    }

    fn schedule_ready(self: &Arc<Self>, owner: &str, name: &str, epoch: u64) {
        let (gateway, owner, name) = (Arc::clone(self), owner.to_owned(), name.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(gateway.config.timings.initialize).await;
            let infra = gateway.change(&owner, &name, |cluster| {
                let current = cluster.epoch == epoch && cluster.phase == Phase::Initializing;
                if current {
                    cluster.phase = Phase::Ready;
                }
                Ok(current.then(|| cluster.infra.clone()))
            });
            if let Ok(Some(infra)) = infra {
                gateway.publish_logged(&infra, InfraStage::Deployed).await;
            }
        });
    }

    fn schedule_gone(self: &Arc<Self>, owner: &str, name: &str, epoch: u64) {
        let (gateway, owner, name) = (Arc::clone(self), owner.to_owned(), name.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(gateway.config.timings.drain).await;
            let infra = gateway
                .lock()
                .get(&owner)
                .and_then(|c| c.get(&name))
                .filter(|c| c.epoch == epoch)
                .map(|c| c.infra.clone());
            let Some(infra) = infra else { return };
            gateway.publish_logged(&infra, InfraStage::Ended).await;
            let removed = gateway
                .lock()
                .get_mut(&owner)
                .and_then(|clusters| clusters.remove(&name));
            if let Some(mut cluster) = removed {
                cluster.teardown_blocked = false;
                gateway.emit(&owner, cluster.frames(true));
            }
        });
    }

    async fn publish_logged(&self, infra: &InfraEntry, stage: InfraStage) {
        if let Err(error) = self.records.publish(infra, stage, &now_text()).await {
            tracing::warn!(%error, infra = %infra.name, ?stage, "the Infra record could not be written");
        }
    }

    /// `revokeIdentity`: every grant of `did` on the cluster, revoked.
    pub fn revoke_identity(
        &self,
        owner: &str,
        name: &str,
        did: &str,
    ) -> Result<Vec<RevokedGrant>, Refusal> {
        let mut problems = name_problems(name);
        if swdesk_lexicon::syntax::did(did).is_err() {
            problems.push((
                "InvalidRequest",
                format!("{did:?} is not a DID (like did:plc:...)"),
            ));
        }
        refuse_all(problems)?;
        self.change(owner, name, |cluster| {
            let grants: Vec<&mut Grant> = cluster
                .grants
                .iter_mut()
                .filter(|grant| grant.did == did)
                .collect();
            if grants.is_empty() {
                return Err(Refusal::bad(
                    "IdentityNotFound",
                    format!("{did} holds no grant on the cluster {name}"),
                ));
            }
            Ok(grants
                .into_iter()
                .map(|grant| {
                    grant.state = MemberState::Revoked;
                    RevokedGrant {
                        name: grant.name.clone(),
                        state: RevokedGrantState::Revoked,
                        extra: Map::new(),
                    }
                })
                .collect())
        })
    }

    /// `getKubeconfig`: the cluster (created, not started, when absent) and a kubeconfig for it.
    pub async fn kubeconfig(
        self: &Arc<Self>,
        owner: &str,
        name: &str,
        ttl: i64,
        no_expiry: bool,
    ) -> Result<(String, String), Refusal> {
        let mut problems = name_problems(name);
        if !no_expiry && !(60..=86_400).contains(&ttl) {
            problems.push((
                "InvalidTtl",
                format!("ttlSeconds {ttl} is outside 60..86400"),
            ));
        }
        if no_expiry && !self.config.allow_no_expiry {
            let text =
                "this gateway does not issue certificates without expiry: ask for a ttlSeconds";
            problems.push(("NoExpiryNotAllowed", text.to_owned()));
        }
        refuse_all(problems)?;
        if self.phase_of(owner, name).is_none() {
            self.add_cluster(owner, name, false).await?;
        }
        let (ca, server, instance) = {
            let accounts = self.lock();
            let cluster = accounts
                .get(owner)
                .and_then(|c| c.get(name))
                .ok_or_else(|| not_found(name))?;
            (
                Arc::clone(&cluster.ca),
                cluster.server(),
                cluster.instance.clone(),
            )
        };
        let lifetime = if no_expiry {
            Lifetime::Unbounded
        } else {
            Lifetime::Seconds(ttl)
        };
        let kubeconfig = ca
            .kubeconfig(name, &server, owner, lifetime)
            .map_err(internal)?;
        if self.config.hostile_kubeconfig {
            return Ok((hostile(&kubeconfig).map_err(internal)?, instance));
        }
        Ok((kubeconfig, instance))
    }

    /// `kubectlApplyServerSide` on a Ready cluster the caller still has a grant on.
    pub fn apply(&self, owner: &str, input: &ssa::Input) -> Result<ssa::Output, Refusal> {
        let request = ApplyRequest {
            manifest: &input.manifest,
            namespace: input.namespace.as_deref(),
            name: input.name.as_deref(),
            field_manager: input.field_manager_or_default(),
            force: input.force_or_default(),
            dry_run: input.dry_run_or_default(),
        };
        let mut accounts = self.lock();
        let cluster = serving(&mut accounts, owner, &input.cluster)?;
        let applied = cluster
            .objects
            .apply(&request, &now_text(), uuid())
            .map_err(|error| match &error {
                ApplyError::Invalid(_) => Refusal::bad("InvalidManifest", error.message()),
                ApplyError::Conflict(_) => Refusal::bad("Conflict", error.message()),
            })?;
        let key = &applied.key;
        let is_job = key.kind == "Job" && key.api_version == "batch/v1";
        if is_job && !request.dry_run && applied.created {
            let run = JobRun::start(&key.name, &applied.object.content, now_text());
            cluster
                .jobs
                .insert((key.namespace.clone(), key.name.clone()), run);
        }
        Ok(ssa::Output {
            api_version: key.api_version.clone(),
            kind: key.kind.clone(),
            name: key.name.clone(),
            uid: Some(applied.object.uid.clone()),
            resource_version: Some(applied.object.resource_version.to_string()),
            generation: Some(applied.object.generation),
            object: Some(applied.object.full()),
            extra: Map::new(),
        })
    }

    /// `getJob` on a Ready cluster the caller still has a grant on.
    pub fn get_job(
        &self,
        owner: &str,
        params: &get_job::Params,
    ) -> Result<get_job::Output, Refusal> {
        let mut accounts = self.lock();
        let cluster = serving(&mut accounts, owner, &params.cluster)?;
        let key = ObjectKey {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            namespace: params.namespace.clone(),
            name: params.name.clone(),
        };
        let run = cluster.objects.get(&key).and_then(|_| {
            cluster
                .jobs
                .get(&(params.namespace.clone(), params.name.clone()))
        });
        let run = run.ok_or_else(|| {
            Refusal::bad(
                "JobNotFound",
                format!(
                    "the cluster {} has no Job {} in {}",
                    params.cluster, params.name, params.namespace
                ),
            )
        })?;
        let tail_lines =
            usize::try_from(params.tail_lines_or_default().clamp(0, 100_000)).unwrap_or(100);
        Ok(run.status(&self.config.timings, tail_lines))
    }
}

/// `owner`'s cluster `name` when it is Ready and the owner's grant is active.
fn serving<'a>(
    accounts: &'a mut Accounts,
    owner: &str,
    name: &str,
) -> Result<&'a mut Cluster, Refusal> {
    let cluster = accounts
        .get_mut(owner)
        .and_then(|c| c.get_mut(name))
        .ok_or_else(|| not_found(name))?;
    if cluster.phase != Phase::Ready {
        return Err(Refusal::bad(
            "ClusterNotReady",
            format!(
                "the cluster {name} is {} , not Ready: wait, or bring its control plane up",
                cluster.phase.as_str()
            ),
        ));
    }
    let revoked = cluster
        .grants
        .iter()
        .filter(|grant| grant.did == owner)
        .all(|grant| grant.state == MemberState::Revoked);
    if revoked {
        return Err(Refusal::bad(
            "Forbidden",
            format!("your grant on the cluster {name} is revoked"),
        ));
    }
    Ok(cluster)
}

fn quota_exceeded(count: usize, max: usize) -> Refusal {
    let message = format!("you have {count} clusters, as many as this gateway allows ({max})");
    Refusal::bad("QuotaExceeded", message)
}

/// `InvalidName` when `name` is not a DNS-1123 label.
fn name_problems(name: &str) -> Vec<(&'static str, String)> {
    dns_label_problem(name)
        .map(|problem| ("InvalidName", problem))
        .into_iter()
        .collect()
}

/// Refuses with every problem at once, under the first one's error name.
fn refuse_all(problems: Vec<(&'static str, String)>) -> Result<(), Refusal> {
    let Some((error, _)) = problems.first() else {
        return Ok(());
    };
    let message: Vec<&str> = problems.iter().map(|(_, text)| text.as_str()).collect();
    Err(Refusal::bad(error, message.join("; ")))
}

fn uuid() -> String {
    let hex = random_hex(16);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn internal(error: impl std::fmt::Display) -> Refusal {
    Refusal {
        status: axum::http::StatusCode::INTERNAL_SERVER_ERROR,
        error: "InternalServerError".to_owned(),
        message: error.to_string(),
    }
}

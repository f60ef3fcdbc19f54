//! A deployment's contracts as ComputeContract objects: created, released and deleted per the
//! lifecycle table (`swdesk_core::lifecycle`), each owned by its deployment (so the store
//! collects them with it), and read back as the contract statuses the deployment shows.
//!
//! Invariants: one ComputeContract per contract name, named `<deployment uid>-<contract>`
//! cut to a DNS label; a ComputeContract is only ever changed through the lifecycle's action
//! for its contract, and its secrets follow its deployment's (a rotation reaches a running
//! guest); the object's end releases every contract.

use swdesk_auction::compute::{ComputeContractObject, ComputeContractSpec, DeploymentRef};
use swdesk_core::infra::{Contract, ContractStatus};
use swdesk_core::lifecycle::{self, ContractAction, Existing};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Metadata, Object, OwnerRef, Uid};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::rollup::ContractPhase;
use swdesk_kernel::secret::SecretRef;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_store::ObjectOf;

use crate::context::{Context, ReconcileError};
use swdesk_core::deployment::Deployment;
use swdesk_store::random_uid;

/// The contracts of a deployment after one convergence step.
#[derive(Debug, Clone, Default)]
pub struct Contracts {
    /// The status of each declared contract, in declaration order.
    pub statuses: Vec<ContractStatus>,
    /// Every ComputeContract the deployment owns (declared or left over).
    pub objects: Vec<ComputeContractObject>,
}

impl Contracts {
    /// The phases of the declared contracts.
    pub fn phases(&self) -> Vec<ContractPhase> {
        self.statuses.iter().map(|status| status.phase).collect()
    }
}

/// Applies the lifecycle action of every contract of `object`; `ended_at` is set once the
/// deployment has reached its end (every contract is then released).
pub async fn converge<D: Deployment, R: RecordRepo + 'static>(
    context: &Context<R>,
    object: &ObjectOf<D>,
    ended_at: Option<Timestamp>,
) -> Result<Contracts, ReconcileError> {
    let owner = object.metadata.uid.clone();
    let mut objects = context
        .store(move |store| store.list_owned_by::<ComputeContractSpec>(&owner))
        .await?;
    let now = context.now();
    for contract in &object.spec.infra().contracts {
        let existing = objects
            .iter()
            .position(|cc| cc.spec.contract.as_str() == contract.name);
        let action = lifecycle::contract_action(
            contract,
            existing.map(|at| Existing {
                spec: &objects[at].spec,
                status: &objects[at].status,
            }),
            ended_at,
            now,
        );
        if let Some(changed) = act(
            context,
            object,
            contract,
            existing.map(|at| &objects[at]),
            action,
        )
        .await?
        {
            match existing {
                Some(at) => objects[at] = changed,
                None => objects.push(changed),
            }
        }
        if let Some(at) = existing
            && let Some(changed) = follow_secrets(context, object, &objects[at]).await?
        {
            objects[at] = changed;
        }
    }
    let statuses = object
        .spec
        .infra()
        .contracts
        .iter()
        .map(|contract| {
            let existing = objects
                .iter()
                .find(|cc| cc.spec.contract.as_str() == contract.name);
            lifecycle::contract_status(contract, existing.map(|cc| &cc.status))
        })
        .collect();
    Ok(Contracts { statuses, objects })
}

/// Carries out one lifecycle action; the ComputeContract as it is afterwards, if it changed.
async fn act<D: Deployment, R: RecordRepo + 'static>(
    context: &Context<R>,
    object: &ObjectOf<D>,
    contract: &Contract,
    existing: Option<&ComputeContractObject>,
    action: ContractAction,
) -> Result<Option<ComputeContractObject>, ReconcileError> {
    match (action, existing) {
        (ContractAction::Create, _) => {
            let created = new_compute_contract(object, contract, context.now())?;
            Ok(Some(
                context
                    .store(move |store| store.create::<ComputeContractSpec>(&created))
                    .await?,
            ))
        }
        (ContractAction::Release { requested_at }, Some(existing)) => {
            let mut released = existing.clone();
            released.spec.release = true;
            released.spec.release_requested_at = requested_at.or(Some(context.now()));
            Ok(Some(
                context
                    .store(move |store| store.replace::<ComputeContractSpec>(&released))
                    .await?,
            ))
        }
        (ContractAction::Delete, Some(existing)) => {
            let name = existing.metadata.name.clone();
            let now = context.now();
            context
                .store(move |store| store.delete::<ComputeContractSpec>(&name, now))
                .await?;
            Ok(None)
        }
        _ => Ok(None),
    }
}

fn new_compute_contract<D: Deployment>(
    object: &ObjectOf<D>,
    contract: &Contract,
    now: Timestamp,
) -> Result<ComputeContractObject, ReconcileError> {
    let name = compute_contract_name(&object.metadata.uid, &contract.name)?;
    let contract_name =
        Name::parse(&contract.name).map_err(|error| ReconcileError::Invalid(error.to_string()))?;
    let mut metadata = Metadata::new(name, random_uid()?, now);
    metadata.owner_refs.push(controlled_by(object));
    Ok(Object {
        metadata,
        spec: ComputeContractSpec {
            deployment: DeploymentRef {
                kind: D::DEPLOYMENT,
                name: object.metadata.name.clone(),
            },
            contract: contract_name,
            fields: contract.clone(),
            secrets: for_contract(&object.spec.infra().secrets, &contract.name),
            release: false,
            release_requested_at: None,
        },
        status: Default::default(),
    })
}

/// The secrets of `secrets` the guest of contract `name` receives.
fn for_contract(secrets: &[SecretRef], name: &str) -> Vec<SecretRef> {
    secrets
        .iter()
        .filter(|secret| secret.is_for(name))
        .cloned()
        .collect()
}

/// Gives `existing` the secrets its deployment now gives its contract, when they differ.
async fn follow_secrets<D: Deployment, R: RecordRepo + 'static>(
    context: &Context<R>,
    object: &ObjectOf<D>,
    existing: &ComputeContractObject,
) -> Result<Option<ComputeContractObject>, ReconcileError> {
    let wanted = for_contract(
        &object.spec.infra().secrets,
        existing.spec.contract.as_str(),
    );
    if wanted == existing.spec.secrets {
        return Ok(None);
    }
    let mut changed = existing.clone();
    changed.spec.secrets = wanted;
    Ok(Some(
        context
            .store(move |store| store.replace::<ComputeContractSpec>(&changed))
            .await?,
    ))
}

/// The owner reference of an object the deployment controls (its contracts, its record).
pub fn controlled_by<D: Deployment>(object: &ObjectOf<D>) -> OwnerRef {
    OwnerRef {
        kind: <D as swdesk_store::Resource>::KIND,
        name: object.metadata.name.clone(),
        uid: object.metadata.uid.clone(),
        controller: true,
    }
}

/// `<first 8 of the deployment uid>-<contract>`, cut to a DNS label.
fn compute_contract_name(owner: &Uid, contract: &str) -> Result<Name, ReconcileError> {
    let mut text = format!("{}-{contract}", owner.short());
    text.truncate(63);
    let text = text.trim_end_matches('-');
    Name::parse(text).map_err(|error| ReconcileError::Invalid(error.to_string()))
}

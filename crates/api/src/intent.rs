//! How an owner's intent reaches a declaration: one compare-and-swap write of the object's
//! spec, retried when the controller wrote the status in between, so the controller sees an
//! ordinary change; refused whole, with why ([`IntentError`]), when the deployment is gone or
//! ending, or when the change has a problem. The deployments' and the secrets' intents both
//! write through here. A deployment followed read-only (another account keeps its record) takes
//! no intent at all ([`refuse_read_only`]).

use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;

use crate::error_code::ErrorCode;
use swdesk_core::deployment::{Deployment, Writer, writer};
use swdesk_core::infra::{EphemeralInfraSpec, InfraSpec};
use swdesk_lexicon::Problem;
use swdesk_store::{ObjectOf, Store, StoreError};

use crate::node_infra;

/// Why an intent was refused.
#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    /// The declaration has problems; nothing was written.
    #[error("the declaration has {} problem(s); nothing was saved", .0.len())]
    Invalid(Vec<Problem>),
    /// There is no such deployment or contract.
    #[error("{0}")]
    NotFound(String),
    /// The intent does not apply now (e.g. the deployment is ending).
    #[error("{0}")]
    Refused(String),
    /// The store failed.
    #[error("the local store: {0}")]
    Store(#[from] StoreError),
}

impl IntentError {
    /// A stable code for the window to branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Invalid(_) => ErrorCode::Invalid,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Refused(_) => ErrorCode::Refused,
            Self::Store(_) => ErrorCode::Store,
        }
    }
}

/// The declared fields of the deployment `kind`/`name` (an Infra's spec, an
/// EphemeralInfra's `infra`), if it exists.
pub fn declared(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
) -> Result<Option<InfraSpec>, IntentError> {
    Ok(match kind {
        DeploymentKind::Infra => store.get::<InfraSpec>(name)?.map(|object| object.spec),
        DeploymentKind::EphemeralInfra => store
            .get::<EphemeralInfraSpec>(name)?
            .map(|object| object.spec.infra),
    })
}

/// Writes `change` into the declared fields of the deployment `kind`/`name` (an Infra's
/// spec, an EphemeralInfra's `infra`), as [`edit`] does.
pub fn edit_declared(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    mut change: impl FnMut(&mut InfraSpec) -> Result<(), IntentError>,
) -> Result<(), IntentError> {
    match kind {
        DeploymentKind::Infra => edit::<InfraSpec>(store, name, change),
        DeploymentKind::EphemeralInfra => {
            edit::<EphemeralInfraSpec>(store, name, |spec| change(&mut spec.infra))
        }
    }
}

/// Refuses any change of `object` when it follows a record another account keeps: what it
/// declares changes only there.
pub fn refuse_read_only<D: Deployment>(object: &ObjectOf<D>) -> Result<(), IntentError> {
    let spec = object.spec.infra();
    if writer(&object.metadata, spec) != Writer::RecordKeeper {
        return Ok(());
    }
    Err(IntentError::Refused(format!(
        "{} is read-only: {} keeps its record, and it is shown here as that record says",
        object.metadata.name,
        node_infra::keeper(&object.metadata, spec)
    )))
}

/// Writes `change` into the spec of `name`, again when the object changed in between.
fn edit<D: Deployment>(
    store: &Store,
    name: &Name,
    mut change: impl FnMut(&mut D) -> Result<(), IntentError>,
) -> Result<(), IntentError> {
    loop {
        let mut object = store
            .get::<D>(name)?
            .ok_or_else(|| IntentError::NotFound(format!("there is no deployment {name}")))?;
        refuse_read_only(&object)?;
        if object.metadata.is_deleting() || D::status(&object.status).ended_at.is_some() {
            return Err(IntentError::Refused(format!(
                "{name} is ending; it takes no more changes"
            )));
        }
        change(&mut object.spec)?;
        match store.replace::<D>(&object) {
            Err(StoreError::Conflict { .. }) => continue,
            result => return result.map(drop).map_err(IntentError::from),
        }
    }
}

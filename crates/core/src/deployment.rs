//! What a deployment is, whichever of its two kinds (Infra, EphemeralInfra): the
//! [`Deployment`] trait ties each to the Infra spec and status inside it, the record it
//! publishes, what a record of its kind says ([`RecordFacts`]), when it ends, and the names
//! and labels the controller gives its parts. The reconciler, the window's api and the tools
//! all read a deployment through this one trait.
//!
//! Invariants: the published record comes from [`crate::publish`] (declaration, lifetime,
//! `createdAt`, status; unknown fields of the previous record kept); a record is read through
//! the lexicon types, so a record this version cannot read is an error, never a guess.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::{LabelError, Name};
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::rollup::{ContractPhase, ObjectPhase};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::computer::socialweb::infra::{Status, StatusPhase};
use swdesk_lexicon::{EphemeralInfra, Infra, Record};

use crate::collection::FOLLOWER_LABEL;
use crate::declaration::{Declaration, DeclarationHash};
use crate::infra::{
    ContractStatus, EndReason, EndWhen, EphemeralInfraSpec, EphemeralInfraStatus, InfraSpec,
    InfraStatus, RecordBinding,
};
use crate::lifecycle::{self, EphemeralFacts};
use crate::publish;
use crate::resource::Resource;
use crate::sync::{SyncMode, SyncState};

/// A record of a deployment's kind that cannot be read or written as that kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RecordError(pub String);

/// Whether the deployment with `metadata` follows a record another device writes (the
/// collection reconciler made it from that device's index).
pub fn is_follower(metadata: &Metadata) -> bool {
    metadata.labels.contains_key(FOLLOWER_LABEL)
}

/// Who writes a deployment's record, runs its contracts and makes its final write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// This device: it publishes the record, runs the contracts and ends the deployment.
    Here,
    /// Another device of the owner (a follower made from the owner's index): this one shows
    /// the status that device publishes and edits the declaration through the record.
    OtherDevice,
    /// Whoever keeps a record followed read-only (`sync: Follow`, such as the node Infra a
    /// gateway keeps in its own account): shown here, never written, ended or run.
    RecordKeeper,
}

/// Who writes the deployment with `metadata` and `spec`.
pub fn writer(metadata: &Metadata, spec: &InfraSpec) -> Writer {
    if spec.record.sync.is_read_only() {
        Writer::RecordKeeper
    } else if is_follower(metadata) {
        Writer::OtherDevice
    } else {
        Writer::Here
    }
}

/// The name of the AtprotoRecord child that writes the record of the deployment `kind` with
/// `metadata`: one per deployment object, named by its uid.
pub fn record_child_name(kind: DeploymentKind, metadata: &Metadata) -> Result<Name, LabelError> {
    let prefix = match kind {
        DeploymentKind::Infra => "infra",
        DeploymentKind::EphemeralInfra => "ephemeral",
    };
    Name::parse(&format!("{prefix}-{}", metadata.uid.as_str()))
}

/// How a deployment stands with its record, in one word for the list: its [`SyncState`] as
/// the owner needs to tell them apart, and where it is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum SyncSummary {
    /// The record holds this declaration.
    InSync,
    /// Being written to the repo.
    Publishing,
    /// The record's declaration was just applied here.
    Pulling,
    /// Edited here and in the repo: the owner chooses.
    Conflict,
    /// The repo cannot be reached or refused the write; changes wait here.
    Offline,
    /// The record in the repo cannot be used; nothing is written over it.
    Invalid,
    /// The record a followed deployment shows (another device's, or an index entry's) is not
    /// in the repo.
    Gone,
    /// Its contracts are being released before the final write.
    Ending,
    /// Final: the record says it ended.
    Ended,
}

impl SyncSummary {
    /// The word for a deployment whose status is `status`, `deleting` once the owner ended it.
    pub fn of(status: &InfraStatus, deleting: bool) -> Self {
        if status.ended_at.is_some() || status.phase == ObjectPhase::Ended {
            return Self::Ended;
        }
        if deleting {
            return Self::Ending;
        }
        match status.sync.as_ref().map(|sync| &sync.state) {
            None | Some(SyncState::Publishing) => Self::Publishing,
            Some(SyncState::Published | SyncState::Following | SyncState::Pushed) => Self::InSync,
            Some(SyncState::Pulled) => Self::Pulling,
            Some(SyncState::Conflict | SyncState::ChangedElsewhere { .. }) => Self::Conflict,
            Some(SyncState::Offline { .. } | SyncState::WriteFailed { .. }) => Self::Offline,
            Some(SyncState::RecordInvalid { .. } | SyncState::ReservedKey) => Self::Invalid,
            Some(SyncState::RecordGone) => Self::Gone,
            Some(SyncState::RecordEnded) => Self::Ended,
        }
    }
}

/// What a record of the kind says.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordFacts {
    /// The hash of its declaration.
    pub hash: DeclarationHash,
    /// `description` and `contracts`, for a pull.
    pub description: Option<String>,
    /// The contracts.
    pub contracts: Vec<crate::infra::Contract>,
    /// Its `createdAt`.
    pub created_at: Option<Timestamp>,
    /// When it ended, if its status says so.
    pub ended_at: Option<Timestamp>,
    /// Why it ended.
    pub end_reason: Option<EndReason>,
    /// Its `expiresAt`, if it has a lifetime.
    pub expires_at: Option<Timestamp>,
    /// The phase its status shows.
    pub phase: ObjectPhase,
    /// The contract statuses its status shows.
    pub contract_statuses: Vec<ContractStatus>,
}

impl RecordFacts {
    /// Whether the record's status says it ended.
    pub fn ended(&self) -> bool {
        self.ended_at.is_some() || self.end_reason.is_some()
    }
}

/// Infra or EphemeralInfra, as the deployment reconciler sees it.
pub trait Deployment:
    Resource<Status: Clone + PartialEq + Send + Sync> + Clone + PartialEq + Sync
{
    /// Which of the two.
    const DEPLOYMENT: DeploymentKind;

    /// The Infra spec inside.
    fn infra(&self) -> &InfraSpec;
    /// The Infra spec inside, to change.
    fn infra_mut(&mut self) -> &mut InfraSpec;
    /// The Infra status inside.
    fn status(status: &Self::Status) -> &InfraStatus;
    /// The Infra status inside, to change.
    fn status_mut(status: &mut Self::Status) -> &mut InfraStatus;
    /// The record to publish for `object`, its `createdAt` being `created_at`.
    fn record(
        object: &Object<Self, Self::Status>,
        created_at: Timestamp,
        previous: Option<&Value>,
    ) -> Result<Value, RecordError>;
    /// What the record `value` says.
    fn read(value: &Value) -> Result<RecordFacts, RecordError>;
    /// The record `previous` with the declaration of `spec` (everything else kept): what a
    /// device that follows the record writes.
    fn with_declaration(previous: &Value, spec: &InfraSpec) -> Result<Value, RecordError>;
    /// The spec of a follower bound to `uri`: empty, synced both ways (its first run pulls).
    fn follower(uri: RecordUri) -> Self;
    /// When the deployment expires, if it has a lifetime.
    fn expires_at(object: &Object<Self, Self::Status>) -> Option<Timestamp>;
    /// Why the deployment ends at `now`, or `None` while it lives.
    fn end(
        object: &Object<Self, Self::Status>,
        contracts: &[ContractPhase],
        now: Timestamp,
    ) -> Option<EndReason>;
}

impl Deployment for InfraSpec {
    const DEPLOYMENT: DeploymentKind = DeploymentKind::Infra;

    fn infra(&self) -> &InfraSpec {
        self
    }

    fn infra_mut(&mut self) -> &mut InfraSpec {
        self
    }

    fn status(status: &InfraStatus) -> &InfraStatus {
        status
    }

    fn status_mut(status: &mut InfraStatus) -> &mut InfraStatus {
        status
    }

    fn record(
        object: &Object<Self, Self::Status>,
        created_at: Timestamp,
        previous: Option<&Value>,
    ) -> Result<Value, RecordError> {
        let previous = previous.and_then(|value| Infra::from_record_value(value.clone()).ok());
        publish::infra_record(&object.spec, &object.status, created_at, previous.as_ref())
            .to_record_value()
            .map_err(invalid)
    }

    fn read(value: &Value) -> Result<RecordFacts, RecordError> {
        let record = Infra::from_record_value(value.clone()).map_err(invalid)?;
        let declaration = Declaration::of_record(&record);
        facts(declaration, &record.created_at, record.status.as_ref())
    }

    fn with_declaration(previous: &Value, spec: &InfraSpec) -> Result<Value, RecordError> {
        let mut record = Infra::from_record_value(previous.clone()).map_err(invalid)?;
        record.description = spec.description.clone();
        record.contracts = Some(spec.contracts.clone());
        record.to_record_value().map_err(invalid)
    }

    fn follower(uri: RecordUri) -> Self {
        InfraSpec {
            record: RecordBinding {
                uri: Some(uri),
                sync: SyncMode::Both,
            },
            ..InfraSpec::default()
        }
    }

    fn expires_at(_object: &Object<Self, Self::Status>) -> Option<Timestamp> {
        None
    }

    fn end(
        object: &Object<Self, Self::Status>,
        _contracts: &[ContractPhase],
        _now: Timestamp,
    ) -> Option<EndReason> {
        lifecycle::infra_end(object.metadata.is_deleting(), object.status.end_reason)
    }
}

impl Deployment for EphemeralInfraSpec {
    const DEPLOYMENT: DeploymentKind = DeploymentKind::EphemeralInfra;

    fn infra(&self) -> &InfraSpec {
        &self.infra
    }

    fn infra_mut(&mut self) -> &mut InfraSpec {
        &mut self.infra
    }

    fn status(status: &EphemeralInfraStatus) -> &InfraStatus {
        &status.infra
    }

    fn status_mut(status: &mut EphemeralInfraStatus) -> &mut InfraStatus {
        &mut status.infra
    }

    fn record(
        object: &Object<Self, Self::Status>,
        created_at: Timestamp,
        previous: Option<&Value>,
    ) -> Result<Value, RecordError> {
        let previous =
            previous.and_then(|value| EphemeralInfra::from_record_value(value.clone()).ok());
        let mut status = object.status.clone();
        status.expires_at = Self::expires_at(object);
        publish::ephemeral_record(&object.spec, &status, created_at, previous.as_ref())
            .to_record_value()
            .map_err(invalid)
    }

    fn read(value: &Value) -> Result<RecordFacts, RecordError> {
        let record = EphemeralInfra::from_record_value(value.clone()).map_err(invalid)?;
        let declaration = Declaration::of_ephemeral_record(&record);
        facts(declaration, &record.created_at, record.status.as_ref())
    }

    fn with_declaration(previous: &Value, spec: &InfraSpec) -> Result<Value, RecordError> {
        let mut record = EphemeralInfra::from_record_value(previous.clone()).map_err(invalid)?;
        record.description = spec.description.clone();
        record.contracts = Some(spec.contracts.clone());
        record.to_record_value().map_err(invalid)
    }

    fn follower(uri: RecordUri) -> Self {
        EphemeralInfraSpec {
            infra: InfraSpec::follower(uri),
            ttl_seconds: crate::infra::DEFAULT_TTL_SECONDS,
            end_when: EndWhen::default(),
        }
    }

    fn expires_at(object: &Object<Self, Self::Status>) -> Option<Timestamp> {
        Some(lifecycle::expires_at(
            object.metadata.created_at,
            object.spec.ttl_seconds,
        ))
    }

    fn end(
        object: &Object<Self, Self::Status>,
        contracts: &[ContractPhase],
        now: Timestamp,
    ) -> Option<EndReason> {
        let facts = EphemeralFacts {
            end_when: object.spec.end_when,
            expires_at: lifecycle::expires_at(object.metadata.created_at, object.spec.ttl_seconds),
            contracts,
            deleting: object.metadata.is_deleting(),
            recorded: object.status.infra.end_reason,
        };
        lifecycle::ephemeral_end(&facts, now)
    }
}

fn facts(
    declaration: Declaration<'_>,
    created_at: &str,
    status: Option<&Status>,
) -> Result<RecordFacts, RecordError> {
    let parse = |text: Option<&String>| text.and_then(|text| Timestamp::parse_rfc3339(text).ok());
    let (phase, contract_statuses) = publish::observed_status(status);
    Ok(RecordFacts {
        phase,
        contract_statuses,
        hash: declaration.hash().map_err(invalid)?,
        description: declaration.description.map(str::to_owned),
        contracts: declaration.contracts.to_vec(),
        created_at: Timestamp::parse_rfc3339(created_at).ok(),
        ended_at: status.and_then(|status| parse(status.ended_at.as_ref())),
        end_reason: status
            .and_then(|status| status.end_reason.as_ref())
            .and_then(end_reason),
        expires_at: status.and_then(|status| parse(status.expires_at.as_ref())),
    })
    .map(|mut facts| {
        let ended_phase =
            status.and_then(|status| status.phase.as_ref()) == Some(&StatusPhase::Ended);
        if ended_phase && facts.ended_at.is_none() {
            facts.end_reason = facts.end_reason.or(Some(EndReason::Deleted));
        }
        facts
    })
}

fn end_reason(reason: &swdesk_lexicon::computer::socialweb::infra::EndReason) -> Option<EndReason> {
    use swdesk_lexicon::computer::socialweb::infra::EndReason as Recorded;
    match reason {
        Recorded::Deleted => Some(EndReason::Deleted),
        Recorded::Complete => Some(EndReason::Complete),
        Recorded::Deadline => Some(EndReason::Deadline),
        Recorded::Other(_) => None,
    }
}

fn invalid(error: impl std::fmt::Display) -> RecordError {
    RecordError(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::SyncSummary;
    use crate::infra::InfraStatus;
    use crate::sync::{SyncState, SyncStatus};
    use swdesk_kernel::timestamp::Timestamp;

    fn summary_of(state: SyncState) -> SyncSummary {
        let status = InfraStatus {
            sync: Some(SyncStatus {
                state,
                since: Timestamp::from_unix_millis(0).expect("time"),
            }),
            ..InfraStatus::default()
        };
        SyncSummary::of(&status, false)
    }

    #[test]
    fn a_followed_record_gone_from_the_repo_reads_gone_not_invalid() {
        assert_eq!(summary_of(SyncState::RecordGone), SyncSummary::Gone);
        assert_eq!(summary_of(SyncState::ReservedKey), SyncSummary::Invalid);
        assert_eq!(summary_of(SyncState::Following), SyncSummary::InSync);
    }
}

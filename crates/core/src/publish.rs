//! Between objects and records: the record an object publishes (its declaration and its
//! observed status, SPEC §2 "Status in the record"), and a pulled record applied onto a spec.
//!
//! Invariants: a published record carries only the declaration (`description`, `contracts`),
//! the lifetime of an EphemeralInfra, `createdAt` and the status; what other parties said in
//! the status (a winner's DID, its receipt's address, a message that may quote a peer) passes
//! the one cleaner at this boundary: a winner or receipt of the wrong form is left out, a
//! message is put on one line without controls or bidi overrides and cut to its `maxLength`,
//! so a record built here always validates whatever a peer sent; local-only fields
//! (`secrets`, `clusterRef`, `nodes`) and the binding never reach it. Fields of the previous
//! record this version does not know are kept (read-modify-write loses nothing). A pull
//! changes only the declaration of a spec, never its binding or local-only fields.

use swdesk_kernel::rollup::{ContractPhase, ObjectPhase};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::computer::socialweb::ephemeral_infra::EphemeralInfraEndWhen;
use swdesk_lexicon::computer::socialweb::infra::{
    ContractStatus as RecordContractStatus, ContractStatusPhase, EndReason as RecordEndReason,
    Status, StatusPhase,
};
use swdesk_lexicon::syntax;
use swdesk_lexicon::text::peer_text;
use swdesk_lexicon::{EphemeralInfra, Infra};

use crate::declaration::Declaration;
use crate::infra::{
    ContractStatus, EndReason, EndWhen, EphemeralInfraSpec, EphemeralInfraStatus, InfraSpec,
    InfraStatus,
};

/// The Infra record for `spec` and `status`, keeping unknown fields of `previous`.
pub fn infra_record(
    spec: &InfraSpec,
    status: &InfraStatus,
    created_at: Timestamp,
    previous: Option<&Infra>,
) -> Infra {
    Infra {
        description: spec.description.clone(),
        contracts: Some(spec.contracts.clone()),
        status: Some(record_status(status, None)),
        index: None,
        created_at: created_at.to_rfc3339(),
        extra: previous
            .map(|record| record.extra.clone())
            .unwrap_or_default(),
    }
}

/// The EphemeralInfra record for `spec` and `status`, keeping unknown fields of `previous`.
pub fn ephemeral_record(
    spec: &EphemeralInfraSpec,
    status: &EphemeralInfraStatus,
    created_at: Timestamp,
    previous: Option<&EphemeralInfra>,
) -> EphemeralInfra {
    EphemeralInfra {
        description: spec.infra.description.clone(),
        contracts: Some(spec.infra.contracts.clone()),
        ttl_seconds: i64::try_from(spec.ttl_seconds).unwrap_or(i64::MAX),
        end_when: Some(record_end_when(spec.end_when)),
        status: Some(record_status(&status.infra, status.expires_at)),
        created_at: created_at.to_rfc3339(),
        extra: previous
            .map(|record| record.extra.clone())
            .unwrap_or_default(),
    }
}

/// `spec` with the declaration of a pulled record; binding and local-only fields untouched.
pub fn pull(spec: &InfraSpec, declaration: Declaration<'_>) -> InfraSpec {
    InfraSpec {
        description: declaration.description.map(str::to_owned),
        contracts: declaration.contracts.to_vec(),
        ..spec.clone()
    }
}

/// The record's `#status` for an object status.
pub fn record_status(status: &InfraStatus, expires_at: Option<Timestamp>) -> Status {
    Status {
        phase: Some(record_phase(status.phase)),
        contracts: Some(
            status
                .contracts
                .iter()
                .map(record_contract_status)
                .collect(),
        ),
        expires_at: expires_at.map(Timestamp::to_rfc3339),
        ended_at: status.ended_at.map(Timestamp::to_rfc3339),
        end_reason: status.end_reason.map(record_end_reason),
        extra: serde_json::Map::new(),
    }
}

/// The lexicon's `maxLength` of a contract status's `message`: a longer message (a bidder's
/// refusal, say) is cut, never allowed to make the owner's record invalid.
const CONTRACT_MESSAGE_MAX: usize = 2048;

fn record_contract_status(status: &ContractStatus) -> RecordContractStatus {
    RecordContractStatus {
        name: status.name.clone(),
        phase: Some(record_contract_phase(status.phase)),
        winner: status.winner.clone().filter(|did| syntax::did(did).is_ok()),
        receipt: status
            .receipt
            .clone()
            .filter(|uri| syntax::at_uri(uri).is_ok()),
        message: status
            .message
            .as_deref()
            .map(|message| peer_text(message, CONTRACT_MESSAGE_MAX)),
        extra: serde_json::Map::new(),
    }
}

fn record_phase(phase: ObjectPhase) -> StatusPhase {
    match phase {
        ObjectPhase::Pending => StatusPhase::Pending,
        ObjectPhase::Staged => StatusPhase::Staged,
        ObjectPhase::Deploying => StatusPhase::Deploying,
        ObjectPhase::Deployed => StatusPhase::Deployed,
        ObjectPhase::Releasing => StatusPhase::Releasing,
        ObjectPhase::Released => StatusPhase::Released,
        ObjectPhase::Degraded => StatusPhase::Degraded,
        ObjectPhase::Ending => StatusPhase::Ending,
        ObjectPhase::Deleting => StatusPhase::Deleting,
        ObjectPhase::Ended => StatusPhase::Ended,
    }
}

fn record_contract_phase(phase: ContractPhase) -> ContractStatusPhase {
    match phase {
        ContractPhase::Staged => ContractStatusPhase::Staged,
        ContractPhase::Requesting => ContractStatusPhase::Requesting,
        ContractPhase::Deployed => ContractStatusPhase::Deployed,
        ContractPhase::Releasing => ContractStatusPhase::Releasing,
        ContractPhase::Released => ContractStatusPhase::Released,
        ContractPhase::Failed => ContractStatusPhase::Failed,
    }
}

/// The phase and contract statuses a record's `#status` shows: what a device that follows the
/// record (and does not run it) displays. Values this version does not know read as `pending`
/// and `staged`.
pub fn observed_status(status: Option<&Status>) -> (ObjectPhase, Vec<ContractStatus>) {
    let Some(status) = status else {
        return (ObjectPhase::Pending, Vec::new());
    };
    let phase = status
        .phase
        .as_ref()
        .map_or(ObjectPhase::Pending, object_phase);
    let contracts = status
        .contracts
        .iter()
        .flatten()
        .map(|contract| ContractStatus {
            name: contract.name.clone(),
            phase: contract
                .phase
                .as_ref()
                .map_or(ContractPhase::Staged, contract_phase),
            winner: contract.winner.clone(),
            receipt: contract.receipt.clone(),
            message: contract.message.clone(),
            drift: None,
        })
        .collect();
    (phase, contracts)
}

fn object_phase(phase: &StatusPhase) -> ObjectPhase {
    match phase {
        StatusPhase::Staged => ObjectPhase::Staged,
        StatusPhase::Deploying => ObjectPhase::Deploying,
        StatusPhase::Deployed => ObjectPhase::Deployed,
        StatusPhase::Releasing => ObjectPhase::Releasing,
        StatusPhase::Released => ObjectPhase::Released,
        StatusPhase::Degraded => ObjectPhase::Degraded,
        StatusPhase::Ending => ObjectPhase::Ending,
        StatusPhase::Deleting => ObjectPhase::Deleting,
        StatusPhase::Ended => ObjectPhase::Ended,
        StatusPhase::Pending | StatusPhase::Other(_) => ObjectPhase::Pending,
    }
}

fn contract_phase(phase: &ContractStatusPhase) -> ContractPhase {
    match phase {
        ContractStatusPhase::Requesting => ContractPhase::Requesting,
        ContractStatusPhase::Deployed => ContractPhase::Deployed,
        ContractStatusPhase::Releasing => ContractPhase::Releasing,
        ContractStatusPhase::Released => ContractPhase::Released,
        ContractStatusPhase::Failed => ContractPhase::Failed,
        ContractStatusPhase::Staged | ContractStatusPhase::Other(_) => ContractPhase::Staged,
    }
}

/// The record's `#endReason` for an end reason.
pub fn record_end_reason(reason: EndReason) -> RecordEndReason {
    match reason {
        EndReason::Deleted => RecordEndReason::Deleted,
        EndReason::Complete => RecordEndReason::Complete,
        EndReason::Deadline => RecordEndReason::Deadline,
    }
}

fn record_end_when(end_when: EndWhen) -> EphemeralInfraEndWhen {
    match end_when {
        EndWhen::Complete => EphemeralInfraEndWhen::Complete,
        EndWhen::Deadline => EphemeralInfraEndWhen::Deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declaration::record_problems;
    use serde_json::json;
    use swdesk_kernel::deployment_kind::DeploymentKind;
    use swdesk_kernel::secret::SecretRef;
    use swdesk_lexicon::Record;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_follower_reads_back_the_phase_and_contracts_the_writer_published() {
        for phase in [
            ObjectPhase::Deploying,
            ObjectPhase::Degraded,
            ObjectPhase::Ended,
        ] {
            let status = InfraStatus {
                phase,
                contracts: vec![ContractStatus {
                    name: "web".into(),
                    phase: ContractPhase::Failed,
                    winner: Some("did:plc:bidder".into()),
                    receipt: None,
                    message: Some("no bids".into()),
                    drift: None,
                }],
                ..InfraStatus::default()
            };
            let (read_phase, read_contracts) = observed_status(Some(&record_status(&status, None)));
            assert_eq!(read_phase, phase);
            assert_eq!(read_contracts, status.contracts);
        }
        assert_eq!(observed_status(None), (ObjectPhase::Pending, Vec::new()));
    }

    fn spec() -> InfraSpec {
        serde_json::from_value(json!({
            "description": "site",
            "contracts": [{"name": "web", "state": "requested", "gpu": "a100"}],
            "secrets": [{"name": "token", "keychainEntry": "swdesk/token"}],
            "clusterRef": {"gateway": "did:web:k8s.socialweb.computer", "name": "tenant-1"}
        }))
        .unwrap()
    }

    fn status() -> InfraStatus {
        InfraStatus {
            phase: ObjectPhase::Deploying,
            contracts: vec![ContractStatus {
                name: "web".into(),
                phase: ContractPhase::Requesting,
                winner: None,
                receipt: None,
                message: Some("waiting for bids".into()),
                drift: None,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_published_record_validates_and_carries_no_local_only_field() {
        let record = infra_record(&spec(), &status(), at("2026-12-02T18:44:00Z"), None);
        let value = record.to_record_value().unwrap();
        assert_eq!(record_problems(DeploymentKind::Infra, &value), vec![]);
        let text = value.to_string();
        for local in [
            "secrets",
            "keychainEntry",
            "clusterRef",
            "tenant-1",
            "nodes",
        ] {
            assert!(!text.contains(local), "{local} leaked into {text}");
        }
        assert_eq!(value["contracts"][0]["gpu"], "a100");
        assert_eq!(value["status"]["contracts"][0]["phase"], "requesting");
    }

    #[test]
    fn a_peers_message_of_any_length_is_cut_so_the_record_still_validates() {
        let mut long = status();
        long.contracts[0].message = Some(format!("refused: {}", "é".repeat(100 * 1024)));
        let record = infra_record(&spec(), &long, at("2026-12-02T18:44:00Z"), None);
        let value = record.to_record_value().unwrap();
        assert_eq!(record_problems(DeploymentKind::Infra, &value), vec![]);
        let message = value["status"]["contracts"][0]["message"].as_str().unwrap();
        assert!(message.len() <= CONTRACT_MESSAGE_MAX);
        assert!(message.starts_with("refused: é"));
        assert!(message.ends_with(swdesk_lexicon::text::CUT_MARK));
    }

    #[test]
    fn publishing_keeps_the_previous_records_unknown_fields() {
        let previous: Infra = serde_json::from_value(
            json!({"createdAt": "2026-12-02T18:44:00.000Z", "pinned": true}),
        )
        .unwrap();
        let record = infra_record(
            &spec(),
            &status(),
            at("2026-12-02T18:44:00Z"),
            Some(&previous),
        );
        assert_eq!(record.extra["pinned"], true);
    }

    #[test]
    fn an_ephemeral_record_has_its_lifetime_and_expiry() {
        let spec = EphemeralInfraSpec {
            infra: spec(),
            ttl_seconds: 600,
            end_when: EndWhen::Deadline,
        };
        let status = EphemeralInfraStatus {
            infra: status(),
            expires_at: Some(at("2026-12-02T18:54:00Z")),
        };
        let record = ephemeral_record(&spec, &status, at("2026-12-02T18:44:00Z"), None);
        let value = record.to_record_value().unwrap();
        assert_eq!(
            record_problems(DeploymentKind::EphemeralInfra, &value),
            vec![]
        );
        assert_eq!(
            (value["ttlSeconds"].clone(), value["endWhen"].clone()),
            (json!(600), json!("deadline"))
        );
        assert_eq!(value["status"]["expiresAt"], "2026-12-02T18:54:00.000Z");
    }

    #[test]
    fn a_pull_replaces_the_declaration_and_keeps_local_fields() {
        let record: Infra = serde_json::from_value(json!({
            "createdAt": "2026-12-02T18:44:00.000Z",
            "description": "edited elsewhere",
            "contracts": [{"name": "web", "state": "released"}]
        }))
        .unwrap();
        let pulled = pull(&spec(), Declaration::of_record(&record));
        assert_eq!(pulled.description.as_deref(), Some("edited elsewhere"));
        assert_eq!(pulled.contracts, record.contracts.unwrap());
        let token = SecretRef {
            name: "token".into(),
            keychain_entry: "swdesk/token".into(),
            contracts: vec![],
            version: 1,
        };
        assert_eq!(pulled.secrets, vec![token]);
        assert_eq!(pulled.cluster_ref, spec().cluster_ref);
    }

    #[test]
    fn after_a_pull_the_spec_hashes_like_the_record() {
        let record: Infra = serde_json::from_value(json!({
            "createdAt": "2026-12-02T18:44:00.000Z",
            "contracts": [{"name": "db", "state": "staged"}]
        }))
        .unwrap();
        let pulled = pull(&spec(), Declaration::of_record(&record));
        let spec_hash = Declaration::of_spec(&pulled).hash().unwrap();
        assert_eq!(spec_hash, Declaration::of_record(&record).hash().unwrap());
    }

    /// What a peer can put in a contract's status: any text, with controls, NUL, bidi overrides
    /// and line breaks likely, up to a few times the message's limit.
    fn peer_string() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let hostile = prop_oneof![
            Just('\u{202E}'),
            Just('\u{2066}'),
            Just('\0'),
            Just('\n'),
            Just('\u{1b}'),
            Just('\u{2028}'),
            Just('<'),
            any::<char>(),
        ];
        prop_oneof![
            proptest::collection::vec(hostile, 0..64).prop_map(|c| c.into_iter().collect()),
            ".{0,3000}",
            "did:web:[a-z.%:]{0,40}",
            "at://did:plc:[a-z0-9]{1,30}/[a-z.]{1,30}/[a-z0-9]{1,20}",
            (1usize..40_000).prop_map(|n| format!("at://did:plc:x/a.b/{}", "r".repeat(n))),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(256))]

        #[test]
        fn whatever_a_peer_said_the_published_record_validates_and_reads_on_one_line(
            winner in peer_string(),
            receipt in peer_string(),
            message in peer_string(),
        ) {
            let mut status = status();
            status.contracts[0].winner = Some(winner);
            status.contracts[0].receipt = Some(receipt);
            status.contracts[0].message = Some(message);
            let record = infra_record(&spec(), &status, at("2026-12-02T18:44:00Z"), None);
            let value = record.to_record_value().unwrap();
            proptest::prop_assert_eq!(record_problems(DeploymentKind::Infra, &value), vec![]);
            let published = &value["status"]["contracts"][0];
            for field in ["winner", "receipt", "message"] {
                let text = published[field].as_str().unwrap_or_default();
                proptest::prop_assert!(
                    !text.chars().any(|c| c.is_control()
                        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')),
                    "{} holds a control or bidi character: {:?}", field, text
                );
            }
        }
    }
}

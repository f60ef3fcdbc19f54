//! Genesis-only fields (seed 003: genesis inputs are consumed once, at creation; a later change
//! is refused loud, never applied and never silently reverted). The one list of them:
//!
//! | field | fixed when | why |
//! |---|---|---|
//! | `contracts[].computeKind` | the contract (by name) first appears | the guest is rented as that kind; another kind is another contract |
//! | EphemeralInfra `ttlSeconds` | the deployment is created | `expiresAt` counts from `createdAt` |
//! | EphemeralInfra `endWhen` | the deployment is created | the end rule the contracts were requested under |
//!
//! Every path a declaration changes by checks this list: the owner's editor (refused with a
//! [`Problem`] each, nothing saved), a pull of the record edited elsewhere and a second device's
//! edit (the controller applies nothing and shows each [`GenesisChange`] until the owner keeps
//! this side or ends the deployment for a successor).

use swdesk_lexicon::Problem;

use super::types::GenesisChange;
use crate::infra::{Contract, EphemeralInfraSpec};

/// Every genesis-only field that `theirs` changes in a contract `ours` already has (a contract
/// only one side has is new or gone, not changed).
pub fn genesis_changes(ours: &[Contract], theirs: &[Contract]) -> Vec<GenesisChange> {
    ours.iter()
        .filter_map(|contract| {
            let other = theirs.iter().find(|other| other.name == contract.name)?;
            let (was, now) = (
                contract.compute_kind_or_default(),
                other.compute_kind_or_default(),
            );
            (was != now).then(|| GenesisChange {
                contract: contract.name.clone(),
                field: "computeKind".to_owned(),
                ours: was.as_str().to_owned(),
                theirs: now.as_str().to_owned(),
            })
        })
        .collect()
}

/// The owner's edit of `old` contracts into `new` as problems, one per genesis-only field it
/// changes, each at the field's place in `new`.
pub fn contract_genesis_problems(old: &[Contract], new: &[Contract]) -> Vec<Problem> {
    genesis_changes(old, new)
        .into_iter()
        .map(|change| {
            let index = new
                .iter()
                .position(|contract| contract.name == change.contract)
                .unwrap_or_default();
            Problem::new(
                format!("/spec/contracts/{index}/{}", change.field),
                format!(
                    "{} of contract {} cannot change after it was declared (it is {}).",
                    change.field, change.contract, change.ours
                ),
                format!(
                    "Keep {} at {}, or declare a contract with another name for {}.",
                    change.field, change.ours, change.theirs
                ),
            )
        })
        .collect()
}

/// Problems of changing an EphemeralInfra's spec from `old` to `new`: its lifetime is fixed at
/// creation (`expiresAt` counts from `createdAt`, and the lifetime is not part of the
/// declaration hash), and so is each contract's kind; a change is refused rather than
/// silently ignored.
pub fn lifetime_change_problems(
    old: &EphemeralInfraSpec,
    new: &EphemeralInfraSpec,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if old.ttl_seconds != new.ttl_seconds {
        problems.push(Problem::new(
            "/spec/ttlSeconds",
            format!(
                "ttlSeconds cannot change after creation (it is {}).",
                old.ttl_seconds
            ),
            format!(
                "Keep ttlSeconds at {}, or create a new EphemeralInfra.",
                old.ttl_seconds
            ),
        ));
    }
    if old.end_when != new.end_when {
        let was = serde_json::to_value(old.end_when).unwrap_or_default();
        problems.push(Problem::new(
            "/spec/endWhen",
            format!("endWhen cannot change after creation (it is {was})."),
            format!("Keep endWhen at {was}, or create a new EphemeralInfra."),
        ));
    }
    problems.extend(contract_genesis_problems(
        &old.infra.contracts,
        &new.infra.contracts,
    ));
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::infra::EndWhen;

    fn ephemeral(ttl_seconds: u64, end_when: EndWhen) -> EphemeralInfraSpec {
        EphemeralInfraSpec {
            infra: crate::infra::InfraSpec::default(),
            ttl_seconds,
            end_when,
        }
    }

    #[test]
    fn a_changed_lifetime_is_refused_and_an_unchanged_one_is_not() {
        let old = ephemeral(3600, EndWhen::Complete);
        assert!(lifetime_change_problems(&old, &old.clone()).is_empty());
        let problems = lifetime_change_problems(&old, &ephemeral(60, EndWhen::Deadline));
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["/spec/ttlSeconds", "/spec/endWhen"]);
        assert_eq!(
            problems[1].message,
            "endWhen cannot change after creation (it is \"complete\")."
        );
    }

    fn contracts(value: serde_json::Value) -> Vec<Contract> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_contract_s_kind_is_fixed_once_declared_and_a_new_contract_may_take_any() {
        let ours = contracts(json!([{"name": "api", "state": "requested"}]));
        let theirs = contracts(json!([
            {"name": "api", "state": "requested", "computeKind": "deno"},
            {"name": "job", "state": "staged", "computeKind": "deno"}
        ]));
        let changes = genesis_changes(&ours, &theirs);
        assert_eq!(
            changes,
            [GenesisChange {
                contract: "api".to_owned(),
                field: "computeKind".to_owned(),
                ours: "vm".to_owned(),
                theirs: "deno".to_owned(),
            }]
        );
        assert_eq!(
            changes[0].to_string(),
            "`computeKind` of contract api may only be set at creation (was vm, the record says deno)"
        );
        let problems = contract_genesis_problems(&ours, &theirs);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "/spec/contracts/0/computeKind");
        let explicit_vm =
            contracts(json!([{"name": "api", "state": "staged", "computeKind": "vm"}]));
        assert!(
            genesis_changes(&ours, &explicit_vm).is_empty(),
            "vm is the default"
        );
    }
}

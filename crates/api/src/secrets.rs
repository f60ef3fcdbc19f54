//! A deployment's secrets as the owner manages them: set (a new secret, or a rotation that
//! counts its version up), removed, and read back as what each contract's guest has of them.
//! The values themselves are the keychain's ([`swdesk_atproto::keychain::SecretValues`]); the
//! desk writes a value there before it counts the version up here, and the market seals it to
//! each guest's key ([`swdesk_market::sealing`]).
//!
//! Invariants: the store and the declaration hold a secret's name, contracts, keychain entry
//! and version, never its value; every problem of a request is named at once and nothing is
//! changed when there is one; a secret names only contracts its deployment declares.

use serde::Serialize;
use swdesk_auction::compute::ComputeContractStatus;
use swdesk_auction::secret::{MAX_SECRET_BYTES, short_recipient};
use swdesk_core::infra::InfraSpec;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::secret::SecretRef;
use swdesk_lexicon::problem::Problem;
use swdesk_store::Store;

use crate::intent::{IntentError, declared, edit_declared};

/// The keychain entry that holds the value of `secret` of the deployment `kind`/`name`.
pub fn keychain_entry(kind: DeploymentKind, name: &Name, secret: &str) -> String {
    format!("secret/{kind:?}/{name}/{secret}")
}

/// Every problem of setting `secret` to a value of `value_len` bytes for `contracts`.
pub fn problems(secret: &str, value_len: usize, contracts: &[String]) -> Vec<Problem> {
    let mut problems = Vec::new();
    if Name::parse(secret).is_err() {
        problems.push(Problem::new(
            "/name",
            format!("{secret:?} is not a secret name"),
            "Use lowercase letters, digits and '-', at most 63, starting with a letter.",
        ));
    }
    if value_len == 0 {
        problems.push(Problem::new(
            "/value",
            "the value is empty",
            "Enter the value the guest should receive.",
        ));
    }
    if value_len > MAX_SECRET_BYTES {
        problems.push(Problem::new(
            "/value",
            format!("the value is {value_len} bytes"),
            format!(
                "Keep a secret under {} KiB; give a larger file to the guest another way.",
                MAX_SECRET_BYTES / 1024
            ),
        ));
    }
    for (index, contract) in contracts.iter().enumerate() {
        if Name::parse(contract).is_err() {
            problems.push(Problem::new(
                format!("/contracts/{index}"),
                format!("{contract:?} is not a contract name"),
                "Name contracts of this deployment, or none for all of them.",
            ));
        }
    }
    problems
}

/// Whether the deployment exists and declares every one of `contracts`: what [`put`] would
/// refuse, asked before the value is written anywhere.
pub fn admissible(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    contracts: &[String],
) -> Result<(), IntentError> {
    let spec = declared(store, kind, name)?
        .ok_or_else(|| IntentError::NotFound(format!("there is no deployment {name}")))?;
    let unknown = unknown_contracts(&spec, contracts);
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(IntentError::Invalid(unknown))
    }
}

/// Declares `secret` for `contracts` (none: every contract) on the deployment, at the next
/// version when it exists (its value was just replaced), at version 1 otherwise; the ref as
/// it is now.
pub fn put(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    secret: &str,
    contracts: &[String],
) -> Result<SecretRef, IntentError> {
    let entry = keychain_entry(kind, name, secret);
    let mut written = None;
    edit_declared(store, kind, name, |spec| {
        let unknown = unknown_contracts(spec, contracts);
        if !unknown.is_empty() {
            return Err(IntentError::Invalid(unknown));
        }
        let next = upsert(spec, secret, &entry, contracts);
        written = Some(next);
        Ok(())
    })?;
    written.ok_or_else(|| IntentError::Refused(format!("{secret} was not set")))
}

fn upsert(spec: &mut InfraSpec, secret: &str, entry: &str, contracts: &[String]) -> SecretRef {
    let version = spec
        .secrets
        .iter()
        .find(|kept| kept.name == secret)
        .map_or(1, |kept| kept.version.saturating_add(1));
    let next = SecretRef {
        name: secret.to_owned(),
        keychain_entry: entry.to_owned(),
        contracts: contracts.to_vec(),
        version,
    };
    match spec.secrets.iter_mut().find(|kept| kept.name == secret) {
        Some(kept) => *kept = next.clone(),
        None => spec.secrets.push(next.clone()),
    }
    next
}

fn unknown_contracts(spec: &InfraSpec, contracts: &[String]) -> Vec<Problem> {
    contracts
        .iter()
        .enumerate()
        .filter(|(_, contract)| !spec.contracts.iter().any(|c| &c.name == *contract))
        .map(|(index, contract)| {
            Problem::new(
                format!("/contracts/{index}"),
                format!("the deployment declares no contract {contract}"),
                "Name contracts of this deployment, or none for all of them.",
            )
        })
        .collect()
}

/// The reference the deployment `kind`/`name` keeps for `secret`: its keychain entry is where
/// the value is (a successor keeps its predecessor's entries until it sets a value of its own).
pub fn kept(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    secret: &str,
) -> Result<SecretRef, IntentError> {
    declared(store, kind, name)?
        .ok_or_else(|| IntentError::NotFound(format!("there is no deployment {name}")))?
        .secrets
        .into_iter()
        .find(|kept| kept.name == secret)
        .ok_or_else(|| IntentError::NotFound(format!("there is no secret {secret}")))
}

/// Takes `secret` off the deployment; the ref it had (its keychain entry is the caller's to
/// forget).
pub fn remove(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    secret: &str,
) -> Result<SecretRef, IntentError> {
    let mut removed = None;
    edit_declared(store, kind, name, |spec| {
        let at = spec
            .secrets
            .iter()
            .position(|kept| kept.name == secret)
            .ok_or_else(|| IntentError::NotFound(format!("there is no secret {secret}")))?;
        removed = Some(spec.secrets.remove(at));
        Ok(())
    })?;
    removed.ok_or_else(|| IntentError::NotFound(format!("there is no secret {secret}")))
}

/// A secret as the window shows it: never its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SecretView {
    /// Its name.
    pub name: String,
    /// Its current version.
    pub version: u32,
    /// The contracts that receive it; empty: all.
    pub contracts: Vec<String>,
    /// Where it stands with each receiving contract's guest.
    pub guests: Vec<GuestSecret>,
}

/// Where a secret stands with one contract's guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct GuestSecret {
    /// The contract.
    pub contract: String,
    /// The guest's key, shortened ("…q8z4"), once its bidder reported one.
    pub guest_key: Option<String>,
    /// The version delivered to that key, when one was.
    pub delivered_version: Option<u32>,
    /// When it was delivered (RFC 3339).
    pub delivered_at: Option<String>,
    /// What it waits for or why it did not go through, while the current version is not
    /// delivered.
    pub waiting: Option<String>,
}

/// The secrets of `spec` with what each guest (`statuses`: contract name → status) has of them.
pub fn views(spec: &InfraSpec, statuses: &[(String, &ComputeContractStatus)]) -> Vec<SecretView> {
    spec.secrets
        .iter()
        .map(|secret| SecretView {
            name: secret.name.clone(),
            version: secret.version,
            contracts: secret.contracts.clone(),
            guests: statuses
                .iter()
                .filter(|(contract, _)| secret.is_for(contract))
                .map(|(contract, status)| guest_secret(secret, contract, status))
                .collect(),
        })
        .collect()
}

fn guest_secret(secret: &SecretRef, contract: &str, status: &ComputeContractStatus) -> GuestSecret {
    let secrets = &status.secrets;
    let delivery = secrets
        .delivered
        .iter()
        .find(|delivery| delivery.name == secret.name);
    GuestSecret {
        contract: contract.to_owned(),
        guest_key: secrets
            .guest_key
            .as_ref()
            .map(|key| short_recipient(&key.recipient)),
        delivered_version: delivery.map(|delivery| delivery.version),
        delivered_at: delivery.map(|delivery| delivery.delivered_at.to_rfc3339()),
        waiting: status.secret_waits_for(secret),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_of_a_secret_is_named_at_once() {
        let found = problems(
            "Bad Name",
            MAX_SECRET_BYTES + 1,
            &["ok".into(), "No!".into()],
        );
        let paths: Vec<_> = found.iter().map(|problem| problem.path.as_str()).collect();
        assert_eq!(paths, ["/name", "/value", "/contracts/1"]);
        assert!(problems("db-password", 12, &[]).is_empty());
        assert_eq!(problems("db", 0, &[])[0].message, "the value is empty");
    }

    #[test]
    fn setting_a_secret_again_counts_its_version_up() {
        let mut spec = InfraSpec::default();
        let first = upsert(&mut spec, "db", "secret/Infra/web/db", &[]);
        let again = upsert(&mut spec, "db", "secret/Infra/web/db", &["api".into()]);
        assert_eq!((first.version, again.version), (1, 2));
        assert_eq!(spec.secrets, vec![again]);
    }
}

//! The semantic rules of a deployment record, on top of its lexicon (SPEC §6 "Refuse, and say
//! everything at once"): [`record_problems`] returns the lexicon's problems and these, together.
//!
//! The lexicon layer (`swdesk_lexicon::validate`) checks the schema: types, required fields,
//! lengths, ranges (`ttlSeconds >= 60`), formats. These rules check what a lexicon cannot say,
//! and only that, so no problem is reported twice:
//!
//! - a contract name is a DNS-1123 label (its characters and dashes; its length is the
//!   lexicon's) and unique in the record;
//! - `state` and `endWhen` are known values (`knownValues` is only advice to a lexicon);
//! - `releaseRequestedAt` appears only with `state: released`;
//! - a deployment record carries no `index` (only the record at `self` does);
//! - its `status` records an end whole and as its collection allows ([`super::status`]).
//!
//! Invariant: the list is deterministic: the lexicon's problems first, then these in record
//! order. Every problem carries a JSON Pointer from the record's root and a fix.

use std::collections::BTreeMap;

use serde_json::Value;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::{LabelError, label_problems, suggest_label};
use swdesk_lexicon::Problem;
use swdesk_lexicon::problem::{pointer_child, pointer_index};

use super::known::known_value;
use super::status::status_problems;

const STATES: [&str; 3] = ["staged", "requested", "released"];
const END_WHENS: [&str; 2] = ["complete", "deadline"];

/// Every problem of a deployment record of `kind`: the lexicon's, then the semantic rules'.
pub fn record_problems(kind: DeploymentKind, record: &Value) -> Vec<Problem> {
    let mut problems = swdesk_lexicon::validate::validate_record(kind.collection(), record);
    problems.extend(semantic_record_problems(kind, record));
    problems
}

fn semantic_record_problems(kind: DeploymentKind, record: &Value) -> Vec<Problem> {
    let mut problems = contract_problems(record.get("contracts"));
    if kind == DeploymentKind::EphemeralInfra {
        problems.extend(known_value(
            "/endWhen",
            "endWhen",
            record.get("endWhen"),
            &END_WHENS,
        ));
    }
    problems.extend(status_problems(kind, record.get("status")));
    if record.get("index").is_some() {
        problems.push(Problem::new(
            "/index",
            "A deployment record has an index; only the record at rkey self holds the index.",
            "Remove index from the deployment record.",
        ));
    }
    problems
}

fn contract_problems(contracts: Option<&Value>) -> Vec<Problem> {
    let Some(Value::Array(contracts)) = contracts else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let mut first_use: BTreeMap<&str, usize> = BTreeMap::new();
    for (at, contract) in contracts.iter().enumerate() {
        let path = pointer_index("/contracts", at);
        if let Some(name) = contract.get("name").and_then(Value::as_str) {
            problems.extend(contract_name_problems(&path, name, at, &mut first_use));
        }
        problems.extend(state_problems(&path, contract));
    }
    problems
}

fn contract_name_problems<'a>(
    path: &str,
    name: &'a str,
    at: usize,
    first_use: &mut BTreeMap<&'a str, usize>,
) -> Vec<Problem> {
    let path = pointer_child(path, "name");
    let lexicon_says =
        |error: &LabelError| matches!(error, LabelError::Empty | LabelError::TooLong { .. });
    let mut problems: Vec<Problem> = label_problems(name)
        .into_iter()
        .filter(|error| !lexicon_says(error))
        .map(|error| label_problem(&path, name, "contract name", &error))
        .collect();
    match first_use.get(name) {
        Some(first) => problems.push(Problem::new(
            &path,
            format!("The contract name {name:?} is already used by /contracts/{first}."),
            format!(
                "Give each contract its own name, e.g. \"{}\".",
                numbered(name, at)
            ),
        )),
        None => {
            first_use.insert(name, at);
        }
    }
    problems
}

/// A label like `name` numbered `-<at + 1>`, kept within a label's 63 characters.
fn numbered(name: &str, at: usize) -> String {
    let suffix = format!("-{}", at + 1);
    let base = suggest_label(name).unwrap_or_else(|| "contract".to_owned());
    let stem: String = base.chars().take(63 - suffix.len()).collect();
    format!("{}{suffix}", stem.trim_end_matches('-'))
}

pub(crate) fn label_problem(path: &str, text: &str, what: &str, error: &LabelError) -> Problem {
    let example = suggest_label(text).map_or(String::new(), |label| format!(", e.g. \"{label}\""));
    Problem::new(
        path,
        format!("The {what} {text:?} {error}."),
        format!(
            "Use a DNS-1123 label: 1 to 63 of a-z, 0-9 and '-', starting and ending with a letter or digit{example}."
        ),
    )
}

fn state_problems(path: &str, contract: &Value) -> Vec<Problem> {
    let state = contract.get("state");
    let mut problems = known_value(&pointer_child(path, "state"), "state", state, &STATES);
    let released = state.and_then(Value::as_str) == Some("released");
    if contract.get("releaseRequestedAt").is_some() && !released {
        let shown = state.map_or("absent".to_owned(), Value::to_string);
        problems.push(Problem::new(
            pointer_child(path, "releaseRequestedAt"),
            format!("releaseRequestedAt is set, but the state is {shown}: it only means something with released."),
            "Remove releaseRequestedAt, or set state to released.",
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_renaming_suggestion_stays_a_valid_label() {
        let long = "a".repeat(63);
        let suggestion = numbered(&long, 9);
        assert_eq!(suggestion.len(), 63);
        assert!(suggestion.ends_with("-10"));
        assert!(label_problems(&suggestion).is_empty());
        assert_eq!(numbered("--", 0), "contract-1");
    }

    #[test]
    fn a_released_contract_may_carry_a_release_time() {
        let record = json!({
            "createdAt": "2026-12-02T18:44:00.000Z",
            "contracts": [{"name": "web", "state": "released", "releaseRequestedAt": "2026-12-02T18:44:00.000Z"}]
        });
        assert_eq!(record_problems(DeploymentKind::Infra, &record), vec![]);
    }

    #[test]
    fn unique_names_are_checked_across_the_whole_record() {
        let record = json!({
            "createdAt": "2026-12-02T18:44:00.000Z",
            "contracts": [
                {"name": "a", "state": "staged"}, {"name": "b", "state": "staged"},
                {"name": "a", "state": "staged"}, {"name": "b", "state": "staged"}
            ]
        });
        let paths: Vec<String> = record_problems(DeploymentKind::Infra, &record)
            .into_iter()
            .map(|p| p.path)
            .collect();
        assert_eq!(paths, ["/contracts/2/name", "/contracts/3/name"]);
    }
}

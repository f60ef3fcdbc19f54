//! The semantic rules of a deployment record's `status` (seed 002 `#status`, ephemeralInfra),
//! which its lexicon cannot say; [`super::rules::record_problems`] reports them with the rest.
//!
//! - `endedAt` and `endReason` are set together, and with them the phase is `ended` (a phase
//!   `ended` without them is missing both): the end is written once, whole;
//! - an Infra ends only when deleted: its `endReason` is `deleted`;
//! - `expiresAt` belongs to an EphemeralInfra only.
//!
//! Values the lexicon types wrongly (a number as `endedAt`) and unknown end reasons are left to
//! the lexicon and the `knownValues` rule, so no problem is reported twice. Status phases are
//! not checked against their known values: status is observed, never acted on, and a newer
//! device may know more phases.

use serde_json::Value;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_lexicon::Problem;

use super::known::known_value;

const END_REASONS: [&str; 3] = ["deleted", "complete", "deadline"];
const END_FIX: &str = "Write the end whole: phase ended, endedAt and endReason together.";

/// Every semantic problem of the `status` of a `kind` record (none when it has no status).
pub fn status_problems(kind: DeploymentKind, status: Option<&Value>) -> Vec<Problem> {
    let Some(Value::Object(status)) = status else {
        return Vec::new();
    };
    let reason = status.get("endReason");
    let mut problems = known_value("/status/endReason", "endReason", reason, &END_REASONS);
    problems.extend(end_problems(
        status.get("phase").and_then(Value::as_str),
        status.contains_key("endedAt"),
        reason.is_some(),
    ));
    if kind == DeploymentKind::Infra {
        problems.extend(infra_only_problems(
            reason.and_then(Value::as_str),
            status.contains_key("expiresAt"),
        ));
    }
    problems
}

/// `endedAt`, `endReason` and the phase `ended` go together.
fn end_problems(phase: Option<&str>, ended_at: bool, end_reason: bool) -> Vec<Problem> {
    let phase_ended = phase == Some("ended");
    let mut problems = Vec::new();
    if !ended_at && (phase_ended || end_reason) {
        problems.push(missing("endedAt", phase_ended, end_reason, "endReason"));
    }
    if !end_reason && (phase_ended || ended_at) {
        problems.push(missing("endReason", phase_ended, ended_at, "endedAt"));
    }
    if let Some(phase) = phase.filter(|_| !phase_ended && (ended_at || end_reason)) {
        problems.push(Problem::new(
            "/status/phase",
            format!("The phase is {phase:?}, but the status records an end (endedAt or endReason): an ended deployment's phase is ended."),
            "Set phase to ended, or remove endedAt and endReason if the deployment has not ended.",
        ));
    }
    problems
}

/// `field` is missing although the phase is `ended` or its partner `other` is set.
fn missing(field: &str, phase_ended: bool, other_set: bool, other: &str) -> Problem {
    let because = match (phase_ended, other_set) {
        (true, true) => format!("the phase is ended and {other} is set"),
        (true, false) => "the phase is ended".to_owned(),
        _ => format!("{other} is set"),
    };
    Problem::new(
        format!("/status/{field}"),
        format!("{field} is missing, but {because}."),
        END_FIX,
    )
}

/// An Infra ends only when deleted and has no lifetime.
fn infra_only_problems(end_reason: Option<&str>, expires_at: bool) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(reason) = end_reason.filter(|r| *r != "deleted" && END_REASONS.contains(r)) {
        problems.push(Problem::new(
            "/status/endReason",
            format!("An Infra ends only when deleted, but its endReason is {reason:?} (an EphemeralInfra's reason)."),
            "Set endReason to deleted.",
        ));
    }
    if expires_at {
        problems.push(Problem::new(
            "/status/expiresAt",
            "An Infra has no lifetime, but its status has expiresAt.",
            "Remove expiresAt; only an EphemeralInfra expires.",
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(kind: DeploymentKind, status: Value) -> Vec<String> {
        let problems = status_problems(kind, Some(&status));
        problems.into_iter().map(|p| p.path).collect()
    }

    #[test]
    fn a_whole_end_and_a_living_status_have_no_problem() {
        let ended = json!({"phase": "ended", "endedAt": "2026-12-02T18:44:00.000Z", "endReason": "deleted"});
        assert_eq!(paths(DeploymentKind::Infra, ended), Vec::<String>::new());
        let living = json!({"phase": "deploying", "expiresAt": "2026-12-02T18:44:00.000Z"});
        assert_eq!(
            paths(DeploymentKind::EphemeralInfra, living),
            Vec::<String>::new()
        );
        assert_eq!(status_problems(DeploymentKind::Infra, None), vec![]);
    }

    #[test]
    fn every_half_written_end_is_reported() {
        let k = DeploymentKind::EphemeralInfra;
        assert_eq!(
            paths(k, json!({"phase": "ended"})),
            ["/status/endedAt", "/status/endReason"]
        );
        assert_eq!(
            paths(k, json!({"endReason": "complete"})),
            ["/status/endedAt"]
        );
        assert_eq!(
            paths(
                k,
                json!({"phase": "deployed", "endedAt": "2026-12-02T18:44:00.000Z"})
            ),
            ["/status/endReason", "/status/phase"]
        );
    }

    #[test]
    fn an_ephemeral_reason_is_refused_on_an_infra_and_accepted_on_an_ephemeral_infra() {
        let status = json!({"phase": "ended", "endedAt": "2026-12-02T18:44:00.000Z", "endReason": "deadline"});
        assert_eq!(
            paths(DeploymentKind::Infra, status.clone()),
            ["/status/endReason"]
        );
        assert_eq!(
            paths(DeploymentKind::EphemeralInfra, status),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_unknown_end_reason_is_reported_once() {
        let status =
            json!({"phase": "ended", "endedAt": "2026-12-02T18:44:00.000Z", "endReason": "bored"});
        assert_eq!(paths(DeploymentKind::Infra, status), ["/status/endReason"]);
    }
}

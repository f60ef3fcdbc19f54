//! Jobs in the sandbox: no container runs. An applied `batch/v1` Job gets one pod
//! (`<job>-sandbox`) that is `Pending` for [`crate::Timings::job_pending`], `Running` for
//! [`crate::Timings::job_running`], then `Succeeded` or `Failed`. By the sandbox's convention:
//! - a container's log is its `args` (or its `command` after the first word when it has no
//!   `args`), one element a line;
//! - the Job's annotation `sandbox.socialweb.computer/repeat: "<n>"` repeats those lines `n`
//!   times (to produce long logs);
//! - the annotation `sandbox.socialweb.computer/exit-code: "<n>"` is the containers' exit code
//!   (default 0); a non-zero code fails the Job.
//!
//! Logs follow `getJob`'s rule: the last `tailLines` lines, then at most [`LOG_CAP`] bytes (the
//! end kept, cut at a character boundary, `logTruncated` set).

use serde_json::{Map, Value};
use swdesk_lexicon::computer::socialweb::k8s::get_job;
use tokio::time::Instant;

use crate::config::Timings;

/// The most bytes of one container's log `getJob` returns.
pub const LOG_CAP: usize = 65_536;
/// The annotation that repeats a container's lines.
pub const REPEAT_ANNOTATION: &str = "sandbox.socialweb.computer/repeat";
/// The annotation that sets the exit code.
pub const EXIT_CODE_ANNOTATION: &str = "sandbox.socialweb.computer/exit-code";
const MAX_REPEAT: usize = 100_000;

/// One container of a Job's pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPlan {
    /// Its name.
    pub name: String,
    /// Its whole log.
    pub lines: Vec<String>,
}

/// An applied Job's run.
#[derive(Debug, Clone)]
pub struct JobRun {
    name: String,
    started: Instant,
    started_at: String,
    containers: Vec<ContainerPlan>,
    exit_code: i64,
}

/// Every problem of a Job manifest: its pod template must list containers with names and images.
pub fn manifest_problems(manifest: &Map<String, Value>) -> Vec<String> {
    let containers = manifest
        .get("spec")
        .and_then(|spec| spec.pointer("/template/spec/containers"))
        .and_then(Value::as_array);
    let Some(containers) = containers.filter(|list| !list.is_empty()) else {
        return vec![
            "spec.template.spec.containers is missing or empty: a Job needs at least one container"
                .to_owned(),
        ];
    };
    let mut problems = Vec::new();
    for (index, container) in containers.iter().enumerate() {
        for field in ["name", "image"] {
            if container
                .get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                problems.push(format!(
                    "spec.template.spec.containers[{index}].{field} is missing"
                ));
            }
        }
    }
    let repeat = annotation(manifest, REPEAT_ANNOTATION);
    if repeat.is_some_and(|text| text.parse::<usize>().map_or(true, |n| n > MAX_REPEAT)) {
        problems.push(format!(
            "the annotation {REPEAT_ANNOTATION} must be a number of at most {MAX_REPEAT}"
        ));
    }
    if annotation(manifest, EXIT_CODE_ANNOTATION).is_some_and(|text| text.parse::<i64>().is_err()) {
        problems.push(format!(
            "the annotation {EXIT_CODE_ANNOTATION} must be an integer"
        ));
    }
    problems
}

fn annotation<'a>(manifest: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    manifest
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
}

impl JobRun {
    /// The run of the Job `manifest` (already validated), starting now.
    pub fn start(name: &str, manifest: &Map<String, Value>, started_at: String) -> Self {
        let repeat = annotation(manifest, REPEAT_ANNOTATION)
            .and_then(|t| t.parse().ok())
            .unwrap_or(1usize);
        let exit_code = annotation(manifest, EXIT_CODE_ANNOTATION)
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let containers = manifest
            .get("spec")
            .and_then(|spec| spec.pointer("/template/spec/containers"))
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|c| container_plan(c, repeat)).collect())
            .unwrap_or_default();
        Self {
            name: name.to_owned(),
            started: Instant::now(),
            started_at,
            containers,
            exit_code,
        }
    }

    /// What `getJob` answers now, with the last `tail_lines` lines of each log.
    pub fn status(&self, timings: &Timings, tail_lines: usize) -> get_job::Output {
        let elapsed = self.started.elapsed();
        let (job_phase, pod_phase) = if elapsed < timings.job_pending {
            (get_job::OutputPhase::Pending, get_job::PodPhase::Pending)
        } else if elapsed < timings.job_pending + timings.job_running {
            (get_job::OutputPhase::Running, get_job::PodPhase::Running)
        } else if self.exit_code == 0 {
            (
                get_job::OutputPhase::Succeeded,
                get_job::PodPhase::Succeeded,
            )
        } else {
            (get_job::OutputPhase::Failed, get_job::PodPhase::Failed)
        };
        let started = pod_phase != get_job::PodPhase::Pending;
        let containers = self
            .containers
            .iter()
            .map(|plan| container_status(plan, started, tail_lines))
            .collect();
        let finished = matches!(
            job_phase,
            get_job::OutputPhase::Succeeded | get_job::OutputPhase::Failed
        );
        get_job::Output {
            active: Some(i64::from(!finished)),
            succeeded: Some(i64::from(job_phase == get_job::OutputPhase::Succeeded)),
            failed: Some(i64::from(job_phase == get_job::OutputPhase::Failed)),
            conditions: Some(self.conditions(&job_phase)),
            pods: Some(vec![get_job::Pod {
                name: format!("{}-sandbox", self.name),
                phase: Some(pod_phase),
                containers: Some(containers),
                extra: Map::new(),
            }]),
            phase: job_phase,
            extra: Map::new(),
        }
    }

    fn conditions(&self, phase: &get_job::OutputPhase) -> Vec<get_job::Condition> {
        let (kind, reason, message) = match phase {
            get_job::OutputPhase::Succeeded => {
                ("Complete", "Completed", "the Job completed".to_owned())
            }
            get_job::OutputPhase::Failed => (
                "Failed",
                "BackoffLimitExceeded",
                format!("a container exited with code {}", self.exit_code),
            ),
            _ => return Vec::new(),
        };
        vec![get_job::Condition {
            r#type: kind.to_owned(),
            status: get_job::ConditionStatus::True,
            reason: Some(reason.to_owned()),
            message: Some(message),
            last_transition_time: Some(self.started_at.clone()),
            extra: Map::new(),
        }]
    }
}

fn container_plan(container: &Value, repeat: usize) -> ContainerPlan {
    let words = |field: &str| -> Vec<String> {
        container
            .get(field)
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut lines = words("args");
    if lines.is_empty() {
        lines = words("command").into_iter().skip(1).collect();
    }
    let lines = std::iter::repeat_n(lines, repeat).flatten().collect();
    let name = container
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    ContainerPlan { name, lines }
}

fn container_status(plan: &ContainerPlan, started: bool, tail_lines: usize) -> get_job::Container {
    let (log, truncated) = if started {
        tail(&plan.lines, tail_lines)
    } else {
        (String::new(), false)
    };
    get_job::Container {
        name: plan.name.clone(),
        log: started.then_some(log),
        log_truncated: started.then_some(truncated),
        extra: Map::new(),
    }
}

/// The last `tail_lines` of `lines`, newline-terminated, then at most [`LOG_CAP`] bytes of it.
pub fn tail(lines: &[String], tail_lines: usize) -> (String, bool) {
    let start = lines.len().saturating_sub(tail_lines);
    let mut log: String = lines[start..]
        .iter()
        .map(|line| format!("{line}\n"))
        .collect();
    if log.len() <= LOG_CAP {
        return (log, false);
    }
    let mut cut = log.len() - LOG_CAP;
    while !log.is_char_boundary(cut) {
        cut += 1;
    }
    log.drain(..cut);
    (log, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_and_cuts_to_the_cap_at_a_character_boundary() {
        let lines: Vec<String> = (0..5).map(|n| format!("line {n}")).collect();
        assert_eq!(tail(&lines, 2), ("line 3\nline 4\n".to_owned(), false));
        assert_eq!(tail(&lines, 0), (String::new(), false));
        let wide = vec!["é".repeat(40_000)];
        let (log, truncated) = tail(&wide, 10);
        assert!(truncated);
        assert!(log.len() <= LOG_CAP && log.len() >= LOG_CAP - 1);
        assert!(log.ends_with("é\n"));
    }

    #[test]
    fn a_job_without_containers_or_with_bad_annotations_is_refused_with_each_problem() {
        let manifest = serde_json::json!({
            "metadata": {"annotations": {REPEAT_ANNOTATION: "many", EXIT_CODE_ANNOTATION: "x"}},
            "spec": {"template": {"spec": {"containers": [{"name": "a"}]}}},
        });
        let problems = manifest_problems(manifest.as_object().unwrap_or(&Map::new()));
        assert_eq!(problems.len(), 3, "{problems:?}");
    }
}

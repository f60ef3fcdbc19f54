//! The declaration fixtures: every file under `fixtures/declarations/valid` is accepted with no
//! problem; every file under `fixtures/declarations/invalid` is refused with exactly the set of
//! problems it lists (path, message and fix), no more and no fewer.
//!
//! A fixture is `{"what": "object" | "infra" | "ephemeralInfra" | "index", "value": ...,
//! "problems": [...]}`: `object` is an object declaration (`{kind, metadata, spec}`), `index` the
//! index record at `computer.socialweb.infra/self`, the others a deployment record of that
//! collection.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use swdesk_core::declaration::{
    index_record_problems, object_problems, parse_object, record_problems,
};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_lexicon::Problem;

#[derive(Debug, Deserialize)]
struct Fixture {
    what: String,
    value: Value,
    #[serde(default)]
    problems: Vec<Problem>,
}

fn fixtures(kind: &str) -> Vec<(PathBuf, Fixture)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/declarations")
        .join(kind);
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("the fixtures folder is readable")
        .map(|entry| entry.expect("a fixture entry is readable").path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures in {}", dir.display());
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("a fixture is readable");
            let fixture =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, fixture)
        })
        .collect()
}

fn problems_of(fixture: &Fixture) -> Vec<Problem> {
    match fixture.what.as_str() {
        "object" => object_problems(&fixture.value),
        "infra" => record_problems(DeploymentKind::Infra, &fixture.value),
        "ephemeralInfra" => record_problems(DeploymentKind::EphemeralInfra, &fixture.value),
        "index" => index_record_problems(&fixture.value),
        other => panic!("unknown fixture kind {other}"),
    }
}

fn sorted(mut problems: Vec<Problem>) -> Vec<Problem> {
    problems.sort();
    problems
}

#[test]
fn every_valid_declaration_is_accepted_without_a_problem() {
    for (path, fixture) in fixtures("valid") {
        let problems = problems_of(&fixture);
        assert!(
            problems.is_empty(),
            "{}: {}",
            path.display(),
            serde_json::to_string_pretty(&problems).unwrap()
        );
        if fixture.what == "object" {
            assert!(
                parse_object(&fixture.value).is_ok(),
                "{} does not parse",
                path.display()
            );
        }
    }
}

#[test]
fn every_invalid_declaration_reports_exactly_its_listed_problems() {
    for (path, fixture) in fixtures("invalid") {
        let actual = sorted(problems_of(&fixture));
        let expected = sorted(fixture.problems.clone());
        assert!(!expected.is_empty(), "{} lists no problem", path.display());
        assert_eq!(
            actual,
            expected,
            "{}:\n{}",
            path.display(),
            serde_json::to_string_pretty(&actual).unwrap()
        );
        if fixture.what == "object" {
            assert_eq!(
                parse_object(&fixture.value).err().map(sorted),
                Some(expected),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn a_problem_is_never_reported_twice() {
    for (path, fixture) in fixtures("invalid") {
        let problems = problems_of(&fixture);
        let mut unique = sorted(problems.clone());
        unique.dedup();
        assert_eq!(unique.len(), problems.len(), "{}", path.display());
    }
}

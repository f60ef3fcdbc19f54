//! Every error the gateway's lexicons declare has its own [`ErrorName`], so callers branch on
//! a type, never on text: a lexicon that gains an error fails this test until the client knows it.

use std::path::Path;

use swdesk_gateway::ErrorName;

fn declared_errors(directory: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            declared_errors(&path, found);
            continue;
        }
        let lexicon: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let errors = lexicon["defs"]["main"]["errors"].as_array().cloned();
        found.extend(
            errors
                .into_iter()
                .flatten()
                .map(|error| error["name"].as_str().unwrap().to_owned()),
        );
    }
}

#[test]
fn every_documented_error_of_the_gateway_lexicons_has_a_typed_name() {
    let lexicons = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../lexicons");
    let mut names = Vec::new();
    declared_errors(
        &lexicons.join("com/publicdomainrelay/temp/cluster"),
        &mut names,
    );
    declared_errors(&lexicons.join("computer/socialweb/k8s"), &mut names);
    assert!(names.len() >= 12, "the lexicons were read: {names:?}");
    let untyped: Vec<&String> = names
        .iter()
        .filter(|name| matches!(ErrorName::parse(name), ErrorName::Other(_)))
        .collect();
    assert!(untyped.is_empty(), "errors without a variant: {untyped:?}");
}

//! Lexicon validation: the interop vectors (lexicon documents and record data), the built-in
//! lexicons, and swdesk's own record fixtures, each invalid one with its exact problems.

use serde::Deserialize;
use serde_json::{Value, json};
use swdesk_lexicon::Problem;
use swdesk_lexicon::validate::{self, Catalog, XrpcBody};

fn read_json<T: serde::de::DeserializeOwned>(relative: &str) -> T {
    let path = format!("{}/tests/fixtures/{relative}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn interop_catalog() -> Catalog {
    let names = [
        "record",
        "query",
        "procedure",
        "subscription",
        "permission-set",
    ];
    let texts: Vec<String> = names
        .iter()
        .map(|name| read_json::<Value>(&format!("interop/lexicon/catalog/{name}.json")).to_string())
        .collect();
    Catalog::from_json_texts(texts.iter().map(String::as_str)).expect("the interop catalog loads")
}

#[derive(Deserialize)]
struct RecordCase {
    name: String,
    data: Value,
}

#[derive(Deserialize)]
struct ExpectedCase {
    name: String,
    problems: Vec<Problem>,
}

#[test]
fn every_valid_interop_record_has_no_problem() {
    let catalog = interop_catalog();
    let cases: Vec<RecordCase> = read_json("interop/lexicon/record-data-valid.json");
    assert_eq!(cases.len(), 3);
    for case in cases {
        let problems = catalog.validate_record("example.lexicon.record", &case.data);
        assert_eq!(problems, vec![], "{}", case.name);
    }
}

#[test]
fn every_invalid_interop_record_reports_exactly_its_expected_problems() {
    let catalog = interop_catalog();
    let cases: Vec<RecordCase> = read_json("interop/lexicon/record-data-invalid.json");
    let expected: Vec<ExpectedCase> =
        read_json("validation/interop-record-data-invalid.expected.json");
    assert_eq!(cases.len(), expected.len());
    for (case, expected) in cases.iter().zip(expected) {
        assert_eq!(case.name, expected.name);
        assert!(!expected.problems.is_empty(), "{}", case.name);
        let problems = catalog.validate_record("example.lexicon.record", &case.data);
        assert_eq!(problems, expected.problems, "{}", case.name);
    }
}

#[derive(Deserialize)]
struct LexiconCase {
    name: String,
    lexicon: Value,
}

#[test]
fn valid_interop_lexicon_documents_parse_and_invalid_ones_do_not() {
    let valid: Vec<LexiconCase> = read_json("interop/lexicon/lexicon-valid.json");
    for case in valid {
        assert!(
            validate::parse_document(&case.lexicon).is_ok(),
            "{}",
            case.name
        );
    }
    let invalid: Vec<LexiconCase> = read_json("interop/lexicon/lexicon-invalid.json");
    assert_eq!(invalid.len(), 7);
    for case in invalid {
        assert!(
            validate::parse_document(&case.lexicon).is_err(),
            "accepted: {}",
            case.name
        );
    }
}

#[test]
fn an_invalid_lexicon_document_names_each_of_its_problems() {
    let doc = json!({
        "lexicon": 2,
        "id": "not-an-nsid",
        "defs": {"other": {"type": "record", "key": "sometimes", "record": {"type": "object"}}}
    });
    let paths: Vec<String> = validate::parse_document(&doc)
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|problem| problem.path)
        .collect();
    assert_eq!(paths, ["/lexicon", "/id", "/defs/other", "/defs/other/key"]);
}

#[test]
fn the_interop_catalog_reports_its_one_dangling_ref() {
    let problems = interop_catalog().unresolved_refs();
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/defs/main/input/schema/properties/preferences"]);
}

#[test]
fn the_built_in_lexicons_load_and_every_ref_in_them_resolves() {
    let catalog = validate::builtin().expect("built-in lexicons load");
    assert!(
        catalog
            .nsids()
            .any(|nsid| nsid == "computer.socialweb.infra")
    );
    assert!(
        catalog
            .nsids()
            .any(|nsid| nsid == "computer.socialweb.ephemeralInfra")
    );
    assert_eq!(catalog.unresolved_refs(), vec![]);
}

#[test]
fn every_def_and_field_of_the_built_in_lexicons_has_a_description() {
    let catalog = validate::builtin().expect("built-in lexicons load");
    for nsid in catalog.nsids() {
        let doc = serde_json::to_value(catalog_json(nsid)).expect("json");
        let mut missing = Vec::new();
        find_undescribed(&doc, String::new(), &mut missing);
        assert_eq!(missing, Vec::<String>::new(), "{nsid}");
    }
}

fn catalog_json(nsid: &str) -> Value {
    let path = format!(
        "{}/../../lexicons/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        nsid.replace('.', "/")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("lexicon file")).expect("json")
}

/// Pointers of every schema object (one with a `type`) and every declared error without a `description`, outside bodies
/// (whose description sits beside `schema`) and defs' record objects (described by the record).
fn find_undescribed(value: &Value, path: String, missing: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            let exempt = path.ends_with("/record")
                || path.ends_with("/schema")
                || path.ends_with("/parameters");
            let is_schema = object.get("type").is_some_and(Value::is_string);
            let is_error = path.contains("/errors/");
            if (is_schema || is_error) && !object.contains_key("description") && !exempt {
                missing.push(path.clone());
            }
            for (key, member) in object {
                find_undescribed(member, format!("{path}/{key}"), missing);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                find_undescribed(item, format!("{path}/{index}"), missing);
            }
        }
        _ => {}
    }
}

#[derive(Deserialize)]
struct OurCase {
    name: String,
    collection: String,
    record: Value,
    #[serde(default)]
    problems: Vec<Problem>,
}

#[derive(Deserialize)]
struct OurCases {
    valid: Vec<OurCase>,
    invalid: Vec<OurCase>,
}

#[test]
fn swdesk_record_fixtures_give_exactly_their_expected_problems() {
    let cases: OurCases = read_json("records/cases.json");
    for case in cases.valid {
        let problems = validate::validate_record(&case.collection, &case.record);
        assert_eq!(problems, vec![], "{}", case.name);
    }
    for case in cases.invalid {
        assert!(
            !case.problems.is_empty(),
            "{} lists its problems",
            case.name
        );
        let problems = validate::validate_record(&case.collection, &case.record);
        assert_eq!(problems, case.problems, "{}", case.name);
    }
}

#[test]
fn the_index_limits_hold_at_their_edges() {
    let entry = json!({"collection": "computer.socialweb.infra", "rkey": "web",
        "createdAt": "2026-12-02T10:00:00Z", "addedAt": "2026-12-02T10:00:00Z", "writer": "desktop"});
    let index = |live: usize| {
        json!({"index": {"live": vec![entry.clone(); live],
        "updatedAt": "2026-12-02T10:00:00Z"}, "createdAt": "2026-12-02T10:00:00Z"})
    };
    assert_eq!(
        validate::validate_record("computer.socialweb.infra", &index(256)),
        vec![]
    );
    let problems = validate::validate_record("computer.socialweb.infra", &index(257));
    assert_eq!(
        problems,
        vec![Problem::new(
            "/index/live",
            "Has 257 elements; at most 256 allowed.",
            "Remove elements down to at most 256."
        )]
    );
}

#[test]
fn the_contract_name_limit_is_63_bytes() {
    let record = |name: &str| {
        json!({"contracts": [{"name": name, "state": "staged"}],
        "createdAt": "2026-12-02T10:00:00Z"})
    };
    let ok = "a".repeat(63);
    assert_eq!(
        validate::validate_record("computer.socialweb.infra", &record(&ok)),
        vec![]
    );
    let too_long = validate::validate_record("computer.socialweb.infra", &record(&"a".repeat(64)));
    assert_eq!(too_long.len(), 1);
    assert_eq!(too_long[0].path, "/contracts/0/name");
}

#[test]
fn an_unknown_collection_is_one_problem_at_the_root() {
    let problems = validate::validate_record("com.example.nothing", &json!({}));
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "");
}

#[test]
fn rkeys_follow_the_record_key_type() {
    let catalog = validate::builtin().expect("built-in lexicons load");
    assert_eq!(
        catalog.validate_rkey("computer.socialweb.infra", "self"),
        vec![]
    );
    assert_eq!(
        catalog
            .validate_rkey("computer.socialweb.infra", "a/b")
            .len(),
        1
    );
}

#[test]
fn an_xrpc_body_is_validated_against_its_method() {
    let catalog = interop_catalog();
    let output = json!({"a": 1, "b": "two"});
    let problems = catalog.validate_xrpc("example.lexicon.query", XrpcBody::Output, &output);
    assert_eq!(
        problems.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
        ["/b"]
    );
    let message = json!({"$type": "#yo", "seq": 1, "yo": true});
    assert_eq!(
        catalog.validate_xrpc("example.lexicon.subscription", XrpcBody::Message, &message),
        vec![]
    );
    let no_input = catalog.validate_xrpc("example.lexicon.query", XrpcBody::Input, &output);
    assert_eq!(no_input.len(), 1);
}

mod properties {
    use proptest::prelude::*;
    use serde_json::json;
    use swdesk_lexicon::computer::socialweb::infra::{Contract, ContractState, Tunnel};
    use swdesk_lexicon::validate;
    use swdesk_lexicon::{EphemeralInfra, Record};

    fn contract() -> impl Strategy<Value = Contract> {
        let known =
            prop::sample::select(vec!["staged", "requested", "released"]).prop_map(str::to_owned);
        let state = prop_oneof![known, "[a-z]{1,9}"];
        (
            "[a-z]([a-z0-9-]{0,61}[a-z0-9])?",
            state,
            prop::collection::vec(1i64..=65535, 0..4),
        )
            .prop_map(|(name, state, ports)| Contract {
                name,
                state: ContractState::from(state.as_str()),
                tunnels: Some(
                    ports
                        .into_iter()
                        .enumerate()
                        .map(|(i, port)| Tunnel {
                            tag: format!("t{i}"),
                            port,
                            ..Tunnel::default()
                        })
                        .collect(),
                ),
                ..Contract::default()
            })
    }

    proptest! {
        #[test]
        fn typed_records_within_the_limits_validate_clean(
            contracts in prop::collection::vec(contract(), 0..8),
            ttl in 60i64..1_000_000,
        ) {
            let record = EphemeralInfra {
                contracts: Some(contracts),
                ttl_seconds: ttl,
                created_at: "2026-12-02T10:00:00.000Z".to_owned(),
                ..EphemeralInfra::default()
            };
            let value = record.to_record_value().expect("writes");
            prop_assert_eq!(validate::validate_record("computer.socialweb.ephemeralInfra", &value), vec![]);
        }

        #[test]
        fn a_ttl_under_a_minute_is_exactly_one_problem(ttl in -1_000_000i64..60) {
            let value = json!({"ttlSeconds": ttl, "createdAt": "2026-12-02T10:00:00Z"});
            let problems = validate::validate_record("computer.socialweb.ephemeralInfra", &value);
            prop_assert_eq!(problems.len(), 1);
            prop_assert_eq!(problems[0].path.as_str(), "/ttlSeconds");
        }
    }
}

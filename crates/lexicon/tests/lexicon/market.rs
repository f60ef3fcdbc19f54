//! The compute market's records and methods: every fixture (shaped like the public lexicons of
//! `publicdomainrelay/atproto-market`) round-trips through its generated type unchanged, and
//! validates against both our `lexicons/` and the public snapshot; invalid fixtures name every
//! problem at once, the same under both.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::{
    delete, on_network, started,
};
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    accept, accepts, badge_blue_key, bid, bids, event, offering, receipt, receipts, rfp,
    submit_accept, submit_bid, submit_event, submit_rfp,
};
use swdesk_lexicon::network::attested::signature::SignaturesItem;
use swdesk_lexicon::validate::{self, Catalog, XrpcBody};
use swdesk_lexicon::xrpc::Procedure;
use swdesk_lexicon::{Record, syntax};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join("market").join(name)).expect("fixture");
    serde_json::from_str(&text).expect("fixture json")
}

/// `only_me` -> `onlyMe`: the public policy NSIDs spelled as valid atproto NSIDs.
fn camel_nsid(nsid: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in nsid.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.push(c.to_ascii_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

fn json_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            json_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
}

/// The public snapshot, plus `com.atproto.repo.strongRef` (which it refers to but does not hold).
fn public_catalog() -> Catalog {
    let mut files = Vec::new();
    json_files(&fixtures().join("market-lexicons"), &mut files);
    files.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../lexicons/com/atproto/repo/strongRef.json"),
    );
    let texts: Vec<String> = files
        .iter()
        .map(|path| {
            let mut doc: Value =
                serde_json::from_str(&std::fs::read_to_string(path).expect("lexicon"))
                    .expect("json");
            doc["id"] = Value::String(camel_nsid(doc["id"].as_str().expect("id")));
            doc.to_string()
        })
        .collect();
    let catalog = Catalog::from_json_texts(texts.iter().map(String::as_str)).expect("loads");
    assert_eq!(catalog.unresolved_refs(), vec![]);
    catalog
}

fn ours() -> &'static Catalog {
    validate::builtin().expect("built-in lexicons load")
}

fn cases(kind: &str) -> Vec<Value> {
    fixture("records.json")[kind]
        .as_array()
        .expect("cases")
        .clone()
}

fn field<'v>(case: &'v Value, name: &str) -> &'v Value {
    &case[name]
}

fn round_trips<R: Record + std::fmt::Debug>(value: &Value) -> Result<(), String> {
    let typed = R::from_record_value(value.clone()).map_err(|e| e.to_string())?;
    let written = typed.to_record_value().map_err(|e| e.to_string())?;
    if &written == value {
        Ok(())
    } else {
        Err(format!("wrote {written}"))
    }
}

fn round_trip_by_collection(collection: &str, value: &Value) -> Result<(), String> {
    match collection {
        vm::NSID => round_trips::<vm::Vm>(value),
        started::NSID => round_trips::<started::Started>(value),
        on_network::NSID => round_trips::<on_network::OnNetwork>(value),
        delete::NSID => round_trips::<delete::Delete>(value),
        rfp::NSID => round_trips::<rfp::Rfp>(value),
        bid::NSID => round_trips::<bid::Bid>(value),
        bids::free::NSID => round_trips::<bids::free::Free>(value),
        accept::NSID => round_trips::<accept::Accept>(value),
        accepts::free::NSID => round_trips::<accepts::free::Free>(value),
        receipt::NSID => round_trips::<receipt::Receipt>(value),
        receipts::free::NSID => round_trips::<receipts::free::Free>(value),
        event::NSID => round_trips::<event::Event>(value),
        offering::NSID => round_trips::<offering::Offering>(value),
        badge_blue_key::NSID => round_trips::<badge_blue_key::BadgeBlueKey>(value),
        other => Err(format!("no record type for {other}")),
    }
}

#[test]
fn every_market_record_fixture_round_trips_unchanged_through_its_type() {
    let valid = cases("valid");
    let mut collections: Vec<&str> = valid
        .iter()
        .map(|case| field(case, "collection").as_str().expect("collection"))
        .collect();
    for case in &valid {
        let collection = field(case, "collection").as_str().expect("collection");
        let result = round_trip_by_collection(collection, field(case, "record"));
        assert_eq!(result, Ok(()), "{}", case["name"]);
    }
    collections.sort_unstable();
    collections.dedup();
    assert_eq!(
        collections.len(),
        14,
        "one fixture or more for each record type"
    );
}

#[test]
fn every_valid_fixture_validates_against_our_lexicons_and_the_public_ones() {
    let public = public_catalog();
    for case in cases("valid") {
        let collection = field(&case, "collection").as_str().expect("collection");
        let record = field(&case, "record");
        assert_eq!(
            ours().validate_record(collection, record),
            vec![],
            "ours: {}",
            case["name"]
        );
        assert_eq!(
            public.validate_record(collection, record),
            vec![],
            "public: {}",
            case["name"]
        );
    }
}

#[test]
fn an_invalid_fixture_names_every_problem_under_both_lexicon_sets() {
    let public = public_catalog();
    for case in cases("invalid") {
        let collection = field(&case, "collection").as_str().expect("collection");
        let record = field(&case, "record");
        let expected: Vec<&str> = field(&case, "problems")
            .as_array()
            .expect("problems")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for (which, catalog) in [("ours", ours()), ("public", &public)] {
            let problems = catalog.validate_record(collection, record);
            let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
            assert_eq!(paths, expected, "{which}: {}: {problems:#?}", case["name"]);
        }
    }
}

#[test]
fn unknown_fields_are_kept_in_nested_refs_and_signatures() {
    let case = cases("valid")
        .into_iter()
        .find(|case| case["name"] == "a bid whose payload ref carries a cost")
        .expect("fixture");
    let typed = bid::Bid::from_record_value(case["record"].clone()).expect("reads");
    assert_eq!(typed.payload.extra.get("cost"), Some(&json!(0)));
    let Some(SignaturesItem::Signature(signature)) = typed.signatures.first() else {
        panic!("an inline signature first: {:?}", typed.signatures);
    };
    assert_eq!(signature.signature.as_slice().len(), 64);
    assert_eq!(signature.extra.get("xAlgo"), Some(&json!("ES256")));
}

#[test]
fn a_signatures_entry_of_an_unknown_type_is_kept_as_written() {
    let mut record = cases("valid")[8]["record"].clone();
    let foreign = json!({"$type": "com.example.attestation", "proof": "x"});
    record["signatures"] = json!([foreign]);
    let typed = bids::free::Free::from_record_value(record.clone()).expect("reads");
    assert!(matches!(
        typed.signatures.first(),
        Some(SignaturesItem::Other(_))
    ));
    assert_eq!(typed.to_record_value().expect("writes"), record);
}

fn procedure_round_trips<P: Procedure>(body: &str, value: &Value) -> Result<(), String>
where
    P::Input: std::fmt::Debug,
    P::Output: std::fmt::Debug,
{
    let written = match body {
        "input" => serde_json::from_value::<P::Input>(value.clone())
            .and_then(|typed| serde_json::to_value(&typed)),
        _ => serde_json::from_value::<P::Output>(value.clone())
            .and_then(|typed| serde_json::to_value(&typed)),
    }
    .map_err(|e| e.to_string())?;
    if &written == value {
        Ok(())
    } else {
        Err(format!("wrote {written}"))
    }
}

#[test]
fn every_market_method_body_round_trips_and_validates_under_both_lexicon_sets() {
    let public = public_catalog();
    let bodies = fixture("xrpc.json");
    for case in bodies.as_array().expect("cases") {
        let nsid = case["nsid"].as_str().expect("nsid");
        let body = case["body"].as_str().expect("body");
        let value = &case["value"];
        let result = match nsid {
            submit_rfp::NSID => procedure_round_trips::<submit_rfp::SubmitRfp>(body, value),
            submit_bid::NSID => procedure_round_trips::<submit_bid::SubmitBid>(body, value),
            submit_accept::NSID => {
                procedure_round_trips::<submit_accept::SubmitAccept>(body, value)
            }
            submit_event::NSID => procedure_round_trips::<submit_event::SubmitEvent>(body, value),
            other => Err(format!("no method type for {other}")),
        };
        assert_eq!(result, Ok(()), "{}", case["name"]);
        let which = if body == "input" {
            XrpcBody::Input
        } else {
            XrpcBody::Output
        };
        assert_eq!(
            ours().validate_xrpc(nsid, which, value),
            vec![],
            "ours: {}",
            case["name"]
        );
        assert_eq!(
            public.validate_xrpc(nsid, which, value),
            vec![],
            "public: {}",
            case["name"]
        );
    }
}

#[test]
fn the_public_policy_nsids_are_not_valid_atproto_nsids() {
    for nsid in [
        "com.publicdomainrelay.temp.market.policies.only_me",
        "com.publicdomainrelay.temp.market.policies.direct_network",
    ] {
        assert!(syntax::nsid(nsid).is_err(), "{nsid}");
        assert!(syntax::nsid(&camel_nsid(nsid)).is_ok(), "{nsid}");
    }
}

/// The document without prose: what a schema means, not how it is explained.
fn without_descriptions(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| key.as_str() != "description")
                .map(|(key, member)| (key.clone(), without_descriptions(member)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

#[test]
fn our_market_lexicons_say_what_the_public_ones_say_field_for_field() {
    let ours_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../lexicons");
    let public_dir = fixtures().join("market-lexicons");
    let mut files = Vec::new();
    for namespace in [
        "com/publicdomainrelay/temp/market",
        "com/publicdomainrelay/temp/compute",
        "network",
    ] {
        json_files(&ours_dir.join(namespace), &mut files);
    }
    assert!(files.len() >= 18, "{files:?}");
    for file in files {
        let relative = file.strip_prefix(&ours_dir).expect("below lexicons/");
        let read = |path: &Path| -> Value {
            serde_json::from_str(&std::fs::read_to_string(path).expect("lexicon")).expect("json")
        };
        let public = read(&public_dir.join(relative));
        assert_eq!(
            without_descriptions(&read(&file)),
            without_descriptions(&public),
            "{}",
            relative.display()
        );
    }
}

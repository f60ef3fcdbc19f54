//! `records`: a record of one of the market's or the infra collections, as another repo serves it
//! (`getRecord`/`listRecords` values), through lexicon validation
//! (`swdesk_lexicon::validate::validate_record`) and the generated type
//! (`Record::from_record_value`). The collection is the record's `$type` when it names one of
//! ours, else one picked by the input's length.
//!
//! Invariants:
//! - every problem's path is a JSON Pointer (`""` or starting with `/`) whose parent exists in
//!   the value (a missing field is reported at its name inside the object that lacks it);
//! - a value that breaks the data model, or is not an object, has at least one problem;
//! - a value without problems reads into the collection's generated type, and has a record CID;
//! - a value the type reads is written back with `$type` first and equal to the collection, and
//!   reading what was written then writing it again gives the same value (read-modify-write
//!   loses nothing and changes nothing).

use serde_json::Value;
use swdesk_lexicon::com::publicdomainrelay::temp::{compute, market};
use swdesk_lexicon::computer::socialweb;
use swdesk_lexicon::{Record, cid, data_model, validate};

type Reader = fn(&Value) -> Result<(), String>;

/// Every collection of ours another party writes, with its generated type.
pub const COLLECTIONS: &[(&str, Reader)] = &[
    (market::accept::NSID, typed::<market::accept::Accept>),
    (
        market::accepts::free::NSID,
        typed::<market::accepts::free::Free>,
    ),
    (
        market::badge_blue_key::NSID,
        typed::<market::badge_blue_key::BadgeBlueKey>,
    ),
    (market::bid::NSID, typed::<market::bid::Bid>),
    (market::bids::free::NSID, typed::<market::bids::free::Free>),
    (market::event::NSID, typed::<market::event::Event>),
    (market::offering::NSID, typed::<market::offering::Offering>),
    (market::receipt::NSID, typed::<market::receipt::Receipt>),
    (
        market::receipts::free::NSID,
        typed::<market::receipts::free::Free>,
    ),
    (market::rfp::NSID, typed::<market::rfp::Rfp>),
    (compute::vm::NSID, typed::<compute::vm::Vm>),
    (
        compute::events::vm::started::NSID,
        typed::<compute::events::vm::started::Started>,
    ),
    (
        compute::events::vm::on_network::NSID,
        typed::<compute::events::vm::on_network::OnNetwork>,
    ),
    (
        compute::events::vm::delete::NSID,
        typed::<compute::events::vm::delete::Delete>,
    ),
    (socialweb::infra::NSID, typed::<socialweb::infra::Infra>),
    (
        socialweb::ephemeral_infra::NSID,
        typed::<socialweb::ephemeral_infra::EphemeralInfra>,
    ),
];

pub fn check(data: &[u8]) {
    let Some(value) = crate::json(data) else {
        return;
    };
    let by_type = value
        .get("$type")
        .and_then(Value::as_str)
        .and_then(|tag| COLLECTIONS.iter().find(|(nsid, _)| *nsid == tag));
    let (collection, read) = *by_type.unwrap_or(&COLLECTIONS[data.len() % COLLECTIONS.len()]);
    check_record(collection, read, &value);
}

/// The invariants for one value in one collection.
pub fn check_record(collection: &str, read: Reader, value: &Value) {
    let problems = validate::validate_record(collection, value);
    for problem in &problems {
        let path = problem.path.as_str();
        assert!(
            path.is_empty() || path.starts_with('/'),
            "{collection}: the problem path {path:?} is not a JSON Pointer"
        );
        let parent = path.rfind('/').map_or("", |at| &path[..at]);
        assert!(
            path.is_empty() || value.pointer(parent).is_some(),
            "{collection}: the problem at {path:?} is inside nothing the value has ({problem})"
        );
    }
    if !value.is_object() || !data_model::check(value).is_empty() {
        assert!(
            !problems.is_empty(),
            "{collection}: a value that breaks the data model validated without a problem"
        );
    }
    let typed = read(value);
    if problems.is_empty() {
        if let Err(error) = &typed {
            panic!("{collection}: a valid record does not read into its generated type: {error}");
        }
        if let Err(error) = cid::record_cid(value) {
            panic!("{collection}: a valid record has no CID: {error}");
        }
    }
}

/// Reads `value` as `R`; when it reads, checks the write-read-write round trip.
fn typed<R: Record>(value: &Value) -> Result<(), String> {
    let record = R::from_record_value(value.clone()).map_err(|error| error.to_string())?;
    let written = match record.to_record_value() {
        Ok(written) => written,
        Err(error) => panic!("{}: a record read cannot be written: {error}", R::NSID),
    };
    let first = written.as_object().and_then(|object| object.iter().next());
    assert_eq!(
        first.map(|(key, tag)| (key.as_str(), tag.as_str())),
        Some(("$type", Some(R::NSID))),
        "{}: a written record does not start with its `$type`",
        R::NSID
    );
    let again = match R::from_record_value(written.clone()) {
        Ok(again) => again,
        Err(error) => panic!("{}: a written record does not read back: {error}", R::NSID),
    };
    let rewritten = again.to_record_value().ok();
    assert_eq!(
        rewritten.as_ref(),
        Some(&written),
        "{}: read-modify-write changed the record",
        R::NSID
    );
    Ok(())
}

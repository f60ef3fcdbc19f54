//! The `Record` trait: a generated record type and its collection NSID, with the conversion to
//! and from the JSON value a repo stores (which carries `"$type": <NSID>`).
//!
//! Invariants: `to_record_value` always writes `$type` first and exactly once, equal to the
//! collection NSID; `from_record_value` refuses a `$type` naming another collection and never
//! leaves `$type` among the type's unknown fields, so a read-modify-write round trip gives back
//! the same value.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Why a record value could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The value is not a JSON object.
    #[error("a {nsid} record must be a JSON object")]
    NotAnObject {
        /// The collection.
        nsid: &'static str,
    },
    /// `$type` names another collection (or is not a string).
    #[error("`$type` is {found}, expected {expected:?}")]
    WrongType {
        /// The collection.
        expected: &'static str,
        /// The `$type` found, as JSON.
        found: String,
    },
    /// The fields do not match the type.
    #[error("not a valid {nsid} record: {source}")]
    Shape {
        /// The collection.
        nsid: &'static str,
        /// What serde reported.
        source: serde_json::Error,
    },
}

/// A record type generated from a lexicon of type `record`.
pub trait Record: Serialize + DeserializeOwned {
    /// The collection NSID.
    const NSID: &'static str;

    /// The JSON value to store: the fields with `"$type": NSID` first.
    fn to_record_value(&self) -> Result<Value, RecordError> {
        let shape = |source| RecordError::Shape {
            nsid: Self::NSID,
            source,
        };
        let Value::Object(fields) = serde_json::to_value(self).map_err(shape)? else {
            return Err(RecordError::NotAnObject { nsid: Self::NSID });
        };
        let mut record = Map::with_capacity(fields.len() + 1);
        record.insert("$type".to_owned(), Value::String(Self::NSID.to_owned()));
        record.extend(fields.into_iter().filter(|(key, _)| key != "$type"));
        Ok(Value::Object(record))
    }

    /// Reads a stored value; a missing `$type` is accepted, another collection's is not.
    fn from_record_value(value: Value) -> Result<Self, RecordError> {
        let Value::Object(mut fields) = value else {
            return Err(RecordError::NotAnObject { nsid: Self::NSID });
        };
        match fields.remove("$type") {
            None => {}
            Some(Value::String(found)) if found == Self::NSID => {}
            Some(found) => {
                return Err(RecordError::WrongType {
                    expected: Self::NSID,
                    found: found.to_string(),
                });
            }
        }
        serde_json::from_value(Value::Object(fields)).map_err(|source| RecordError::Shape {
            nsid: Self::NSID,
            source,
        })
    }
}

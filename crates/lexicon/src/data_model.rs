//! The atproto data model in its JSON form: what a value may hold, and its conversion to IPLD.
//!
//! JSON special objects: `{"$link": cid}` is a CID link, `{"$bytes": base64}` raw bytes (standard
//! alphabet, padding optional), `{"$type": "blob", "ref": link, "mimeType": s, "size": n}` a blob.
//! Rules: numbers are 64-bit signed integers (a float is refused unless it is integral, as
//! `123.0`, which JSON cannot tell from `123`); `$type`, when present, is a non-empty string;
//! `$link` and `$bytes` objects have no other keys.
//!
//! Invariants: [`check`] reports every violation in a value, depth first in document order;
//! [`to_ipld`] converts exactly the values `check` accepts (it stops at the first violation); both
//! read a special object through the one function [`classify`], so they cannot disagree.

use std::collections::BTreeMap;

use ::cid::Cid;
use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use ipld_core::ipld::Ipld;
use serde_json::{Map, Number, Value};

use crate::problem::{pointer_child, pointer_index};

/// Decodes `$bytes`: standard alphabet, padding optional, trailing bits tolerated.
pub(crate) const BYTES_ENGINE: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// What is wrong with a value, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {kind}")]
pub struct DataModelError {
    /// JSON Pointer to the offending value (`""` is the root).
    pub path: String,
    /// What is wrong.
    pub kind: DataModelErrorKind,
}

/// The data-model rules a value can break.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataModelErrorKind {
    /// A record (or anything that must be one) is not a JSON object.
    #[error("a record must be a JSON object")]
    NotAnObject,
    /// A number with a fraction: the data model has no floats.
    #[error("floats are not allowed in the atproto data model")]
    Float,
    /// An integer outside the signed 64-bit range.
    #[error("integers must fit in a signed 64-bit integer")]
    IntegerOutOfRange,
    /// `$type` is not a non-empty string.
    #[error("`$type` must be a non-empty string")]
    BadType,
    /// A `$link` object is malformed.
    #[error("bad `$link`: {0}")]
    Link(&'static str),
    /// A `$bytes` object is malformed.
    #[error("bad `$bytes`: {0}")]
    Bytes(&'static str),
    /// A blob object is malformed.
    #[error("bad blob: {0}")]
    Blob(&'static str),
}

impl DataModelErrorKind {
    /// What would fix a value with this problem.
    pub fn fix(&self) -> &'static str {
        match self {
            Self::NotAnObject => "Write the record as a JSON object.",
            Self::Float => "Use an integer (or a string for fractional values).",
            Self::IntegerOutOfRange => "Use an integer between -2^63 and 2^63-1.",
            Self::BadType => "Set `$type` to the NSID of the value's type, or remove it.",
            Self::Link(_) => "Write a link as {\"$link\": \"<CID>\"} with nothing else inside.",
            Self::Bytes(_) => "Write bytes as {\"$bytes\": \"<base64>\"} with nothing else inside.",
            Self::Blob(_) => {
                "Write a blob as {\"$type\": \"blob\", \"ref\": {\"$link\": \"<CID>\"}, \"mimeType\": \"...\", \"size\": <bytes>}."
            }
        }
    }
}

/// How a JSON object is read by the data model.
#[derive(Debug, Clone, PartialEq)]
pub enum Special {
    /// `{"$link": cid}`.
    Link(Cid),
    /// `{"$bytes": base64}`, decoded.
    Bytes(Vec<u8>),
    /// A blob: `{"$type": "blob", ...}` with a valid `ref`, `mimeType` and `size`.
    Blob(BlobRef),
    /// Any other object.
    Plain,
}

/// The fields of a blob object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRef {
    /// The blob's CID.
    pub cid: Cid,
    /// Its MIME type.
    pub mime_type: String,
    /// Its size in bytes.
    pub size: i64,
}

/// Reads one object's special form (not its members' forms).
pub fn classify(object: &Map<String, Value>) -> Result<Special, DataModelErrorKind> {
    if let Some(link) = object.get("$link") {
        return parse_link(link, object.len()).map(Special::Link);
    }
    if let Some(bytes) = object.get("$bytes") {
        return parse_bytes(bytes, object.len()).map(Special::Bytes);
    }
    match object.get("$type") {
        None => Ok(Special::Plain),
        Some(Value::String(tag)) if tag == "blob" => parse_blob(object).map(Special::Blob),
        Some(Value::String(tag)) if !tag.is_empty() => Ok(Special::Plain),
        Some(_) => Err(DataModelErrorKind::BadType),
    }
}

fn parse_link(link: &Value, keys: usize) -> Result<Cid, DataModelErrorKind> {
    let Value::String(text) = link else {
        return Err(DataModelErrorKind::Link("must be a string"));
    };
    if keys != 1 {
        return Err(DataModelErrorKind::Link("must be the only key"));
    }
    Cid::try_from(text.as_str()).map_err(|_| DataModelErrorKind::Link("not a CID"))
}

fn parse_bytes(bytes: &Value, keys: usize) -> Result<Vec<u8>, DataModelErrorKind> {
    let Value::String(text) = bytes else {
        return Err(DataModelErrorKind::Bytes("must be a string"));
    };
    if keys != 1 {
        return Err(DataModelErrorKind::Bytes("must be the only key"));
    }
    BYTES_ENGINE
        .decode(text)
        .map_err(|_| DataModelErrorKind::Bytes("not base64"))
}

fn parse_blob(object: &Map<String, Value>) -> Result<BlobRef, DataModelErrorKind> {
    let cid = match object.get("ref") {
        Some(Value::Object(reference)) => match classify(reference) {
            Ok(Special::Link(cid)) => cid,
            _ => return Err(DataModelErrorKind::Blob("`ref` must be a link")),
        },
        _ => return Err(DataModelErrorKind::Blob("`ref` is missing")),
    };
    let Some(Value::String(mime_type)) = object.get("mimeType") else {
        return Err(DataModelErrorKind::Blob("`mimeType` must be a string"));
    };
    let size = match object.get("size").map(integer) {
        Some(Ok(size)) if size >= 0 => size,
        _ => {
            return Err(DataModelErrorKind::Blob(
                "`size` must be a non-negative integer",
            ));
        }
    };
    Ok(BlobRef {
        cid,
        mime_type: mime_type.clone(),
        size,
    })
}

/// A JSON number as a data-model integer.
pub fn integer(value: &Value) -> Result<i64, DataModelErrorKind> {
    match value {
        Value::Number(number) => number_to_integer(number),
        _ => Err(DataModelErrorKind::Float),
    }
}

/// Largest integer a double holds exactly: beyond it, an integral float is not trusted.
const MAX_SAFE_FLOAT_INTEGER: f64 = 9_007_199_254_740_991.0;

fn number_to_integer(number: &Number) -> Result<i64, DataModelErrorKind> {
    if let Some(value) = number.as_i64() {
        return Ok(value);
    }
    if number.is_u64() {
        return Err(DataModelErrorKind::IntegerOutOfRange);
    }
    match number.as_f64() {
        Some(float) if float.fract() == 0.0 && float.abs() <= MAX_SAFE_FLOAT_INTEGER => {
            // Exact: |float| <= 2^53 - 1 and integral.
            #[allow(clippy::cast_possible_truncation)]
            Ok(float as i64)
        }
        _ => Err(DataModelErrorKind::Float),
    }
}

/// Every data-model violation in a record (which must be an object), in document order.
pub fn check_record(value: &Value) -> Vec<DataModelError> {
    if !value.is_object() {
        return vec![DataModelError {
            path: String::new(),
            kind: DataModelErrorKind::NotAnObject,
        }];
    }
    check(value)
}

/// Every data-model violation in any value, in document order.
pub fn check(value: &Value) -> Vec<DataModelError> {
    let mut errors = Vec::new();
    check_into(value, "", &mut errors);
    errors
}

fn check_into(value: &Value, path: &str, errors: &mut Vec<DataModelError>) {
    let mut report = |kind| {
        errors.push(DataModelError {
            path: path.to_owned(),
            kind,
        });
    };
    match value {
        Value::Number(number) => {
            if let Err(kind) = number_to_integer(number) {
                report(kind);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_into(item, &pointer_index(path, index), errors);
            }
        }
        Value::Object(object) => match classify(object) {
            Err(kind) => report(kind),
            // A blob's members are converted like a plain object's (`to_ipld`), so they are
            // checked alike: one rule for both.
            Ok(Special::Plain | Special::Blob(_)) => {
                for (key, member) in object {
                    check_into(member, &pointer_child(path, key), errors);
                }
            }
            Ok(_) => {}
        },
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// The JSON form of an IPLD value read from DAG-CBOR bytes: links as `{"$link"}`, bytes as
/// `{"$bytes"}` (standard base64, no padding). Fails on what the atproto data model has no
/// JSON form for (a float, an integer beyond 64 bits), naming where.
pub fn from_ipld(ipld: &Ipld) -> Result<Value, DataModelError> {
    from_ipld_at(ipld, "")
}

fn from_ipld_at(ipld: &Ipld, path: &str) -> Result<Value, DataModelError> {
    let refused = |kind| DataModelError {
        path: path.to_owned(),
        kind,
    };
    Ok(match ipld {
        Ipld::Null => Value::Null,
        Ipld::Bool(flag) => Value::Bool(*flag),
        Ipld::Integer(number) => i64::try_from(*number)
            .map(Value::from)
            .map_err(|_| refused(DataModelErrorKind::IntegerOutOfRange))?,
        Ipld::Float(_) => return Err(refused(DataModelErrorKind::Float)),
        Ipld::String(text) => Value::String(text.clone()),
        Ipld::Bytes(bytes) => serde_json::json!({
            "$bytes": base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes)
        }),
        Ipld::Link(cid) => serde_json::json!({ "$link": cid.to_string() }),
        Ipld::List(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| from_ipld_at(item, &pointer_index(path, index)))
                .collect::<Result<_, _>>()?,
        ),
        Ipld::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, item)| {
                    Ok((key.clone(), from_ipld_at(item, &pointer_child(path, key))?))
                })
                .collect::<Result<_, DataModelError>>()?,
        ),
    })
}

/// The IPLD form of a value; fails at the first data-model violation.
pub fn to_ipld(value: &Value) -> Result<Ipld, DataModelError> {
    to_ipld_at(value, "")
}

fn to_ipld_at(value: &Value, path: &str) -> Result<Ipld, DataModelError> {
    let at = |kind| DataModelError {
        path: path.to_owned(),
        kind,
    };
    Ok(match value {
        Value::Null => Ipld::Null,
        Value::Bool(flag) => Ipld::Bool(*flag),
        Value::Number(number) => Ipld::Integer(number_to_integer(number).map_err(at)?.into()),
        Value::String(text) => Ipld::String(text.clone()),
        Value::Array(items) => Ipld::List(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| to_ipld_at(item, &pointer_index(path, index)))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(object) => match classify(object).map_err(at)? {
            Special::Link(cid) => Ipld::Link(cid),
            Special::Bytes(bytes) => Ipld::Bytes(bytes),
            Special::Blob(_) | Special::Plain => Ipld::Map(map_to_ipld(object, path)?),
        },
    })
}

fn map_to_ipld(
    object: &Map<String, Value>,
    path: &str,
) -> Result<BTreeMap<String, Ipld>, DataModelError> {
    object
        .iter()
        .map(|(key, member)| Ok((key.clone(), to_ipld_at(member, &pointer_child(path, key))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_floats_are_integers_and_others_are_refused() {
        assert_eq!(integer(&json!(123.0)), Ok(123));
        assert_eq!(integer(&json!(1.5)), Err(DataModelErrorKind::Float));
        assert_eq!(
            integer(&json!(u64::MAX)),
            Err(DataModelErrorKind::IntegerOutOfRange)
        );
        assert_eq!(integer(&json!(1e300)), Err(DataModelErrorKind::Float));
    }

    #[test]
    fn check_reports_every_violation_with_its_pointer() {
        let value = json!({"a": [1.5, {"$type": ""}], "b/c": {"$link": 7}});
        let paths: Vec<String> = check(&value).into_iter().map(|e| e.path).collect();
        assert_eq!(paths, ["/a/0", "/a/1", "/b~1c"]);
    }

    #[test]
    fn bytes_decode_with_or_without_padding() {
        let unpadded = json!({"$bytes": "aGk"});
        let padded = json!({"$bytes": "aGk="});
        assert_eq!(to_ipld(&unpadded), Ok(Ipld::Bytes(b"hi".to_vec())));
        assert_eq!(to_ipld(&padded), Ok(Ipld::Bytes(b"hi".to_vec())));
    }
}

//! Runtime helpers behind the `open_union!`/`closed_union!` macros: the `$type` tag of union
//! members goes inside the member's object, as atproto writes it.
//!
//! Invariants: a serialized member always has `$type` as its first key, exactly once (a `$type`
//! kept in the member's unknown fields is dropped in favour of the variant's tag); a deserialized
//! member never sees `$type` among its unknown fields.

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

const TYPE_KEY: &str = "$type";

/// Serializes `inner` (an object) with `"$type": tag` first.
pub(crate) fn serialize_tagged<T: Serialize, S: Serializer>(
    inner: &T,
    tag: &str,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let Value::Object(fields) = serde_json::to_value(inner).map_err(S::Error::custom)? else {
        return Err(S::Error::custom(
            "a union member must serialize to an object",
        ));
    };
    with_tag(tag, fields).serialize(serializer)
}

/// `object` with `"$type": tag` as its first key (replacing any `$type` in it).
pub(crate) fn with_tag(tag: &str, object: Map<String, Value>) -> Map<String, Value> {
    let mut tagged = Map::with_capacity(object.len() + 1);
    tagged.insert(TYPE_KEY.to_owned(), Value::String(tag.to_owned()));
    tagged.extend(object.into_iter().filter(|(key, _)| key != TYPE_KEY));
    tagged
}

/// Reads an object and takes its `$type` out.
pub(crate) fn split_tagged<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<(String, Map<String, Value>), D::Error> {
    let mut object = Map::deserialize(deserializer)?;
    match object.remove(TYPE_KEY) {
        Some(Value::String(tag)) => Ok((tag, object)),
        Some(_) => Err(D::Error::custom(
            "`$type` of a union member must be a string",
        )),
        None => Err(D::Error::custom("a union member needs a `$type`")),
    }
}

/// Deserializes a member from its object (without `$type`).
pub(crate) fn from_object<T: DeserializeOwned, E: serde::de::Error>(
    object: Map<String, Value>,
) -> Result<T, E> {
    serde_json::from_value(Value::Object(object)).map_err(E::custom)
}

/// The `$type` of an unknown member (empty if it has none).
pub(crate) fn tag_of(object: &Map<String, Value>) -> &str {
    object
        .get(TYPE_KEY)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The error for a `$type` a closed union does not list.
// Used by `closed_union!`, which no lexicon of ours needs yet.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn unknown_tag<E: serde::de::Error>(tag: &str, allowed: &[&str]) -> E {
    E::custom(format!("`$type` {tag:?} is not one of {allowed:?}"))
}

//! `Bytes`: the data model's raw bytes, written in JSON as `{"$bytes": "<base64>"}` (standard
//! alphabet, no padding, as atproto writes them); the generated type of a lexicon `bytes` field.
//!
//! Invariants: reading accepts padding or none (as `data_model` does) and refuses an object with
//! any key beside `$bytes`; writing never pads, so bytes read from canonical JSON are written back
//! identically.

use base64::Engine as _;
use base64::engine::GeneralPurpose;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

const BYTES_KEY: &str = "$bytes";

/// The one `$bytes` codec, shared with the data model so both read the same texts alike.
const ENGINE: GeneralPurpose = crate::data_model::BYTES_ENGINE;

/// Raw bytes of the atproto data model.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }

    /// The bytes as unpadded standard base64, the text inside `$bytes`.
    pub fn to_base64(&self) -> String {
        ENGINE.encode(&self.0)
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({})", self.to_base64())
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut object = Map::with_capacity(1);
        object.insert(BYTES_KEY.to_owned(), Value::String(self.to_base64()));
        object.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = Map::deserialize(deserializer)?;
        let text = match (object.get(BYTES_KEY), object.len()) {
            (Some(Value::String(text)), 1) => text,
            _ => {
                return Err(D::Error::custom(
                    "bytes must be {\"$bytes\": \"<base64>\"} with nothing else inside",
                ));
            }
        };
        ENGINE
            .decode(text)
            .map(Self)
            .map_err(|error| D::Error::custom(format!("`$bytes` is not base64: {error}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bytes_are_written_as_unpadded_base64_and_read_with_or_without_padding() {
        let bytes = Bytes(b"hi".to_vec());
        assert_eq!(
            serde_json::to_value(&bytes).ok(),
            Some(json!({"$bytes": "aGk"}))
        );
        for text in ["aGk", "aGk="] {
            let read: Result<Bytes, _> = serde_json::from_value(json!({ "$bytes": text }));
            assert_eq!(read.ok(), Some(bytes.clone()), "{text}");
        }
    }

    #[test]
    fn bytes_with_another_key_or_bad_base64_are_refused() {
        for value in [
            json!({"$bytes": "aGk", "x": 1}),
            json!({"$bytes": "!!"}),
            json!("aGk"),
        ] {
            assert!(
                serde_json::from_value::<Bytes>(value.clone()).is_err(),
                "{value}"
            );
        }
    }
}

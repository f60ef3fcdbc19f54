//! The declaration's small value types, below everything that carries them: the
//! [`DeclarationHash`] the object kinds store and the sync decision compares (computed in
//! [`super::hash`]), and the [`GenesisChange`] a sync state shows (found in
//! [`super::genesis`]). They hold no rule, so the object kinds (`crate::infra`), the sync
//! decision (`crate::sync`) and the declaration's rules all stand on them without standing on
//! each other.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A sha-256 of a canonical declaration, shown as lower-case hex.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DeclarationHash([u8; 32]);

/// The text is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{text:?} is not a declaration hash (64 hex digits)")]
pub struct HashSyntaxError {
    /// The text that was given.
    pub text: String,
}

impl DeclarationHash {
    /// The hash with these digest bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Parses 64 hex digits (any case).
    pub fn parse(text: &str) -> Result<Self, HashSyntaxError> {
        let error = || HashSyntaxError {
            text: text.to_owned(),
        };
        if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(error());
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| error())?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| error())?;
        }
        Ok(Self(bytes))
    }

    /// The 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl TryFrom<String> for DeclarationHash {
    type Error = HashSyntaxError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<DeclarationHash> for String {
    fn from(hash: DeclarationHash) -> Self {
        hash.to_hex()
    }
}

impl fmt::Display for DeclarationHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for DeclarationHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeclarationHash({})", self.to_hex())
    }
}

/// A genesis-only field of a contract that two declarations set differently.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct GenesisChange {
    /// The contract's name.
    pub contract: String,
    /// The field, as the record spells it (`computeKind`).
    pub field: String,
    /// Its value on this side.
    pub ours: String,
    /// Its value on the other side (the record, or the edit).
    pub theirs: String,
}

impl std::fmt::Display for GenesisChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` of contract {} may only be set at creation (was {}, the record says {})",
            self.field, self.contract, self.ours, self.theirs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_reads_back_from_its_hex() {
        let hash = DeclarationHash::from_bytes([0xa5; 32]);
        assert_eq!(DeclarationHash::parse(&hash.to_hex()).unwrap(), hash);
        assert_eq!(hash.to_hex(), "a5".repeat(32));
    }

    #[test]
    fn a_short_or_non_hex_text_is_not_a_hash() {
        assert!(DeclarationHash::parse("abc").is_err());
        assert!(DeclarationHash::parse(&"zz".repeat(32)).is_err());
        assert!(DeclarationHash::parse(&"+1".repeat(32)).is_err());
    }
}

//! `Redacted<T>`: a value that serializes as itself but never shows in `Debug` output, for the
//! few generated fields that carry a credential (a kubeconfig's client key).
//!
//! Invariants: serde sees the inner value unchanged (`transparent`); `Debug` prints only
//! `Redacted(..)`; reading the value takes an explicit `expose()`.

use serde::{Deserialize, Serialize};

/// A credential-carrying value, hidden from `Debug`.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Redacted<T>(T);

impl<T> Redacted<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Self(value)
    }

    /// The value, for the one place that must use it (e.g. the keychain).
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The value, unwrapped.
    pub fn into_exposed(self) -> T {
        self.0
    }
}

impl<T> std::fmt::Debug for Redacted<T> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Redacted(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value_and_serde_shows_it() {
        let secret = Redacted::new("client-key-data".to_owned());
        assert_eq!(format!("{secret:?}"), "Redacted(..)");
        assert_eq!(
            serde_json::to_string(&secret).ok(),
            Some("\"client-key-data\"".to_owned())
        );
        assert_eq!(secret.expose(), "client-key-data");
    }
}

//! `Problem`: one thing wrong with a value, where it is and what would fix it. The validator of
//! this crate and the semantic rules of `swdesk-core` both report in this type, so a caller
//! shows every problem of a declaration at once, whatever found it.
//!
//! Invariants: `path` is an RFC 6901 JSON Pointer from the value's root (`""` is the root,
//! `/contracts/1/name` a field of an array element; `~` and `/` in keys are escaped as `~0` and
//! `~1`); `message` says what is wrong, `fix` what would fix it, both as full sentences.

use serde::{Deserialize, Serialize};

/// One problem found in a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Problem {
    /// JSON Pointer (RFC 6901) to the offending value; `""` is the root.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// What would fix it.
    pub fix: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(
        path: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// `problems` with their paths moved under `prefix` (a JSON Pointer).
    pub fn under(prefix: &str, problems: Vec<Self>) -> Vec<Self> {
        problems
            .into_iter()
            .map(|problem| Self {
                path: format!("{prefix}{}", problem.path),
                ..problem
            })
            .collect()
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(formatter, "{path}: {} {}", self.message, self.fix)
    }
}

/// The pointer to member `key` of the object at `parent`.
pub fn pointer_child(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The pointer to element `index` of the array at `parent`.
pub fn pointer_index(parent: &str, index: usize) -> String {
    format!("{parent}/{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_tilde_and_slash_as_rfc_6901_says() {
        assert_eq!(pointer_child("", "contracts"), "/contracts");
        assert_eq!(pointer_index("/contracts", 1), "/contracts/1");
        assert_eq!(pointer_child("/a", "m~n/o"), "/a/m~0n~1o");
    }

    #[test]
    fn display_names_the_root_explicitly() {
        let problem = Problem::new("", "Not an object.", "Send an object.");
        assert_eq!(
            problem.to_string(),
            "(root): Not an object. Send an object."
        );
    }
}

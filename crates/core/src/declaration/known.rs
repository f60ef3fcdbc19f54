//! The `knownValues` rule every part of a declaration shares (a lexicon's `knownValues` is only
//! advice, so a string outside them is refused here): [`known_value`]. It sits below the rules
//! of the record, its status and the object, which all use it.

use serde_json::Value;
use swdesk_lexicon::Problem;

/// A problem when `value` is a string outside `known` (other types are the lexicon's).
pub(crate) fn known_value(
    path: &str,
    what: &str,
    value: Option<&Value>,
    known: &[&str],
) -> Vec<Problem> {
    match value.and_then(Value::as_str) {
        Some(text) if !known.contains(&text) => vec![Problem::new(
            path,
            format!("The {what} {text:?} is not known."),
            format!("Use one of: {}.", known.join(", ")),
        )],
        _ => Vec::new(),
    }
}

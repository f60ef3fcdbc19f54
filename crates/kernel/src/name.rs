//! DNS-1123 labels: the names of objects and of contracts.
//!
//! A label is 1 to 63 characters of `a-z`, `0-9` and `-`, starting and ending with a letter or
//! digit. [`label_problems`] lists every way a text falls short (not only the first), so a
//! validation can say everything at once; [`suggest_label`] proposes a label close to a bad one,
//! for the "what would fix it" half of a problem. A [`Name`] exists only for a valid label.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::newtype::text_newtype;

/// The longest DNS-1123 label.
pub const MAX_LABEL_LEN: usize = 63;

/// One way a text is not a DNS-1123 label.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LabelError {
    /// The text is empty.
    #[error("is empty")]
    Empty,
    /// The text is longer than [`MAX_LABEL_LEN`] characters.
    #[error("is {len} characters long; a DNS-1123 label has at most 63")]
    TooLong {
        /// Its length in characters.
        len: usize,
    },
    /// The text holds characters other than `a-z`, `0-9` and `-`.
    #[error("contains {found}; a DNS-1123 label has only a-z, 0-9 and '-'")]
    InvalidChars {
        /// The offending characters, each once, in order of appearance, quoted.
        found: String,
    },
    /// The text starts with `-`.
    #[error("starts with '-'; a DNS-1123 label starts with a letter or digit")]
    StartsWithDash,
    /// The text ends with `-`.
    #[error("ends with '-'; a DNS-1123 label ends with a letter or digit")]
    EndsWithDash,
}

/// A valid DNS-1123 label.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Name(String);

text_newtype!(Name, LabelError);

impl Name {
    /// The label, when `text` is one; otherwise the first of its problems.
    pub fn parse(text: &str) -> Result<Self, LabelError> {
        match label_problems(text).into_iter().next() {
            Some(problem) => Err(problem),
            None => Ok(Self(text.to_owned())),
        }
    }
}

/// Every way `text` is not a DNS-1123 label; empty when it is one.
pub fn label_problems(text: &str) -> Vec<LabelError> {
    if text.is_empty() {
        return vec![LabelError::Empty];
    }
    let mut problems = Vec::new();
    let len = text.chars().count();
    if len > MAX_LABEL_LEN {
        problems.push(LabelError::TooLong { len });
    }
    if let Some(found) = invalid_chars(text) {
        problems.push(LabelError::InvalidChars { found });
    }
    if text.starts_with('-') {
        problems.push(LabelError::StartsWithDash);
    }
    if text.ends_with('-') {
        problems.push(LabelError::EndsWithDash);
    }
    problems
}

fn is_label_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
}

/// The characters of `text` a label may not hold, each once and quoted, or `None`.
fn invalid_chars(text: &str) -> Option<String> {
    let mut seen: Vec<char> = Vec::new();
    for c in text.chars().filter(|c| !is_label_char(*c)) {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    let quoted: Vec<String> = seen.iter().map(|c| format!("{c:?}")).collect();
    (!quoted.is_empty()).then(|| quoted.join(", "))
}

/// A valid label close to `text` (lower-cased, other characters turned into `-`, trimmed to 63),
/// or `None` when nothing of `text` survives.
pub fn suggest_label(text: &str) -> Option<String> {
    let mapped: String = text
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if is_label_char(c) { c } else { '-' })
        .collect();
    let mut label = collapse_dashes(&mapped);
    label.truncate(MAX_LABEL_LEN);
    let label = label.trim_matches('-');
    (!label.is_empty()).then(|| label.to_owned())
}

/// The first name free among `wanted`'s label ([`suggest_label`], `fallback` when nothing of
/// it survives), then `<label>-2`, `<label>-3`, ... (the label cut so each fits 63
/// characters): the first that `taken` says no object holds yet.
pub fn free_name(wanted: &str, fallback: &str, taken: impl Fn(&str) -> bool) -> Name {
    let base = suggest_label(wanted).unwrap_or_else(|| fallback.to_owned());
    let mut candidates = std::iter::once(base.clone()).chain((2..).map(|n: u32| {
        let suffix = format!("-{n}");
        let mut stem = base.clone();
        stem.truncate(MAX_LABEL_LEN - suffix.len());
        format!("{}{suffix}", stem.trim_end_matches('-'))
    }));
    let free = candidates
        .find(|candidate| !taken(candidate))
        .unwrap_or(base);
    Name(free)
}

fn collapse_dashes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_free_name_takes_the_next_number_and_still_fits() {
        let taken = ["dev-nodes", "dev-nodes-2"];
        let free = free_name("Dev nodes", "nodes", |name| taken.contains(&name));
        assert_eq!(free.as_str(), "dev-nodes-3");
        assert_eq!(free_name("!!", "followed", |_| false).as_str(), "followed");
        let long = "a".repeat(70);
        let next = free_name(&long, "x", |name| name.len() == 63 && !name.contains('-'));
        assert_eq!(next.as_str(), format!("{}-2", "a".repeat(61)));
        assert!(Name::parse(next.as_str()).is_ok());
    }

    #[test]
    fn a_lowercase_label_with_inner_dashes_is_valid() {
        assert_eq!(Name::parse("web-1").unwrap().as_str(), "web-1");
    }

    #[test]
    fn every_problem_of_a_label_is_listed_at_once() {
        let text = format!("-{}_", "A".repeat(63));
        assert_eq!(
            label_problems(&text),
            vec![
                LabelError::TooLong { len: 65 },
                LabelError::InvalidChars {
                    found: "'A', '_'".into()
                },
                LabelError::StartsWithDash,
            ]
        );
    }

    #[test]
    fn an_empty_label_has_one_problem() {
        assert_eq!(label_problems(""), vec![LabelError::Empty]);
    }

    #[test]
    fn a_trailing_dash_is_refused() {
        assert_eq!(label_problems("web-"), vec![LabelError::EndsWithDash]);
    }

    #[test]
    fn a_name_refuses_to_deserialize_from_an_invalid_label() {
        assert!(serde_json::from_str::<Name>("\"Web\"").is_err());
    }

    #[test]
    fn the_suggestion_for_a_spaced_title_is_a_dashed_label() {
        assert_eq!(
            suggest_label("My Web  Server!").as_deref(),
            Some("my-web-server")
        );
    }

    #[test]
    fn nothing_is_suggested_for_punctuation_only() {
        assert_eq!(suggest_label("!!"), None);
    }

    proptest! {
        #[test]
        fn every_suggestion_is_a_valid_label(text in "\\PC{0,80}") {
            if let Some(label) = suggest_label(&text) {
                prop_assert_eq!(label_problems(&label), vec![]);
            }
        }

        #[test]
        fn a_text_is_a_name_exactly_when_it_has_no_problems(text in "[a-z0-9_A-]{0,70}") {
            prop_assert_eq!(Name::parse(&text).is_ok(), label_problems(&text).is_empty());
        }
    }
}

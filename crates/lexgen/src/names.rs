//! Spelling lexicon names as Rust names: module names, type names, field names, variants.
//!
//! Invariants: the conversions are pure and deterministic; `field_ident` and `module_ident`
//! never return a bare keyword (they return a raw identifier, or an error for the keywords that
//! cannot be raw); `needs_serde_rename` is true exactly when serde's `camelCase` renaming of the
//! snake-case field name would not give back the lexicon name.

use proc_macro2::{Ident, Span};

use crate::LexgenError;

/// Words Rust reserves; a name that is one of them is written as a raw identifier.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// Keywords that cannot even be raw identifiers.
const UNRAWABLE: &[&str] = &["crate", "self", "Self", "super", "_"];

/// `ephemeralInfra` -> `ephemeral_infra`, `HTTPServer` -> `http_server`, `cid-link` -> `cid_link`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (index, &current) in chars.iter().enumerate() {
        if !current.is_ascii_alphanumeric() {
            push_separator(&mut out);
            continue;
        }
        if current.is_ascii_uppercase() && starts_word(&chars, index) {
            push_separator(&mut out);
        }
        out.push(current.to_ascii_lowercase());
    }
    out.trim_matches('_').to_owned()
}

fn starts_word(chars: &[char], index: usize) -> bool {
    let Some(previous) = index.checked_sub(1).map(|i| chars[i]) else {
        return false;
    };
    let next_is_lower = chars.get(index + 1).is_some_and(char::is_ascii_lowercase);
    previous.is_ascii_lowercase()
        || previous.is_ascii_digit()
        || (previous.is_ascii_uppercase() && next_is_lower)
}

fn push_separator(out: &mut String) {
    if !out.is_empty() && !out.ends_with('_') {
        out.push('_');
    }
}

/// `contractStatus` -> `ContractStatus`, `page:` -> `Page`, `cid-link` -> `CidLink`.
pub fn pascal_case(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(capitalize)
        .collect()
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// `created_at` -> `createdAt`: what `#[serde(rename_all = "camelCase")]` does to a field.
fn serde_camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper_next = false;
    for c in snake.chars() {
        if c == '_' {
            upper_next = true;
        } else if upper_next {
            out.push(c.to_ascii_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// True when the field needs an explicit `#[serde(rename)]` under `rename_all = "camelCase"`.
pub fn needs_serde_rename(lexicon_name: &str) -> bool {
    serde_camel_case(&snake_case(lexicon_name)) != lexicon_name
}

/// `SCREAMING_SNAKE` spelling for constants.
pub fn screaming_snake_case(name: &str) -> String {
    snake_case(name).to_ascii_uppercase()
}

/// The identifier for a struct field or a module named after `lexicon_name`.
pub fn field_ident(lexicon_name: &str) -> Result<Ident, LexgenError> {
    snake_ident(&snake_case(lexicon_name), lexicon_name)
}

fn snake_ident(snake: &str, original: &str) -> Result<Ident, LexgenError> {
    let valid_start = snake
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic());
    if !valid_start || UNRAWABLE.contains(&snake) {
        return Err(LexgenError::Name(original.to_owned()));
    }
    if KEYWORDS.contains(&snake) {
        return Ok(Ident::new_raw(snake, Span::call_site()));
    }
    Ok(Ident::new(snake, Span::call_site()))
}

/// The identifier for a type or an enum variant named after `lexicon_name`.
pub fn type_ident(lexicon_name: &str) -> Result<Ident, LexgenError> {
    let pascal = pascal_case(lexicon_name);
    let valid_start = pascal
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic());
    if !valid_start || UNRAWABLE.contains(&pascal.as_str()) {
        return Err(LexgenError::Name(lexicon_name.to_owned()));
    }
    Ok(Ident::new(&pascal, Span::call_site()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_splits_camel_humps_acronyms_and_punctuation() {
        assert_eq!(snake_case("ephemeralInfra"), "ephemeral_infra");
        assert_eq!(
            snake_case("kubectlApplyServerSide"),
            "kubectl_apply_server_side"
        );
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("cid-link"), "cid_link");
        assert_eq!(snake_case("k8s"), "k8s");
        assert_eq!(snake_case("vmReadyTimeoutSec"), "vm_ready_timeout_sec");
    }

    #[test]
    fn pascal_case_capitalizes_each_word() {
        assert_eq!(pascal_case("contractStatus"), "ContractStatus");
        assert_eq!(pascal_case("page:"), "Page");
        assert_eq!(pascal_case("SnapshotComplete"), "SnapshotComplete");
        assert_eq!(pascal_case("cid-link"), "CidLink");
    }

    #[test]
    fn serde_rename_is_needed_only_when_camel_case_does_not_round_trip() {
        assert!(!needs_serde_rename("createdAt"));
        assert!(!needs_serde_rename("ttlSeconds"));
        assert!(needs_serde_rename("cid-link"));
        assert!(needs_serde_rename("HTTPServer"));
    }

    #[test]
    fn keywords_become_raw_identifiers_and_unrawable_ones_fail() {
        assert_eq!(
            field_ident("type").map(|i| i.to_string()).ok(),
            Some("r#type".to_owned())
        );
        assert!(field_ident("self").is_err());
        assert!(field_ident("9lives").is_err());
    }
}

//! XRPC error answers: the sandbox peers' shared [`Refusal`] (`{error, message}` with its HTTP
//! status), [`answer`], [`parse_body`] and [`parse_query`]; and the gateway's own input rule,
//! cluster names as DNS-1123 labels.

use axum::http::Uri;
pub use swdesk_sandbox_peer::xrpc::{Refusal, answer, parse_body};

/// Whether `name` is a DNS-1123 label, and if not, why.
pub fn dns_label_problem(name: &str) -> Option<String> {
    let valid_chars = name
        .bytes()
        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
    let ends_ok = !name.starts_with('-') && !name.ends_with('-');
    if (1..=63).contains(&name.len()) && valid_chars && ends_ok {
        return None;
    }
    Some(format!(
        "{name:?} is not a DNS-1123 label: use 1-63 lower-case letters, digits and '-', starting and ending with a letter or digit"
    ))
}

/// `name` as a cluster name, or `InvalidName`.
pub fn cluster_name(name: &str) -> Result<&str, Refusal> {
    match dns_label_problem(name) {
        None => Ok(name),
        Some(problem) => Err(Refusal::bad("InvalidName", problem)),
    }
}

/// Query parameters as `T` (numbers from their text, as the lexicon types them), or
/// `InvalidRequest`.
pub fn parse_query<T: serde::de::DeserializeOwned>(uri: &Uri) -> Result<T, Refusal> {
    axum::extract::Query::<T>::try_from_uri(uri)
        .map(|query| query.0)
        .map_err(|error| {
            Refusal::bad(
                "InvalidRequest",
                format!("the parameters are not valid: {}", error.body_text()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names_are_dns_labels() {
        for good in ["a", "alpha-1", &"a".repeat(63)] {
            assert_eq!(dns_label_problem(good), None, "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(dns_label_problem(bad).is_some(), "{bad}");
        }
    }
}

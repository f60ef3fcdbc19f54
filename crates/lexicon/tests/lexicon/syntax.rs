//! Every line of the atproto interop syntax vectors: valid ones pass, invalid ones fail.

use swdesk_lexicon::syntax::{self, AtUri, SyntaxError};

type Check = fn(&str) -> Result<(), SyntaxError>;

/// The vector lines of a file: every line that is neither empty nor a `#` comment, untrimmed
/// (leading and trailing spaces are part of what is tested).
fn vectors(file: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/interop/syntax/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fixture reads");
    text.split('\n')
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn assert_all(check: Check, valid_file: &str, invalid_files: &[&str]) {
    let valid = vectors(valid_file);
    assert!(!valid.is_empty(), "{valid_file} has vectors");
    for line in &valid {
        assert_eq!(check(line), Ok(()), "{valid_file}: {line:?}");
    }
    for file in invalid_files {
        let invalid = vectors(file);
        assert!(!invalid.is_empty(), "{file} has vectors");
        for line in &invalid {
            assert!(check(line).is_err(), "{file} accepted: {line:?}");
        }
    }
}

#[test]
fn dids_follow_the_interop_vectors() {
    assert_all(
        syntax::did,
        "did_syntax_valid.txt",
        &["did_syntax_invalid.txt"],
    );
}

#[test]
fn handles_follow_the_interop_vectors() {
    assert_all(
        syntax::handle,
        "handle_syntax_valid.txt",
        &["handle_syntax_invalid.txt"],
    );
}

#[test]
fn nsids_follow_the_interop_vectors() {
    assert_all(
        syntax::nsid,
        "nsid_syntax_valid.txt",
        &["nsid_syntax_invalid.txt"],
    );
}

#[test]
fn at_uris_follow_the_interop_vectors() {
    assert_all(
        syntax::at_uri,
        "aturi_syntax_valid.txt",
        &["aturi_syntax_invalid.txt"],
    );
}

#[test]
fn every_valid_at_uri_vector_prints_back_as_it_was_parsed() {
    for line in vectors("aturi_syntax_valid.txt") {
        let uri: AtUri = line.parse().expect("valid vector parses");
        assert_eq!(uri.to_string(), line);
    }
}

#[test]
fn record_keys_follow_the_interop_vectors() {
    assert_all(
        syntax::record_key,
        "recordkey_syntax_valid.txt",
        &["recordkey_syntax_invalid.txt"],
    );
}

#[test]
fn tids_follow_the_interop_vectors() {
    assert_all(
        syntax::tid,
        "tid_syntax_valid.txt",
        &["tid_syntax_invalid.txt"],
    );
}

#[test]
fn datetimes_follow_the_interop_vectors_including_the_semantic_ones() {
    let invalid = ["datetime_syntax_invalid.txt", "datetime_parse_invalid.txt"];
    assert_all(syntax::datetime, "datetime_syntax_valid.txt", &invalid);
}

#[test]
fn cids_follow_the_interop_vectors() {
    assert_all(
        syntax::cid,
        "cid_syntax_valid.txt",
        &["cid_syntax_invalid.txt"],
    );
}

#[test]
fn languages_follow_the_interop_vectors_including_the_semantic_ones() {
    let invalid = ["language_syntax_invalid.txt", "language_parse_invalid.txt"];
    assert_all(syntax::language, "language_syntax_valid.txt", &invalid);
}

#[test]
fn at_identifiers_follow_the_interop_vectors() {
    let invalid = ["atidentifier_syntax_invalid.txt"];
    assert_all(
        syntax::at_identifier,
        "atidentifier_syntax_valid.txt",
        &invalid,
    );
}

#[test]
fn uris_follow_the_interop_vectors() {
    assert_all(
        syntax::uri,
        "uri_syntax_valid.txt",
        &["uri_syntax_invalid.txt"],
    );
}

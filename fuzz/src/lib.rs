//! The checks behind each fuzz target: one module per target, each with `check(data)`, which
//! feeds the bytes to the product's parser the way the network would and asserts the parser's
//! invariants (a panic or a failed assertion is a finding). The binaries in `fuzz_targets/` only
//! hand libFuzzer's input to these functions, so a crash input can also be replayed by running
//! the target binary on the file (see README.md).
//!
//! Every allocation of the fuzzed code goes through [`alloc::Capped`]: a single allocation above
//! [`alloc::LIMIT`] aborts (a finding: an input of a few kilobytes must never make the parser
//! reserve tens of megabytes). libFuzzer's own `-malloc_limit_mb` needs a sanitizer's allocator
//! hooks, which a stable build has not.

pub mod alloc;
pub mod app_link;
pub mod bid_cost;
pub mod cluster_feed;
pub mod cluster_frames;
pub mod data_model;
pub mod did_document;
pub mod dpop_nonce;
pub mod handle_answer;
pub mod inline_signatures;
pub mod jwt;
pub mod kubeconfig;
pub mod oauth_metadata;
pub mod peer_text;
pub mod record_proof;
pub mod records;
pub mod relay_grant;
pub mod sealed_secret;
pub mod sign_in_request;
pub mod syntax;
pub mod update_manifest;
pub mod xrpc_answer;

#[global_allocator]
static ALLOCATOR: alloc::Capped = alloc::Capped;

/// Whether this input is one of about `1 / one_in` chosen by its bytes (FNV-1a): the targets
/// whose checks sign or verify (ECDSA, tens of inputs a millisecond slower than the parsing)
/// run those checks on a fixed share of inputs, the parsing on every one, so a pass stays
/// short. The same input is always chosen alike, so a crash replays.
pub fn sampled(data: &[u8], one_in: u64) -> bool {
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % one_in == 0
}

/// The input as JSON, when it is JSON.
pub fn json(data: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(data).ok()
}

/// The input as text: UTF-8 as is, anything else with replacement characters (a peer's bytes
/// reach the app through a lossy decode or not at all).
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// `value` with the members of every object in reverse order: the same data model value.
pub fn reversed(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .rev()
                .map(|(key, member)| (key.clone(), reversed(member)))
                .collect(),
        ),
        other => other.clone(),
    }
}

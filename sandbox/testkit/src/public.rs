//! Reads of any repo as anyone may make them (no session): what a test checks was published,
//! or reads from a peer's repo. The repo's PDS is found through the DID document.

use serde_json::Value;
use swdesk_atproto::identity::Resolver;

/// Every record of `collection` in `repo` (one page of 100 is plenty in a test).
pub async fn records(resolver: &Resolver, repo: &str, collection: &str) -> Vec<Value> {
    let query = [("repo", repo), ("collection", collection), ("limit", "100")];
    let answer = query_repo(resolver, repo, "com.atproto.repo.listRecords", &query).await;
    answer["records"].as_array().cloned().unwrap_or_default()
}

/// The record at `uri` (`at://repo/collection/rkey`) and its CID, or `None` when the repo
/// holds none there.
pub async fn record(resolver: &Resolver, uri: &str) -> Option<(Value, String)> {
    let parts: Vec<&str> = uri.trim_start_matches("at://").split('/').collect();
    let [repo, collection, rkey] = parts[..] else {
        panic!("{uri} is not at://repo/collection/rkey");
    };
    let query = [("repo", repo), ("collection", collection), ("rkey", rkey)];
    let answer = query_repo(resolver, repo, "com.atproto.repo.getRecord", &query).await;
    let cid = answer["cid"].as_str()?.to_owned();
    Some((answer["value"].clone(), cid))
}

/// The JSON answer of the unauthenticated query `nsid` at the PDS of `repo`.
#[allow(
    clippy::disallowed_methods,
    reason = "tests read the sandbox PDS as any public reader would"
)]
async fn query_repo(resolver: &Resolver, repo: &str, nsid: &str, query: &[(&str, &str)]) -> Value {
    let identity = resolver
        .resolve_did(repo)
        .await
        .unwrap_or_else(|error| panic!("{repo} resolves: {error}"));
    let url = format!("{}xrpc/{nsid}", identity.pds);
    reqwest::Client::new()
        .get(url)
        .query(query)
        .send()
        .await
        .unwrap_or_else(|error| panic!("{nsid} at {repo}'s PDS answers: {error}"))
        .json()
        .await
        .unwrap_or_else(|error| panic!("{nsid} answers JSON: {error}"))
}

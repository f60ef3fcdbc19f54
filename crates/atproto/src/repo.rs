//! [`PdsRepo`]: the `RecordRepo` port over XRPC. Writes go to the signed-in owner's repo
//! through the [`Agent`]; reads of the owner's records too, and reads of another account's
//! records go to that account's PDS, unauthenticated (records are public).
//!
//! Invariants: `swapRecord` is always stated on a write that has a precondition; a swap the
//! PDS refuses (`InvalidSwap`) is read back so the error carries the cid that is there now.

use serde_json::{Value, json};
use swdesk_kernel::repo::{
    ProvenRecord, Provenance, RecordPage, RecordRepo, RepoError, StoredRecord, Swap, Written,
    check_write,
};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::uri::RecordUri;
use swdesk_net::{BodyError, Limit, Outbound, read_bytes, read_error};
use url::Url;

use crate::agent::Agent;
use crate::identity::Resolver;
use crate::proof;
use crate::retry::Fault;
use crate::xrpc::{XrpcError, XrpcRequest, call_public};

/// The owner's repo on their PDS.
#[derive(Debug, Clone)]
pub struct PdsRepo {
    agent: Agent,
    resolver: Resolver,
    owner: String,
}

impl PdsRepo {
    /// The record at `uri` with its repo's proof, checked against the author's DID document as
    /// the resolver keeps it.
    async fn prove_with_kept_document(
        &self,
        uri: &RecordUri,
    ) -> Result<Option<ProvenRecord>, RepoError> {
        let identity = self
            .resolver
            .resolve_did(uri.authority())
            .await
            .map_err(|error| RepoError::unavailable(error.to_string()))?;
        let rkey = uri.rkey().to_string();
        let answer = fetch_proof(self.resolver.http(), &identity.pds, uri).await?;
        let ProofAnswer::Car(car) = answer else {
            let ProofAnswer::NotServed(why) = answer else {
                return Ok(None);
            };
            let record = self.get(uri).await?;
            return Ok(record.map(|record| ProvenRecord {
                record,
                provenance: Provenance::Unproven { why },
            }));
        };
        let proven = proof::verify_record(
            &car,
            uri.authority(),
            &identity.signing_key,
            uri.collection(),
            &rkey,
        )
        .map_err(|error| RepoError::BadProof {
            message: format!("{uri}: {error}"),
        })?;
        Ok(proven.map(|proven| ProvenRecord {
            record: StoredRecord {
                uri: uri.clone(),
                cid: proven.cid.to_string(),
                value: proven.value,
            },
            provenance: Provenance::Proven { rev: proven.rev },
        }))
    }

    /// `com.atproto.repo.putRecord` of `value`, as it is: [`RecordRepo::put`] checks it first.
    async fn send_put(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> Result<Written, RepoError> {
        let mut input = json!({
            "repo": self.owner,
            "collection": collection,
            "rkey": rkey.to_string(),
            "record": value,
        });
        swap_field(&mut input, &swap);
        let request = XrpcRequest::procedure("com.atproto.repo.putRecord", input);
        match self.agent.call(&request).await {
            Ok(answer) => written(&answer),
            Err(error) if is_swap_refusal(&error) => Err(self.swap_refused(collection, rkey).await),
            Err(error) => Err(repo_error(error)),
        }
    }

    /// A write as another client makes it, which may write anything (a record this version
    /// cannot read, an app's collection we have no lexicon for): [`RecordRepo::put`] without
    /// the lexicon check. For tests that stand in for that other client.
    #[cfg(feature = "test-support")]
    pub async fn put_as_another_client(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> Result<Written, RepoError> {
        self.send_put(collection, rkey, value, swap).await
    }

    /// The repo of `agent`'s account; other accounts' PDSes are found with `resolver`.
    pub fn new(agent: Agent, resolver: Resolver) -> Self {
        let owner = agent.did();
        Self {
            agent,
            resolver,
            owner,
        }
    }

    async fn call_for(&self, repo: &str, request: &XrpcRequest) -> Result<Value, RepoError> {
        if repo == self.owner {
            return self.agent.call(request).await.map_err(repo_error);
        }
        let identity = self
            .resolver
            .resolve_did(repo)
            .await
            .map_err(|error| RepoError::unavailable(error.to_string()))?;
        call_public(self.resolver.http(), &identity.pds, request)
            .await
            .map_err(repo_error)
    }

    async fn current_cid(
        &self,
        collection: &str,
        rkey: &Rkey,
    ) -> Result<Option<String>, RepoError> {
        let uri =
            RecordUri::new(&self.owner, collection, rkey).map_err(|error| RepoError::Invalid {
                message: error.to_string(),
            })?;
        Ok(self.get(&uri).await?.map(|record| record.cid))
    }

    async fn swap_refused(&self, collection: &str, rkey: &Rkey) -> RepoError {
        match self.current_cid(collection, rkey).await {
            Ok(current) => RepoError::SwapMismatch { current },
            Err(error) => error,
        }
    }
}

impl RecordRepo for PdsRepo {
    fn owner(&self) -> &str {
        &self.owner
    }

    async fn get(&self, uri: &RecordUri) -> Result<Option<StoredRecord>, RepoError> {
        let request = XrpcRequest::query(
            "com.atproto.repo.getRecord",
            vec![
                ("repo", uri.authority().to_owned()),
                ("collection", uri.collection().to_owned()),
                ("rkey", uri.rkey().to_string()),
            ],
        );
        match self.call_for(uri.authority(), &request).await {
            Ok(answer) => record_at(&answer, uri).map(Some),
            Err(RepoError::Other { error, .. }) if error == "RecordNotFound" => Ok(None),
            Err(error) => Err(error),
        }
    }

    async fn prove(&self, uri: &RecordUri) -> Result<Option<ProvenRecord>, RepoError> {
        match self.prove_with_kept_document(uri).await {
            // The kept DID document may be older than a key rotation: read it afresh, once.
            Err(RepoError::BadProof { .. }) => {
                self.resolver.forget(uri.authority());
                self.prove_with_kept_document(uri).await
            }
            other => other,
        }
    }

    async fn list(
        &self,
        repo: &str,
        collection: &str,
        cursor: Option<&str>,
        limit: u16,
    ) -> Result<RecordPage, RepoError> {
        let mut params = vec![
            ("repo", repo.to_owned()),
            ("collection", collection.to_owned()),
            ("limit", limit.clamp(1, 100).to_string()),
        ];
        if let Some(cursor) = cursor {
            params.push(("cursor", cursor.to_owned()));
        }
        let request = XrpcRequest::query("com.atproto.repo.listRecords", params);
        let answer = self.call_for(repo, &request).await?;
        let records = answer["records"]
            .as_array()
            .map(|records| {
                records
                    .iter()
                    .map(|record| record_in(record, repo, collection))
                    .collect()
            })
            .unwrap_or_else(|| Ok(Vec::new()))?;
        Ok(RecordPage {
            records,
            cursor: answer["cursor"].as_str().map(str::to_owned),
        })
    }

    async fn head(&self) -> Result<Option<String>, RepoError> {
        let request = XrpcRequest::query(
            "com.atproto.sync.getLatestCommit",
            vec![("did", self.owner.clone())],
        );
        let answer = self.call_for(&self.owner, &request).await?;
        Ok(revision(&answer["rev"]))
    }

    async fn put(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> Result<Written, RepoError> {
        check_write(collection, rkey, value)?;
        self.send_put(collection, rkey, value, swap).await
    }

    async fn delete(&self, collection: &str, rkey: &Rkey, swap: Swap) -> Result<(), RepoError> {
        if swap == Swap::Absent {
            return match self.current_cid(collection, rkey).await? {
                None => Ok(()),
                current => Err(RepoError::SwapMismatch { current }),
            };
        }
        let mut input = json!({
            "repo": self.owner,
            "collection": collection,
            "rkey": rkey.to_string(),
        });
        swap_field(&mut input, &swap);
        let request = XrpcRequest::procedure("com.atproto.repo.deleteRecord", input);
        match self.agent.call(&request).await {
            Ok(_) => Ok(()),
            Err(error) if is_swap_refusal(&error) => Err(self.swap_refused(collection, rkey).await),
            Err(error) => Err(repo_error(error)),
        }
    }
}

/// Sets `swapRecord`: absent for [`Swap::Any`], `null` for [`Swap::Absent`], the cid otherwise.
fn swap_field(input: &mut Value, swap: &Swap) {
    match swap {
        Swap::Any => {}
        Swap::Absent => input["swapRecord"] = Value::Null,
        Swap::Cid(cid) => input["swapRecord"] = Value::from(cid.as_str()),
    }
}

fn is_swap_refusal(error: &XrpcError) -> bool {
    error.name() == Some("InvalidSwap")
}

fn stored_record(answer: &Value) -> Result<StoredRecord, RepoError> {
    let invalid = |what: &str| RepoError::Other {
        error: "InvalidResponse".to_owned(),
        message: format!("the PDS answered a record without {what}"),
    };
    let uri = answer["uri"].as_str().ok_or_else(|| invalid("a uri"))?;
    let uri = RecordUri::parse(uri).map_err(|_| invalid("a record uri"))?;
    let cid = answer["cid"].as_str().ok_or_else(|| invalid("a cid"))?;
    Ok(StoredRecord {
        uri,
        cid: cid.to_owned(),
        value: answer["value"].clone(),
    })
}

/// The record a PDS answered for `uri`, refused unless the answer names that very uri: the
/// author is the DID we asked, never one the answer chose (a PDS serving no proof cannot pass
/// off another DID's signed record as the one asked for).
fn record_at(answer: &Value, uri: &RecordUri) -> Result<StoredRecord, RepoError> {
    let record = stored_record(answer)?;
    if record.uri != *uri {
        return Err(other_record(&record.uri, &uri.to_string()));
    }
    Ok(record)
}

/// A record of a `listRecords` page of `repo`'s `collection`, refused when it names another.
fn record_in(answer: &Value, repo: &str, collection: &str) -> Result<StoredRecord, RepoError> {
    let record = stored_record(answer)?;
    if record.uri.authority() != repo || record.uri.collection() != collection {
        return Err(other_record(
            &record.uri,
            &format!("at://{repo}/{collection}"),
        ));
    }
    Ok(record)
}

fn other_record(found: &RecordUri, asked: &str) -> RepoError {
    let found = swdesk_lexicon::text::peer_text(&found.to_string(), 256);
    RepoError::Other {
        error: "InvalidResponse".to_owned(),
        message: format!("the PDS answered {found} when asked for {asked}"),
    }
}

fn written(answer: &Value) -> Result<Written, RepoError> {
    let record = stored_record(answer)?;
    Ok(Written {
        uri: record.uri,
        cid: record.cid,
        rev: revision(&answer["commit"]["rev"]),
    })
}

/// A repo revision a PDS answered: a TID, or nothing (a revision that is not one orders
/// nothing, so it is dropped rather than compared).
fn revision(answer: &Value) -> Option<String> {
    answer
        .as_str()
        .filter(|rev| swdesk_lexicon::syntax::tid(rev).is_ok())
        .map(str::to_owned)
}

/// What a PDS answered for a record's proof.
enum ProofAnswer {
    /// The CAR, to be checked.
    Car(Vec<u8>),
    /// The PDS says there is no such record.
    NoRecord,
    /// The PDS serves no proof (an old or partial implementation): why.
    NotServed(String),
}

/// `com.atproto.sync.getRecord` of `uri` at `pds`, read under the record list's cap.
async fn fetch_proof(
    http: &Outbound,
    pds: &Url,
    uri: &RecordUri,
) -> Result<ProofAnswer, RepoError> {
    const NSID: &str = "com.atproto.sync.getRecord";
    let request = XrpcRequest::query(
        NSID,
        vec![
            ("did", uri.authority().to_owned()),
            ("collection", uri.collection().to_owned()),
            ("rkey", uri.rkey().to_string()),
        ],
    );
    let url = request.url(pds).map_err(repo_error)?;
    let response = http
        .get(url)
        .map_err(|refused| repo_error(XrpcError::refused(NSID, &refused)))?
        .timeout(crate::oauth::REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| repo_error(XrpcError::transport(NSID, &error)))?;
    let status = response.status();
    let kind = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("no content type")
        .to_owned();
    if status.is_success() && !kind.starts_with("application/vnd.ipld.car") {
        let kind = swdesk_lexicon::text::peer_text(&kind, 80);
        return Ok(ProofAnswer::NotServed(format!(
            "its PDS answers {NSID} with {kind}, not a CAR proof"
        )));
    }
    if status.is_success() {
        return read_bytes(response, Limit::LIST)
            .await
            .map(ProofAnswer::Car)
            .map_err(|error| match error {
                BodyError::Transport(reason) => RepoError::unavailable(format!("{NSID}: {reason}")),
                unreadable => RepoError::BadProof {
                    message: format!("{uri}: {unreadable}"),
                },
            });
    }
    let headers = response.headers().clone();
    let body = read_error(response).await;
    let error = XrpcError::from_answer(NSID, status, &headers, &body);
    match error.name() {
        Some("RecordNotFound") => Ok(ProofAnswer::NoRecord),
        _ if error.fault().is_transient() => Err(repo_error(error)),
        _ => Ok(ProofAnswer::NotServed(error.to_string())),
    }
}

/// The port's error for an XRPC failure: the kernel's retry rule decides what is transient (the
/// network, 408, 429, 5xx, a refresh that could not be done now); the rest is told as the
/// repo's refusal.
fn repo_error(error: XrpcError) -> RepoError {
    if let Fault::Transient { retry_after } = error.fault() {
        let message = match &error {
            XrpcError::Server { status, .. } => format!("HTTP {status}: {error}"),
            _ => error.to_string(),
        };
        return RepoError::Unavailable {
            message,
            retry_after,
        };
    }
    match error {
        XrpcError::Server {
            status,
            error,
            message,
            ..
        } => match (status, error.as_str()) {
            (401 | 403, _) | (_, "InsufficientScope" | "AuthRequired" | "InvalidToken") => {
                RepoError::Unauthorized {
                    message: format!("{error}: {message}"),
                }
            }
            (_, "InvalidRecord" | "InvalidRequest") => RepoError::Invalid { message },
            _ => RepoError::Other { error, message },
        },
        refused @ XrpcError::Refused { .. } => RepoError::Other {
            error: "Refused".to_owned(),
            message: refused.to_string(),
        },
        unreadable @ XrpcError::Unreadable { .. } => RepoError::Other {
            error: "Unreadable".to_owned(),
            message: unreadable.to_string(),
        },
        XrpcError::Session(error) => RepoError::Unauthorized {
            message: error.to_string(),
        },
        XrpcError::Transport { reason, .. } => RepoError::unavailable(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASKED: &str = "at://did:plc:bidder/com.publicdomainrelay.temp.market.bid/3lbid";

    fn answer(uri: &str) -> Value {
        json!({"uri": uri, "cid": "bafybid", "value": {"$type": "com.publicdomainrelay.temp.market.bid"}})
    }

    fn asked() -> RecordUri {
        RecordUri::parse(ASKED).expect("a record uri")
    }

    #[test]
    fn a_record_answered_for_the_uri_asked_is_read() {
        let record = record_at(&answer(ASKED), &asked()).expect("the record asked for");
        assert_eq!(record.uri, asked());
        assert_eq!(record.cid, "bafybid");
    }

    #[test]
    fn an_answer_naming_another_uri_is_refused() {
        for other in [
            "at://did:plc:stranger/com.publicdomainrelay.temp.market.bid/3lbid",
            "at://did:plc:bidder/com.publicdomainrelay.temp.market.bid/3lother",
            "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/3lbid",
        ] {
            let error = record_at(&answer(other), &asked()).expect_err("another record");
            assert!(
                matches!(&error, RepoError::Other { error, message }
                    if error == "InvalidResponse" && message.contains(other)),
                "{error:?}"
            );
        }
    }

    #[test]
    fn a_listed_record_of_another_repo_or_collection_is_refused() {
        let collection = "com.publicdomainrelay.temp.market.event";
        let own = format!("at://did:plc:bidder/{collection}/3le");
        assert!(record_in(&answer(&own), "did:plc:bidder", collection).is_ok());
        let stranger = format!("at://did:plc:stranger/{collection}/3le");
        assert!(record_in(&answer(&stranger), "did:plc:bidder", collection).is_err());
        let elsewhere = "at://did:plc:bidder/com.publicdomainrelay.temp.market.bid/3le";
        assert!(record_in(&answer(elsewhere), "did:plc:bidder", collection).is_err());
    }
}

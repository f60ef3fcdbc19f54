//! The `RecordRepo` port against the real PDS: put, get, list with pages, delete, the swap race,
//! the revision of each write's commit and the repo's head, a write outside the granted scopes, and
//! records proven by `sync.getRecord` (a forged proof refused); and against a hostile PDS on
//! loopback that serves no proof: its answer naming another record than the one asked for is
//! refused.

use serde_json::json;
use swdesk_atproto::PdsRepo;
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::did_key::PublicKey;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::SessionStore;
use swdesk_atproto::proof::{self, ProofError};
use swdesk_kernel::repo::{Provenance, RecordRepo, RepoError, Swap};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::uri::RecordUri;

use swdesk_testkit::Sandbox;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::keychain;

const INFRA: &str = "computer.socialweb.infra";

fn rkey(text: &str) -> Rkey {
    Rkey::parse(text).unwrap()
}

fn record(description: &str) -> serde_json::Value {
    json!({
        "$type": INFRA,
        "description": description,
        "contracts": [],
        "createdAt": "2026-12-03T00:00:00.000Z",
    })
}

async fn repo_of(
    sandbox: &Sandbox,
    prefix: &str,
) -> (
    PdsRepo,
    std::sync::Arc<swdesk_atproto::keychain::ProfileSession>,
) {
    repo_reaching(sandbox, prefix, &[]).await
}

/// [`repo_of`], its reads of other repos reaching the loopback `ports` too.
async fn repo_reaching(
    sandbox: &Sandbox,
    prefix: &str,
    ports: &[u16],
) -> (
    PdsRepo,
    std::sync::Arc<swdesk_atproto::keychain::ProfileSession>,
) {
    let account = sandbox.account(prefix).await;
    let store = keychain(prefix);
    let agent = sandbox.sign_in(&account, store.clone()).await;
    let resolver = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(ports));
    (PdsRepo::new(agent, resolver), store)
}

#[tokio::test]
async fn each_write_answers_its_commits_revision_and_the_head_is_the_last() {
    let sandbox = Sandbox::start().await;
    let (repo, _store) = repo_of(&sandbox, "revs").await;
    let before = repo
        .head()
        .await
        .unwrap()
        .expect("a new repo has a first commit");
    let mut revs = vec![before];
    for n in 0..3 {
        let value = record(&format!("write {n}"));
        let written = repo.put(INFRA, &rkey("web"), &value, Swap::Any).await;
        let rev = written
            .unwrap()
            .rev
            .expect("the PDS answers the commit's revision");
        assert_eq!(repo.head().await.unwrap().as_ref(), Some(&rev));
        revs.push(rev);
    }
    assert!(revs.windows(2).all(|pair| pair[0] < pair[1]), "{revs:?}");
}

#[tokio::test]
async fn records_are_written_read_listed_in_pages_and_deleted() {
    let sandbox = Sandbox::start().await;
    let (repo, store) = repo_of(&sandbox, "repo").await;
    let owner = repo.owner().to_owned();
    for name in ["alpha", "beta", "gamma"] {
        let written = repo
            .put(INFRA, &rkey(name), &record(name), Swap::Absent)
            .await
            .unwrap();
        assert_eq!(
            written.uri,
            RecordUri::new(&owner, INFRA, &rkey(name)).unwrap()
        );
    }
    let uri = RecordUri::new(&owner, INFRA, &rkey("beta")).unwrap();
    let got = repo.get(&uri).await.unwrap().expect("beta is there");
    assert_eq!(got.value["description"], "beta");

    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = repo
            .list(&owner, INFRA, cursor.as_deref(), 2)
            .await
            .unwrap();
        assert!(page.records.len() <= 2);
        seen.extend(page.records.iter().map(|r| r.uri.rkey().to_string()));
        match page.cursor {
            Some(next) if !page.records.is_empty() => cursor = Some(next),
            _ => break,
        }
    }
    seen.sort();
    assert_eq!(seen, ["alpha", "beta", "gamma"]);

    repo.delete(INFRA, &rkey("beta"), Swap::Cid(got.cid))
        .await
        .unwrap();
    assert_eq!(repo.get(&uri).await.unwrap(), None);
    repo.delete(INFRA, &rkey("beta"), Swap::Any)
        .await
        .expect("deleting nothing succeeds");
    store.delete().unwrap();
}

#[tokio::test]
async fn of_two_writers_from_the_same_cid_the_second_loses_and_learns_the_current_cid() {
    let sandbox = Sandbox::start().await;
    let (repo, store) = repo_of(&sandbox, "race").await;
    let first = repo
        .put(INFRA, &rkey("web"), &record("v1"), Swap::Absent)
        .await
        .unwrap();
    let writer_a = repo.clone();
    let writer_b = repo.clone();

    let won = writer_a
        .put(
            INFRA,
            &rkey("web"),
            &record("a"),
            Swap::Cid(first.cid.clone()),
        )
        .await
        .unwrap();
    let lost = writer_b
        .put(
            INFRA,
            &rkey("web"),
            &record("b"),
            Swap::Cid(first.cid.clone()),
        )
        .await;
    assert_eq!(
        lost,
        Err(RepoError::SwapMismatch {
            current: Some(won.cid.clone())
        })
    );

    let again = repo
        .put(INFRA, &rkey("web"), &record("c"), Swap::Absent)
        .await;
    assert_eq!(
        again,
        Err(RepoError::SwapMismatch {
            current: Some(won.cid.clone())
        })
    );
    let uri = RecordUri::new(repo.owner(), INFRA, &rkey("web")).unwrap();
    assert_eq!(
        repo.get(&uri).await.unwrap().unwrap().value["description"],
        "a"
    );
    store.delete().unwrap();
}

/// Every write is checked against its lexicon before it is sent: a record that would not
/// validate never reaches the PDS, and the error names every problem.
#[tokio::test]
async fn a_record_that_would_not_validate_is_never_sent() {
    let sandbox = Sandbox::start().await;
    let (repo, store) = repo_of(&sandbox, "notsent").await;
    let collection = "com.publicdomainrelay.temp.market.badgeBlueKey";
    let broken = json!({"$type": collection, "createdAt": "soon"});
    match repo.put(collection, &rkey("k1"), &broken, Swap::Any).await {
        Err(RepoError::NotSent { problems }) => {
            assert!(
                problems.contains("/key") && problems.contains("/createdAt"),
                "{problems}"
            );
        }
        other => panic!("expected the record refused before it is sent, got {other:?}"),
    }
    let uri = RecordUri::new(repo.owner(), collection, &rkey("k1")).unwrap();
    assert_eq!(
        repo.get(&uri).await.unwrap(),
        None,
        "nothing reached the PDS"
    );
    store.delete().unwrap();
}

#[tokio::test]
async fn a_write_outside_the_granted_scopes_is_refused_with_a_clear_error() {
    // This app never sends a record of a collection it has no lexicon for (`check_write`);
    // the PDS's own scope check is what is tested here.
    let sandbox = Sandbox::start().await;
    let (repo, store) = repo_of(&sandbox, "scope").await;
    let post = json!({"$type": "app.bsky.feed.post", "text": "hi", "createdAt": "2026-12-03T00:00:00.000Z"});
    let refused = repo
        .put_as_another_client("app.bsky.feed.post", &rkey("p1"), &post, Swap::Any)
        .await;
    match refused {
        Err(RepoError::Unauthorized { message }) => {
            assert!(message.to_lowercase().contains("scope"), "{message}");
        }
        other => panic!("expected a scope refusal, got {other:?}"),
    }
    store.delete().unwrap();
}

#[tokio::test]
async fn another_accounts_records_are_read_from_its_own_repo() {
    let sandbox = Sandbox::start().await;
    let (reader, reader_store) = repo_of(&sandbox, "reader").await;
    let (writer, writer_store) = repo_of(&sandbox, "writer").await;
    writer
        .put(INFRA, &rkey("theirs"), &record("theirs"), Swap::Absent)
        .await
        .unwrap();
    let uri = RecordUri::new(writer.owner(), INFRA, &rkey("theirs")).unwrap();
    let got = reader
        .get(&uri)
        .await
        .unwrap()
        .expect("a public record is readable");
    assert_eq!(got.value["description"], "theirs");
    reader_store.delete().unwrap();
    writer_store.delete().unwrap();
}

/// The raw `sync.getRecord` CAR of `collection/rkey` in `did`'s repo.
async fn proof_car(sandbox: &Sandbox, did: &str, rkey: &str) -> Vec<u8> {
    let url = format!(
        "{}xrpc/com.atproto.sync.getRecord?did={did}&collection={INFRA}&rkey={rkey}",
        sandbox.pds_url()
    );
    let answer = reqwest::get(url).await.unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    answer.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn a_record_is_proven_by_its_signed_commit_and_a_forged_proof_is_refused() {
    let sandbox = Sandbox::start().await;
    let (repo, store) = repo_of(&sandbox, "proof").await;
    let owner = repo.owner().to_owned();
    let mut value = record("proven");
    value["padded"] = json!({"$bytes": "AQID"});
    let written = repo
        .put(INFRA, &rkey("proven"), &value, Swap::Absent)
        .await
        .unwrap();
    let uri = written.uri.clone();
    let proven = repo
        .prove(&uri)
        .await
        .unwrap()
        .expect("the record is there");
    assert!(
        matches!(proven.provenance, Provenance::Proven { ref rev } if !rev.is_empty()),
        "{:?}",
        proven.provenance
    );
    assert_eq!(
        proven.record.cid, written.cid,
        "the cid of the proven bytes"
    );
    assert_eq!(proven.record.value["description"], "proven");
    assert_eq!(proven.record.value["padded"], json!({"$bytes": "AQID"}));
    let absent = RecordUri::new(&owner, INFRA, &rkey("absent")).unwrap();
    assert_eq!(repo.prove(&absent).await.unwrap(), None);

    let resolver = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(&[]));
    let key = resolver.resolve_did(&owner).await.unwrap().signing_key;
    let car = proof_car(&sandbox, &owner, "proven").await;
    let check = |car: &[u8], key: &PublicKey, rkey: &str| {
        proof::verify_record(car, &owner, key, INFRA, rkey)
    };
    assert!(check(&car, &key, "proven").unwrap().is_some());

    let mut tampered = car.clone();
    let at = find(&tampered, b"proven").expect("the record's bytes are in the proof");
    tampered[at] = b'P';
    assert!(
        matches!(
            check(&tampered, &key, "proven"),
            Err(ProofError::BlockMismatch { .. })
        ),
        "a changed byte no longer hashes to its cid"
    );
    let stranger = AttestationKey::generate(Curve::K256).public_key();
    assert_eq!(
        check(&car, &stranger, "proven"),
        Err(ProofError::Signature(owner.clone())),
        "signed by the repo's key, not another"
    );
    assert!(
        matches!(
            check(&car[..car.len() / 2], &key, "proven"),
            Err(ProofError::Car(_))
        ),
        "a cut proof is refused"
    );
    let other_repo = proof::verify_record(&car, "did:plc:someoneelse", &key, INFRA, "proven");
    assert!(
        matches!(other_repo, Err(ProofError::Commit { .. })),
        "{other_repo:?}"
    );
    repo.delete(INFRA, &rkey("proven"), Swap::Any)
        .await
        .unwrap();
    store.delete().unwrap();
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// A PDS for its own `did:web` on loopback that serves no proof (JSON for `sync.getRecord`) and
/// answers `repo.getRecord` of the rkey `forged` with a record of `did:plc:someoneelse`, of any
/// other rkey with its own record `honest`; its DID and port.
async fn proofless_pds() -> (String, u16) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let did = format!("did:web:localhost%3A{port}");
    let key = AttestationKey::generate(Curve::K256).did_key();
    let document = json!({"id": did,
        "verificationMethod": [{"id": "#atproto", "type": "Multikey",
            "publicKeyMultibase": key.trim_start_matches("did:key:")}],
        "service": [{"id": "#atproto_pds", "type": "AtprotoPersonalDataServer",
            "serviceEndpoint": format!("http://localhost:{port}")}]});
    let answer = |repo: &str, rkey: &str| {
        json!({"uri": format!("at://{repo}/{INFRA}/{rkey}"), "cid": "bafyreianswer",
            "value": record(rkey)})
        .to_string()
    };
    let bodies = std::sync::Arc::new([
        document.to_string(),
        answer("did:plc:someoneelse", "forged"),
        answer(&did, "honest"),
    ]);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let bodies = bodies.clone();
            tokio::spawn(async move {
                let mut request = [0_u8; 4096];
                let read = stream.read(&mut request).await.unwrap_or(0);
                let line = String::from_utf8_lossy(&request[..read]).into_owned();
                let body = match () {
                    () if line.starts_with("GET /.well-known/did.json") => &bodies[0],
                    () if line.contains("com.atproto.sync.getRecord") => "{}",
                    () if line.contains("rkey=forged") => &bodies[1],
                    () => &bodies[2],
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (did, port)
}

#[tokio::test]
async fn a_pds_serving_no_proof_cannot_pass_off_another_dids_record_as_the_one_asked() {
    let sandbox = Sandbox::start().await;
    let (hostile, port) = proofless_pds().await;
    let (repo, store) = repo_reaching(&sandbox, "noproof", &[port]).await;

    let honest = RecordUri::new(&hostile, INFRA, &rkey("honest")).unwrap();
    let read = repo.prove(&honest).await.unwrap().expect("its own record");
    assert_eq!(read.record.uri, honest);
    assert!(matches!(read.provenance, Provenance::Unproven { .. }));

    let forged = RecordUri::new(&hostile, INFRA, &rkey("forged")).unwrap();
    for refused in [
        repo.prove(&forged)
            .await
            .map(|read| read.map(|read| read.record)),
        repo.get(&forged).await,
    ] {
        assert!(
            matches!(&refused, Err(RepoError::Other { error, message })
                if error == "InvalidResponse" && message.contains("did:plc:someoneelse")),
            "{refused:?}"
        );
    }
    store.delete().unwrap();
}

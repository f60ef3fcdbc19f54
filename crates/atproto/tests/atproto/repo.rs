//! The `RecordRepo` port against the real PDS: put, get, list with pages, delete, the swap
//! race, and a write outside the granted scopes.

use serde_json::json;
use swdesk_atproto::PdsRepo;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::SessionStore;
use swdesk_core::repo::{RecordRepo, RepoError, Swap};
use swdesk_core::rkey::Rkey;
use swdesk_core::uri::RecordUri;

use crate::support::{Sandbox, keychain, signed_in};

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
) -> (PdsRepo, std::sync::Arc<swdesk_atproto::keychain::Keychain>) {
    let account = sandbox.account(prefix).await;
    let store = keychain(prefix);
    let agent = signed_in(sandbox, &account, store.clone()).await;
    let resolver = Resolver::new(sandbox.identity_config(), sandbox.outbound());
    (PdsRepo::new(agent, resolver), store)
}

#[tokio::test]
async fn records_are_written_read_listed_in_pages_and_deleted() {
    let sandbox = Sandbox::new().await;
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
    let sandbox = Sandbox::new().await;
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

#[tokio::test]
async fn a_write_outside_the_granted_scopes_is_refused_with_a_clear_error() {
    let sandbox = Sandbox::new().await;
    let (repo, store) = repo_of(&sandbox, "scope").await;
    let post = json!({"$type": "app.bsky.feed.post", "text": "hi", "createdAt": "2026-12-03T00:00:00.000Z"});
    let refused = repo
        .put("app.bsky.feed.post", &rkey("p1"), &post, Swap::Any)
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
    let sandbox = Sandbox::new().await;
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

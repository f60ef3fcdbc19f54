//! The owner's repo followed live (`subscribeRepos`) against real parts: the sandbox's real PDS
//! and PLC on loopback. A record written by another client arrives as a verified commit; a
//! follower restarted from the cursor it kept gets exactly what it missed, nothing twice; a
//! broken revision chain asks for a listing; the PDS stopping mid-stream sends the follower to
//! polling, and it catches up once the PDS is back. A hostile stream on loopback is refused:
//! a forged commit and a jump in the sequence ask for a listing, an oversized frame closes it.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::firehose::forge::{Forged, commit_frame};
use swdesk_atproto::firehose::{FollowConfig, Follower, StreamLimits};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_devnet::{Account, SandboxPds};
use swdesk_kernel::repo::live::{FeedCursor, LiveState, RepoFeed, RepoOp};
use swdesk_net::Outbound;
use swdesk_testkit::Sandbox;
use swdesk_testkit::kept::sandbox_kept_in;
use tokio::net::TcpListener;
use tokio::sync::mpsc::Receiver;
use url::Url;

const INFRA: &str = "computer.socialweb.infra";

fn record(description: &str) -> Value {
    json!({
        "$type": INFRA,
        "description": description,
        "contracts": [],
        "createdAt": "2026-12-06T00:00:00.000Z",
    })
}

fn identity_of(pds: &SandboxPds) -> IdentityConfig {
    let info = pds.info();
    IdentityConfig::sandbox(
        Url::parse(&info.plc_url).unwrap(),
        Url::parse(&info.pds_url).unwrap(),
    )
}

fn resolver(identity: &IdentityConfig, ports: &[u16]) -> Resolver {
    let policy = ports.iter().fold(identity.net_policy(), |policy, port| {
        policy.with_loopback_port(*port)
    });
    Resolver::new(identity.clone(), Outbound::new(policy))
}

fn follow(
    resolver: Resolver,
    did: &str,
    cursor: Option<FeedCursor>,
    service: Option<Url>,
) -> (Follower, Receiver<RepoFeed>) {
    let config = FollowConfig {
        did: did.to_owned(),
        cursor,
        service,
        limits: StreamLimits::default(),
    };
    Follower::start(resolver, config)
}

/// The next event, within 20 s.
async fn next(events: &mut Receiver<RepoFeed>) -> RepoFeed {
    tokio::time::timeout(Duration::from_secs(20), events.recv())
        .await
        .expect("an event within 20 s")
        .expect("the follower runs")
}

/// Events until the follower is live (the states before it and nothing else).
async fn until_live(events: &mut Receiver<RepoFeed>) {
    loop {
        match next(events).await {
            RepoFeed::State(LiveState::Live) => return,
            RepoFeed::State(_) => {}
            other => panic!("before being live: {other:?}"),
        }
    }
}

/// The next commit or listing, skipping state changes.
async fn next_change(events: &mut Receiver<RepoFeed>) -> RepoFeed {
    loop {
        match next(events).await {
            RepoFeed::State(_) => {}
            other => return other,
        }
    }
}

/// The next commit's ops and cursor, past commits without ops (the PDS makes one as an
/// account starts); a listing fails the test.
async fn next_commit(events: &mut Receiver<RepoFeed>) -> (Vec<RepoOp>, FeedCursor) {
    loop {
        match next_change(events).await {
            RepoFeed::Commit { ops, .. } if ops.is_empty() => {}
            RepoFeed::Commit { ops, cursor } => return (ops, cursor),
            other => panic!("a commit, not {other:?}"),
        }
    }
}

fn description(ops: &[RepoOp]) -> Vec<String> {
    ops.iter()
        .filter_map(|op| op.record.as_ref())
        .map(|record| {
            record.value["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Past what a new account's start sends (the first listing, an empty commit, a `#sync`):
/// writes a record and takes events up to its commit; answers that commit's cursor.
async fn settled(
    events: &mut Receiver<RepoFeed>,
    pds: &SandboxPds,
    account: &Account,
) -> FeedCursor {
    put(pds, account, "warm", "warm").await;
    loop {
        if let RepoFeed::Commit { ops, cursor } = next_change(events).await
            && ops.iter().any(|op| op.rkey == "warm")
        {
            return cursor;
        }
    }
}

async fn put(pds: &SandboxPds, account: &Account, rkey: &str, text: &str) {
    pds.put_record_as(account, INFRA, rkey, &record(text))
        .await
        .unwrap();
}

#[tokio::test]
async fn commits_arrive_verified_and_a_restart_from_the_kept_cursor_misses_and_repeats_nothing() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("live").await;
    let resolver = resolver(&sandbox.identity, &[]);
    let (follower, mut events) = follow(resolver.clone(), &account.did, None, None);
    until_live(&mut events).await;
    match next_change(&mut events).await {
        RepoFeed::Resync { cursor: None, .. } => {}
        other => panic!("a first follow lists once: {other:?}"),
    }
    settled(&mut events, &sandbox.pds, &account).await;
    put(&sandbox.pds, &account, "one", "one").await;
    let (ops, kept) = next_commit(&mut events).await;
    assert_eq!(description(&ops), ["one"]);
    assert_eq!(
        (ops[0].collection.as_str(), ops[0].rkey.as_str()),
        (INFRA, "one")
    );
    let public = reqwest::get(format!(
        "{}/xrpc/com.atproto.repo.getRecord?repo={}&collection={INFRA}&rkey=one",
        sandbox.pds.info().pds_url,
        account.did
    ))
    .await
    .unwrap()
    .json::<Value>()
    .await
    .unwrap();
    assert_eq!(ops[0].record.as_ref().unwrap().cid, public["cid"]);
    drop(follower);
    drop(events);

    for text in ["two", "three"] {
        put(&sandbox.pds, &account, text, text).await;
    }
    let (_again, mut events) = follow(resolver, &account.did, Some(kept.clone()), None);
    until_live(&mut events).await;
    let (two, at_two) = next_commit(&mut events).await;
    let (three, at_three) = next_commit(&mut events).await;
    assert_eq!(
        (description(&two), description(&three)),
        (vec!["two".to_owned()], vec!["three".to_owned()])
    );
    assert!(kept.seq < at_two.seq && at_two.seq < at_three.seq);
    assert!(kept.rev < at_two.rev && at_two.rev < at_three.rev);
    let quiet = tokio::time::timeout(Duration::from_secs(2), next_change(&mut events)).await;
    assert!(quiet.is_err(), "nothing more, nothing twice: {quiet:?}");
}

#[tokio::test]
async fn a_commit_that_does_not_continue_the_kept_revision_asks_for_a_listing() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("gap").await;
    let resolver = resolver(&sandbox.identity, &[]);
    let (first, mut events) = follow(resolver.clone(), &account.did, None, None);
    until_live(&mut events).await;
    let kept = settled(&mut events, &sandbox.pds, &account).await;
    drop((first, events));
    // The revision kept is not the one the next commit continues from: commits were lost.
    let broken = FeedCursor {
        seq: kept.seq,
        rev: Some("2222222222222".to_owned()),
    };
    let (_again, mut events) = follow(resolver, &account.did, Some(broken), None);
    until_live(&mut events).await;
    put(&sandbox.pds, &account, "b", "b").await;
    match next_change(&mut events).await {
        RepoFeed::Resync {
            why,
            cursor: Some(cursor),
        } => {
            assert!(
                why.contains("revisions skipped from 2222222222222"),
                "{why}"
            );
            assert!(cursor.seq > kept.seq);
        }
        other => panic!("a listing, not {other:?}"),
    }
    put(&sandbox.pds, &account, "c", "c").await;
    let (ops, _) = next_commit(&mut events).await;
    assert_eq!(
        description(&ops),
        ["c"],
        "after the listing the chain continues"
    );
}

/// A `subscribeRepos` server on loopback that sends `frames` to whoever connects, then keeps
/// the connection open; answers its port.
async fn hostile_stream(frames: Vec<Vec<u8>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let frames = frames.clone();
            tokio::spawn(async move {
                let Ok(mut socket) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                for frame in frames {
                    let message = tokio_tungstenite::tungstenite::Message::Binary(frame.into());
                    if socket.send(message).await.is_err() {
                        return;
                    }
                }
                while let Some(Ok(_)) = socket.next().await {}
            });
        }
    });
    port
}

/// A follower of `account`'s repo reading from a hostile stream that sends `frames`, resuming
/// after `seq`, once it is live.
async fn follow_hostile(
    sandbox: &Sandbox,
    account: &Account,
    frames: Vec<Vec<u8>>,
    seq: i64,
) -> (Follower, Receiver<RepoFeed>) {
    let port = hostile_stream(frames).await;
    let service = Url::parse(&format!("http://localhost:{port}")).unwrap();
    let cursor = FeedCursor { seq, rev: None };
    let resolver = resolver(&sandbox.identity, &[port]);
    let (follower, mut events) = follow(resolver, &account.did, Some(cursor), Some(service));
    until_live(&mut events).await;
    (follower, events)
}

#[tokio::test]
async fn a_forged_commit_on_a_hostile_stream_is_refused_and_asks_for_a_listing() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("forged").await;
    let forger = AttestationKey::generate(Curve::K256);
    let forged = Forged {
        seq: 10,
        did: &account.did,
        rev: "3zzzzzzzzzzzz",
        since: None,
        ops: vec![(format!("{INFRA}/evil"), Some(record("forged")))],
    };
    let frames = vec![commit_frame(&forged, &forger)];
    let (_follower, mut events) = follow_hostile(&sandbox, &account, frames, 9).await;
    match next_change(&mut events).await {
        RepoFeed::Resync { why, cursor } => {
            assert!(why.contains("not signed by its key"), "{why}");
            assert_eq!(cursor, Some(FeedCursor { seq: 10, rev: None }));
        }
        other => panic!("the forged commit is refused, not {other:?}"),
    }
}

#[tokio::test]
async fn a_jump_in_the_sequence_asks_for_a_listing_before_anything_is_verified() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("jump").await;
    let key = AttestationKey::generate(Curve::K256);
    let commit = |seq: i64, did: &str| {
        let forged = Forged {
            seq,
            did,
            rev: "3zzzzzzzzzzzz",
            since: None,
            ops: vec![(format!("{INFRA}/x"), Some(record("x")))],
        };
        commit_frame(&forged, &key)
    };
    // Another repo's commit at 10, then the owner's at 12: 11 never came.
    let frames = vec![commit(10, "did:plc:someoneelse"), commit(12, &account.did)];
    let (_follower, mut events) = follow_hostile(&sandbox, &account, frames, 9).await;
    match next_change(&mut events).await {
        RepoFeed::Resync { why, cursor } => {
            assert_eq!(why, "the stream skipped from 10 to 12");
            assert_eq!(cursor.map(|cursor| cursor.seq), Some(12));
        }
        other => panic!("a listing, not {other:?}"),
    }
}

#[tokio::test]
async fn a_frame_over_the_cap_closes_the_hostile_stream_and_the_follower_polls() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("huge").await;
    let frames = vec![vec![0xa0; 4 << 20]];
    let (_follower, mut events) = follow_hostile(&sandbox, &account, frames, 1).await;
    match next(&mut events).await {
        RepoFeed::State(LiveState::Polling { why }) => {
            assert!(why.contains("at most 3145728 are read"), "{why}");
        }
        other => panic!("polling, not {other:?}"),
    }
}

#[tokio::test]
async fn the_pds_restarting_mid_stream_sends_the_follower_to_polling_then_it_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, pds) = sandbox_kept_in(dir.path()).await;
    let identity = identity_of(&pds);
    let account = pds.create_account("restart").await.unwrap();
    let (_follower, mut events) = follow(resolver(&identity, &[]), &account.did, None, None);
    until_live(&mut events).await;
    let before = settled(&mut events, &pds, &account).await;

    pds.stop().await.unwrap();
    match next(&mut events).await {
        RepoFeed::State(LiveState::Polling { why }) => assert!(!why.is_empty()),
        other => panic!("polling once the PDS is gone, not {other:?}"),
    }
    let pds = SandboxPds::start_with(&storage, &[]).await.unwrap();
    put(&pds, &account, "after", "after").await;
    let (ops, after) = tokio::time::timeout(Duration::from_secs(90), async {
        loop {
            match next(&mut events).await {
                RepoFeed::Commit { ops, cursor } => return (ops, cursor),
                RepoFeed::State(_) => {}
                other => panic!("a commit, not {other:?}"),
            }
        }
    })
    .await
    .expect("the follower reconnects and catches up");
    assert_eq!(description(&ops), ["after"]);
    assert!(after.seq > before.seq);
    pds.stop().await.unwrap();
}

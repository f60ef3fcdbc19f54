//! Sessions per profile against the real sandbox PDS (behind the fault proxy, which counts the
//! token requests) and the real Secret Service: two processes of one profile refreshing at once
//! spend one refresh and both stay signed in; two profiles (two data directories) keep separate
//! sessions; a refresh whose keychain save fails keeps the rotated tokens in memory and saves
//! them once the keychain answers.
//!
//! The second process is this test binary started again with `--ignored --exact
//! profiles::refreshing_process` and the set-up in [`CHILD_ENV`]: it restores the profile's
//! session, says so on stdout, waits for the word on stdin, then calls the PDS.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use swdesk_api::Network;
use swdesk_atproto::keychain::{Held, KeychainError, ProfileSession, SessionStore};
use swdesk_atproto::oauth::StoredSession;
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_atproto::{Agent, OAuthClient};
use swdesk_devnet::FaultProxy;

use crate::faults::pds_behind_proxy;
use crate::session::{NoBrowser, network_of, profile_session, signed_in};

/// The environment variable that makes [`refreshing_process`] run, holding a [`ChildSetUp`].
const CHILD_ENV: &str = "SWDESK_REFRESHING_CHILD";
const TOKEN: &str = "/oauth/token";

/// What the second process needs: the sandbox, the keychain's network name, the account.
#[derive(Debug, Serialize, Deserialize)]
struct ChildSetUp {
    ready_line: String,
    keychain_name: String,
    did: String,
}

fn get_session() -> XrpcRequest {
    XrpcRequest::query("com.atproto.server.getSession", Vec::new())
}

/// The agent of the session `store` holds, restored as the app does at start (no call yet).
async fn restore(network: &Network, store: Arc<dyn SessionStore>) -> Agent {
    OAuthClient::new(
        network.oauth.clone(),
        network.outbound.clone(),
        Arc::new(NoBrowser),
        store,
    )
    .restore()
    .await
    .unwrap()
    .expect("the profile holds a session")
}

/// Makes the stored session's access token due for a refresh.
fn expire(store: &dyn SessionStore) -> StoredSession {
    let mut kept = store.load().unwrap().unwrap();
    kept.expires_at = 0;
    store.save(&kept).unwrap();
    kept
}

/// The refreshes the PDS granted so far (a request it answered with a nonce challenge spent
/// nothing).
fn refreshes(proxy: &FaultProxy) -> usize {
    proxy
        .seen(TOKEN)
        .iter()
        .filter(|seen| seen.answered == Some(200))
        .count()
}

/// The second process of the refresh race (ignored in a plain run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the refresh race's second process, started by it"]
async fn refreshing_process() {
    let set_up: ChildSetUp =
        serde_json::from_str(&std::env::var(CHILD_ENV).expect("started by the race")).unwrap();
    let mut network = Network::sandbox(&set_up.ready_line).unwrap();
    network.keychain_name = set_up.keychain_name.clone();
    let agent = restore(&network, Arc::new(profile_session(&set_up.keychain_name))).await;
    println!("restored");
    std::io::stdout().flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let answer = agent.call(&get_session()).await.unwrap();
    assert_eq!(answer["did"], set_up.did.as_str());
    assert_eq!(agent.ended(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_of_one_profile_refreshing_at_once_spend_one_refresh_and_stay_signed_in() {
    let data = tempfile::tempdir().unwrap();
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    let (network, store) = network_of(&pds, "profiles-race");
    let account = pds.create_account("race").await.unwrap();
    let (signed, _agent, _resolver) = signed_in(&network, &store, &account).await;
    drop(signed);
    let spent = expire(store.as_ref());

    let set_up = ChildSetUp {
        ready_line: pds.ready_line(),
        keychain_name: network.keychain_name.clone(),
        did: account.did.clone(),
    };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "profiles::refreshing_process",
            "--nocapture",
        ])
        .env(CHILD_ENV, serde_json::to_string(&set_up).unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Read all it says (its test harness writes after the test), telling when it restored.
    let said = BufReader::new(child.stdout.take().unwrap());
    let (restored, restored_there) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in said.lines().map_while(Result::ok) {
            if line.trim() == "restored" {
                let _waiting = restored.send(());
            }
        }
    });
    let restored_there = tokio::task::spawn_blocking(move || restored_there.recv().is_ok());
    // This process's own store: another handle on the same keychain entry and lock file.
    let here = restore(&network, Arc::new(profile_session(&network.keychain_name))).await;
    assert!(restored_there.await.unwrap(), "the second process restored");
    let before = refreshes(&proxy);

    writeln!(child.stdin.take().unwrap(), "go").unwrap();
    let answer = here.call(&get_session()).await.unwrap();
    let there = tokio::task::spawn_blocking(move || child.wait()).await;
    assert!(
        there.unwrap().unwrap().success(),
        "the second process stayed signed in"
    );
    assert_eq!(answer["did"], account.did.as_str());
    assert_eq!(
        refreshes(&proxy) - before,
        1,
        "exactly one refresh was spent"
    );
    let kept = store.load().unwrap().unwrap();
    assert_eq!(kept.generation, spent.generation + 1);
    assert_ne!(kept.refresh_token, spent.refresh_token);

    let later = here.call(&get_session()).await.unwrap();
    assert_eq!(later["did"], account.did.as_str(), "still signed in here");
    assert_eq!(here.ended(), None);
    here.sign_out().await.unwrap();
    pds.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_profiles_keep_separate_sessions_of_one_account() {
    let data = tempfile::tempdir().unwrap();
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    let (network, first) = network_of(&pds, "profiles-two");
    let keychain = swdesk_atproto::keychain::Keychain::open(&network.keychain_name).unwrap();
    let second: Arc<dyn SessionStore> = Arc::new(keychain.session_of(&data.path().join("other")));
    let account = pds.create_account("twoprof").await.unwrap();
    let (one, _agent, _resolver) = signed_in(&network, &first, &account).await;
    let (two, _agent, _resolver) = signed_in(&network, &second, &account).await;
    drop((one, two));
    let (kept_first, kept_second) = (expire(first.as_ref()), expire(second.as_ref()));
    assert_ne!(
        kept_first.dpop_key, kept_second.dpop_key,
        "each profile holds a grant of its own"
    );

    let before = refreshes(&proxy);
    let (here, there) = (
        restore(&network, first.clone()).await,
        restore(&network, second.clone()).await,
    );
    let check = get_session();
    let (a, b) = tokio::join!(here.call(&check), there.call(&check));
    assert_eq!(a.unwrap()["did"], account.did.as_str());
    assert_eq!(b.unwrap()["did"], account.did.as_str());
    assert_eq!(
        refreshes(&proxy) - before,
        2,
        "each profile refreshed its own"
    );

    here.sign_out().await.unwrap();
    assert_eq!(first.load().unwrap(), None, "the first profile signed out");
    let still = restore(&network, second.clone()).await;
    let answer = still.call(&get_session()).await.unwrap();
    assert_eq!(
        answer["did"],
        account.did.as_str(),
        "the other stays signed in"
    );
    still.sign_out().await.unwrap();
    pds.stop().await.unwrap();
}

/// The profile's keychain entry, refusing saves while `failing` is set (a locked keychain).
#[derive(Debug)]
struct RefusingSaves {
    session: ProfileSession,
    failing: AtomicBool,
}

impl SessionStore for RefusingSaves {
    fn load(&self) -> Result<Option<StoredSession>, KeychainError> {
        self.session.load()
    }

    fn save(&self, session: &StoredSession) -> Result<(), KeychainError> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(KeychainError::unavailable("the collection is locked"));
        }
        self.session.save(session)
    }

    fn delete(&self) -> Result<(), KeychainError> {
        self.session.delete()
    }

    fn hold(&self) -> Result<Held, KeychainError> {
        self.session.hold()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_whose_save_fails_keeps_the_rotated_tokens_and_saves_them_later() {
    let data = tempfile::tempdir().unwrap();
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    let (network, store) = network_of(&pds, "profiles-unsaved");
    let account = pds.create_account("unsaved").await.unwrap();
    let (signed, _agent, _resolver) = signed_in(&network, &store, &account).await;
    drop(signed);
    let spent = expire(store.as_ref());
    let refusing = Arc::new(RefusingSaves {
        session: profile_session(&network.keychain_name),
        failing: AtomicBool::new(true),
    });

    let agent = restore(&network, refusing.clone()).await;
    let before = refreshes(&proxy);
    let answer = agent.call(&get_session()).await.unwrap();
    assert_eq!(answer["did"], account.did.as_str());
    let told = agent.unsaved().expect("the failed save is told");
    assert!(told.contains("could not be saved"), "{told}");
    assert_eq!(
        store.load().unwrap().unwrap(),
        spent,
        "the keychain still holds the spent tokens"
    );
    let again = agent.call(&get_session()).await.unwrap();
    assert_eq!(
        again["did"],
        account.did.as_str(),
        "the rotated tokens work"
    );
    assert_eq!(
        refreshes(&proxy) - before,
        1,
        "no second refresh was needed"
    );

    refusing.failing.store(false, Ordering::SeqCst);
    agent.call(&get_session()).await.unwrap();
    assert_eq!(agent.unsaved(), None, "saved at the next call");
    let saved = store.load().unwrap().unwrap();
    assert_eq!(saved.generation, spent.generation + 1);
    assert_ne!(saved.refresh_token, spent.refresh_token);
    let restarted = restore(&network, store.clone()).await;
    restarted.call(&get_session()).await.unwrap();
    assert_eq!(
        refreshes(&proxy) - before,
        1,
        "a restart uses the saved tokens"
    );
    restarted.sign_out().await.unwrap();
    pds.stop().await.unwrap();
}

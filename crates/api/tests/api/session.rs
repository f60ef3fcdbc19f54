//! The session as the window sees it: restored at start, signed in through the browser,
//! cancelled while waiting, ended by the server, signed out; a wider grant revoking the one it
//! replaces.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use swdesk_api::network::DEFAULT_CLIENT_ID;
use swdesk_api::{Network, SessionError, SessionView, Sessions};
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::{Keychain, MemoryStore, ProfileSession, SessionStore};
use swdesk_atproto::oauth::scope;
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_atproto::{Agent, Browser, ClientKind};
use swdesk_devnet::{Account, SandboxPds};
use swdesk_testkit::Chromium;
use url::Url;

/// The sandbox network of the shared PDS, its sessions in a keychain entry of this test's own.
pub async fn network(test: &str) -> (SandboxPds, Network, Arc<dyn SessionStore>) {
    let pds = SandboxPds::from_env_or_start().await.unwrap();
    let (network, store) = network_of(&pds, test);
    (pds, network, store)
}

/// The sandbox network of `pds`, its sessions in a keychain entry of this test's own.
pub fn network_of(pds: &SandboxPds, test: &str) -> (Network, Arc<dyn SessionStore>) {
    let mut network = Network::sandbox(&pds.ready_line()).unwrap();
    network.keychain_name = format!("api-test-{test}-{}", std::process::id());
    let session = profile_session(&network.keychain_name);
    session.delete().unwrap();
    (network, Arc::new(session))
}

/// The session entry of the test whose keychain is `keychain_name` (its profile's directory
/// derives from that name, so a child process of the test finds the same entry).
pub fn profile_session(keychain_name: &str) -> ProfileSession {
    let data_dir = std::env::temp_dir().join(format!("swdesk-{keychain_name}"));
    Keychain::open(keychain_name).unwrap().session_of(&data_dir)
}

/// `account` signed in through Chromium: its sessions, agent and an identity resolver.
pub async fn signed_in(
    network: &Network,
    store: &Arc<dyn SessionStore>,
    account: &Account,
) -> (Sessions, Agent, Resolver) {
    let signed = sessions(network, Chromium::approving(account), store);
    signed.sign_in(&account.handle).await.unwrap();
    let agent = signed.agent().unwrap();
    let resolver = Resolver::new(network.oauth.identity.clone(), network.outbound.clone());
    (signed, agent, resolver)
}

pub fn sessions(
    network: &Network,
    browser: Arc<dyn Browser>,
    store: &Arc<dyn SessionStore>,
) -> Sessions {
    Sessions::with_store(network.clone(), browser, Ok(store.clone()))
}

/// A browser the test never expects to be opened (a restored session needs none).
#[derive(Debug)]
pub struct NoBrowser;

impl Browser for NoBrowser {
    fn open(&self, url: &Url) -> Result<(), String> {
        panic!("no browser page was expected, {url} was opened")
    }
}

/// A browser the owner never finishes in.
#[derive(Debug, Default)]
struct Abandoned(Mutex<usize>);

impl Browser for Abandoned {
    fn open(&self, _url: &Url) -> Result<(), String> {
        *self.0.lock().unwrap() += 1;
        Ok(())
    }
}

#[tokio::test]
async fn a_signed_in_session_is_restored_by_the_next_start_until_signed_out() {
    let (pds, network, store) = network("restore").await;
    let account = pds.create_account("apirestore").await.unwrap();
    let first = sessions(&network, Chromium::approving(&account), &store);
    assert_eq!(
        first.current().await,
        SessionView::SignedOut { notice: None }
    );
    let signed = first.sign_in(&account.handle).await.unwrap();
    assert_eq!(signed.did, account.did);
    assert!(matches!(first.current().await, SessionView::SignedIn(ref a) if a.did == account.did));

    let next_start = sessions(&network, Arc::new(Abandoned::default()), &store);
    assert!(
        matches!(next_start.current().await, SessionView::SignedIn(ref a) if a.did == account.did)
    );
    let again = next_start.sign_in(&account.handle).await;
    assert!(
        matches!(again, Err(SessionError::AlreadySignedIn(_))),
        "{again:?}"
    );

    next_start.sign_out().await.unwrap();
    assert_eq!(
        next_start.current().await,
        SessionView::SignedOut { notice: None }
    );
    let after = sessions(&network, Arc::new(Abandoned::default()), &store);
    assert_eq!(
        after.current().await,
        SessionView::SignedOut { notice: None }
    );
}

/// A release build presents its hosted client metadata document (the committed one, which the
/// sandbox PDS answers for its URL); where the desktop does not hand the app its own link
/// (here: no desktop entry names this program), sign-in returns through loopback, and the
/// session keeps refreshing under that client id.
#[tokio::test]
async fn the_hosted_client_id_signs_in_through_loopback_where_the_link_is_not_ours() {
    let (pds, mut network, store) = network("hosted").await;
    network.oauth.client = ClientKind::Hosted {
        client_id: Url::parse(DEFAULT_CLIENT_ID).unwrap(),
    };
    let account = pds.create_account("apihosted").await.unwrap();
    let signed = sessions(&network, Chromium::approving(&account), &store);
    assert_eq!(
        signed.sign_in(&account.handle).await.unwrap().did,
        account.did
    );
    let kept = store.load().unwrap().expect("the session is kept");
    assert_eq!(kept.client_id, DEFAULT_CLIENT_ID);
    let granted = kept.account.granted_scope;
    assert!(
        granted.contains("repo:computer.socialweb.infra"),
        "{granted}"
    );
    signed.sign_out().await.unwrap();
}

#[tokio::test]
async fn a_sign_in_waiting_for_the_browser_can_be_cancelled() {
    let (pds, network, store) = network("cancel").await;
    let account = pds.create_account("apicancel").await.unwrap();
    let browser = Arc::new(Abandoned::default());
    let sessions = Arc::new(sessions(&network, browser.clone(), &store));
    let waiting = tokio::spawn({
        let sessions = sessions.clone();
        let handle = account.handle.clone();
        async move { sessions.sign_in(&handle).await }
    });
    while *browser.0.lock().unwrap() == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        sessions.current().await,
        SessionView::SigningIn {
            input: account.handle.clone()
        }
    );
    assert!(sessions.cancel_sign_in());
    assert_eq!(waiting.await.unwrap(), Err(SessionError::Cancelled));
    assert_eq!(
        sessions.current().await,
        SessionView::SignedOut { notice: None }
    );
    assert_eq!(store.load().unwrap(), None);
}

#[tokio::test]
async fn a_session_the_server_ended_is_forgotten_at_start_with_a_notice() {
    let (pds, network, store) = network("ended").await;
    let account = pds.create_account("apiended").await.unwrap();
    let first = sessions(&network, Chromium::approving(&account), &store);
    first.sign_in(&account.handle).await.unwrap();
    let kept = store.load().unwrap().unwrap();
    first.sign_out().await.unwrap();
    store.save(&kept).unwrap();

    let next_start = sessions(&network, Arc::new(Abandoned::default()), &store);
    match next_start.current().await {
        SessionView::SignedOut {
            notice: Some(notice),
        } => {
            assert!(notice.contains("has ended"), "{notice}");
        }
        other => panic!("expected signed out with a notice, got {other:?}"),
    }
    assert_eq!(
        store.load().unwrap(),
        None,
        "the dead session is gone from the keychain"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wider_grant_revokes_the_one_it_replaces_at_the_server() {
    let (pds, network, store) = network("wider").await;
    let account = pds.create_account("apiwider").await.unwrap();
    let signed = sessions(&network, Chromium::approving(&account), &store);
    signed.sign_in(&account.handle).await.unwrap();
    let replaced = store.load().unwrap().unwrap();

    let granted = signed.grant_more(&[scope::IDENTITY]).await.unwrap();
    assert!(scope::grants(&granted.granted_scope, scope::IDENTITY));
    let get_session = XrpcRequest::query("com.atproto.server.getSession", Vec::new());
    let current = signed.agent().unwrap();
    current
        .call(&get_session)
        .await
        .expect("the new grant works");

    let apart = || -> Arc<dyn SessionStore> { Arc::new(MemoryStore::default()) };
    let old_access = Agent::from_stored(replaced.clone(), network.outbound.clone(), apart());
    let refused = old_access.unwrap().call(&get_session).await;
    assert!(
        refused.is_err(),
        "the old access token is revoked: {refused:?}"
    );
    let mut due = replaced;
    due.expires_at = 0;
    let old_refresh = Agent::from_stored(due, network.outbound.clone(), apart()).unwrap();
    let refused = old_refresh.call(&get_session).await;
    assert!(
        refused.is_err(),
        "the old refresh token is refused: {refused:?}"
    );
    assert!(
        old_refresh.ended().is_some(),
        "the server says the old grant is gone (invalid_grant), not just busy"
    );
    current
        .call(&get_session)
        .await
        .expect("the new grant still works");
    signed.sign_out().await.unwrap();
}

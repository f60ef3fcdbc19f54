//! Signing in: the full OAuth flow from the app's own code, the session in the keychain and
//! back, refresh, nonce rotation, sign-out; and every refused sign-in storing nothing.

use std::sync::Arc;

use swdesk_atproto::keychain::{MemoryStore, SessionStore};
use swdesk_atproto::oauth::scope;
use swdesk_atproto::xrpc::XrpcRequest;
use swdesk_atproto::{Agent, OAuthError};
use swdesk_devnet::Decision;

use swdesk_testkit::{Chromium, Sandbox};

use crate::support::{Forger, keychain};

/// An authenticated call: `getSession` answers only a valid token with a valid DPoP proof.
fn get_session(_did: &str) -> XrpcRequest {
    XrpcRequest::query("com.atproto.server.getSession", Vec::new())
}

#[tokio::test]
async fn signing_in_through_the_browser_stores_a_granular_session_that_a_restart_restores() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("signin").await;
    let store = keychain("signin");
    let agent = sandbox.sign_in(&account, store.clone()).await;

    let signed = agent.account();
    assert_eq!(signed.did, account.did);
    assert_eq!(signed.handle.as_deref(), Some(account.handle.as_str()));
    assert!(
        !scope::is_generic(&signed.granted_scope),
        "granted: {}",
        signed.granted_scope
    );
    assert!(
        signed
            .granted_scopes()
            .contains(&"repo:computer.socialweb.infra".to_owned())
    );
    assert!(agent.call(&get_session(&account.did)).await.is_ok());

    let stored = store
        .load()
        .unwrap()
        .expect("the keychain holds the session");
    assert_eq!(stored.account, signed);
    let restored = sandbox
        .oauth_client(
            sandbox.outbound_reaching(&[]),
            Chromium::new(&account, Decision::Approve),
            store.clone(),
        )
        .restore()
        .await
        .unwrap()
        .expect("a restart finds the session");
    assert_eq!(restored.did(), account.did);
    assert!(restored.call(&get_session(&account.did)).await.is_ok());
    store.delete().unwrap();
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_once_and_the_new_tokens_are_kept() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("refresh").await;
    let store = keychain("refresh");
    sandbox.sign_in(&account, store.clone()).await;
    let mut stored = store.load().unwrap().unwrap();
    let spent_refresh = stored.refresh_token.clone();
    stored.expires_at = 0;
    store.save(&stored).unwrap();

    let restored = sandbox
        .oauth_client(
            sandbox.outbound_reaching(&[]),
            Chromium::new(&account, Decision::Approve),
            store.clone(),
        )
        .restore()
        .await
        .unwrap()
        .unwrap();
    let calls = (0..4).map(|_| {
        let (agent, did) = (restored.clone(), account.did.clone());
        async move { agent.call(&get_session(&did)).await }
    });
    for answer in join_all(calls).await {
        answer.expect("every concurrent call succeeds after one refresh");
    }
    let renewed = store.load().unwrap().unwrap();
    assert_ne!(renewed.access_token, stored.access_token);
    assert_ne!(
        renewed.refresh_token, spent_refresh,
        "the single-use refresh token rotated"
    );
    assert!(renewed.expires_at > 0);
    store.delete().unwrap();
}

#[tokio::test]
async fn a_rotated_dpop_nonce_is_answered_by_retrying_with_the_new_one() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("nonce").await;
    let store = keychain("nonce");
    let agent = sandbox.sign_in(&account, store.clone()).await;
    let pds = sandbox.pds_url();
    agent.call(&get_session(&account.did)).await.unwrap();
    agent
        .nonces()
        .set(&pds, "a-nonce-the-server-has-rotated-away");

    agent
        .call(&get_session(&account.did))
        .await
        .expect("the retry with the new nonce succeeds");
    let current = agent.nonces().for_url(&pds).unwrap();
    assert_ne!(current, "a-nonce-the-server-has-rotated-away");
    store.delete().unwrap();
}

#[tokio::test]
async fn a_laptop_whose_clock_is_ten_minutes_off_still_calls_its_pds() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("skewed").await;
    let store = keychain("skewed");
    let agent = sandbox.sign_in(&account, store.clone()).await;
    for off_by in [600, -600] {
        agent.nonces().pretend_clock_off_by(off_by);
        agent
            .call(&get_session(&account.did))
            .await
            .unwrap_or_else(|error| panic!("a clock {off_by} s off: {error}"));
        let server_now = agent.nonces().now_for(&sandbox.pds_url());
        let real_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let proofs_off_by = server_now - i64::try_from(real_now).unwrap();
        assert!(
            proofs_off_by.abs() <= 2,
            "proofs take the PDS's time: {proofs_off_by}"
        );
    }
    store.delete().unwrap();
}

#[tokio::test]
async fn signing_out_revokes_the_tokens_and_removes_the_keychain_entry() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("signout").await;
    let store = keychain("signout");
    let agent = sandbox.sign_in(&account, store.clone()).await;
    let kept = store.load().unwrap().unwrap();

    agent.sign_out().await.expect("the tokens are revoked");
    assert_eq!(store.load().unwrap(), None, "the keychain entry is gone");

    let memory: Arc<dyn SessionStore> = Arc::new(MemoryStore::default());
    let stale = Agent::from_stored(kept, sandbox.outbound_reaching(&[]), memory).unwrap();
    let refused = stale.call(&get_session(&account.did)).await;
    assert!(
        refused.is_err(),
        "a revoked session is refused: {refused:?}"
    );
}

#[tokio::test]
async fn a_denied_authorization_is_reported_and_nothing_is_stored() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("deny").await;
    let store = keychain("deny");
    let browser = Chromium::new(&account, Decision::Deny);
    let refused = sandbox
        .oauth_client(
            sandbox.outbound_reaching(&[]),
            browser.clone(),
            store.clone(),
        )
        .sign_in(&account.handle)
        .await;
    browser.outcome().await.unwrap();
    assert!(
        matches!(&refused, Err(OAuthError::Denied { error, .. }) if error == "access_denied"),
        "{refused:?}"
    );
    assert_eq!(store.load().unwrap(), None);
}

#[tokio::test]
async fn a_forged_callback_is_refused_and_the_owners_own_still_signs_in() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("state").await;
    let store = keychain("state");
    let browser = Chromium::approving(&account);
    let forger = Forger::new("code=stolen&state=not-ours", browser.clone());
    let signed = sandbox
        .oauth_client(
            sandbox.outbound_reaching(&[]),
            forger.clone(),
            store.clone(),
        )
        .sign_in(&account.handle)
        .await;
    browser.outcome().await.unwrap();
    assert_eq!(
        forger.answered(),
        Some(400),
        "the forged redirect is refused"
    );
    assert_eq!(
        signed
            .expect("the owner's own redirect signs in")
            .account()
            .did,
        account.did
    );
    assert_eq!(store.load().unwrap().unwrap().account.did, account.did);
}

#[tokio::test]
async fn tokens_for_another_account_than_the_one_asked_for_are_refused_and_nothing_is_stored() {
    let sandbox = Sandbox::start().await;
    let asked = sandbox.account("asked").await;
    let other = sandbox.account("other").await;
    let store = keychain("subject");
    let browser = Chromium::new(&other, Decision::Approve);
    let refused = sandbox
        .oauth_client(
            sandbox.outbound_reaching(&[]),
            browser.clone(),
            store.clone(),
        )
        .sign_in(&asked.handle)
        .await;
    browser.outcome().await.unwrap();
    assert_eq!(
        refused.unwrap_err(),
        OAuthError::SubjectMismatch {
            expected: asked.did.clone(),
            found: other.did.clone()
        }
    );
    assert_eq!(store.load().unwrap(), None);
}

#[tokio::test]
async fn an_unknown_handle_is_refused_before_the_browser_opens() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("unknown").await;
    let store = keychain("unknown");
    let browser = Chromium::new(&account, Decision::Approve);
    let refused = sandbox
        .oauth_client(sandbox.outbound_reaching(&[]), browser, store.clone())
        .sign_in("nobody-here.test")
        .await;
    assert!(
        matches!(&refused, Err(OAuthError::Identity(swdesk_atproto::identity::IdentityError::HandleNotFound { handle, .. })) if handle == "nobody-here.test"),
        "{refused:?}"
    );
    assert_eq!(store.load().unwrap(), None);
}

/// Runs every future to completion, concurrently.
async fn join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    for future in futures {
        set.spawn(future);
    }
    let mut outputs = Vec::new();
    while let Some(output) = set.join_next().await {
        outputs.push(output.unwrap());
    }
    outputs
}

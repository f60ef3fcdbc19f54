//! Service-auth tokens from the real PDS, verified against the key the local PLC publishes.

use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::SessionStore;
use swdesk_atproto::service_auth::{ServiceAuth, VerifyError, verify};

use swdesk_testkit::Sandbox;

use crate::support::keychain;

const GATEWAY: &str = "did:web:k8s.socialweb.computer";
const LIST: &str = "com.publicdomainrelay.temp.cluster.listClusters";

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[tokio::test]
async fn a_minted_token_verifies_against_the_issuers_did_document_and_is_cached() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("svcauth").await;
    let store = keychain("svcauth");
    let agent = sandbox.sign_in(&account, store.clone()).await;
    let auth = ServiceAuth::new(agent);
    let token = auth.token(GATEWAY, LIST).await.unwrap();
    assert_eq!(
        auth.token(GATEWAY, LIST).await.unwrap(),
        token,
        "a fresh token is reused"
    );

    let resolver = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(&[]));
    let claims = verify(&resolver, token.expose(), GATEWAY, LIST, now())
        .await
        .unwrap();
    assert_eq!(claims.issuer_did(), account.did);
    assert!(claims.exp > now());

    let other_method = verify(
        &resolver,
        token.expose(),
        GATEWAY,
        "computer.socialweb.k8s.getJob",
        now(),
    )
    .await;
    assert!(
        matches!(other_method, Err(VerifyError::Method { .. })),
        "{other_method:?}"
    );
    let other_service = verify(
        &resolver,
        token.expose(),
        "did:web:elsewhere.example",
        LIST,
        now(),
    )
    .await;
    assert!(
        matches!(other_service, Err(VerifyError::Audience { .. })),
        "{other_service:?}"
    );
    let later = verify(&resolver, token.expose(), GATEWAY, LIST, now() + 3600).await;
    assert!(
        matches!(later, Err(VerifyError::Expired { .. })),
        "{later:?}"
    );

    let mut forged = token.expose().to_owned();
    forged.replace_range(forged.len() - 4.., "AAAA");
    let tampered = verify(&resolver, &forged, GATEWAY, LIST, now()).await;
    assert!(
        matches!(tampered, Err(VerifyError::Token(_))),
        "{tampered:?}"
    );
    store.delete().unwrap();
}

//! Identity resolution against the sandbox's PLC and PDS, and a did:web served on loopback.

use std::sync::Arc;

use swdesk_atproto::OAuthError;
use swdesk_atproto::identity::{IdentityError, Resolver, loopback_web_did_port};
use swdesk_atproto::keychain::SessionStore;
use swdesk_devnet::Decision;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use swdesk_testkit::{Chromium, Sandbox};

use crate::support::keychain;

#[tokio::test]
async fn a_handle_resolves_to_its_did_pds_and_signing_key() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("ident").await;
    let resolver = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(&[]));
    let identity = resolver
        .resolve(&format!("@{}", account.handle.to_uppercase()))
        .await
        .unwrap();
    assert_eq!(identity.did, account.did);
    assert_eq!(identity.handle.as_deref(), Some(account.handle.as_str()));
    assert_eq!(identity.pds, sandbox.pds_url());
    assert_eq!(resolver.resolve(&account.did).await.unwrap(), identity);
}

#[tokio::test]
async fn each_failing_hop_is_its_own_error() {
    let sandbox = Sandbox::start().await;
    let closed = closed_port().await;
    let no_pds = serve_did_web(|did| serde_json::json!({ "id": did })).await;
    let ports = [closed, loopback_web_did_port(&no_pds).unwrap()];
    let resolver = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(&ports));
    assert!(matches!(
        resolver.resolve("nobody.test").await,
        Err(IdentityError::HandleNotFound { .. })
    ));
    assert!(matches!(
        resolver.resolve("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa").await,
        Err(IdentityError::DidNotFound { .. })
    ));
    let unreachable = resolver
        .resolve(&format!("did:web:localhost%3A{closed}"))
        .await;
    assert!(
        matches!(&unreachable, Err(IdentityError::DidUnreachable { reason, .. }) if !reason.contains("may not be reached")),
        "{unreachable:?}"
    );
    let unnamed = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(&[]))
        .resolve(&no_pds)
        .await;
    assert!(
        matches!(&unnamed, Err(IdentityError::DidUnreachable { reason, .. }) if reason.contains("not named by the network configuration")),
        "{unnamed:?}"
    );
    let refused = resolver.resolve(&no_pds).await;
    assert!(
        matches!(&refused, Err(IdentityError::DidDocumentInvalid { reason, .. }) if reason.contains("names no PDS")),
        "{refused:?}"
    );
}

/// A DID document is fetched once and kept a while for the many reads of the same author;
/// forgetting it, or resolving it at sign-in, fetches it afresh.
#[tokio::test]
async fn a_did_document_is_kept_between_reads_and_fetched_afresh_at_sign_in() {
    let sandbox = Sandbox::start().await;
    let served = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let did = serve_counted_did_web(
        |did| document_with_pds(did, "http://localhost:2583"),
        served.clone(),
    )
    .await;
    let ports = [loopback_web_did_port(&did).unwrap()];
    let resolver = Resolver::new(sandbox.identity.clone(), sandbox.outbound_reaching(&ports));
    let count = || served.load(std::sync::atomic::Ordering::SeqCst);
    for _ in 0..5 {
        resolver.resolve_did(&did).await.unwrap();
    }
    assert_eq!(count(), 1, "five reads, one fetch");
    resolver.forget(&did);
    resolver.resolve_did(&did).await.unwrap();
    assert_eq!(count(), 2, "a forgotten document is fetched again");
    let _ = resolver.resolve(&did).await;
    assert_eq!(count(), 3, "sign-in resolves from a fresh document");
}

#[tokio::test]
async fn signing_in_with_a_did_whose_pds_is_down_says_so_and_stores_nothing() {
    let sandbox = Sandbox::start().await;
    let account = sandbox.account("pdsdown").await;
    let closed = closed_port().await;
    let did = serve_did_web(move |did| {
        let mut document = document_with_pds(did, &format!("http://localhost:{closed}"));
        document["alsoKnownAs"] = serde_json::json!(["at://down.test"]);
        document
    })
    .await;
    let store = keychain("pdsdown");
    let browser = Chromium::new(&account, Decision::Approve);
    let outbound = sandbox.outbound_reaching(&[closed, loopback_web_did_port(&did).unwrap()]);
    let refused = sandbox
        .oauth_client(outbound, browser, store.clone())
        .sign_in(&did)
        .await;
    assert!(
        matches!(&refused, Err(OAuthError::PdsUnreachable { .. })),
        "{refused:?}"
    );
    assert_eq!(store.load().unwrap(), None);
}

/// The document of `did`: a signing key and a PDS at `pds`.
fn document_with_pds(did: &str, pds: &str) -> serde_json::Value {
    serde_json::json!({
        "id": did,
        "verificationMethod": [{
            "id": "#atproto",
            "type": "Multikey",
            "publicKeyMultibase": "zQ3shqwJEJyMBsBXCWyCBpUBMqxcon9oHB7mCvx4sSpMdLJwc"
        }],
        "service": [{
            "id": "#atproto_pds",
            "type": "AtprotoPersonalDataServer",
            "serviceEndpoint": pds
        }]
    })
}

/// A port nothing listens on.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    listener.local_addr().unwrap().port()
}

/// Serves `/.well-known/did.json` of a `did:web:localhost%3A<port>` on loopback; returns the DID.
async fn serve_did_web(
    document: impl Fn(&str) -> serde_json::Value + Send + Sync + 'static,
) -> String {
    serve_counted_did_web(document, Arc::default()).await
}

/// [`serve_did_web`], counting the requests served in `served`.
async fn serve_counted_did_web(
    document: impl Fn(&str) -> serde_json::Value + Send + Sync + 'static,
    served: Arc<std::sync::atomic::AtomicUsize>,
) -> String {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let did = format!(
        "did:web:localhost%3A{}",
        listener.local_addr().unwrap().port()
    );
    let body = Arc::new(document(&did).to_string());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = [0_u8; 4096];
                let _ = stream.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    did
}

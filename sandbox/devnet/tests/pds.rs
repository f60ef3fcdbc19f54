//! The sandbox PDS is a real PDS: accounts log in, records are written and read back, and the
//! harness cleans up after itself.

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]

use swdesk_devnet::{SandboxPds, Storage};

#[tokio::test]
async fn the_sandbox_pds_starts_with_the_accounts_it_was_asked_for() {
    let pds = SandboxPds::start(&[("alice.test", "alice-password")])
        .await
        .unwrap();
    let info = pds.info();
    assert!(info.pds_url.starts_with("http://localhost:"), "{info:?}");
    // Its ports are drawn below the kernel's ephemeral range, where no outgoing connection of a
    // parallel test can take one before the PDS listens (`swdesk_devnet::ports`).
    let above = swdesk_devnet::ports::ephemeral_range_start().unwrap_or(32_768);
    for url in [&info.pds_url, &info.plc_url] {
        let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
        assert!(
            port < above,
            "{url} is in the ephemeral range (from {above})"
        );
    }
    assert_eq!(info.service_did, "did:web:localhost");
    assert_eq!(info.accounts.len(), 1);
    assert_eq!(info.accounts[0].handle, "alice.test");
    assert!(info.accounts[0].did.starts_with("did:plc:"));

    let resolved: serde_json::Value = reqwest::get(format!(
        "{}/xrpc/com.atproto.identity.resolveHandle?handle=alice.test",
        info.pds_url
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(resolved["did"], info.accounts[0].did.as_str());
}

#[tokio::test]
async fn each_new_account_is_its_own_and_can_write_a_record() {
    let pds = SandboxPds::from_env_or_start().await.unwrap();
    let first = pds.create_account("writer").await.unwrap();
    let second = pds.create_account("writer").await.unwrap();
    assert_ne!(first.did, second.did);

    let http = reqwest::Client::new();
    let session: serde_json::Value = http
        .post(format!(
            "{}/xrpc/com.atproto.server.createSession",
            pds.info().pds_url
        ))
        .json(&serde_json::json!({ "identifier": first.handle, "password": first.password }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = session["accessJwt"].as_str().unwrap();
    let put = http
        .post(format!("{}/xrpc/com.atproto.repo.putRecord", pds.info().pds_url))
        .bearer_auth(token)
        .json(&serde_json::json!({
            "repo": first.did,
            "collection": "computer.socialweb.infra",
            "rkey": "web",
            "record": { "$type": "computer.socialweb.infra", "contracts": [], "createdAt": "2026-12-02T00:00:00.000Z" },
        }))
        .send()
        .await
        .unwrap();
    assert!(
        put.status().is_success(),
        "putRecord: {}",
        put.text().await.unwrap()
    );
    let got: serde_json::Value = reqwest::get(format!(
        "{}/xrpc/com.atproto.repo.getRecord?repo={}&collection=computer.socialweb.infra&rkey=web",
        pds.info().pds_url,
        first.did
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(got["value"]["contracts"], serde_json::json!([]));
    assert!(
        got["uri"]
            .as_str()
            .unwrap()
            .ends_with("/computer.socialweb.infra/web")
    );
}

#[tokio::test]
async fn stopping_the_sandbox_pds_removes_its_data() {
    let pds = SandboxPds::start(&[]).await.unwrap();
    let url = pds.info().pds_url.clone();
    let data = std::path::PathBuf::from(&pds.info().data_directory);
    assert!(
        data.is_dir(),
        "the data directory {} exists while running",
        data.display()
    );
    drop(pds);
    for _ in 0..100 {
        if !data.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!data.exists(), "data left behind in {}", data.display());
    assert!(
        reqwest::get(format!("{url}/xrpc/_health")).await.is_err(),
        "the PDS still answers"
    );
}

#[tokio::test]
async fn a_persistent_sandbox_keeps_its_accounts_and_their_dids_across_a_restart() {
    let dir = std::env::temp_dir().join(format!("swdesk-persistent-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let storage = Storage::Persistent {
        dir: dir.clone(),
        pds_port: free(),
        plc_port: free(),
    };
    let first = SandboxPds::start_with(&storage, &[("alice.test", "alice-password")])
        .await
        .unwrap();
    let did = first.info().accounts[0].did.clone();
    let written = first.create_account("later").await.unwrap();
    first.stop().await.unwrap();

    let second = SandboxPds::start_with(&storage, &[("alice.test", "alice-password")])
        .await
        .unwrap();
    assert_eq!(
        second.info().accounts[0].did,
        did,
        "the same account, not a new one"
    );
    let resolve = |handle: String| {
        let url = format!(
            "{}/xrpc/com.atproto.identity.resolveHandle?handle={handle}",
            second.info().pds_url
        );
        async move {
            reqwest::get(url)
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    assert_eq!(
        resolve(written.handle.clone()).await["did"],
        written.did.as_str()
    );
    let document: serde_json::Value = reqwest::get(format!("{}/{}", second.info().plc_url, did))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(document["id"], did.as_str(), "the PLC still knows the DID");
    let session = reqwest::Client::new()
        .post(format!(
            "{}/xrpc/com.atproto.server.createSession",
            second.info().pds_url
        ))
        .json(&serde_json::json!({ "identifier": "alice.test", "password": "alice-password" }))
        .send()
        .await
        .unwrap();
    assert!(session.status().is_success(), "the account still signs in");
    second.stop().await.unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

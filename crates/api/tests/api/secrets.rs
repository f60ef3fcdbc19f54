//! A deployment's secret set through the desk as the window does it, against the real PDS,
//! the OS keychain and a sandbox bidder: every problem of a bad request is named at once; the
//! value reaches the contract's guest sealed to the key it reported (the guest reports a hash of
//! what it opened), a rotation reaches it as the next version, the owner can reveal it, and
//! removing it forgets the value. Its bytes are nowhere else: not in either repo, not in any
//! file under the data directory (the SQLite store and its journal included), not in any log
//! line of this process at TRACE.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;
use sha2::{Digest, Sha256};
use swdesk_api::controller::LiveEvent;
use swdesk_api::deployments::{ContractIntent, IntentError};
use swdesk_api::network::Network;
use swdesk_api::{Desk, DeskError, ErrorCode};
use swdesk_atproto::keychain::Keychain;
use swdesk_devnet::holds_bytes;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::secret::SecretVault as _;
use swdesk_sandbox_bidder::Opened;
use swdesk_testkit::Chromium;

use crate::session::{network, sessions};
use crate::support::{eventually, sandbox_bidder};

/// Every log line of this process (the test runs in a process of its own under nextest).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn sha256(value: &str) -> String {
    Sha256::digest(value.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn fresh(label: &str) -> String {
    let mut bytes = [0u8; 8];
    getrandom::getrandom(&mut bytes).unwrap();
    format!("{label}-{:016x}-never-in-clear", u64::from_le_bytes(bytes))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_set_in_the_desk_reaches_its_guest_sealed_and_is_nowhere_in_clear() {
    let logs = Logs::default();
    let writer = logs.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .try_init()
        .expect("this test reads every log line: it runs in a process of its own (nextest)");

    let (pds, network, store) = network("secrets").await;
    let account = pds.create_account("secrets").await.unwrap();
    let bidder = sandbox_bidder(&pds, &network.oauth.identity, "secretsbid").await;
    let mut line: serde_json::Value = serde_json::from_str(&pds.ready_line()).unwrap();
    line["bidderDids"] = json!([bidder.account]);
    line["bidderServices"] = json!([bidder.did]);
    line["keychain"] = json!(network.keychain_name);
    let network = Network::sandbox(&line.to_string()).unwrap();
    let data = tempfile::tempdir().unwrap();
    let desk = Desk::with_sessions(
        sessions(&network, Chromium::approving(&account), &store),
        data.path().into(),
    );
    desk.sign_in(&account.handle).await.unwrap();
    desk.declare(json!({
        "kind": "Infra",
        "metadata": {"name": "web"},
        "spec": {"contracts": [{"name": "api", "state": "staged", "policyArgs": {"bidWindowSec": 2}}]},
    }))
    .await
    .unwrap();
    let web = Name::parse("web").unwrap();
    let infra = DeploymentKind::Infra;

    let refused = desk
        .set_secret(
            infra,
            web.clone(),
            "Bad Name".into(),
            String::new(),
            vec!["No!".into()],
        )
        .await
        .unwrap_err();
    let DeskError::Intent(IntentError::Invalid(problems)) = &refused else {
        panic!("refused as invalid: {refused:?}");
    };
    assert_eq!(problems.len(), 3, "{problems:?}");
    let unknown = desk
        .set_secret(
            infra,
            web.clone(),
            "token".into(),
            "x".into(),
            vec!["worker".into()],
        )
        .await
        .unwrap_err();
    assert!(unknown.to_string().contains("problem"), "{unknown}");
    let kept = desk
        .reveal_secret(infra, web.clone(), "token".into())
        .await
        .unwrap_err();
    assert_eq!(
        kept.code(),
        ErrorCode::NotFound,
        "a refused secret is not declared: {kept}"
    );
    let values = Keychain::open(&network.keychain_name)
        .unwrap()
        .secret_values(&account.did);
    let entry = swdesk_api::secrets::keychain_entry(infra, &web, "token");
    assert!(
        values.read(&entry).unwrap().is_none(),
        "a refused secret writes no value"
    );

    let first = fresh("first");
    desk.set_secret(
        infra,
        web.clone(),
        "db-password".into(),
        first.clone(),
        vec![],
    )
    .await
    .unwrap();
    desk.set_contract(infra, web.clone(), "api".into(), ContractIntent::Request)
        .await
        .unwrap();
    let delivered = async |version: u32| {
        eventually("the secret is delivered to the guest", async || {
            let (detail, _) = desk.deployment(infra, &web).await.ok()??;
            let guest = detail.secrets.first()?.guests.first()?.clone();
            (guest.delivered_version == Some(version)).then_some(guest)
        })
        .await
    };
    let guest_view = delivered(1).await;
    assert!(guest_view.guest_key.is_some_and(|key| key.starts_with('…')));
    assert_eq!(guest_view.waiting, None);
    let opened = |version: i64, value: &str| Opened {
        name: "db-password".into(),
        version,
        sha256: sha256(value),
    };
    let guest = || bidder.state().guests.first().cloned().unwrap();
    assert_eq!(guest().opened, vec![opened(1, &first)]);

    // The window reads again only when told: the delivery (a change of the contract, not
    // of the deployment) must reach it as a change of the deployment.
    let mut live = desk.live();
    let second = fresh("second");
    desk.set_secret(
        infra,
        web.clone(),
        "db-password".into(),
        second.clone(),
        vec![],
    )
    .await
    .unwrap();
    let told = async {
        loop {
            if let Ok(LiveEvent::Deployment(change)) = live.recv().await
                && change.name == "web"
                && let Ok(Some((detail, _))) = desk.deployment(infra, &web).await
                && detail.secrets[0].guests[0].delivered_version == Some(2)
            {
                return;
            }
        }
    };
    // Told within a few seconds, not at the deployment's next resync (about a minute later).
    tokio::time::timeout(std::time::Duration::from_secs(20), told)
        .await
        .expect("the window is told when version 2 is delivered");
    assert_eq!(guest().opened, vec![opened(1, &first), opened(2, &second)]);
    assert_eq!(
        desk.reveal_secret(infra, web.clone(), "db-password".into())
            .await
            .unwrap(),
        second
    );

    desk.remove_secret(infra, web.clone(), "db-password".into())
        .await
        .unwrap();
    let (detail, _) = desk.deployment(infra, &web).await.unwrap().unwrap();
    assert!(detail.secrets.is_empty());
    let gone = desk
        .reveal_secret(infra, web.clone(), "db-password".into())
        .await
        .unwrap_err();
    assert_eq!(gone.code(), ErrorCode::NotFound, "{gone}");
    let entry = swdesk_api::secrets::keychain_entry(infra, &web, "db-password");
    assert!(
        values.read(&entry).unwrap().is_none(),
        "removing a secret forgets its value"
    );

    let mut places: Vec<(String, Vec<u8>)> = files_under(data.path());
    for repo in [account.did.clone(), bidder.account.clone()] {
        places.push((
            format!("{repo}'s repo"),
            pds.repo_bytes(&repo).await.unwrap(),
        ));
    }
    let logged = logs.0.lock().unwrap().clone();
    assert!(
        String::from_utf8_lossy(&logged).contains("the simulated guest opened a secret"),
        "the logs are captured"
    );
    places.push(("the logs".into(), logged));
    assert!(
        places
            .iter()
            .any(|(place, _)| place.ends_with(".sqlite") || place.contains("store")),
        "the store file is among the places: {:?}",
        places.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for (place, bytes) in &places {
        for value in [&first, &second] {
            assert!(
                !holds_bytes(bytes, value.as_bytes()),
                "a value is in clear in {place}"
            );
        }
    }
    desk.set_contract(infra, web.clone(), "api".into(), ContractIntent::Release)
        .await
        .unwrap();
    desk.sign_out().await.unwrap();
    bidder.stop().await;
}

/// Every file under `dir`, by path, with its bytes.
fn files_under(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            found.push((path.display().to_string(), bytes));
        }
    }
    found
}

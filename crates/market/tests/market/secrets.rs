//! Secrets sealed to the guest, against the real PDS and a local bidder: a deployed contract
//! with a secret waits (and says why) while the vault holds no value, then finds the key the
//! guest reported, seals the value to it and delivers it; the guest opens exactly that value
//! (it reports a SHA-256 of what it opened), a rotation reaches it as a new version, and the
//! value's bytes are nowhere else: not in either repo (the whole repo as the PDS serves it), not
//! in the persisted status.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};
use swdesk_auction::compute::{ComputePhase, Waiting};
use swdesk_devnet::holds_bytes;
use swdesk_kernel::secret::{SecretRef, SecretValue, SecretVault};
use swdesk_lexicon::computer::socialweb::secret::{guest_key, sealed};
use swdesk_sandbox_bidder::{Behaviour, Opened};

use crate::support::*;

/// The vault of one test: values by keychain entry, set as the test goes.
#[derive(Debug, Default)]
struct Values(Mutex<HashMap<String, Vec<u8>>>);

impl Values {
    fn set(&self, entry: &str, value: &[u8]) {
        self.0
            .lock()
            .unwrap()
            .insert(entry.to_owned(), value.to_vec());
    }
}

impl SecretVault for Values {
    fn read(&self, entry: &str) -> Result<Option<SecretValue>, String> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .get(entry)
            .cloned()
            .map(SecretValue::new))
    }
}

const ENTRY: &str = "swdesk/test/db-password";

fn sha256(value: &[u8]) -> String {
    Sha256::digest(value)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A value no record or log could hold by chance.
fn fresh_value(label: &str) -> Vec<u8> {
    let nonce: u64 = rand_nonce();
    format!("{label}-{nonce:016x}-never-in-clear").into_bytes()
}

fn rand_nonce() -> u64 {
    let mut bytes = [0u8; 8];
    getrandom::getrandom(&mut bytes).unwrap();
    u64::from_le_bytes(bytes)
}

#[tokio::test]
async fn a_secret_is_sealed_to_the_guests_key_opened_by_it_and_found_nowhere_else() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let owner = sandbox.owner().await;
    let values = Arc::new(Values::default());
    let market = owner.market(&[&bidder]).with_vault(values.clone());
    let mut contract = contract(window(3, false), None, None);
    contract.spec.secrets = vec![SecretRef {
        name: "db-password".into(),
        keychain_entry: ENTRY.into(),
        contracts: vec![],
        version: 1,
    }];

    // No value yet: deployed, waiting, and saying which secret lacks what.
    drive(&market, &mut contract, Duration::from_secs(90), |status| {
        status.phase == ComputePhase::Deployed
            && status.secrets.guest_key.is_some()
            && status.secrets.problem.is_some()
    })
    .await;
    let problem = contract.status.secrets.problem.clone().unwrap();
    assert!(
        problem.contains("db-password: the keychain holds no value"),
        "{problem}"
    );
    assert_eq!(contract.status.waiting_for(), Some(Waiting::Secrets));

    let first = fresh_value("first");
    values.set(ENTRY, &first);
    drive(&market, &mut contract, Duration::from_secs(30), |status| {
        status.secrets.pending == 0
    })
    .await;
    let receipt = contract.status.receipt.clone().unwrap();
    let guest = bidder.state().guest(&receipt.uri).cloned().unwrap();
    let key = contract.status.secrets.guest_key.clone().unwrap();
    assert_eq!(
        Some(&key.recipient),
        guest.key.as_ref(),
        "the key the guest published"
    );
    assert!(key.event.starts_with(&format!("at://{}/", bidder.account)));
    let opened = |version: i64, value: &[u8]| Opened {
        name: "db-password".into(),
        version,
        sha256: sha256(value),
    };
    assert_eq!(
        guest.opened,
        vec![opened(1, &first)],
        "the guest opened exactly the value"
    );
    let delivery = &contract.status.secrets.delivered[0];
    assert_eq!((delivery.version, &delivery.recipient), (1, &key.recipient));
    assert_eq!(
        contract.status.waiting_for(),
        None,
        "nothing left to wait for"
    );
    assert_eq!(contract.status.secrets.problem, None);

    // A rotation: a new value, its version counted up, sealed and delivered afresh.
    let second = fresh_value("second");
    values.set(ENTRY, &second);
    contract.spec.secrets[0].version = 2;
    drive(&market, &mut contract, Duration::from_secs(30), |status| {
        status
            .secrets
            .delivered
            .iter()
            .any(|delivery| delivery.version == 2)
    })
    .await;
    assert_eq!(contract.status.secrets.pending, 0);
    let guest = bidder.state().guest(&receipt.uri).cloned().unwrap();
    assert_eq!(guest.opened, vec![opened(1, &first), opened(2, &second)]);
    assert_eq!(
        contract.status.secrets.delivered.len(),
        1,
        "the last delivery is kept"
    );

    let sealed_records = owner.records(sealed::NSID).await;
    assert_eq!(sealed_records.len(), 2, "one sealed record per delivery");
    assert_eq!(
        list_records(&sandbox.kit.identity, &bidder.account, guest_key::NSID)
            .await
            .len(),
        1
    );
    for repo in [owner.agent.did(), bidder.account.clone()] {
        let whole = sandbox.kit.pds.repo_bytes(&repo).await.unwrap();
        for value in [&first, &second] {
            assert!(
                !holds_bytes(&whole, value),
                "a value is in clear in {repo}'s repo"
            );
        }
    }
    let status = serde_json::to_vec(&contract.status).unwrap();
    assert!(!holds_bytes(&status, &first) && !holds_bytes(&status, &second));
}

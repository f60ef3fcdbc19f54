//! The session in the real Secret Service: written, read back, replaced, forgotten.

use swdesk_atproto::keychain::SessionStore;
use swdesk_atproto::oauth::{Account, DpopKey, Secret, StoredSession};
use url::Url;

use crate::support::keychain;

fn session(access: &str) -> StoredSession {
    StoredSession {
        account: Account {
            did: "did:plc:keychaintest".into(),
            handle: Some("keychain.test".into()),
            pds: Url::parse("http://localhost:2583").unwrap(),
            issuer: "http://localhost:2583".into(),
            granted_scope: "atproto".into(),
        },
        client_id: "http://localhost".into(),
        token_endpoint: Url::parse("http://localhost:2583/oauth/token").unwrap(),
        revocation_endpoint: None,
        access_token: Secret::new(access),
        refresh_token: Some(Secret::new("refresh")),
        expires_at: 1,
        dpop_key: StoredSession::encode_key(&DpopKey::generate()),
        generation: 0,
    }
}

#[test]
fn a_session_is_kept_replaced_and_forgotten_in_the_os_keychain() {
    let store = keychain("roundtrip");
    assert_eq!(store.load().unwrap(), None);
    let first = session("first");
    store.save(&first).unwrap();
    assert_eq!(store.load().unwrap(), Some(first));
    store.save(&session("second")).unwrap();
    assert_eq!(
        store.load().unwrap().unwrap().access_token.expose(),
        "second"
    );
    store.delete().unwrap();
    assert_eq!(store.load().unwrap(), None);
    store.delete().expect("forgetting nothing succeeds");
}

#[test]
fn two_networks_keep_separate_sessions() {
    let sandbox = keychain("network-a");
    let public = keychain("network-b");
    sandbox.save(&session("a")).unwrap();
    assert_eq!(public.load().unwrap(), None);
    sandbox.delete().unwrap();
}

#[test]
fn an_accounts_attestation_key_is_made_once_and_kept_in_the_os_keychain() {
    let store = keychain("attestation");
    let first = store
        .keychain()
        .attestation_key("did:plc:attestation-a")
        .unwrap();
    let again = store
        .keychain()
        .attestation_key("did:plc:attestation-a")
        .unwrap();
    assert_eq!(
        first.did_key(),
        again.did_key(),
        "the same key is read back"
    );
    let other = store
        .keychain()
        .attestation_key("did:plc:attestation-b")
        .unwrap();
    assert_ne!(first.did_key(), other.did_key(), "each account has its own");
}

#[test]
fn a_secret_value_is_kept_per_account_read_replaced_and_forgotten_in_the_os_keychain() {
    use swdesk_kernel::secret::{SecretValue, SecretVault};

    let store = keychain("secret-values");
    let mine = store.keychain().secret_values("did:plc:secrets-a");
    let theirs = store.keychain().secret_values("did:plc:secrets-b");
    let entry = "secret/Infra/web/db-password";
    assert_eq!(mine.read(entry).unwrap(), None);
    mine.write(entry, &SecretValue::new(b"first".to_vec()))
        .unwrap();
    assert_eq!(mine.read(entry).unwrap().unwrap().expose(), b"first");
    assert_eq!(
        theirs.read(entry).unwrap(),
        None,
        "each account has its own"
    );
    mine.write(entry, &SecretValue::new(b"second".to_vec()))
        .unwrap();
    assert_eq!(mine.read(entry).unwrap().unwrap().expose(), b"second");
    mine.remove(entry).unwrap();
    assert_eq!(mine.read(entry).unwrap(), None);
    mine.remove(entry).expect("forgetting nothing succeeds");
}

#[test]
fn two_profiles_keep_separate_sessions_and_an_earlier_versions_entry_moves_into_the_first() {
    use swdesk_atproto::keychain::Keychain;

    use crate::support::{data_dir, open_keychain};

    let keychain: Keychain = open_keychain("profiles");
    let (first, second) = (
        keychain.session_of(&data_dir("profile-a")),
        keychain.session_of(&data_dir("profile-b")),
    );
    let legacy = legacy_entry("profiles");
    legacy
        .set_password(&serde_json::to_string(&session("signed-in-before")).unwrap())
        .unwrap();

    let moved = first.load().unwrap().expect("the earlier entry moved in");
    assert_eq!(moved.access_token.expose(), "signed-in-before");
    assert!(
        matches!(legacy.get_password(), Err(keyring_core::Error::NoEntry)),
        "the earlier entry is gone once moved"
    );
    assert_eq!(first.load().unwrap(), Some(moved), "and stays moved");
    assert_eq!(second.load().unwrap(), None, "moved once, into one profile");

    let mut theirs = session("second-profile");
    theirs.account.did = "did:plc:another".into();
    second.save(&theirs).unwrap();
    assert_eq!(
        first.load().unwrap().unwrap().access_token.expose(),
        "signed-in-before"
    );
    first.delete().unwrap();
    assert_eq!(first.load().unwrap(), None);
    assert_eq!(
        second.load().unwrap(),
        Some(theirs),
        "the other profile keeps its own"
    );
    second.delete().unwrap();
}

#[test]
fn two_profiles_starting_at_once_move_an_earlier_versions_entry_into_one_only() {
    use std::sync::Barrier;

    use swdesk_atproto::keychain::Keychain;

    use crate::support::{data_dir, open_keychain};

    let keychain: Keychain = open_keychain("migration-race");
    let legacy = legacy_entry("migration-race");
    for round in 0..8 {
        legacy
            .set_password(&serde_json::to_string(&session("signed-in-before")).unwrap())
            .unwrap();
        let profiles = [
            keychain.session_of(&data_dir(&format!("race-{round}-a"))),
            keychain.session_of(&data_dir(&format!("race-{round}-b"))),
        ];
        let start = Barrier::new(2);
        let loaded: Vec<bool> = std::thread::scope(|scope| {
            let runs: Vec<_> = profiles
                .iter()
                .map(|profile| {
                    scope.spawn(|| {
                        start.wait();
                        profile.load().unwrap().is_some()
                    })
                })
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        assert_eq!(
            loaded.iter().filter(|signed_in| **signed_in).count(),
            1,
            "round {round}: the earlier session moved into exactly one profile ({loaded:?})"
        );
        for profile in &profiles {
            profile.delete().unwrap();
        }
    }
}

/// The one session entry per network that earlier versions kept.
fn legacy_entry(test: &str) -> keyring_core::Entry {
    let store: std::sync::Arc<keyring_core::CredentialStore> =
        dbus_secret_service_keyring_store::Store::new().unwrap();
    let service = format!("computer.socialweb.desk/test-{test}-{}", std::process::id());
    keyring_core::Entry::new_in_store(&store, &service, "session").unwrap()
}

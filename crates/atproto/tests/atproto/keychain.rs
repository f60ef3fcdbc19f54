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
    let first = store.attestation_key("did:plc:attestation-a").unwrap();
    let again = store.attestation_key("did:plc:attestation-a").unwrap();
    assert_eq!(
        first.did_key(),
        again.did_key(),
        "the same key is read back"
    );
    let other = store.attestation_key("did:plc:attestation-b").unwrap();
    assert_ne!(first.did_key(), other.did_key(), "each account has its own");
}

#[test]
fn a_secret_value_is_kept_per_account_read_replaced_and_forgotten_in_the_os_keychain() {
    use swdesk_core::secret::{SecretValue, SecretVault};

    let store = keychain("secret-values");
    let mine = store.secret_values("did:plc:secrets-a");
    let theirs = store.secret_values("did:plc:secrets-b");
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

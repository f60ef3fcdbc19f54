//! The market key in the owner's DID document, for real: the sandbox's PDS mails the code to
//! its mailbox, the test reads it there as the owner reads their inbox, and the update goes
//! through the PDS to the sandbox's PLC directory, whose document is then read back.

use serde_json::Value;
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::{DidDocument, Resolver};
use swdesk_atproto::oauth::{Secret, scope};
use swdesk_atproto::plc::{self, KeyChange, Listing, PlcError};
use swdesk_testkit::{Owner, Sandbox};

/// A fresh owner who granted `identity:*`, on the sandbox, with their DID document as it was
/// before the test changed anything.
struct Scene {
    sandbox: Sandbox,
    owner: Owner,
    did: String,
    resolver: Resolver,
    before: Value,
}

impl Scene {
    async fn new(prefix: &str) -> Self {
        let sandbox = Sandbox::start().await;
        let owner = sandbox.owner_asking(prefix, &[scope::IDENTITY]).await;
        let granted = owner.agent.account().granted_scope;
        assert!(
            scope::grants(&granted, scope::IDENTITY),
            "granted: {granted}"
        );
        let did = owner.account.did.clone();
        let resolver = sandbox.resolver_reaching(&[]);
        let before = raw_document(&sandbox, &did).await;
        Self {
            sandbox,
            owner,
            did,
            resolver,
            before,
        }
    }

    /// The owner's DID document as the PLC directory serves it now.
    async fn document(&self) -> Value {
        raw_document(&self.sandbox, &self.did).await
    }

    /// Asks the PDS for a code and reads it off the mail it sends (the `seen`-th).
    async fn mailed_code(&self, seen: usize) -> Secret {
        plc::request_signature(&self.owner.agent).await.unwrap();
        let mail = self.sandbox.next_mail(&self.owner.account, seen).await;
        Secret::new(mail.code().expect("the mail carries a code"))
    }

    async fn publish(&self, code: &Secret, change: &KeyChange) -> Result<DidDocument, PlcError> {
        plc::publish(&self.owner.agent, &self.resolver, code, change).await
    }

    async fn listing(&self, key: &str) -> Listing {
        plc::live_listing(&self.resolver, &self.did, key)
            .await
            .unwrap()
    }
}

/// The DID document as the PLC directory serves it, untouched by our reading of it.
async fn raw_document(sandbox: &Sandbox, did: &str) -> Value {
    let url = format!("{}/{did}", sandbox.pds.info().plc_url);
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// The verification method with fragment `fragment` in a raw document.
fn method<'a>(document: &'a Value, fragment: &str) -> Option<&'a Value> {
    let id = format!("#{fragment}");
    let full = format!("{}#{fragment}", document["id"].as_str().unwrap_or_default());
    document["verificationMethod"]
        .as_array()?
        .iter()
        .find(|method| method["id"] == id.as_str() || method["id"] == full.as_str())
}

fn market_key() -> String {
    AttestationKey::generate(Curve::P256).did_key()
}

/// Everything but the market key is as it was: the repo signing key, the handles, the services.
fn assert_kept(before: &Value, after: &Value) {
    assert_eq!(method(after, "atproto"), method(before, "atproto"));
    assert_eq!(after["alsoKnownAs"], before["alsoKnownAs"]);
    assert_eq!(after["service"], before["service"]);
}

#[tokio::test]
async fn the_market_key_is_listed_in_the_did_document_only_with_the_mailed_code() {
    let scene = Scene::new("plc-publish").await;
    let key = market_key();
    assert_eq!(scene.listing(&key).await, Listing::Absent);

    let code = scene.mailed_code(0).await;
    let publish = KeyChange::Publish(key.clone());
    let wrong = scene.publish(&Secret::new("AAAAA-BBBBB"), &publish).await;
    assert_eq!(wrong.unwrap_err(), PlcError::WrongToken { expired: false });
    assert_eq!(scene.document().await, scene.before, "nothing changed");

    let document = scene.publish(&code, &publish).await.unwrap();
    assert_eq!(plc::listing(&document, &key), Listing::Listed);
    let after = scene.document().await;
    assert_kept(&scene.before, &after);
    let published = method(&after, plc::ATTESTATION_FRAGMENT).expect("#attestation is listed");
    assert_eq!(published["controller"], scene.did.as_str());
    assert_eq!(scene.listing(&key).await, Listing::Listed);

    let again = scene.publish(&code, &KeyChange::Remove).await;
    assert_eq!(again.unwrap_err(), PlcError::WrongToken { expired: false });
    assert_eq!(scene.document().await, after, "a used code does nothing");
}

#[tokio::test]
async fn the_market_key_is_replaced_then_removed_keeping_the_rest() {
    let scene = Scene::new("plc-replace").await;
    let (lost, new) = (market_key(), market_key());
    let changes = [
        KeyChange::Publish(lost.clone()),
        KeyChange::Publish(new.clone()),
    ];
    for (seen, change) in changes.iter().enumerate() {
        let code = scene.mailed_code(seen).await;
        scene.publish(&code, change).await.unwrap();
    }
    assert_eq!(scene.listing(&lost).await, Listing::Other(new.clone()));
    assert_kept(&scene.before, &scene.document().await);

    let code = scene.mailed_code(2).await;
    let document = scene.publish(&code, &KeyChange::Remove).await.unwrap();
    assert_eq!(plc::listing(&document, &new), Listing::Absent);
    assert_eq!(scene.document().await, scene.before);
}

#[tokio::test]
async fn without_the_identity_scope_the_pds_sends_no_code() {
    let sandbox = Sandbox::start().await;
    let owner = sandbox.owner("plc-noscope").await;
    let refused = plc::request_signature(&owner.agent).await.unwrap_err();
    assert!(
        matches!(&refused, PlcError::Xrpc(error) if error.to_string().contains("identity")),
        "{refused}"
    );
    let mails = sandbox.pds.mails_to(&owner.account.email()).unwrap();
    assert_eq!(mails, Vec::new());
}

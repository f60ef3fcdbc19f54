//! The requester against the public market's bidder in its strict mode (`BIND_KEYS=1`): it
//! trusts our RFP, accept and events only when the signing key is listed in the DID document
//! of the signature's issuer. The owner publishes the market key in their `did:plc` document
//! through the PLC flow first (the code read from the sandbox's mailbox), because the peer
//! keeps every DID document it read for good; then our records name the owner as issuer and
//! the whole flow runs. Without the key in the document the bidder refuses the RFP, and the
//! contract says so. Our own sandbox bidder's strict mode (`Behaviour::bind_keys`) holds our
//! requester to the same rule.

use std::time::Duration;

use serde_json::Value;
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::oauth::{Secret, scope};
use swdesk_atproto::plc::{self, KeyChange, Listing};
use swdesk_auction::compute::{Answer, ComputePhase};
use swdesk_devnet::BidderMode;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{accept, rfp, submit_rfp};

use crate::public_peer::{World, deployed_and_released};
use swdesk_market::{OfferingSource, RequesterMarket};
use swdesk_sandbox_bidder::{Behaviour, RunningBidder};

use crate::support::{
    Sandbox, TestMarket, contract, deployed, drive, finished, list_records, quick_settings,
    resolver, sandbox, window,
};

/// An owner who granted `identity:*` and whose live DID document lists `key` under
/// `#attestation`, published with the code the PDS mailed them.
async fn owner_listing_key(sandbox: &Sandbox, key: &AttestationKey) -> swdesk_testkit::Owner {
    let kit = &sandbox.kit;
    let owner = kit.owner_asking("strict", &[scope::IDENTITY]).await;
    plc::request_signature(&owner.agent).await.unwrap();
    let mail = kit.next_mail(&owner.account, 0).await;
    let code = Secret::new(mail.code().expect("the mail carries a code"));
    let resolver = kit.resolver_reaching(&[]);
    let publish = KeyChange::Publish(key.did_key());
    plc::publish(&owner.agent, &resolver, &code, &publish)
        .await
        .unwrap();
    let listing = plc::live_listing(&resolver, &owner.account.did, &key.did_key()).await;
    assert_eq!(listing.unwrap(), Listing::Listed);
    owner
}

/// The issuers named by the signatures of every record of `collection` in `did`'s repo (as
/// `listRecords` lists them: `{uri, cid, value}`).
async fn issuers(world: &World, did: &str, collection: &str) -> Vec<Option<String>> {
    let identity = &world.sandbox.kit.identity;
    let records = list_records(identity, did, collection).await;
    records
        .iter()
        .flat_map(|record| {
            let signatures = record["value"]["signatures"].as_array();
            signatures.cloned().unwrap_or_default()
        })
        .map(|signature| signature["issuer"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_bidder_deploys_and_releases_once_the_owners_document_lists_our_key() {
    let sandbox = sandbox().await;
    let key = AttestationKey::generate(Curve::P256);
    let owner = owner_listing_key(&sandbox, &key).await;
    let world = World::start(sandbox, BidderMode::BindKeys).await;
    deployed_and_released(&world, &owner.agent, &key).await;
    let did = owner.account.did.as_str();
    for collection in [rfp::NSID, accept::NSID] {
        let named = issuers(&world, did, collection).await;
        assert_eq!(named, vec![Some(did.to_owned())], "{collection}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_bidders_refusal_of_our_rfp_is_the_contracts_reason() {
    let world = World::start(sandbox().await, BidderMode::BindKeys).await;
    let owner = world.sandbox.owner().await;
    let market = world.market(&owner.agent, &owner.key);
    let bidder = world.peer.bidder_did.clone();
    let mut contract = contract(window(3, false), Some(vec![bidder.clone()]), None);
    drive(&market, &mut contract, Duration::from_secs(60), finished).await;
    assert_eq!(contract.status.phase, ComputePhase::Failed);
    let message = contract.status.message.unwrap_or_default();
    let refused = format!(
        "{bidder} refused the RFP: {} answered 400",
        submit_rfp::NSID
    );
    assert!(message.contains(&refused), "{message}");
    assert!(
        message.contains("record is missing a valid badge.blue signature"),
        "{message}"
    );
    let kept = contract
        .status
        .asked
        .iter()
        .find(|asked| asked.bidder == bidder);
    assert!(
        matches!(
            kept.map(|asked| &asked.answer),
            Some(Answer::Refused {
                rfp: true,
                signature_untrusted: true,
                ..
            })
        ),
        "the refusal is kept as one of our signature: {:?}",
        contract.status.asked
    );
    let rfps: Vec<Value> = owner.records(rfp::NSID).await;
    assert_eq!(rfps.len(), 1, "one RFP, refused");
    let signature = &rfps[0]["value"]["signatures"][0];
    assert_eq!(signature.get("issuer"), None, "no document lists the key");
}

/// The market of `owner`, signing with `key`, asking `bidder` only.
fn market_asking(
    sandbox: &Sandbox,
    owner: &swdesk_testkit::Owner,
    key: &AttestationKey,
    bidder: &RunningBidder,
) -> TestMarket {
    RequesterMarket::connect(
        owner.agent.clone(),
        resolver(&sandbox.kit.identity, &[bidder]),
        OfferingSource::Repos(vec![bidder.account.clone()]),
        key.clone(),
    )
    .with_settings(quick_settings())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_strict_sandbox_bidder_takes_our_rfp_only_once_the_owners_document_lists_our_key() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::strict()).await;
    let published_only = sandbox.kit.owner("published").await;
    let key = AttestationKey::generate(Curve::P256);
    let market = market_asking(&sandbox, &published_only, &key, &bidder);
    let asked = Some(vec![bidder.account.clone()]);
    let mut refused = contract(window(2, false), asked.clone(), None);
    drive(&market, &mut refused, Duration::from_secs(60), finished).await;
    let message = refused.status.message.unwrap_or_default();
    assert!(
        message.contains("binds keys by DID documents only"),
        "{message}"
    );

    let key = AttestationKey::generate(Curve::P256);
    let listed = owner_listing_key(&sandbox, &key).await;
    let market = market_asking(&sandbox, &listed, &key, &bidder);
    let mut taken = contract(window(2, false), asked, None);
    drive(&market, &mut taken, Duration::from_secs(60), deployed).await;
    assert_eq!(
        taken.status.winner.as_deref(),
        Some(bidder.account.as_str())
    );
}

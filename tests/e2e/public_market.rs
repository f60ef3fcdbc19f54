//! A contract on the public market's own bidder (`publicdomainrelay/atproto-market`, run on
//! loopback by `swdesk_devnet::PublicMarketPeer` against the sandbox's PLC), from the window:
//! the sandbox line names the bidder and the peer's dispatcher as the `*.localhost` ingress,
//! requesting the contract runs a real auction with a stranger's implementation, the contract
//! reaches Deployed on the bidder's `vm.onNetwork` (read from its repo) with the deployment in
//! sync, and one click releases it (in sync again): the public bidder logs our `vm.delete` and
//! destroys its guest. The receipt is marked unproven (the peer's PDS serves no CAR proof) and
//! its check names the binding that held (a key the bidder's DID document lists); the records
//! the bidder linked are shown raw, its `compute.config.wif.simple` (no lexicon here) included.

use std::time::Duration;

use swdesk_devnet::{BidderMode, SandboxPds};
use swdesk_tests::public_market::signed_in_window;

/// The bid window (3 s), the bidder's answers through its dispatcher and the guest's boot.
const MARKET_TIMEOUT: Duration = Duration::from_secs(120);

#[tokio::test]
async fn a_contract_runs_on_the_public_markets_own_bidder_and_one_click_releases_it()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, peer, _owner) =
        signed_in_window(&pds, "e2epub", "public-market", BidderMode::Default).await?;

    window
        .declare_and_deploy_vm("stranger", MARKET_TIMEOUT)
        .await?;
    let receipt = window
        .attr_of(
            "[data-contract='vm'] [data-testid='contract-receipt']",
            "data-value",
        )
        .await?
        .unwrap_or_default();
    assert!(
        receipt.starts_with(&format!(
            "at://{}/com.publicdomainrelay.temp.market.receipt/",
            peer.bidder_did
        )),
        "the public bidder won and its receipt verified: {receipt}"
    );
    assert_eq!(
        window
            .text_of("[data-contract='vm'] [data-testid='receipt-proof']")
            .await?,
        "unproven",
        "the public market's PDS serves no CAR proof, and the window marks its receipt so"
    );
    window
        .click("[data-contract='vm'] [data-testid='contract-proofs'] > summary")
        .await?;
    let check = window
        .text_of("[data-contract='vm'] [data-testid='receipt-check']")
        .await?;
    assert!(
        check.contains("DID document lists"),
        "the receipt's signing key is bound the public implementation's way, and the window \
         says so: {check}"
    );
    window
        .wait_for_exact_text("[data-testid='detail-sync']", "In sync", MARKET_TIMEOUT)
        .await?;
    window
        .click("[data-contract='vm'] [data-testid='linked-records'] summary")
        .await?;
    let linked = window
        .text_of("[data-contract='vm'] [data-testid='linked-records']")
        .await?;
    assert!(
        linked.contains("com.publicdomainrelay.temp.compute.config.wif.simple")
            && linked.contains("no lexicon here: shown as received"),
        "the bid's config, of a collection the app has no lexicon for, is fetched and shown \
         raw, not refused: {linked}"
    );
    window.screenshot("deployed").await?;

    window.release_vm(MARKET_TIMEOUT).await?;
    window
        .wait_for_exact_text("[data-testid='detail-sync']", "In sync", MARKET_TIMEOUT)
        .await?;
    let destroyed = |line: &str| line.contains("\"submitEvent: VM destroyed\"");
    assert!(
        peer.bidder_logs(destroyed, Duration::from_secs(20)).await,
        "the public bidder received our vm.delete and destroyed its guest"
    );
    window.screenshot("released").await?;
    window.close().await?;
    Ok(())
}

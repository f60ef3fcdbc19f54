//! The public market's bidder in its strict mode (`BIND_KEYS=1`: it trusts a signature only
//! when the issuer's DID document lists the key), from the window. Before the owner publishes
//! the market key, the contract card gives the bidder its row with the refusal in its words,
//! and offers *Publish your market key*. Through that step, in the real window, the owner
//! grants the extra scope in the browser (told why first), has the PDS email a code (read here
//! off the sandbox's mailbox, as the owner reads their inbox), is told a wrong code is one and
//! changes nothing, types the right one, and sees the live DID document list the key; then a
//! contract is requested, the strict bidder wins, deploys, and one click releases it. The peer
//! keeps every DID document it read, so each test has its own owner and peer.

use std::time::Duration;

use swdesk_devnet::{Account, BidderMode, SandboxPds};
use swdesk_tests::public_market::signed_in_window;
use swdesk_tests::{AppWindow, BROWSER_TIMEOUT, STEP_TIMEOUT};

/// The bid window (3 s), the bidder's answers through its dispatcher and the guest's boot.
const MARKET_TIMEOUT: Duration = Duration::from_secs(120);

/// How long the sandbox PDS may take to mail the code.
const MAIL_TIMEOUT: Duration = Duration::from_secs(30);

const DIALOG: &str = "[data-testid='market-key-dialog']";

/// The code in the `seen`-th mail the PDS sent `owner` (0: the first), once it arrived.
async fn mailed_code(pds: &SandboxPds, owner: &Account, seen: usize) -> anyhow::Result<String> {
    let deadline = std::time::Instant::now() + MAIL_TIMEOUT;
    loop {
        let mails = pds.mails_to(&owner.email())?;
        if let Some(mail) = mails.get(seen) {
            let code = mail
                .code()
                .ok_or_else(|| anyhow::anyhow!("no code in {mail:?}"))?;
            return Ok(code.to_owned());
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "no mail #{seen} to {} within {MAIL_TIMEOUT:?}",
            owner.email()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits until the dialog is at `step`.
async fn at_step(window: &AppWindow, step: &str, timeout: Duration) -> anyhow::Result<()> {
    window
        .wait_for(&format!("{DIALOG}[data-step='{step}']"), timeout)
        .await
        .map(drop)
}

/// The step from the account menu, by keyboard where the owner would use it: says why before
/// the browser opens, takes the focus and keeps it, refuses a wrong code changing nothing,
/// publishes with the mailed one and shows the live document listing the key.
async fn publish_in_window(
    window: &mut AppWindow,
    pds: &SandboxPds,
    owner: &Account,
) -> anyhow::Result<()> {
    window.click("[data-action='account-menu']").await?;
    let open = "[data-testid='account-menu'] [data-action='publish-market-key']";
    window.click(open).await?;
    at_step(window, "grant", STEP_TIMEOUT).await?;
    let why = window.text_of(DIALOG).await?;
    assert!(
        why.contains("identity document") && why.contains("code"),
        "why the extra grant is needed is said before the browser opens: {why}"
    );
    assert!(
        window.focus_is_in(DIALOG).await?,
        "the dialog takes the focus"
    );
    for backwards in [false, false, false, true, true, true] {
        window.press_tab(backwards).await?;
        assert!(window.focus_is_in(DIALOG).await?, "Tab stays in the dialog");
    }
    window.screenshot("why").await?;
    assert_eq!(pds.mails_to(&owner.email())?.len(), 0, "nothing mailed yet");

    window.click("[data-action='grant-identity']").await?;
    at_step(window, "email", BROWSER_TIMEOUT).await?;
    window.click("[data-action='email-code']").await?;
    at_step(window, "code", STEP_TIMEOUT).await?;
    let code = mailed_code(pds, owner, 0).await?;

    window
        .type_into("[data-testid='market-key-code']", "AAAAA-BBBBB")
        .await?;
    window.press_enter().await?;
    let refused = window
        .wait_for_text("[data-testid='market-key-error']", "not the code")
        .await?;
    assert!(refused.contains("Nothing changed"), "{refused}");
    at_step(window, "code", STEP_TIMEOUT).await?;
    window.screenshot("wrong-code").await?;

    window
        .type_into("[data-testid='market-key-code']", &code)
        .await?;
    window.click("[data-action='submit-code']").await?;
    window
        .wait_for(
            "[data-testid='market-key-result'][data-listing='listed']",
            STEP_TIMEOUT,
        )
        .await?;
    window.screenshot("published").await?;
    window.press_escape().await?;
    window.wait_for_gone(DIALOG, STEP_TIMEOUT).await?;
    assert!(
        window.focus_is_in(open).await?,
        "Escape closed the dialog alone and the focus went back to what opened it"
    );
    window.press_escape().await?;
    Ok(())
}

#[tokio::test]
async fn a_strict_bidders_refusal_has_its_row_and_the_card_offers_to_publish_the_key()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, peer, _owner) =
        signed_in_window(&pds, "e2estrict", "strict-refusal", BidderMode::BindKeys).await?;
    window.declare_and_request_vm("refused").await?;
    let row = format!(
        "[data-contract='vm'] [data-testid='asked-bidder'][data-bidder='{}'][data-answer='refused']",
        peer.bidder_did
    );
    window.wait_for(&row, MARKET_TIMEOUT).await?;
    let answer = window
        .text_of(&format!("{row} [data-testid='asked-answer']"))
        .await?;
    assert!(
        answer.contains("badge.blue signature") && !answer.contains('\n'),
        "the refusal in the bidder's words, one line: {answer}"
    );
    window
        .wait_for_exact_text(
            "[data-contract='vm'] [data-testid='contract-phase']",
            "Failed",
            MARKET_TIMEOUT,
        )
        .await?;
    let card = window.text_of("[data-contract='vm']").await?;
    assert!(
        card.contains("none bid") && card.contains("refused the RFP"),
        "\"none bid\" names why: {card}"
    );
    let offer =
        "[data-contract='vm'] [data-testid='market-key-offer'] [data-action='publish-market-key']";
    window.screenshot("refused").await?;
    window.click(offer).await?;
    at_step(&window, "grant", STEP_TIMEOUT).await?;
    window.press_escape().await?;
    window.wait_for_gone(DIALOG, STEP_TIMEOUT).await?;
    assert!(
        window.focus_is_in(offer).await?,
        "the focus is back on the offer"
    );
    window.close().await?;
    Ok(())
}

#[tokio::test]
async fn in_strict_mode_the_key_published_in_the_window_wins_the_bid_and_one_click_releases()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let (mut window, peer, owner) =
        signed_in_window(&pds, "e2estrict", "strict-publish", BidderMode::BindKeys).await?;
    publish_in_window(&mut window, &pds, &owner).await?;

    window
        .declare_and_deploy_vm("trusted", MARKET_TIMEOUT)
        .await?;
    let winner = format!(
        "[data-contract='vm'] [data-testid='asked-bidder'][data-bidder='{}'][data-answer='bid']",
        peer.bidder_did
    );
    window.wait_for(&winner, STEP_TIMEOUT).await?;
    let contract = window.text_of("[data-contract='vm']").await?;
    assert!(
        contract.contains(&format!(
            "at://{}/com.publicdomainrelay.temp.market.receipt/",
            peer.bidder_did
        )),
        "the strict bidder won and its receipt verified: {contract}"
    );
    window.screenshot("deployed").await?;
    window.release_vm(MARKET_TIMEOUT).await?;
    let destroyed = |line: &str| line.contains("\"submitEvent: VM destroyed\"");
    assert!(
        peer.bidder_logs(destroyed, Duration::from_secs(20)).await,
        "the strict bidder trusted our vm.delete and destroyed its guest"
    );
    window.screenshot("released").await?;
    window.close().await?;
    Ok(())
}

//! A contract on the market from the window, against the sandbox's real PDS and two sandbox
//! bidders, a free one and a paid one (`bids.x402` terms asking 0.35): requesting it runs a real
//! auction, the free bidder wins (this app does not pay) while the paid offer is shown with its
//! price, the contract reaches Deployed with its winner and receipt (opened in the owner's
//! browser, which shows the winner's receipt record; the receipt shown proven, with the key
//! binding that held), and one click releases it (the winner tears its guest down).

use std::time::Duration;

use serde_json::json;
use swdesk_devnet::SandboxPds;
use swdesk_sandbox_bidder::state::GuestPhase;
use swdesk_sandbox_bidder::{Behaviour, RunningBidder};
use swdesk_sandbox_peer::sandbox_identity;
use swdesk_testkit::bidder_config;
use swdesk_tests::desktop::BrowserPages;
use swdesk_tests::layout::LayoutProblems;
use swdesk_tests::{AppWindow, borrowed, sandbox_env, with_sandbox_field};

/// An auction takes the bid window (3 s here) and the guest's boot: about 10 s; generous under
/// load.
pub const MARKET_TIMEOUT: Duration = Duration::from_secs(90);

/// A sandbox bidder asking `cost` a guest (paid terms), or free terms when `None`.
pub async fn bidder(pds: &SandboxPds, cost: Option<&str>) -> anyhow::Result<RunningBidder> {
    let behaviour = Behaviour {
        cost: cost.map(str::to_owned),
        ..Behaviour::default()
    };
    let config = bidder_config(pds, &sandbox_identity(pds)?, "e2ebid", behaviour).await;
    Ok(swdesk_sandbox_bidder::start(config).await?)
}

/// `env` with the sandbox's bidders set to `bidders`: their accounts and services.
pub fn with_bidders(
    env: Vec<(&'static str, String)>,
    bidders: &[&RunningBidder],
) -> anyhow::Result<Vec<(&'static str, String)>> {
    let accounts: Vec<&str> = bidders.iter().map(|b| b.account.as_str()).collect();
    let services: Vec<&str> = bidders.iter().map(|b| b.did.as_str()).collect();
    let env = with_sandbox_field(env, "bidderDids", json!(accounts))?;
    with_sandbox_field(env, "bidderServices", json!(services))
}

#[tokio::test]
async fn requesting_a_contract_runs_an_auction_the_free_bidder_wins_and_one_click_releases_it()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let owner = pds.create_account("e2emkt").await?;
    let (paid, free) = (bidder(&pds, Some("0.35")).await?, bidder(&pds, None).await?);
    let mut env = with_bidders(sandbox_env(&pds, &owner)?, &[&paid, &free])?;
    let pages = BrowserPages::new("market");
    env.push(pages.env());
    let mut window = AppWindow::open_with_env("market", &borrowed(&env)).await?;
    window.sign_in().await?;

    window
        .declare_and_deploy_vm("rented", MARKET_TIMEOUT)
        .await?;
    window
        .wait_for_exact_text("[data-testid='detail-sync']", "In sync", MARKET_TIMEOUT)
        .await?;
    let winner = "[data-contract='vm'] [data-testid='contract-winner'] [data-did]";
    assert_eq!(
        window.attr_of(winner, "data-did").await?.as_deref(),
        Some(free.account.as_str()),
        "the free bidder wins"
    );
    names_before_identifiers(&window, &free.account).await?;
    let bids = window
        .text_of("[data-contract='vm'] [data-testid='contract-bids']")
        .await?;
    assert!(
        bids.contains("0.35") && bids.contains("free"),
        "both bids are shown, the paid one with its price: {bids}"
    );
    assert!(
        bids.contains("@e2ebid") && !bids.contains("did:plc:"),
        "the bidders are shown by handle, their DIDs on hover: {bids}"
    );
    assert_eq!(
        window
            .text_of("[data-contract='vm'] [data-testid='receipt-proof']")
            .await?,
        "proven",
        "the receipt came with its repo's signed commit, checked (said on the folded proofs)"
    );
    proofs_unfold_with_the_receipt_short_and_copied_by_keyboard(&window, &free.account).await?;
    // The card, its proofs open, holds at 1,024 and 1,440 px.
    let mut problems = LayoutProblems::default();
    window
        .check_layout_at_each_size("deployed card", &mut problems)
        .await?;
    problems.assert_none()?;
    let check = window
        .text_of("[data-contract='vm'] [data-testid='receipt-check']")
        .await?;
    assert!(
        check.contains("signed with a key the author's repo publishes"),
        "the window names the key binding that held: {check}"
    );
    assert_eq!(paid.state().bids.len(), 1, "the paid bidder bid");
    assert_eq!(paid.state().guests.len(), 0, "the paid bidder runs nothing");
    assert_eq!(free.state().guests.len(), 1);
    window.screenshot("deployed").await?;

    let link = window
        .text_of("[data-contract='vm'] [data-testid='receipt-url']")
        .await?;
    window
        .click("[data-contract='vm'] [data-action='open-receipt']")
        .await?;
    // The browser goes to the winner's PDS only once the owner confirmed its host.
    let host = url::Url::parse(&link)?
        .host_str()
        .unwrap_or_default()
        .to_owned();
    window
        .wait_for_text(
            "[data-testid='confirm-message']",
            &format!("This opens {host}"),
        )
        .await?;
    window
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    let page = pages.wait_for(&link, MARKET_TIMEOUT).await?;
    assert_eq!(
        page.status,
        Some(200),
        "the receipt's PDS serves it: {page:?}"
    );
    assert!(
        page.text
            .contains("com.publicdomainrelay.temp.market.receipt")
            && page.text.contains(&free.account),
        "the browser shows the winner's receipt record: {}",
        page.text
    );

    window.release_vm(MARKET_TIMEOUT).await?;
    window
        .wait_for_exact_text("[data-testid='detail-sync']", "In sync", MARKET_TIMEOUT)
        .await?;
    assert_eq!(
        free.state().guests[0].phase,
        GuestPhase::TornDown,
        "the winner tore its guest down"
    );
    window
        .wait_for_text("[data-testid='notice']", "A contract was released")
        .await?;
    window.screenshot("released").await?;
    window.close().await?;
    free.stop().await;
    paid.stop().await;
    Ok(())
}

/// The card leads with what the owner needs, in this order: the phase, where the guest runs,
/// the winner by handle (its DID short beside it), the price and since when; the proofs come
/// after, folded.
async fn names_before_identifiers(window: &AppWindow, winner: &str) -> anyhow::Result<()> {
    let card = "[data-contract='vm']";
    let lead = window
        .text_of(&format!("{card} [data-testid='contract-lead']"))
        .await?;
    assert!(
        lead.starts_with("On the network at 192.0.2.") && lead.contains("Won by @e2ebid"),
        "the lead says where it runs and who won, by handle: {lead}"
    );
    assert!(
        !lead.contains(winner) && lead.contains("did:plc:") && lead.contains('…'),
        "the winner's DID is only a short secondary detail: {lead}"
    );
    assert!(
        lead.contains("free") && lead.contains("since "),
        "the price and since when: {lead}"
    );
    let order = window
        .run_script(
            "const done = arguments[arguments.length - 1]; \
             const card = document.querySelector(arguments[0]); \
             const ids = Array.from(card.querySelectorAll('[data-testid]'), (e) => e.dataset.testid); \
             done(ids.filter((id) => arguments[1].includes(id)));",
            vec![
                serde_json::json!(card),
                serde_json::json!(CARD_ORDER),
            ],
            Duration::from_secs(5),
        )
        .await?;
    assert_eq!(order, serde_json::json!(CARD_ORDER), "the card's order");
    assert_eq!(
        window
            .attr_of(&format!("{card} [data-testid='contract-proofs']"), "open")
            .await?,
        None,
        "the proofs are folded"
    );
    Ok(())
}

/// What a Deployed card shows, in the order it shows it.
const CARD_ORDER: [&str; 7] = [
    "contract-phase",
    "contract-where",
    "contract-winner",
    "contract-price",
    "contract-since",
    "contract-bids",
    "contract-proofs",
];

/// Unfolded, the proofs show the receipt's URI short, whole in its tooltip and behind its
/// copy button, which the keyboard reaches and which says "Copied" (announced too).
async fn proofs_unfold_with_the_receipt_short_and_copied_by_keyboard(
    window: &AppWindow,
    winner: &str,
) -> anyhow::Result<()> {
    let receipt = "[data-contract='vm'] [data-testid='contract-receipt']";
    window
        .click("[data-contract='vm'] [data-testid='contract-proofs'] > summary")
        .await?;
    let whole = window
        .attr_of(receipt, "data-value")
        .await?
        .unwrap_or_default();
    assert!(
        whole.starts_with(&format!(
            "at://{winner}/com.publicdomainrelay.temp.market.receipt/"
        )),
        "the receipt is the winner's: {whole}"
    );
    let short = window.text_of(&format!("{receipt} code")).await?;
    assert!(
        short.starts_with("at://did:plc:")
            && short.contains("/receipt/")
            && short.len() < whole.len(),
        "the receipt's URI is shown short: {short}"
    );
    assert_eq!(
        window.attr_of(&format!("{receipt} code"), "title").await?,
        Some(whole.clone()),
        "the whole URI on hover"
    );
    let copy = format!("{receipt} [data-action='copy-id']");
    assert_eq!(
        window.attr_of(&copy, "aria-label").await?.as_deref(),
        Some("Copy the receipt URI"),
        "the copy button is labelled"
    );
    window.find(&copy).await?.send_keys("\u{E007}").await?;
    window.wait_for_text(&copy, "Copied").await?;
    let announced = window
        .run_script(
            "const done = arguments[arguments.length - 1]; \
             done(document.querySelector(arguments[0]).textContent);",
            vec![serde_json::json!(format!("{receipt} [role='status']"))],
            Duration::from_secs(5),
        )
        .await?;
    assert_eq!(announced, serde_json::json!("Copied the receipt URI"));
    assert!(
        window.focus_is_in(&copy).await?,
        "the focus stays on the copy button"
    );
    Ok(())
}

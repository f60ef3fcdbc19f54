//! The sandbox bidder as a process, for `cargo xtask run`: it joins the sandbox PDS named by
//! `SWDESK_SANDBOX_PDS` (its ready line), makes itself an account there, listens on
//! `SWDESK_SANDBOX_BIDDER_PORT` (or any free port), asks `SWDESK_SANDBOX_BIDDER_COST` for a
//! guest (free terms when unset or `0`; paid `bids.x402` terms above zero, which a requester
//! that does not pay never accepts), boots guests in human-scale steps, and prints one JSON
//! ready line `{url, did, accountDid}` on stdout. It stops when stdin closes (the sandbox
//! peers' process protocol, `swdesk_sandbox_peer::process`).

use std::process::ExitCode;
use std::time::Duration;

use swdesk_devnet::SandboxPds;
use swdesk_sandbox_bidder::{BidderAccount, Config};
use swdesk_sandbox_peer::process::{self, RunResult};
use swdesk_sandbox_peer::sandbox_identity;

#[tokio::main]
async fn main() -> ExitCode {
    process::main("the sandbox bidder", run()).await
}

async fn run() -> RunResult {
    let pds = SandboxPds::from_env_or_start().await?;
    let account = BidderAccount::create(&pds, "bidder").await?;
    let mut config = Config::new(sandbox_identity(&pds)?, account);
    config.port = process::env_parse("SWDESK_SANDBOX_BIDDER_PORT").unwrap_or(0);
    config.behaviour.cost = std::env::var("SWDESK_SANDBOX_BIDDER_COST").ok();
    config.boot_step = Duration::from_secs(3);
    let bidder = swdesk_sandbox_bidder::start(config).await?;
    let ready =
        serde_json::json!({"url": bidder.url, "did": bidder.did, "accountDid": bidder.account});
    process::announce_ready(&ready)?;
    process::until_stdin_closes().await;
    bidder.stop().await;
    pds.stop().await?;
    Ok(())
}

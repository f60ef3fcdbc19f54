//! The sandbox bidder as a process, for `cargo xtask run`: it joins the sandbox PDS named by
//! `SWDESK_SANDBOX_PDS` (its ready line), makes itself an account there, listens on
//! `SWDESK_SANDBOX_BIDDER_PORT` (or any free port), asks `SWDESK_SANDBOX_BIDDER_COST` for a
//! guest (free when unset), boots guests in human-scale steps, and prints one JSON ready line
//! `{url, did, accountDid}` on stdout. It stops when stdin closes.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use swdesk_atproto::identity::IdentityConfig;
use swdesk_atproto::oauth::Secret;
use swdesk_devnet::SandboxPds;
use swdesk_sandbox_bidder::{BidderAccount, Config};
use url::Url;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "the sandbox bidder failed");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let pds = SandboxPds::from_env_or_start().await?;
    let created = pds.create_account("bidder").await?;
    let pds_url = Url::parse(&pds.info().pds_url)?;
    let identity = IdentityConfig::sandbox(Url::parse(&pds.info().plc_url)?, pds_url.clone());
    let account = BidderAccount {
        pds_url,
        identifier: created.did,
        password: Secret::new(created.password),
    };
    let mut config = Config::new(identity, account);
    config.port = env_parse("SWDESK_SANDBOX_BIDDER_PORT").unwrap_or(0);
    config.behaviour.cost = std::env::var("SWDESK_SANDBOX_BIDDER_COST").ok();
    config.boot_step = Duration::from_secs(3);
    let bidder = swdesk_sandbox_bidder::start(config).await?;
    let ready =
        serde_json::json!({"url": bidder.url, "did": bidder.did, "accountDid": bidder.account});
    // The ready line is this process's protocol on stdout.
    writeln!(std::io::stdout(), "{ready}")?;
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink)
    })
    .await;
    bidder.stop().await;
    pds.stop().await?;
    Ok(())
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

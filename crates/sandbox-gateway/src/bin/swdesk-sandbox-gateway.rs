//! The sandbox gateway as a process, for `cargo xtask run`: it joins the sandbox PDS named by
//! `SWDESK_SANDBOX_PDS` (its ready line), makes itself an account there for its clusters'
//! Infra records, listens on `SWDESK_SANDBOX_GATEWAY_PORT` (or any free port) with
//! human-scale timings, and prints one JSON ready line `{url, did, accountDid}` on stdout.
//! It stops when stdin closes.

use std::io::Write as _;
use std::process::ExitCode;

use swdesk_atproto::identity::IdentityConfig;
use swdesk_atproto::oauth::Secret;
use swdesk_devnet::SandboxPds;
use swdesk_sandbox_gateway::{Config, GatewayAccount, Timings};
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
            tracing::error!(%error, "the sandbox gateway failed");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let pds = SandboxPds::from_env_or_start().await?;
    let account = pds.create_account("gateway").await?;
    let pds_url = Url::parse(&pds.info().pds_url)?;
    let identity = IdentityConfig::sandbox(Url::parse(&pds.info().plc_url)?, pds_url.clone());
    let account = GatewayAccount {
        pds_url,
        identifier: account.did,
        password: Secret::new(account.password),
    };
    let mut config = Config::new(identity, account, Timings::interactive());
    config.port = std::env::var("SWDESK_SANDBOX_GATEWAY_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let gateway = swdesk_sandbox_gateway::start(config).await?;
    let ready = serde_json::json!({"url": gateway.url, "did": gateway.did, "accountDid": gateway.account_did});
    // The ready line is this process's protocol on stdout.
    writeln!(std::io::stdout(), "{ready}")?;
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink)
    })
    .await;
    gateway.stop().await;
    pds.stop().await?;
    Ok(())
}

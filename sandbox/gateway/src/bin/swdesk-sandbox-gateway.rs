//! The sandbox gateway as a process, for `cargo xtask run`: it joins the sandbox PDS named by
//! `SWDESK_SANDBOX_PDS` (its ready line), makes itself an account there for its clusters'
//! Infra records, listens on `SWDESK_SANDBOX_GATEWAY_PORT` (or any free port) with
//! human-scale timings, and prints one JSON ready line `{url, did, accountDid}` on stdout.
//! It stops when stdin closes (the sandbox peers' process protocol, `swdesk_sandbox_peer::process`).

use std::process::ExitCode;

use swdesk_devnet::SandboxPds;
use swdesk_sandbox_gateway::{Config, GatewayAccount, Timings};
use swdesk_sandbox_peer::process::{self, RunResult};
use swdesk_sandbox_peer::sandbox_identity;

#[tokio::main]
async fn main() -> ExitCode {
    process::main("the sandbox gateway", run()).await
}

async fn run() -> RunResult {
    let pds = SandboxPds::from_env_or_start().await?;
    let account = GatewayAccount::create(&pds, "gateway").await?;
    let mut config = Config::new(sandbox_identity(&pds)?, account, Timings::interactive());
    config.port = process::env_parse("SWDESK_SANDBOX_GATEWAY_PORT").unwrap_or(0);
    let gateway = swdesk_sandbox_gateway::start(config).await?;
    let ready = serde_json::json!({"url": gateway.url, "did": gateway.did, "accountDid": gateway.account_did});
    process::announce_ready(&ready)?;
    process::until_stdin_closes().await;
    gateway.stop().await;
    pds.stop().await?;
    Ok(())
}

//! A window whose only bidder is the public market's own (`swdesk_devnet::PublicMarketPeer`: the
//! third-party implementation, run on loopback against the sandbox's PLC), for the suites that
//! trade with it (`public_market`, `strict_market`). The peer keeps every DID document it read,
//! so each test starts a peer and an owner of its own.

use serde_json::json;
use swdesk_devnet::{Account, BidderMode, PublicMarketPeer, SandboxPds};

use crate::{AppWindow, borrowed, sandbox_env, with_sandbox_field};

/// A window named `test_name`, signed in as a new owner (`prefix` names the account), on a
/// network whose only bidder is the public market's, started in `mode` with its logs in a
/// folder of this test's own under the system's temporary directory; the peer and the owner
/// with it.
pub async fn signed_in_window(
    pds: &SandboxPds,
    prefix: &str,
    test_name: &str,
    mode: BidderMode,
) -> anyhow::Result<(AppWindow, PublicMarketPeer, Account)> {
    let owner = pds.create_account(prefix).await?;
    let logs = std::env::temp_dir().join(format!("swdesk-e2e-{test_name}-{}", std::process::id()));
    std::fs::create_dir_all(&logs)?;
    let peer = PublicMarketPeer::start_in_mode(&pds.info().plc_url, &logs, mode).await?;
    let env = sandbox_env(pds, &owner)?;
    let env = with_sandbox_field(env, "bidderDids", json!([peer.bidder_did.clone()]))?;
    let env = with_sandbox_field(env, "marketIngressPort", json!(peer.dispatcher_port))?;
    let window = AppWindow::open_with_env(test_name, &borrowed(&env)).await?;
    window.sign_in().await?;
    Ok((window, peer, owner))
}

//! Clusters from the window, against the sandbox's real PDS and the sandbox gateway on
//! loopback: create a cluster and watch it become Ready live, see its nodes (each with its
//! contract as the gateway's node Infra record says, and that Infra followed read-only as a
//! deployment with the same contract cards and timeline; a node lost is drift, on the cluster
//! and on that deployment, until it rejoins), download a kubeconfig (refused at a path
//! outside `~/.kube`; the file: mode 0600, the server shown, a certificate valid for the
//! lifetime picked; shown again after a restart, and said to be gone once its file is), dry-run and
//! apply a Job, and follow it to Succeeded with its log; members by handle (the owner's row
//! offers no Revoke, and the api refuses a self-revoke), another member revoked after a
//! confirmation that names it; a kubeconfig that no longer works marks
//! its cluster's row and is removed in one click (and is told). At a start with the PDS and the
//! gateway down, the deployments, the clusters last seen live (with when they were seen) and
//! their nodes' contracts are shown, and the window catches up once both answer.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use swdesk_atproto::identity::IdentityConfig;
use swdesk_atproto::oauth::Secret;
use swdesk_devnet::SandboxPds;
use swdesk_devnet::pds::Account;
use swdesk_gateway::kubeconfig::Summary;
use swdesk_sandbox_gateway::{Config, GatewayAccount, RunningGateway, Timings};
use swdesk_testkit::kept::sandbox_kept_in;
use swdesk_tests::layout::LayoutProblems;
use swdesk_tests::{AppWindow, STEP_TIMEOUT, borrowed, sandbox_env, with_sandbox_field};
use url::Url;

/// The deployment `web` in the list, and in sync with its record.
const WEB: &str = "[data-testid='deployment-row'][data-name='web']";
const WEB_IN_SYNC: &str = "[data-testid='deployment-row'][data-name='web'][data-sync='inSync']";
const WEB_OFFLINE: &str = "[data-testid='deployment-row'][data-name='web'][data-sync='offline']";
/// How long the window may take to catch up once the PDS or the gateway answers again (their
/// clients back off up to half a minute).
const CATCH_UP: Duration = Duration::from_secs(60);

/// How long a new cluster may take to be Ready (its nodes through [`TIMINGS`]).
const READY: Duration = Duration::from_secs(20);

/// Slow enough to see each phase in the window, quick enough for a test.
const TIMINGS: Timings = Timings {
    initialize: Duration::from_secs(3),
    drain: Duration::from_secs(1),
    job_pending: Duration::from_secs(1),
    job_running: Duration::from_secs(2),
};

async fn gateway(pds: &SandboxPds) -> anyhow::Result<RunningGateway> {
    gateway_on(pds, 0, Vec::new()).await
}

/// A sandbox gateway on `port` (0: any free one; the same port gives the same `did:web`),
/// granting `members` on every cluster besides its owner.
async fn gateway_on(
    pds: &SandboxPds,
    port: u16,
    members: Vec<String>,
) -> anyhow::Result<RunningGateway> {
    let account = pds.create_account("e2egw").await?;
    let pds_url = Url::parse(&pds.info().pds_url)?;
    let identity = IdentityConfig::sandbox(Url::parse(&pds.info().plc_url)?, pds_url.clone());
    let account = GatewayAccount {
        pds_url,
        identifier: account.did,
        password: Secret::new(account.password),
    };
    let mut config = Config::new(identity, account, TIMINGS);
    config.port = port;
    config.members = members;
    Ok(swdesk_sandbox_gateway::start(config).await?)
}

#[tokio::test]
async fn a_cluster_becomes_ready_live_and_runs_a_job_with_a_downloaded_kubeconfig()
-> anyhow::Result<()> {
    let pds = SandboxPds::from_env_or_start().await?;
    let owner = pds.create_account("e2eclu").await?;
    // A team member the gateway grants on the owner's clusters: the one the owner may revoke.
    let mate = pds.create_account("e2emate").await?;
    let gateway = gateway_on(&pds, 0, vec![mate.did.clone()]).await?;
    let env = with_sandbox_field(
        sandbox_env(&pds, &owner)?,
        "gatewayDid",
        serde_json::Value::from(gateway.did.clone()),
    )?;
    let mut window = AppWindow::open_with_env("clusters", &borrowed(&env)).await?;
    window.sign_in().await?;
    window.press_command_key("2").await?;
    window.wait_for_text("main", "No clusters yet").await?;

    window
        .type_into("[data-testid='new-cluster-name']", "dev")
        .await?;
    window.click("[data-action='create-cluster']").await?;
    window
        .wait_for(
            "[data-testid='cluster-row'][data-name='dev'][data-phase='Initializing']",
            Duration::from_secs(10),
        )
        .await?;
    window
        .click("[data-testid='cluster-row'][data-name='dev']")
        .await?;
    window
        .wait_for_text(
            "[data-testid='cluster-detail']",
            "Waiting for the control plane",
        )
        .await?;
    window.screenshot("initializing").await?;
    window
        .wait_for(
            "[data-testid='cluster-row'][data-name='dev'][data-phase='Ready']",
            READY,
        )
        .await?;
    window.find("[data-testid='cluster-nodes'] li").await?;
    // The nodes as one Infra: the gateway's record, each node with its contract, agreeing.
    window
        .wait_for_text(
            "[data-testid='node-infra'] [data-node-contract='node-0'] [data-testid='node-contract-phase']",
            "Deployed",
        )
        .await?;
    let infra = window.text_of("[data-testid='node-infra']").await?;
    let record = window
        .attr_of("[data-testid='node-infra-uri']", "data-value")
        .await?
        .unwrap_or_default();
    assert!(
        record.contains("/computer.socialweb.infra/nodes-") && infra.contains("dev-node-1"),
        "the record (short, whole behind its copy button) and each node are shown: {record} {infra}"
    );
    assert!(
        window
            .find_all("[data-testid='node-infra-drift']")
            .await?
            .is_empty(),
        "claims and record agree"
    );
    let server = window.text_of("[data-testid='cluster-server']").await?;
    window.screenshot("ready-with-nodes").await?;
    nodes_open_as_a_read_only_deployment(&mut window).await?;
    a_lost_node_drifts_until_it_rejoins(&mut window, &gateway, &owner.did).await?;

    // A path the window names outside ~/.kube (not picked in the save dialog) is refused.
    let outside = window.home().join("kube").join("dev.yaml");
    window
        .type_into(
            "[data-testid='kubeconfig-path']",
            &outside.display().to_string(),
        )
        .await?;
    window.click("[data-action='download-kubeconfig']").await?;
    window
        .wait_for_text(
            "[data-testid='cluster-error']",
            "is not a place for a kubeconfig",
        )
        .await?;
    assert!(!outside.exists(), "nothing is written outside ~/.kube");
    let file = window.home().join(".kube").join("dev.yaml");
    window
        .type_into(
            "[data-testid='kubeconfig-path']",
            &file.display().to_string(),
        )
        .await?;
    window.click("[data-action='download-kubeconfig']").await?;
    window
        .wait_for_text("[data-testid='kubeconfig-saved']", "readable by you only")
        .await?;
    window.screenshot("kubeconfig").await?;
    let mode = std::fs::metadata(&file)?.permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the kubeconfig is readable by its owner only");
    let summary = Summary::parse(&std::fs::read_to_string(&file)?)?;
    assert_eq!(
        summary.server, server,
        "the file points at the server the window shows"
    );
    let lifetime = summary.not_after - summary.not_before;
    assert!(
        (28_800..=28_800 + 600).contains(&lifetime),
        "the default lifetime is 8 hours: {lifetime} s"
    );

    window.click("[data-action='dry-run']").await?;
    window
        .wait_for_text("[data-testid='dry-run']", "nothing was stored")
        .await?;
    window.screenshot("dry-run").await?;
    window.click("[data-action='apply']").await?;
    window
        .wait_for_text("[data-testid='applied']", "Applied Job")
        .await?;
    window
        .wait_for_exact_text(
            "[data-testid='job-phase']",
            "Succeeded",
            Duration::from_secs(30),
        )
        .await?;
    window
        .wait_for_text("[data-testid='job-log']", "hello from socialweb")
        .await?;
    window.screenshot("job-succeeded").await?;

    members_are_named_and_the_owner_cannot_revoke_themself(&mut window, &owner, &mate).await?;

    // A restart keeps the kubeconfig saved: its place and expiry are shown again; once its
    // file is gone, the window says so, with the fix.
    let mut window = window.restart().await?;
    let open_dev = async |window: &AppWindow| -> anyhow::Result<()> {
        window.press_command_key("2").await?;
        window
            .click("[data-testid='cluster-row'][data-name='dev']")
            .await
    };
    open_dev(&window).await?;
    window
        .wait_for_text(
            "[data-testid='kubeconfig-saved-path']",
            &file.display().to_string(),
        )
        .await?;
    window
        .wait_for_text("[data-testid='kubeconfig-expiry']", "Expires in 7 h")
        .await?;
    window.screenshot("kubeconfig-after-restart").await?;
    std::fs::remove_file(&file)?;
    window.press_command_key("1").await?;
    open_dev(&window).await?;
    window
        .wait_for_text("[data-testid='kubeconfig-problem']", "file is gone")
        .await?;
    // The drift shows on the cluster's row too, and clears once the owner removes the file.
    let drift = "[data-testid='cluster-row'][data-name='dev'] [data-testid='cluster-drift']";
    window.wait_for(drift, STEP_TIMEOUT).await?;
    // And it is told, as a contract's drift is, whichever section is open.
    window
        .wait_for_text(
            "[data-testid='notice'][data-name='dev']",
            "A kubeconfig stopped working",
        )
        .await?;
    window.screenshot("kubeconfig-drift").await?;
    window.click("[data-action='forget-kubeconfig']").await?;
    window
        .wait_for_gone("[data-testid='kubeconfig-problem']", STEP_TIMEOUT)
        .await?;
    window.wait_for_gone(drift, STEP_TIMEOUT).await?;
    window.close().await?;
    gateway.stop().await;
    Ok(())
}

/// The node Infra is followed like any deployment, read-only: each node's contract on the
/// contract card a deployment uses (phase, winner, its history as the desk saw it), the
/// timeline, and nothing that would change the gateway's record; then back to the cluster.
async fn nodes_open_as_a_read_only_deployment(window: &mut AppWindow) -> anyhow::Result<()> {
    // The sandbox gateway provides its simulated nodes itself: its account won each.
    let node = "[data-testid='node-infra'] [data-node-contract='node-0']";
    window.wait_for_text(node, "won by @e2egw").await?;
    window.click("[data-action='open-node-infra']").await?;
    window
        .wait_for_text("[data-testid='read-only']", "the gateway of cluster dev")
        .await?;
    let card = "[data-contract='node-0']";
    window
        .wait_for_text(
            &format!("{card} [data-testid='contract-phase']"),
            "Deployed",
        )
        .await?;
    let winner = window
        .text_of(&format!("{card} [data-testid='contract-winner']"))
        .await?;
    assert!(
        winner.contains("Won by @e2egw"),
        "the winner is shown by handle: {winner}"
    );
    window
        .find(&format!("{card} [data-testid='contract-history']"))
        .await?;
    window
        .wait_for_text("[data-testid='timeline']", "node-0")
        .await?;
    for action in ["edit-deployment", "end-deployment", "release", "request"] {
        assert!(
            window
                .find_all(&format!("[data-action='{action}']"))
                .await?
                .is_empty(),
            "a read-only deployment offers no {action}"
        );
    }
    let badge =
        "[data-testid='deployment-row'][data-name='dev-nodes'] [data-testid='row-read-only']";
    window.wait_for(badge, STEP_TIMEOUT).await?;
    window.screenshot("node-infra-as-deployment").await?;
    back_to_cluster_dev(window).await
}

/// Back from Deployments to the page of cluster `dev`, its nodes shown.
async fn back_to_cluster_dev(window: &AppWindow) -> anyhow::Result<()> {
    window.press_command_key("2").await?;
    window
        .click("[data-testid='cluster-row'][data-name='dev']")
        .await?;
    window
        .wait_for("[data-testid='node-infra']", STEP_TIMEOUT)
        .await?;
    Ok(())
}

/// A node lost (its claim gone, the Infra still holding its contract, deployed) is drift until
/// the node rejoins: on the cluster's page, and on the node Infra as a deployment (its row's
/// badge, the contract's card with the fix).
async fn a_lost_node_drifts_until_it_rejoins(
    window: &mut AppWindow,
    gateway: &RunningGateway,
    owner: &str,
) -> anyhow::Result<()> {
    let lost = |lost: bool| gateway.set_node_lost(owner, "dev", "node-1", lost);
    lost(true).map_err(anyhow::Error::msg)?;
    let drift = "[data-testid='node-infra-drift']";
    window
        .wait_for_text(drift, "the Infra holds contract node-1 that no node claims")
        .await?;
    window.press_command_key("1").await?;
    let row = "[data-testid='deployment-row'][data-name='dev-nodes']";
    let row_drift = format!("{row} [data-testid='row-drift']");
    window.wait_for(&row_drift, STEP_TIMEOUT).await?;
    window.click(row).await?;
    window
        .wait_for_text(
            "[data-contract='node-1'] [data-testid='contract-drift']",
            "no node of the cluster claims it",
        )
        .await?;
    window.screenshot("node-lost").await?;
    lost(false).map_err(anyhow::Error::msg)?;
    window.wait_for_gone(&row_drift, STEP_TIMEOUT).await?;
    back_to_cluster_dev(window).await?;
    window.wait_for_gone(drift, STEP_TIMEOUT).await?;
    Ok(())
}

/// What was seen before is shown at a start with the PDS and the gateway both down (the owner's
/// laptop offline): the deployments from the store, the clusters last seen live marked with when
/// they were seen; once both answer again, the window catches up without a reload.
#[tokio::test]
async fn what_was_seen_is_shown_at_a_start_with_the_pds_and_the_gateway_down_then_caught_up()
-> anyhow::Result<()> {
    let data = tempfile::tempdir()?;
    let (storage, pds) = sandbox_kept_in(data.path()).await;
    let owner = pds.create_account("e2ecache").await?;
    let gateway = gateway(&pds).await?;
    let port = gateway.url.port().unwrap_or_default();
    let env = with_sandbox_field(
        sandbox_env(&pds, &owner)?,
        "gatewayDid",
        serde_json::Value::from(gateway.did.clone()),
    )?;
    let window = AppWindow::open_with_env("offline-start", &borrowed(&env)).await?;
    window.sign_in().await?;
    window.wait_for_text("main", "No deployments yet").await?;
    window.press_command_key("n").await?;
    window.type_into("#decl-name", "web").await?;
    window.click("[data-action='save-declaration']").await?;
    window.wait_for(WEB_IN_SYNC, CATCH_UP).await?;
    window.press_command_key("2").await?;
    window.wait_for_text("main", "No clusters yet").await?;
    window
        .type_into("[data-testid='new-cluster-name']", "kept")
        .await?;
    window.click("[data-action='create-cluster']").await?;
    let kept = "[data-testid='cluster-row'][data-name='kept']";
    window
        .wait_for(&format!("{kept}[data-phase='Ready']"), READY)
        .await?;
    window.click(kept).await?;
    let node_infra = "[data-testid='node-infra'] [data-node-contract='node-0']";
    window.wait_for_text(node_infra, "Deployed").await?;

    gateway.stop().await;
    pds.stop().await?;
    let mut window = window.restart().await?;
    window.wait_for(WEB, STEP_TIMEOUT).await?;
    window.wait_for(WEB_OFFLINE, CATCH_UP).await?;
    window.screenshot("offline-start-deployments").await?;
    window.press_command_key("2").await?;
    window.wait_for(kept, STEP_TIMEOUT).await?;
    window
        .wait_for_text("[data-testid='clusters-as-of']", "as of ")
        .await?;
    // The nodes' contracts as the store kept them, with why they are not read afresh.
    window.click(kept).await?;
    window.wait_for_text(node_infra, "Deployed").await?;
    window
        .wait_for_text("[data-testid='node-infra-sync']", "cannot be read")
        .await?;
    window.screenshot("offline-start").await?;

    // Both answer again: the PDS with its data, a fresh gateway on the same address (it holds
    // no cluster).
    let pds = SandboxPds::start_with(&storage, &[]).await?;
    let gateway = gateway_on(&pds, port, Vec::new()).await?;
    window
        .wait_for_gone("[data-testid='clusters-as-of']", CATCH_UP)
        .await?;
    window.wait_for_gone(kept, STEP_TIMEOUT).await?;
    window.wait_for_text("main", "No clusters yet").await?;
    window.press_command_key("1").await?;
    window.wait_for(WEB_IN_SYNC, CATCH_UP).await?;
    // The cluster gone, so is the deployment that followed its nodes.
    window
        .wait_for_gone(
            "[data-testid='deployment-row'][data-name='kept-nodes']",
            STEP_TIMEOUT,
        )
        .await?;
    window.screenshot("caught-up").await?;
    window.close().await?;
    gateway.stop().await;
    // Waited for, so no process of this test outlives it.
    pds.stop().await?;
    Ok(())
}

/// The members are listed by handle, the DID short beside it; the owner's row is marked and
/// offers no Revoke (the api refuses it too, with why); revoking another member asks first,
/// naming it by handle, and cancelling changes nothing.
async fn members_are_named_and_the_owner_cannot_revoke_themself(
    window: &mut AppWindow,
    owner: &Account,
    mate: &Account,
) -> anyhow::Result<()> {
    let row = |did: &str| format!("[data-testid='cluster-member'][data-did='{did}']");
    let (own, other) = (row(&owner.did), row(&mate.did));
    window
        .wait_for_text(&format!("{own} [data-testid='member-state']"), "Active")
        .await?;
    window
        .wait_for_text(&own, &format!("@{}", owner.handle))
        .await?;
    window
        .wait_for_text(&other, &format!("@{}", mate.handle))
        .await?;
    let shown = window.text_of("[data-testid='cluster-members']").await?;
    assert!(
        !shown.contains(&owner.did) && !shown.contains(&mate.did),
        "members by handle, their DIDs short: {shown}"
    );
    assert_eq!(
        window.attr_of(&own, "data-you").await?.as_deref(),
        Some("true")
    );
    // The cluster's rows (nodes, their contracts, members) hold at 1,024 and 1,440 px.
    let mut problems = LayoutProblems::default();
    window
        .check_layout_at_each_size("cluster detail", &mut problems)
        .await?;
    problems.assert_none()?;
    assert!(
        window
            .find_all(&format!("{own} [data-action='revoke-member']"))
            .await?
            .is_empty(),
        "the owner is never offered to revoke themself"
    );
    let refused = window
        .run_script(
            "const done = arguments[arguments.length - 1]; \
             window.__TAURI_INTERNALS__.invoke('revoke_identity', { name: 'dev', did: arguments[0] }) \
               .then(() => done({ revoked: true }), (error) => done(error));",
            vec![serde_json::json!(owner.did)],
            STEP_TIMEOUT,
        )
        .await?;
    assert_eq!(
        refused["code"], "self-revoke",
        "the api refuses a self-revoke too: {refused}"
    );
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|message| message.contains("would lock you out")),
        "and says why: {refused}"
    );

    window
        .wait_for_text(&format!("{other} [data-testid='member-state']"), "Active")
        .await?;
    window
        .click(&format!("{other} [data-action='revoke-member']"))
        .await?;
    let asked = window.text_of("[data-testid='confirm-message']").await?;
    assert!(
        asked.starts_with(&format!("@{}", mate.handle))
            && asked.contains("kubeconfigs issued to it stop working"),
        "the confirmation names the member by handle and says what revoking does: {asked}"
    );
    window.screenshot("revoke-confirmation").await?;
    window
        .click("[data-testid='confirm'] [data-action='cancel']")
        .await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        window.find_all("[data-testid='confirm']").await?.is_empty(),
        "the confirmation closed"
    );
    assert!(
        window
            .text_of(&format!("{other} [data-testid='member-state']"))
            .await?
            .contains("Active"),
        "cancelled: the grant stands"
    );
    window
        .click(&format!("{other} [data-action='revoke-member']"))
        .await?;
    window
        .click("[data-testid='confirm'] [data-action='confirm']")
        .await?;
    window
        .wait_for_text(&format!("{other} [data-testid='member-state']"), "Revoked")
        .await?;
    assert!(
        window
            .text_of(&format!("{own} [data-testid='member-state']"))
            .await?
            .contains("Active"),
        "the owner's own grant stands"
    );
    window.screenshot("revoked").await?;
    Ok(())
}

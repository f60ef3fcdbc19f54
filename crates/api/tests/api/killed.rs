//! The app killed (SIGKILL) in the middle of a write, then started again on the same data
//! directory: nothing declared is lost, no record is doubled, the index holds each deployment
//! once, and a write the PDS carried out before the kill is not made a second time.
//!
//! The controller that is killed runs in a process of its own: this test binary started again
//! with `--ignored --exact killed::controller_process` and the set-up in [`CHILD_ENV`]; it
//! restores the session from the keychain and runs the account's controller until killed. The
//! fault proxy in front of the real PDS holds the write at the chosen step (before the PDS saw
//! it, or after the PDS carried it out and before its answer) and the test kills the process
//! there. The restarted controller runs in the test's own process.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use swdesk_api::controller::{AccountController, store_path};
use swdesk_api::{Network, SessionView, Sessions};
use swdesk_atproto::identity::Resolver;
use swdesk_core::infra::InfraSpec;
use swdesk_devnet::{FaultProxy, Hold};
use swdesk_kernel::timestamp::Clock as _;
use swdesk_store::Store;

use crate::faults::{PUT_RECORD, pds_behind_proxy};
use crate::session::{NoBrowser, network_of, profile_session, signed_in};
use crate::support::{
    declare_infra, description, edit_infra, eventually, in_sync, index_rkeys, infra, public_record,
    public_rkeys, quick_engine,
};

/// The environment variable that makes [`controller_process`] run, holding a [`ChildSetUp`].
const CHILD_ENV: &str = "SWDESK_KILLED_CHILD";

/// What the killed process needs: the sandbox, the keychain entry, the data directory.
#[derive(Debug, Serialize, Deserialize)]
struct ChildSetUp {
    ready_line: String,
    keychain_name: String,
    data_dir: std::path::PathBuf,
}

/// The controller process the kill tests start and kill; it does nothing unless started by
/// them (ignored in a plain run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the kill tests' controller process, started and killed by them"]
async fn controller_process() {
    let set_up: ChildSetUp =
        serde_json::from_str(&std::env::var(CHILD_ENV).expect("started by a kill test")).unwrap();
    let mut network = Network::sandbox(&set_up.ready_line).unwrap();
    network.keychain_name = set_up.keychain_name.clone();
    let keychain = profile_session(&set_up.keychain_name);
    let sessions =
        Sessions::with_store(network.clone(), Arc::new(NoBrowser), Ok(Arc::new(keychain)));
    assert!(matches!(sessions.current().await, SessionView::SignedIn(_)));
    let agent = sessions.agent().unwrap();
    let resolver = Resolver::new(network.oauth.identity.clone(), network.outbound.clone());
    let _controller = AccountController::start(&set_up.data_dir, agent, resolver, quick_engine())
        .await
        .unwrap();
    std::future::pending::<()>().await;
}

/// The kill test's world: the PDS behind its proxy, the owner signed in, the app's data dir.
struct World {
    _data: tempfile::TempDir,
    pds: swdesk_devnet::SandboxPds,
    proxy: FaultProxy,
    network: Network,
    agent: swdesk_atproto::Agent,
    resolver: Resolver,
    did: String,
    app_dir: std::path::PathBuf,
    holds: AtomicUsize,
}

impl World {
    async fn new(test: &str) -> Self {
        let data = tempfile::tempdir().unwrap();
        let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
        let (network, store) = network_of(&pds, test);
        let account = pds.create_account(test).await.unwrap();
        let (_signed, agent, resolver) = signed_in(&network, &store, &account).await;
        let app_dir = data.path().join("app");
        Self {
            _data: data,
            pds,
            proxy,
            network,
            agent,
            resolver,
            did: account.did,
            app_dir,
            holds: AtomicUsize::new(0),
        }
    }

    /// The account's store, opened beside no controller (none runs now).
    fn store(&self) -> Store {
        let path = store_path(&self.app_dir, &self.did);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        Store::open(path).unwrap()
    }

    /// Starts the controller process, waits until the proxy holds the write `body` names at
    /// `hold`, and kills the process there.
    async fn kill_at(&self, body: &str, hold: Hold) {
        let holds = self.holds.fetch_add(1, Ordering::SeqCst) + 1;
        self.proxy.hold_next(PUT_RECORD, body, hold);
        let mut child = self.controller_process();
        let held =
            tokio::time::timeout(std::time::Duration::from_secs(60), self.proxy.held(holds)).await;
        let _killed = child.kill();
        let _reaped = child.wait();
        held.expect("the controller process reached the held write");
    }

    fn controller_process(&self) -> Child {
        let set_up = ChildSetUp {
            ready_line: self.pds.ready_line(),
            keychain_name: self.network.keychain_name.clone(),
            data_dir: self.app_dir.clone(),
        };
        Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "killed::controller_process"])
            .env(CHILD_ENV, serde_json::to_string(&set_up).unwrap())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// The controller started again here; every deployment in sync before it is returned.
    async fn restart(&self, names: &[&str]) -> AccountController {
        let controller = AccountController::start(
            &self.app_dir,
            self.agent.clone(),
            self.resolver.clone(),
            quick_engine(),
        )
        .await
        .unwrap();
        eventually(
            "every deployment is in sync after the restart",
            async || {
                names
                    .iter()
                    .all(|name| in_sync(&controller, name))
                    .then_some(())
            },
        )
        .await;
        controller
    }

    /// The index's live entries once they are `expected`.
    async fn index_settles(&self, list: &str, expected: &[&str]) {
        let pds_url = self.pds.info().pds_url.clone();
        eventually("the index settles", async || {
            let index = public_record(&pds_url, &self.did, "self").await?;
            (index_rkeys(&index, list) == expected).then_some(())
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_at_each_step_of_a_write_the_restarted_app_loses_and_doubles_nothing() {
    let world = World::new("killed").await;
    let pds_url = world.pds.info().pds_url.clone();

    declare_infra(&world.store(), "web", "web v1");
    world.kill_at(r#""rkey":"web""#, Hold::BeforeThePds).await;
    assert_eq!(
        public_record(&pds_url, &world.did, "web").await,
        None,
        "never reached the PDS"
    );
    let controller = world.restart(&["web"]).await;
    world.index_settles("live", &["web"]).await;
    controller.stop().await;

    edit_infra(&world.store(), "web", |spec| {
        spec.description = Some("web v2".into());
    });
    world.kill_at(r#""rkey":"web""#, Hold::AfterThePds).await;
    let carried_out = public_record(&pds_url, &world.did, "web").await.unwrap();
    assert_eq!(
        carried_out["description"], "web v2",
        "the PDS carried out the write"
    );
    let controller = world.restart(&["web"]).await;
    assert_eq!(
        description(controller.store(), "web").as_deref(),
        Some("web v2"),
        "the declaration is kept"
    );
    controller.stop().await;

    declare_infra(&world.store(), "api", "api v1");
    world.kill_at(r#""rkey":"self""#, Hold::AfterThePds).await;
    let controller = world.restart(&["web", "api"]).await;
    world.index_settles("live", &["api", "web"]).await;

    controller.stop().await;
    let now = swdesk_controller::SystemClock.now();
    let web = swdesk_kernel::name::Name::parse("web").unwrap();
    world.store().delete::<InfraSpec>(&web, now).unwrap();
    world.kill_at(r#""rkey":"web""#, Hold::AfterThePds).await;
    let ended = public_record(&pds_url, &world.did, "web").await.unwrap();
    assert_eq!(
        ended["status"]["phase"], "ended",
        "the final write was carried out"
    );
    let puts_of_web = |world: &World| {
        world
            .proxy
            .seen(PUT_RECORD)
            .iter()
            .filter(|seen| seen.rkey.as_deref() == Some("web"))
            .count()
    };
    let final_writes = puts_of_web(&world);
    let controller = world.restart(&["api"]).await;
    eventually("the ended deployment goes", async || {
        infra(controller.store(), "web").is_none().then_some(())
    })
    .await;
    world.index_settles("recentEnded", &["web"]).await;
    world.index_settles("live", &["api"]).await;
    assert_eq!(
        public_record(&pds_url, &world.did, "web").await.unwrap(),
        ended,
        "the final write is not made again differently"
    );
    assert!(
        puts_of_web(&world) - final_writes <= 1,
        "at most one refused swap, no second final write"
    );
    assert_eq!(
        public_rkeys(&pds_url, &world.did).await,
        ["api", "self", "web"],
        "one record each, nothing doubled"
    );
    controller.stop().await;
    world.pds.stop().await.unwrap();
}

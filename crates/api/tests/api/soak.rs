//! The soak (`cargo xtask soak --minutes N`; ignored in a plain run): for N minutes the owner
//! declares, edits, releases and ends deployments against the real PDS behind the fault proxy,
//! which answers 429 (with `Retry-After`) and 503 at random. Every minute the faults stop (the ones
//! scheduled and not yet met are dropped), the controller is given time to settle, and the
//! invariants are checked against the repo as anyone reads it:
//! - every live deployment's record holds its declaration (nothing declared is lost);
//! - every ended deployment's record says it ended; one ended before its record was bound may have
//!   none (the controller writes no record when no write of it may still land);
//! - the repo holds one record per deployment ever made but those, and nothing else but the index;
//! - the index lists exactly the live deployments, each once.
//!
//! The controller follows the owner's repo live, as the app does (`subscribeRepos` of their PDS,
//! through the proxy, which passes the stream through unfaulted); after each check the soak notes
//! whether the stream was open (`live`) or the controller was polling.
//!
//! It prints the operations done, the faults injected, the checks and the invariant violations
//! (which must be 0), whether it was live at each check, and the process's memory after each
//! minute's check: resident (`VmRSS`), the process's own part of it (`RssAnon`: heap, stacks),
//! and of that what the Rust heap holds in use (every allocation of the test binary is counted),
//! which is where a leak in Rust code climbs; what `RssAnon` holds beyond it is the allocator's
//! (memory freed but kept in its arenas), SQLite's own and the stacks. The rest of the resident
//! memory is the binary's code and the libraries mapped from disk: it grows as more code paths
//! run (faults, retries) and is no leak. Growth is counted over the N minutes after a **warm-up minute** of the same load: the
//! memory before it is that of a controller that has done nothing yet (no stream open, no
//! blocking thread started, no code path run), so what the first minute adds is the cost of
//! running at all, not growth; it is printed beside it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use swdesk_api::controller::AccountController;
use swdesk_core::infra::{Contract, ContractState, InfraSpec};
use swdesk_devnet::Fault;
use swdesk_kernel::name::Name;
use swdesk_kernel::timestamp::Clock as _;

use crate::faults::{PUT_RECORD, pds_behind_proxy};
use crate::session::{network_of, signed_in};
use crate::support::{
    declare_infra, edit_infra, in_sync, index_rkeys, infra, public_record, public_rkeys,
    quick_engine, sync_state,
};

/// How long the soak runs, from `SWDESK_SOAK_MINUTES`.
const MINUTES_ENV: &str = "SWDESK_SOAK_MINUTES";
/// How long the controller may take to settle once the faults stop: its longest backoff (5
/// min, a run that failed many times in a row) and a minute more.
const SETTLE: Duration = Duration::from_secs(360);
/// The minute of load run before the soak's N, so that its memory counts growth, not start-up.
const WARM_UP_MINUTES: u64 = 1;
/// The most deployments live at once.
const MAX_LIVE: usize = 12;

/// A small deterministic random source (xorshift), seeded per run.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides.max(1)
    }
}

/// What the soak did and found.
#[derive(Debug, Default)]
struct Tally {
    declared: u64,
    edited: u64,
    released: u64,
    ended: u64,
    faults: u64,
    checks: u64,
    violations: Vec<String>,
    /// Deployments ended before their record was bound: the controller ends such a deployment
    /// without a record when no write of it may still land (nothing reached the repo).
    ended_before_binding: BTreeSet<String>,
}

/// On the app's own runtime ([`swdesk_api::runtime`]), so its threads are the app's.
#[test]
#[ignore = "the soak: `cargo xtask soak --minutes N`"]
fn soak() {
    let runtime = swdesk_api::runtime::build().expect("the app's runtime starts");
    runtime.block_on(soak_on_the_apps_runtime());
}

#[allow(clippy::print_stdout)] // the report is what the soak is run for
async fn soak_on_the_apps_runtime() {
    let minutes: u64 = std::env::var(MINUTES_ENV)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1);
    let data = tempfile::tempdir().unwrap();
    let (_storage, pds, proxy) = pds_behind_proxy(data.path()).await;
    // The checks read the PDS itself, behind the proxy: a fault is for the app, not for them.
    let pds_url = proxy.upstream().to_owned();
    let (network, store) = network_of(&pds, "soak");
    let account = pds.create_account("soak").await.unwrap();
    let (signed, agent, resolver) = signed_in(&network, &store, &account).await;
    let controller =
        AccountController::start(&data.path().join("app"), agent, resolver, quick_engine())
            .await
            .unwrap();
    let memory_before_warm_up = Memory::now();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |since| since.as_nanos() as u64 | 1);
    let mut dice = Dice(seed);
    let mut tally = Tally::default();
    let mut live: Vec<String> = Vec::new();
    let mut made: BTreeSet<String> = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs((minutes + WARM_UP_MINUTES) * 60);
    let mut next_check = Instant::now() + Duration::from_secs(60);
    // Sampled after each check (the controller settled): a leak climbs minute after minute; a
    // cache filling up levels off.
    let mut memory_by_minute: Vec<Memory> = Vec::new();
    let mut live_by_minute: Vec<String> = Vec::new();
    loop {
        act(&controller, &mut dice, &mut tally, &mut live, &mut made);
        if dice.roll(6) == 0 {
            tally.faults += inject(&proxy, &mut dice);
        }
        tokio::time::sleep(Duration::from_millis(200 + dice.roll(600))).await;
        let finished = Instant::now() >= deadline;
        if finished || Instant::now() >= next_check {
            proxy.clear();
            let repo = (pds_url.as_str(), account.did.as_str());
            check(&controller, repo, &live, &made, &mut tally).await;
            // The proxy's log of requests grows with every one; the soak never reads it back.
            proxy.forget_seen();
            memory_by_minute.push(Memory::now());
            live_by_minute.push(controller.live_status().mode);
            next_check = Instant::now() + Duration::from_secs(60);
        }
        if finished {
            break;
        }
    }
    let memory_at_end = Memory::now();
    let injected = proxy.injected();
    let memory_at_start = memory_by_minute
        .first()
        .copied()
        .unwrap_or(memory_before_warm_up);
    println!(
        "soak: {minutes} min after a warm-up minute (seed {seed}): {} declared, {} edited, {} released, {} ended ({} \
         before their record was bound); \
         {} faults scheduled, {injected} injected; {} checks, {} invariant violations",
        tally.declared,
        tally.edited,
        tally.released,
        tally.ended,
        tally.ended_before_binding.len(),
        tally.faults,
        tally.checks,
        tally.violations.len(),
    );
    for (what, of) in [
        (
            "the process's own memory (RssAnon)",
            Memory::anonymous as fn(&Memory) -> u64,
        ),
        ("resident memory (VmRSS)", Memory::resident),
        ("the Rust heap in use", Memory::heap),
    ] {
        let series: Vec<String> = memory_by_minute
            .iter()
            .map(|memory| format!("{:.1}", of(memory) as f64 / 1024.0))
            .collect();
        println!(
            "soak: {what}: {:.1} MiB at start (after the warm-up minute), {:.1} MiB at end: \
             {:+.1}% in {minutes} min ({:.1} MiB before the warm-up); after each minute's \
             check, the warm-up's first (MiB): {}",
            of(&memory_at_start) as f64 / 1024.0,
            of(&memory_at_end) as f64 / 1024.0,
            growth(of(&memory_at_start), of(&memory_at_end)),
            of(&memory_before_warm_up) as f64 / 1024.0,
            series.join(", ")
        );
    }
    let threads: Vec<String> = memory_by_minute
        .iter()
        .map(|memory| memory.threads.to_string())
        .collect();
    println!(
        "soak: threads: {} before the warm-up, {} at start, {} at end; after each minute's \
         check: {}",
        memory_before_warm_up.threads,
        memory_at_start.threads,
        memory_at_end.threads,
        threads.join(", ")
    );
    let live_checks = live_by_minute.iter().filter(|mode| *mode == "live").count();
    println!(
        "soak: the owner's stream was live at {live_checks} of {} checks; after each minute's \
         check: {}",
        live_by_minute.len(),
        live_by_minute.join(", ")
    );
    for violation in &tally.violations {
        println!("violation: {violation}");
    }
    controller.stop().await;
    signed.sign_out().await.unwrap();
    pds.stop().await.unwrap();
    assert!(tally.violations.is_empty(), "{:?}", tally.violations);
}

/// One thing the owner does: declare, edit, release the contract, or end a deployment.
fn act(
    controller: &AccountController,
    dice: &mut Dice,
    tally: &mut Tally,
    live: &mut Vec<String>,
    made: &mut BTreeSet<String>,
) {
    let store = controller.store();
    let pick = |dice: &mut Dice, live: &[String]| {
        let index = usize::try_from(dice.roll(live.len() as u64)).unwrap_or(0);
        live.get(index).cloned()
    };
    match dice.roll(10) {
        0..=2 if live.len() < MAX_LIVE => {
            let name = format!("soak{}", made.len());
            declare_infra(store, &name, &format!("{name} v0"));
            edit_infra(store, &name, |spec| {
                spec.contracts = vec![staged_contract()]
            });
            made.insert(name.clone());
            live.push(name);
            tally.declared += 1;
        }
        3..=6 => {
            if let Some(name) = pick(dice, live) {
                let version = dice.roll(1_000_000);
                edit_infra(store, &name, |spec| {
                    spec.description = Some(format!("{name} v{version}"));
                });
                tally.edited += 1;
            }
        }
        7 => {
            if let Some(name) = pick(dice, live) {
                edit_infra(store, &name, release_contracts);
                tally.released += 1;
            }
        }
        8 if live.len() > 2 => {
            if let Some(name) = pick(dice, live) {
                if infra(store, &name).is_some_and(|object| object.status.record.is_none()) {
                    tally.ended_before_binding.insert(name.clone());
                }
                let now = swdesk_controller::SystemClock.now();
                store
                    .delete::<InfraSpec>(&Name::parse(&name).unwrap(), now)
                    .unwrap();
                live.retain(|other| *other != name);
                tally.ended += 1;
            }
        }
        _ => {}
    }
}

fn staged_contract() -> Contract {
    Contract {
        name: "guest".to_owned(),
        state: ContractState::Staged,
        ..Contract::default()
    }
}

fn release_contracts(spec: &mut InfraSpec) {
    for contract in &mut spec.contracts {
        contract.state = ContractState::Released;
    }
}

/// Schedules a few faults on the repo's writes or reads; how many.
fn inject(proxy: &swdesk_devnet::FaultProxy, dice: &mut Dice) -> u64 {
    let path = match dice.roll(3) {
        0 => PUT_RECORD,
        1 => "/xrpc/com.atproto.repo.getRecord",
        _ => "/xrpc/com.atproto.repo.listRecords",
    };
    let times = 1 + dice.roll(3);
    let (status, retry_after) = match dice.roll(2) {
        0 => (429, Some("1".to_owned())),
        _ => (503, None),
    };
    proxy.inject(Fault {
        path: path.to_owned(),
        status,
        retry_after,
        times: usize::try_from(times).unwrap_or(1),
    });
    times
}

/// Lets the controller settle (faults already scheduled still run out), then checks every
/// invariant of the module doc against the repo.
async fn check(
    controller: &AccountController,
    (pds_url, did): (&str, &str),
    live: &[String],
    made: &BTreeSet<String>,
    tally: &mut Tally,
) {
    tally.checks += 1;
    let settled = tokio::time::timeout(SETTLE, async {
        loop {
            let in_sync = live.iter().all(|name| in_sync(controller, name));
            let ended_gone = made
                .iter()
                .filter(|name| !live.contains(name))
                .all(|name| infra(controller.store(), name).is_none());
            let index = public_record(pds_url, did, "self").await;
            let listed = index.as_ref().map(|index| index_rkeys(index, "live"));
            let mut expected: Vec<String> = live.to_vec();
            expected.sort();
            if in_sync && ended_gone && listed.as_ref() == Some(&expected) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await;
    if settled.is_err() {
        let mut unsettled = Vec::new();
        for name in made {
            let done = if live.contains(name) {
                in_sync(controller, name)
            } else {
                infra(controller.store(), name).is_none()
            };
            if !done {
                unsettled.push(format!("{name}: {}", state_of(controller, name).await));
            }
        }
        let index = public_record(pds_url, did, "self").await;
        tally.violations.push(format!(
            "check {}: not settled within {} s: {unsettled:?}; the index lists {:?}",
            tally.checks,
            SETTLE.as_secs(),
            index.map(|index| index_rkeys(&index, "live"))
        ));
        eprintln!("{}", tally.violations.last().map_or("", String::as_str));
    }
    for name in live {
        let declared = infra(controller.store(), name).and_then(|object| object.spec.description);
        let record = public_record(pds_url, did, name).await;
        let published = record
            .as_ref()
            .and_then(|record| record["description"].as_str().map(str::to_owned));
        if declared.is_none() || declared != published {
            let state = state_of(controller, name).await;
            tally.violations.push(format!(
                "check {}: {name} declares {declared:?}, its record says {published:?} ({state})",
                tally.checks
            ));
        }
    }
    let mut never_written = BTreeSet::new();
    for name in made.iter().filter(|name| !live.contains(name)) {
        let record = public_record(pds_url, did, name).await;
        if record.is_none() && tally.ended_before_binding.contains(name) {
            never_written.insert(name.clone());
            continue;
        }
        if record.as_ref().map(|record| &record["status"]["phase"]) != Some(&"ended".into()) {
            tally
                .violations
                .push(format!("check {}: {name} did not end", tally.checks));
        }
    }
    let mut expected: Vec<String> = made.difference(&never_written).cloned().collect();
    expected.push("self".to_owned());
    expected.sort();
    let rkeys = public_rkeys(pds_url, did).await;
    if rkeys != expected {
        tally.violations.push(format!(
            "check {}: the repo holds {rkeys:?}, not one record per deployment {expected:?}",
            tally.checks
        ));
    }
}

/// How the deployment `name` stands, for a violation's report.
async fn state_of(controller: &AccountController, name: &str) -> String {
    let view = controller
        .sync_view::<InfraSpec>(&Name::parse(name).unwrap())
        .await;
    format!("{:?}; {view:?}", sync_state(controller, name))
}

/// How much `to` grew over `from`, in percent.
fn growth(from: u64, to: u64) -> f64 {
    (to as f64 / from.max(1) as f64 - 1.0) * 100.0
}

/// The process's memory, in KiB, as `/proc/self/status` and the counting allocator say.
#[derive(Debug, Clone, Copy)]
struct Memory {
    /// `VmRSS`: everything resident, the binary's code mapped from disk included.
    resident: u64,
    /// `RssAnon`: the process's own (heap, stacks).
    anonymous: u64,
    /// `Threads`: each has a stack of its own, resident as deep as it was ever used.
    threads: u64,
    /// The Rust heap in use: allocated and not yet freed, by this process's every allocation.
    heap: u64,
}

impl Memory {
    fn now() -> Self {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        let heap = crate::HEAP.stats();
        Self {
            resident: field("VmRSS:"),
            anonymous: field("RssAnon:"),
            threads: field("Threads:"),
            heap: (heap.bytes_allocated.saturating_sub(heap.bytes_deallocated) / 1024) as u64,
        }
    }

    fn heap(&self) -> u64 {
        self.heap
    }

    fn resident(&self) -> u64 {
        self.resident
    }

    fn anonymous(&self) -> u64 {
        self.anonymous
    }
}

//! `cargo xtask bench`: how much the app as an owner installs it costs over a bare Tauri
//! window. The app's release `.deb` is built by the bundler (`cargo xtask bundle`) and unpacked
//! into a throwaway root, as `dpkg` lays it out; the bare window is built in release in the
//! same run, with the same Tauri build. Each is launched in turn in a private desktop session
//! (a virtual display and a session bus).
//! Each launch measures the time from spawning the process to the window's first-paint report
//! (`swdesk:first-paint ms=<n>` on stdout), then the resident memory of the whole process tree
//! (the app and its WebKit processes) after a spell of idle, also shown process by process
//! with its own part (`RssAnon`) and its threads, and how often each process woke in the
//! [`WAKE_SPAN`] after that (an idle window should wake for nothing: no clock ticking with no
//! text to change). Medians are printed side by side with their ratio, the figure that counts
//! (target: first paint at most 1.1x, memory at most 1.05x).
//! The app's first paint is its prerendered first screen; the moment its code has brought that
//! screen to life (`swdesk:interactive`) is printed beside it (a bare window is live once
//! painted).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::bundle;
use crate::cmd;
use crate::display::{SessionBus, VirtualDisplay};
use crate::paths::Paths;
use crate::run::{self, APP_BINARY};
use crate::setup::{self, Purpose};

const BASELINE_BINARY: &str = "bare-tauri-window";
/// The most the app's first paint may take over a bare window's (issue 21).
const TARGET_PAINT_RATIO: f64 = 1.1;
/// The most the app's idle memory may take over a bare window's (issue 36).
const TARGET_MEMORY_RATIO: f64 = 1.05;
/// How long each process's wake-ups are counted, after the idle spell.
const WAKE_SPAN: Duration = Duration::from_secs(20);

#[derive(Debug, Clone)]
struct Launch {
    first_paint: Duration,
    /// When the window's first screen was live: the app reports it (`swdesk:interactive`), a
    /// bare window is live once painted.
    interactive: Duration,
    idle_rss_kib: u64,
    /// Each process of the tree after the idle spell (the window's own, then WebKit's).
    processes: Vec<Process>,
    /// The start-up steps the window reported with its first paint (`step`, ms since its
    /// process started, by its own clock), `ms` (the first paint) among them.
    steps: Vec<(String, f64)>,
}

impl Launch {
    /// How often all its processes together woke in an idle minute.
    fn wakeups_per_minute(&self) -> f64 {
        let each = self.processes.iter();
        each.map(|process| process.wakeups_per_minute).sum()
    }
}

/// One process of a window's tree, read from `/proc` after the idle spell.
#[derive(Debug, Clone)]
struct Process {
    /// Its command name (`comm`): the window's binary, `WebKitWebProces`, `WebKitNetworkP`.
    name: String,
    /// Resident (`VmRSS`), KiB: what the bench sums.
    rss_kib: u64,
    /// Its own memory (`RssAnon`: heap, stacks), KiB; the rest is files mapped (code, fonts).
    anon_kib: u64,
    /// How many threads it runs.
    threads: u64,
    /// How often its threads woke in an idle minute (context switches, counted over
    /// [`WAKE_SPAN`]; a thread that ends meanwhile is not counted).
    wakeups_per_minute: f64,
}

/// The order start-up steps are shown in; a step only one window reports is shown too.
const STEP_ORDER: &[&str] = &[
    "built",
    "setup",
    "set-up",
    "page-started",
    "page-loaded",
    "ms",
];

pub fn bench(paths: &Paths, runs: usize, idle_seconds: u64) -> anyhow::Result<()> {
    anyhow::ensure!(runs > 0, "--runs must be at least 1");
    setup::ensure(paths, Purpose::Test)?;
    run::build_ui(paths)?;
    let installed = install(&bundle::build(paths, false)?.deb)?;
    cmd::run(cmd::cargo().args([
        "build",
        "--release",
        "--package",
        "swdesk-bench-baseline",
        "--bin",
        BASELINE_BINARY,
    ]))?;
    let display = VirtualDisplay::start()?;
    let bus = SessionBus::start()?;
    let idle = Duration::from_secs(idle_seconds);
    // (name, binary, whether it reports its screen live apart from its first paint)
    let apps = [
        (
            "bare Tauri window",
            paths.binary("release", BASELINE_BINARY),
            false,
        ),
        (
            "Socialweb Desk",
            installed.path().join("usr/bin").join(APP_BINARY),
            true,
        ),
    ];
    let mut launches: [Vec<Launch>; 2] = [Vec::new(), Vec::new()];
    for round in 0..runs {
        for (index, (name, binary, reports_live)) in apps.iter().enumerate() {
            let launch = launch_once(binary, &display.name, &bus.address, idle, *reports_live)
                .with_context(|| format!("{name}, launch {}", round + 1))?;
            eprintln!(
                "{name:>18} #{}: first paint {} ms, interactive {} ms, idle RSS {:.1} MiB",
                round + 1,
                launch.first_paint.as_millis(),
                launch.interactive.as_millis(),
                mib(launch.idle_rss_kib)
            );
            launches[index].push(launch);
        }
    }
    print_report(&launches[0], &launches[1], runs, idle_seconds);
    Ok(())
}

/// Unpacks the Debian package `deb` into a throwaway root, as `dpkg` would lay it out.
fn install(deb: &Path) -> anyhow::Result<tempfile::TempDir> {
    let root = tempfile::tempdir()?;
    cmd::run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(root.path()))?;
    Ok(root)
}

#[allow(clippy::print_stdout)]
fn print_report(baseline: &[Launch], app: &[Launch], runs: usize, idle_seconds: u64) {
    let ms = |at: Duration| at.as_secs_f64() * 1e3;
    let paint = |launches: &[Launch]| median(launches.iter().map(|l| ms(l.first_paint)));
    let live = |launches: &[Launch]| median(launches.iter().map(|l| ms(l.interactive)));
    let rss = |launches: &[Launch]| median(launches.iter().map(|l| mib(l.idle_rss_kib)));
    let rows = [
        (
            "bare Tauri window",
            paint(baseline),
            live(baseline),
            rss(baseline),
        ),
        ("Socialweb Desk (.deb)", paint(app), live(app), rss(app)),
    ];
    println!();
    println!(
        "medians of {runs} launches each; memory after {idle_seconds} s idle, all processes of the app"
    );
    println!(
        "{:<22} {:>18} {:>18} {:>18}",
        "", "first paint (ms)", "interactive (ms)", "idle RSS (MiB)"
    );
    for (name, paint, live, rss) in rows {
        println!("{name:<22} {paint:>18.0} {live:>18.0} {rss:>18.1}");
    }
    let [
        (_, paint_base, live_base, rss_base),
        (_, paint_app, live_app, rss_app),
    ] = rows;
    println!(
        "{:<22} {:>17.2}x {:>17.2}x {:>17.2}x   (target: first paint at most \
         {TARGET_PAINT_RATIO:.2}x, memory at most {TARGET_MEMORY_RATIO:.2}x)",
        "ratio",
        paint_app / paint_base,
        live_app / live_base,
        rss_app / rss_base
    );
    let woke = |launches: &[Launch]| median(launches.iter().map(Launch::wakeups_per_minute));
    println!(
        "wake-ups in an idle minute, all processes (counted over {} s after the idle spell): \
         bare {:.0}, desk {:.0}",
        WAKE_SPAN.as_secs(),
        woke(baseline),
        woke(app)
    );
    print_processes(baseline, app);
    print_steps(baseline, app);
}

/// Where each window's memory is: the median of each process (by name) of its tree, resident
/// and its own part, and its threads.
#[allow(clippy::print_stdout)]
fn print_processes(baseline: &[Launch], app: &[Launch]) {
    println!();
    println!(
        "{:<36} {:>10} {:>10} {:>8} {:>15}",
        "process (median)", "RSS (MiB)", "own (MiB)", "threads", "wake-ups/min"
    );
    for (window, launches) in [("bare", baseline), ("desk", app)] {
        let names: Vec<&str> = launches
            .iter()
            .flat_map(|launch| launch.processes.iter().map(|process| process.name.as_str()))
            .collect();
        let mut shown = HashSet::new();
        for name in names.into_iter().filter(|name| shown.insert(*name)) {
            let of = |value: fn(&Process) -> f64| {
                median(launches.iter().flat_map(|launch| {
                    launch
                        .processes
                        .iter()
                        .filter(|process| process.name == name)
                        .map(value)
                }))
            };
            println!(
                "{:<36} {:>10.1} {:>10.1} {:>8.0} {:>15.0}",
                format!("{window}: {name}"),
                of(|process| mib(process.rss_kib)),
                of(|process| mib(process.anon_kib)),
                of(|process| process.threads as f64),
                of(|process| process.wakeups_per_minute),
            );
        }
    }
}

/// Where each start spent its time: the median of each step, in ms since the process started
/// by its own clock (`ms` is the first paint; the launch itself comes before it).
#[allow(clippy::print_stdout)]
fn print_steps(baseline: &[Launch], app: &[Launch]) {
    let step = |launches: &[Launch], name: &str| {
        let found: Vec<f64> = launches
            .iter()
            .filter_map(|launch| launch.steps.iter().find(|(step, _)| step == name))
            .map(|(_, ms)| *ms)
            .collect();
        (!found.is_empty()).then(|| median(found.into_iter()))
    };
    let shown = |value: Option<f64>| value.map_or("-".to_owned(), |ms| format!("{ms:.0}"));
    println!();
    println!(
        "{:<22} {:>18} {:>18}",
        "start-up step (ms)", "bare Tauri window", "Socialweb Desk"
    );
    for name in STEP_ORDER {
        let (base, ours) = (step(baseline, name), step(app, name));
        if base.is_some() || ours.is_some() {
            let label = if *name == "ms" { "first paint" } else { name };
            println!("{label:<22} {:>18} {:>18}", shown(base), shown(ours));
        }
    }
}

/// One launch of `binary`, measured; `reports_live` when the window reports its screen live
/// apart from its first paint (the app), which it then must do before the idle spell ends.
fn launch_once(
    binary: &Path,
    display: &str,
    bus: &str,
    idle: Duration,
    reports_live: bool,
) -> anyhow::Result<Launch> {
    let home = std::env::temp_dir().join(format!("swdesk-bench-{}", std::process::id()));
    std::fs::remove_dir_all(&home).ok();
    let started = Instant::now();
    let mut child = Command::new(binary)
        .env("DISPLAY", display)
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .env("SWDESK_REPORT_FIRST_PAINT", "1")
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("RUST_LOG", "warn")
        // Xvfb has no GPU: WebKitGTK's DMA-BUF renderer then spends most of a first paint in
        // software copies that grow with the page, which measures llvmpipe, not the app. Both
        // windows run on the classic renderer, as on a desktop where DMA-BUF is unavailable.
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let outcome = measure(&mut child, started, idle, reports_live);
    stop_tree(child.id());
    child.wait().ok();
    std::fs::remove_dir_all(&home).ok();
    outcome
}

fn measure(
    child: &mut Child,
    started: Instant,
    idle: Duration,
    reports_live: bool,
) -> anyhow::Result<Launch> {
    let stdout = child.stdout.take().context("the child has no stdout")?;
    let (sender, reports) = mpsc::channel();
    std::thread::spawn(move || {
        let lines = BufReader::new(stdout).lines().map_while(Result::ok);
        for line in lines.filter(|line| line.starts_with("swdesk:")) {
            sender.send((Instant::now(), line)).ok();
        }
    });
    let (painted_at, line) = reports
        .recv_timeout(Duration::from_secs(60))
        .context("the window reported no first paint within 60 s")?;
    anyhow::ensure!(
        line.starts_with("swdesk:first-paint"),
        "the window's first report was not its first paint: {line}"
    );
    std::thread::sleep(idle);
    if let Some(status) = child.try_wait()? {
        bail!("the app exited while idle ({status})");
    }
    let first_paint = painted_at - started;
    let interactive = if reports_live {
        let (live_at, _) = reports
            .try_iter()
            .find(|(_, line)| line.starts_with("swdesk:interactive"))
            .context("the window painted but reported no live screen while idle")?;
        live_at - started
    } else {
        first_paint
    };
    let processes = with_wakeups(process_tree(child.id()));
    Ok(Launch {
        first_paint,
        interactive,
        idle_rss_kib: processes.iter().map(|process| process.rss_kib).sum(),
        processes,
        steps: steps_of(&line),
    })
}

/// The `step=<ms>` words of a first-paint line.
fn steps_of(line: &str) -> Vec<(String, f64)> {
    line.split_whitespace()
        .filter_map(|word| word.split_once('='))
        .filter_map(|(step, ms)| Some((step.to_owned(), ms.parse().ok()?)))
        .collect()
}

/// The pid and every descendant of it, from `/proc`.
fn process_tree(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut tree = vec![root];
    let mut seen: HashSet<u32> = HashSet::from([root]);
    let mut index = 0;
    while let Some(&parent) = tree.get(index) {
        for &(pid, ppid) in &parents {
            if ppid == parent && seen.insert(pid) {
                tree.push(pid);
            }
        }
        index += 1;
    }
    tree
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields start after the last `)`.
    let fields = &stat[stat.rfind(')')? + 2..];
    fields.split_whitespace().nth(1)?.parse().ok()
}

/// The processes `pids` as they are after [`WAKE_SPAN`], with how often each woke in it.
fn with_wakeups(pids: Vec<u32>) -> Vec<Process> {
    let before: Vec<(u32, u64)> = pids.into_iter().map(|pid| (pid, switches(pid))).collect();
    std::thread::sleep(WAKE_SPAN);
    let per_minute = 60.0 / WAKE_SPAN.as_secs_f64();
    before
        .into_iter()
        .filter_map(|(pid, before)| {
            let woke = switches(pid).saturating_sub(before) as f64 * per_minute;
            process(pid, woke)
        })
        .collect()
}

/// How many times the threads of `pid` now running have been switched out (each time one
/// sleeps and each time the kernel takes its core), from `/proc/<pid>/task/*/status`.
fn switches(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|line| line.contains("ctxt_switches:"))
                .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// Process `pid` as `/proc` shows it now, having woken `wakeups_per_minute` times a minute.
fn process(pid: u32, wakeups_per_minute: f64) -> Option<Process> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let name = status.lines().next()?.strip_prefix("Name:")?.trim();
    Some(Process {
        name: name.to_owned(),
        rss_kib: field("VmRSS:")?,
        anon_kib: field("RssAnon:")?,
        threads: field("Threads:")?,
        wakeups_per_minute,
    })
}

fn stop_tree(root: u32) {
    let pids: Vec<String> = process_tree(root).iter().map(u32::to_string).collect();
    cmd::succeeds(Command::new("kill").arg("-TERM").args(&pids));
    std::thread::sleep(Duration::from_millis(300));
    cmd::succeeds(Command::new("kill").arg("-KILL").args(&pids));
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut sorted: Vec<f64> = values.collect();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(super::median([4.0, 1.0, 3.0, 2.0].into_iter()), 2.5);
        assert_eq!(super::median([5.0, 1.0, 3.0].into_iter()), 3.0);
    }

    #[test]
    fn a_first_paint_line_gives_its_steps_in_order() {
        let steps = super::steps_of("swdesk:first-paint ms=210 built=44 page-loaded=196 odd=x");
        let expected = [("ms", 210.0), ("built", 44.0), ("page-loaded", 196.0)];
        let expected: Vec<(String, f64)> = expected
            .iter()
            .map(|(step, ms)| ((*step).to_owned(), *ms))
            .collect();
        assert_eq!(steps, expected);
    }

    #[test]
    fn this_process_is_in_its_own_tree_and_has_a_resident_size() {
        let me = std::process::id();
        assert_eq!(super::process_tree(me).first(), Some(&me));
        let process = super::process(me, 0.0).expect("this process is in /proc");
        assert!(process.rss_kib > 0 && process.anon_kib > 0 && process.threads > 0);
    }

    #[test]
    fn a_thread_that_sleeps_is_counted_as_woken() {
        let me = std::process::id();
        let before = super::switches(me);
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(super::switches(me) >= before + 5);
    }
}

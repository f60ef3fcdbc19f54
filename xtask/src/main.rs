//! The project's task runner, `cargo xtask <task>`. It is the one place that knows how to set a
//! machine up (apt packages, npm packages, tauri-driver), build the window and the app, run
//! every check, and measure the app (against a bare Tauri window; its deployments list with
//! thousands of rows). The README's two commands are `cargo xtask run` and `cargo xtask test`;
//! CI runs the second.

mod bench;
mod bundle;
mod cmd;
mod cycles;
mod deny;
mod display;
mod fuzz;
mod imports;
mod junit;
mod layout;
mod list_bench;
mod paths;
mod pins;
mod run;
mod sandbox;
mod setup;
mod soak;
mod stray_client;
mod sync_bench;
mod test;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(about = "Set up, build, run, test and measure Socialweb Desk")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Install what is missing, build the window and the app, and open it on the local sandbox.
    Run(run::RunArgs),
    /// Install the test dependencies and run every check: fmt, clippy, Rust tests, UI tests, E2E.
    /// With `--only`, run one suite alone (for working on it), filtered by `--filter`.
    Test(test::TestArgs),
    /// Measure the app: `app` (the default) against a bare Tauri window, `list` the
    /// deployments list with thousands of rows.
    #[command(args_conflicts_with_subcommands = true)]
    Bench {
        #[command(subcommand)]
        bench: Option<Bench>,
        #[command(flatten)]
        app: AppBench,
    },
    /// Fuzz the parsers of network input (`fuzz/`): build the targets, run each on its seeds,
    /// fail on any crash, timeout or out-of-memory input.
    Fuzz(fuzz::FuzzArgs),
    /// Soak the controller against a PDS that fails at random (429, 503) for N minutes; print
    /// operations, faults, invariant violations (must be 0) and memory at start and end.
    Soak(soak::SoakArgs),
    /// Build the installable packages (.deb and .rpm) of the release app, or of the debug app
    /// with `--debug`, and print their paths and sizes.
    Bundle(bundle::BundleArgs),
    /// Regenerate the window's TypeScript bindings (`ui/src/ipc/bindings.ts`) from the commands.
    Bindings,
    /// Regenerate every icon in `icons/` from `icons/source.svg`.
    Icons,
    /// Check the structure rules `test` checks: no circle of imports between a crate's files
    /// (each one found is printed as its path of files), the api never imports the
    /// controller's kinds, no shipped crate depends on the sandbox.
    Layout,
}

#[derive(Debug, Subcommand)]
enum Bench {
    /// Build the release app and a bare Tauri window, and compare first paint and idle memory.
    App(AppBench),
    /// The deployments list with one row and with thousands, in the real window: a store
    /// change to the row on screen, and frame time while scrolling.
    List(list_bench::ListBench),
    /// An edit made by another client to the owner's repo on the sandbox PDS, pulled live
    /// beside the poll: p50 and p95 over 50 changes, and requests per idle minute.
    Sync,
}

#[derive(Debug, Clone, clap::Args)]
struct AppBench {
    /// Launches of each app; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Seconds of idle before memory is read.
    #[arg(long, default_value_t = 10)]
    idle_seconds: u64,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match paths::Paths::discover().and_then(|paths| perform(cli.task, &paths)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn perform(task: Task, paths: &paths::Paths) -> anyhow::Result<()> {
    match task {
        Task::Run(args) => run::run(paths, &args),
        Task::Test(args) => test::test(paths, &args),
        Task::Bench { bench, app } => match bench.unwrap_or(Bench::App(app)) {
            Bench::App(app) => bench::bench(paths, app.runs, app.idle_seconds),
            Bench::List(list) => list_bench::bench_list(paths, &list),
            Bench::Sync => sync_bench::bench_sync(paths),
        },
        Task::Fuzz(args) => fuzz::fuzz(paths, &args),
        Task::Soak(args) => soak::soak(paths, &args),
        Task::Bundle(args) => bundle::bundle(paths, &args),
        Task::Bindings => run::bindings(paths),
        Task::Icons => run::icons(paths),
        Task::Layout => layout::check(paths).and_then(|()| imports::check(paths)),
    }
}

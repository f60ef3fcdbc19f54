//! `cargo xtask fuzz`: coverage-guided fuzzing of the parsers that read network input, on stable
//! Rust (`fuzz/`, its README says what each target checks). The fuzz crate is its own workspace,
//! built with libFuzzer's coverage instrumentation into `<target>/fuzz` so the flags never touch
//! the main build; each target then runs on a fresh copy of its seed corpus with its dictionary,
//! and a crash, a timeout or an out-of-memory input fails the task, naming where the input was
//! saved and how to replay it. `cargo xtask test` runs a short pass of every target
//! ([`short_pass`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::cmd;
use crate::paths::Paths;

/// The instrumentation: SanitizerCoverage's counters, PC table and comparison tracing for
/// libFuzzer, with debug assertions and overflow checks on (see `shared/NOTES.md`, "Fuzzing on
/// stable Rust"). Only with an explicit `--target`, so build scripts are not instrumented.
const RUSTFLAGS: &str = "--cfg fuzzing -Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    -Cdebug-assertions -Coverflow-checks";

/// Inputs each target runs in `cargo xtask test`.
pub const SHORT_RUNS: u64 = 10_000;
/// libFuzzer's random seed in `cargo xtask test`: the same inputs on every run of the same code.
const SHORT_SEED: u64 = 1;

/// The libFuzzer options of every run: one second per input, 64 MiB per allocation (enforced by
/// the fuzz crate's allocator: libFuzzer's own check needs a sanitizer), 2 GiB for the process.
const LIMITS: [&str; 4] = [
    "-timeout=1",
    "-malloc_limit_mb=64",
    "-rss_limit_mb=2048",
    "-max_len=8192",
];

#[derive(Debug, Clone, clap::Args)]
pub struct FuzzArgs {
    /// Inputs each target runs (libFuzzer's `-runs`, its seeds included).
    #[arg(long, default_value_t = 100_000)]
    runs: u64,
    /// Only this target (repeat for more); every target by default.
    #[arg(long = "target", value_name = "NAME")]
    targets: Vec<String>,
    /// libFuzzer's random seed, to repeat a run; a random one by default.
    #[arg(long)]
    seed: Option<u64>,
}

/// How one target's run ended.
#[derive(Debug)]
struct Outcome {
    target: String,
    runs: Option<u64>,
    /// The slowest input's time, in whole seconds (libFuzzer's final statistics).
    slowest: Option<u64>,
    elapsed: Duration,
    failure: Option<Failure>,
}

/// A crash, a timeout or an out-of-memory input, and where it was saved.
#[derive(Debug)]
struct Failure {
    kind: String,
    input: Option<PathBuf>,
    log: PathBuf,
    binary: PathBuf,
}

pub fn fuzz(paths: &Paths, args: &FuzzArgs) -> anyhow::Result<()> {
    let targets = selected(paths, &args.targets)?;
    build(paths, Lock::MayUpdate)?;
    let outcomes = run_all(paths, &targets, args.runs, args.seed)?;
    report(&outcomes)
}

/// Every target with [`SHORT_RUNS`] inputs and a fixed seed: the checked step of `cargo xtask
/// test`. Built `--locked`: a `fuzz/Cargo.lock` out of step with `fuzz/Cargo.toml` or the
/// workspace's crates fails the step instead of being rewritten unseen.
pub fn short_pass(paths: &Paths) -> anyhow::Result<()> {
    let targets = selected(paths, &[])?;
    build(paths, Lock::Locked)?;
    let outcomes = run_all(paths, &targets, SHORT_RUNS, Some(SHORT_SEED))?;
    report(&outcomes)
}

fn fuzz_dir(paths: &Paths) -> PathBuf {
    paths.root.join("fuzz")
}

/// Everything the fuzzer writes: its build, the scratch corpora, crash inputs and logs.
fn work_dir(paths: &Paths) -> PathBuf {
    paths.target.join("fuzz")
}

/// The targets asked for, or all of them (one per file in `fuzz/fuzz_targets/`), sorted.
fn selected(paths: &Paths, asked: &[String]) -> anyhow::Result<Vec<String>> {
    let directory = fuzz_dir(paths).join("fuzz_targets");
    let mut all: Vec<String> = std::fs::read_dir(&directory)
        .with_context(|| format!("reading {}", directory.display()))?
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    all.sort();
    anyhow::ensure!(!all.is_empty(), "no fuzz target in {}", directory.display());
    if asked.is_empty() {
        return Ok(all);
    }
    for name in asked {
        anyhow::ensure!(
            all.contains(name),
            "no fuzz target {name}; the targets are: {}",
            all.join(", ")
        );
    }
    Ok(all
        .into_iter()
        .filter(|name| asked.contains(name))
        .collect())
}

/// The host's target triple: the instrumentation needs an explicit `--target`.
fn host_triple() -> anyhow::Result<String> {
    let info = cmd::stdout_of(Command::new("rustc").arg("-vV")).context("running rustc -vV")?;
    info.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV names no host")
}

fn binary_dir(paths: &Paths, triple: &str) -> PathBuf {
    work_dir(paths).join(triple).join("release")
}

/// Whether a build may bring `fuzz/Cargo.lock` in step (a developer's `cargo xtask fuzz`, which
/// then leaves the rewrite to commit) or must find it so (`cargo xtask test`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lock {
    MayUpdate,
    Locked,
}

fn build(paths: &Paths, lock: Lock) -> anyhow::Result<()> {
    let triple = host_triple()?;
    let started = Instant::now();
    let mut args = vec!["build", "--release", "--bins", "--target", &triple];
    if lock == Lock::Locked {
        args.push("--locked");
    }
    cmd::run(
        cmd::cargo()
            .args(&args)
            .current_dir(fuzz_dir(paths))
            .env("CARGO_TARGET_DIR", work_dir(paths))
            .env("RUSTFLAGS", RUSTFLAGS)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS"),
    )
    .context(match lock {
        Lock::Locked => "building the fuzz targets --locked (is fuzz/Cargo.lock committed in step? `cargo xtask fuzz --runs 1` brings it in step)",
        Lock::MayUpdate => "building the fuzz targets",
    })?;
    eprintln!(
        "fuzz targets built in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run_all(
    paths: &Paths,
    targets: &[String],
    runs: u64,
    seed: Option<u64>,
) -> anyhow::Result<Vec<Outcome>> {
    let binaries = binary_dir(paths, &host_triple()?);
    targets
        .iter()
        .map(|target| run_one(paths, &binaries.join(target), target, runs, seed))
        .collect()
}

/// One target on a fresh copy of its seeds; its output goes to a log file.
fn run_one(
    paths: &Paths,
    binary: &Path,
    target: &str,
    runs: u64,
    seed: Option<u64>,
) -> anyhow::Result<Outcome> {
    let work = work_dir(paths);
    let corpus = work.join("corpus").join(target);
    let artifacts = work.join("artifacts").join(target);
    let log = work.join("logs").join(format!("{target}.log"));
    if corpus.exists() {
        std::fs::remove_dir_all(&corpus)
            .with_context(|| format!("clearing {}", corpus.display()))?;
    }
    std::fs::create_dir_all(&corpus)?;
    std::fs::create_dir_all(&artifacts)?;
    std::fs::create_dir_all(log.parent().context("a log has a directory")?)?;
    let seeds = fuzz_dir(paths).join("seeds").join(target);
    copy_files(&seeds, &corpus)?;

    let mut command = Command::new(binary);
    command
        .arg(&corpus)
        .arg(format!("-runs={runs}"))
        .args(LIMITS)
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1");
    let dictionary = fuzz_dir(paths).join("dicts").join(format!("{target}.dict"));
    if dictionary.exists() {
        command.arg(format!("-dict={}", dictionary.display()));
    }
    if let Some(seed) = seed {
        command.arg(format!("-seed={seed}"));
    }
    let output = std::fs::File::create(&log)?;
    command
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output);
    let started = Instant::now();
    let status = command
        .status()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let elapsed = started.elapsed();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let failure = (!status.success()).then(|| {
        let input = text
            .lines()
            .find_map(|line| line.split("Test unit written to ").nth(1))
            .map(|path| PathBuf::from(path.trim()));
        let kind = input
            .as_ref()
            .and_then(|path| {
                path.file_name()?
                    .to_str()?
                    .split('-')
                    .next()
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| format!("exit ({status})"));
        Failure {
            kind,
            input,
            log: log.clone(),
            binary: binary.to_path_buf(),
        }
    });
    Ok(Outcome {
        target: target.to_owned(),
        runs: stat(&text, "number_of_executed_units"),
        slowest: stat(&text, "slowest_unit_time_sec"),
        elapsed,
        failure,
    })
}

/// One of libFuzzer's final statistics (`stat::<name>: <count>`): the inputs a run executed,
/// the slowest input's seconds.
fn stat(log: &str, name: &str) -> Option<u64> {
    let prefix = format!("stat::{name}:");
    log.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|count| count.trim().parse().ok())
}

fn copy_files(from: &Path, to: &Path) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))?;
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// One line per target; for each failure, the tail of its log and how to replay its input.
#[allow(clippy::print_stdout)] // the per-target lines are the task's output
fn report(outcomes: &[Outcome]) -> anyhow::Result<()> {
    for outcome in outcomes {
        let runs = outcome
            .runs
            .map_or_else(|| "?".to_owned(), |runs| runs.to_string());
        let seconds = outcome.elapsed.as_secs_f64();
        let verdict = match &outcome.failure {
            None => "0 crashes".to_owned(),
            Some(failure) => format!("1 {}", failure.kind),
        };
        let slowest = outcome
            .slowest
            .map_or_else(|| "?".to_owned(), |slowest| format!("< {} s", slowest + 1));
        println!(
            "fuzz {:<18} {runs:>9} inputs  {verdict:<12} slowest input {slowest:<6} {seconds:>6.1} s",
            outcome.target
        );
    }
    let failed: Vec<&Outcome> = outcomes
        .iter()
        .filter(|outcome| outcome.failure.is_some())
        .collect();
    for outcome in &failed {
        let Some(failure) = &outcome.failure else {
            continue;
        };
        let text = std::fs::read_to_string(&failure.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let panic = lines
            .iter()
            .position(|line| line.contains("panicked at") || line.contains("==swdesk-fuzz=="))
            .unwrap_or(lines.len().saturating_sub(12));
        eprintln!("--- fuzz target {} ({}):", outcome.target, failure.kind);
        for line in lines.iter().skip(panic).take(12) {
            eprintln!("    {line}");
        }
        match &failure.input {
            Some(input) => eprintln!(
                "    input saved at {}\n    replay: {} {}",
                input.display(),
                failure.binary.display(),
                input.display()
            ),
            None => eprintln!("    no input was saved"),
        }
        eprintln!("    log: {}", failure.log.display());
    }
    anyhow::ensure!(
        failed.is_empty(),
        "fuzz targets failed: {}",
        failed
            .iter()
            .map(|outcome| outcome.target.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

//! The process protocol of a peer run by `cargo xtask run`: logs go to stderr through one
//! `tracing` subscriber ([`main`]); once serving, the peer prints one JSON ready line on stdout
//! ([`announce_ready`]); it stops when stdin closes ([`until_stdin_closes`]). Settings come
//! from the environment ([`env_parse`]).

use std::error::Error;
use std::future::Future;
use std::io::Write;
use std::process::ExitCode;

/// What a peer's `run` answers.
pub type RunResult = Result<(), Box<dyn Error>>;

/// Installs the stderr `tracing` subscriber (`RUST_LOG` filter), then runs `run`; a failure is
/// logged as `"{name} failed"` and exits with failure.
pub async fn main(name: &str, run: impl Future<Output = RunResult>) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    exit_code(name, run.await)
}

fn exit_code(name: &str, result: RunResult) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "{name} failed");
            ExitCode::FAILURE
        }
    }
}

/// Prints `ready` as the one JSON line on stdout: the process's protocol.
pub fn announce_ready(ready: &serde_json::Value) -> std::io::Result<()> {
    write_ready(&mut std::io::stdout(), ready)
}

fn write_ready(out: &mut impl Write, ready: &serde_json::Value) -> std::io::Result<()> {
    writeln!(out, "{ready}")?;
    out.flush()
}

/// Waits until stdin closes (or fails), reading and dropping whatever comes.
pub async fn until_stdin_closes() {
    let _ =
        tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink()))
            .await;
}

/// The environment variable `name` parsed as `T`; `None` when unset or not a `T`.
pub fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_ready_line_is_one_json_line() {
        let mut out = Vec::new();
        let ready = serde_json::json!({"url": "http://localhost:1", "did": "did:web:x"});
        write_ready(&mut out, &ready).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1);
        let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(line, ready);
    }

    #[test]
    fn a_failed_run_exits_with_failure() {
        assert_eq!(exit_code("peer", Ok(())), ExitCode::SUCCESS);
        assert_eq!(exit_code("peer", Err("boom".into())), ExitCode::FAILURE);
    }

    #[test]
    fn an_unset_or_unparsable_variable_is_none() {
        assert_eq!(
            env_parse::<u16>("SWDESK_SANDBOX_PEER_TEST_SURELY_UNSET"),
            None
        );
        assert_eq!(env_parse::<u16>("PATH"), None);
    }
}

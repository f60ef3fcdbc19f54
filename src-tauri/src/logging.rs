//! The app's one `tracing` subscriber: an env filter (`RUST_LOG`, default `info`), human output
//! on stderr, and a daily rolling file in the app's log directory (seven days kept). Each line
//! is written to the file as it is logged, by the thread that logs it: an app logs a few lines a
//! minute, so a writer thread of its own (`tracing_appender::non_blocking`) would cost a thread
//! and its memory for nothing, and would lose its last lines unless closed as the app ends.
//! Tokens and secrets never reach a log: the types that hold them have redacting `Debug` impls,
//! and no span records them.

use std::path::Path;

use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("cannot create the log directory {path}: {source}")]
    Directory {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot open the log file: {0}")]
    File(#[from] tracing_appender::rolling::InitError),
    #[error("a logger is already installed: {0}")]
    AlreadyInstalled(#[from] tracing_subscriber::util::TryInitError),
}

/// Installs the subscriber; call once, at start-up.
pub fn install(log_dir: &Path) -> Result<(), LoggingError> {
    std::fs::create_dir_all(log_dir).map_err(|source| LoggingError::Directory {
        path: log_dir.display().to_string(),
        source,
    })?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix("swdesk")
        .filename_suffix("log")
        .max_log_files(7)
        .build(log_dir)?;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(appender),
        )
        .try_init()?;
    Ok(())
}

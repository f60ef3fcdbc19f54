//! The app's one `tracing` subscriber: an env filter (`RUST_LOG`, default `info`), human output
//! on stderr, and a daily rolling file in the app's log directory (seven days kept). Tokens and
//! secrets never reach a log: the types that hold them have redacting `Debug` impls, and no span
//! records them.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Keeps the file writer flushing until [`LogGuard::close`]: the app ends with
/// `std::process::exit`, which runs no destructors, so the last lines reach the file only when
/// the app closes the log itself as it quits.
#[derive(Debug)]
pub struct LogGuard(std::sync::Mutex<Option<WorkerGuard>>);

impl LogGuard {
    /// Writes every line logged so far to the file and stops the file writer; later lines go to
    /// stderr only. Called once, as the app quits.
    pub fn close(&self) {
        let writer = match self.0.lock() {
            Ok(mut kept) => kept.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        drop(writer);
    }
}

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
pub fn install(log_dir: &Path) -> Result<LogGuard, LoggingError> {
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
    let (file_writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(file_writer),
        )
        .try_init()?;
    Ok(LogGuard(std::sync::Mutex::new(Some(guard))))
}

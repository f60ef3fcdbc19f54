//! The app's async runtime: tokio's multi-thread scheduler, one worker a core, and at most
//! [`MAX_BLOCKING_THREADS`] threads for blocking calls (the store's turn, the keychain, name
//! lookups), which end after [`BLOCKING_KEEP_ALIVE`] idle. Tokio's default of 512 suits a
//! server; a desktop app's blocking calls are few and short, and each thread kept costs its
//! stack and an allocator arena for as long as it lives (the soak measured the pool growing
//! from 5 to 8 threads over a quarter of an hour, and the resident memory with it). The shell
//! runs on it, and so does the soak, so the soak measures the app's own configuration.

use std::time::Duration;

/// The most threads blocking calls run on at once; more wait their turn.
pub const MAX_BLOCKING_THREADS: usize = 4;
/// How long an idle blocking thread lives.
pub const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The runtime the app runs on.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .thread_name("swdesk-async")
        .build()
}

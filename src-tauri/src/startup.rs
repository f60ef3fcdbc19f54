//! When the process started and when the window first painted. The window reports its first
//! paint once ([`crate::commands::ui_ready`]); the time from process start to that moment is
//! logged, and printed on stdout as `swdesk:first-paint ms=<n>` when `SWDESK_REPORT_FIRST_PAINT`
//! is set (what `cargo xtask bench` reads).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The environment variable that asks for the first-paint line on stdout.
pub const REPORT_FIRST_PAINT_ENV: &str = "SWDESK_REPORT_FIRST_PAINT";

#[derive(Debug)]
pub struct Startup {
    process_start: Instant,
    first_paint: OnceLock<Duration>,
}

impl Startup {
    pub fn new(process_start: Instant) -> Self {
        Self {
            process_start,
            first_paint: OnceLock::new(),
        }
    }

    /// Records the first paint; later calls (a reload of the page) keep the first figure.
    pub fn mark_first_paint(&self) -> Duration {
        *self
            .first_paint
            .get_or_init(|| self.process_start.elapsed())
    }
}

/// Prints the bench line when asked to; the bench reads it from the child's stdout.
#[allow(clippy::print_stdout)]
pub fn report_first_paint(elapsed: Duration) {
    if std::env::var_os(REPORT_FIRST_PAINT_ENV).is_some() {
        println!("swdesk:first-paint ms={}", elapsed.as_millis());
    }
}

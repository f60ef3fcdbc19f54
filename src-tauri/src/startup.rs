//! When the process started, what it did on its way to a window, and when the window first
//! painted. The shell marks each step of a start ([`Startup::mark`]: the app built with its
//! plugins, its setup begun and done, the page starting and finishing to load); the window
//! reports its first paint (its prerendered first screen) and then the moment that screen came
//! to life ([`crate::commands::ui_ready`], [`crate::commands::ui_interactive`]). The steps are
//! logged with the first paint, and printed on stdout as
//! `swdesk:first-paint ms=<n> <step>=<ms>…` (then `swdesk:interactive ms=<n>`) when
//! `SWDESK_REPORT_FIRST_PAINT` is set (what `cargo xtask bench` reads, beside a bare window's
//! same line). Work that can wait until the window is on screen awaits [`Startup::painted`].

use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The environment variable that asks for the first-paint line on stdout.
pub const REPORT_FIRST_PAINT_ENV: &str = "SWDESK_REPORT_FIRST_PAINT";

#[derive(Debug)]
pub struct Startup {
    process_start: Instant,
    steps: Mutex<Vec<(&'static str, Duration)>>,
    first_paint: OnceLock<Duration>,
    painted: Notify,
    interactive: OnceLock<Duration>,
}

impl Startup {
    pub fn new(process_start: Instant) -> Self {
        Self {
            process_start,
            steps: Mutex::new(Vec::new()),
            first_paint: OnceLock::new(),
            painted: Notify::new(),
            interactive: OnceLock::new(),
        }
    }

    /// Notes that the start reached `step` now (only the first time: a reload keeps the start's).
    pub fn mark(&self, step: &'static str) {
        if self.first_paint.get().is_some() {
            return;
        }
        let mut steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        if !steps.iter().any(|(name, _)| *name == step) {
            steps.push((step, self.process_start.elapsed()));
        }
    }

    /// Records the first paint; later calls (a reload of the page) keep the first figure.
    pub fn mark_first_paint(&self) -> Duration {
        let elapsed = *self
            .first_paint
            .get_or_init(|| self.process_start.elapsed());
        self.painted.notify_waiters();
        elapsed
    }

    /// Records when the window's first screen came to life (its code loaded, clicks taken);
    /// later calls keep the first figure.
    pub fn mark_interactive(&self) -> Duration {
        *self
            .interactive
            .get_or_init(|| self.process_start.elapsed())
    }

    /// Resolves once the window has painted for the first time: work that can wait (the
    /// start's update check) waits for it, leaving the CPU to the window while it opens.
    pub async fn painted(&self) {
        let painted = self.painted.notified();
        if self.first_paint.get().is_none() {
            painted.await;
        }
    }

    /// The steps marked, as `step=<ms>` words in the order they came.
    pub fn steps(&self) -> String {
        let steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        steps
            .iter()
            .map(|(step, at)| format!("{step}={}", at.as_millis()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Prints a bench line (`swdesk:<moment> ms=<n> <words>`: `first-paint` with the steps,
/// `interactive`) when asked to; the bench reads them from the child's stdout.
#[allow(clippy::print_stdout)]
pub fn report(moment: &str, elapsed: Duration, words: &str) {
    if std::env::var_os(REPORT_FIRST_PAINT_ENV).is_some() {
        let line = format!("swdesk:{moment} ms={} {words}", elapsed.as_millis());
        println!("{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::Startup;

    const PATIENCE: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn work_waiting_for_the_first_paint_goes_on_once_the_window_has_painted() {
        let startup = Arc::new(Startup::new(Instant::now()));
        let waiting = tokio::spawn({
            let startup = Arc::clone(&startup);
            async move { startup.painted().await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "went on before the window painted");
        startup.mark_first_paint();
        tokio::time::timeout(PATIENCE, waiting)
            .await
            .expect("still waiting after the first paint")
            .expect("the waiting task failed");
    }

    #[tokio::test]
    async fn work_asking_after_the_first_paint_does_not_wait() {
        let startup = Startup::new(Instant::now());
        let painted = startup.mark_first_paint();
        tokio::time::timeout(PATIENCE, startup.painted())
            .await
            .expect("waited for a paint that had happened");
        assert_eq!(
            startup.mark_first_paint(),
            painted,
            "a reload kept the first figure"
        );
    }
}

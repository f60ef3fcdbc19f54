//! The window's page process, watched. WebKit runs the page in a process of its own (on Linux
//! `WebKitWebProcess`). When it dies (a crash, the kernel's out-of-memory killer) WebKitGTK
//! leaves the window blank and deaf until the app acts: the app says why in its log and loads
//! the page again. The session, the controller and the store live in this process, so the page
//! comes back as it was (less a field being typed in). A page that dies again and again is
//! loaded at most [`RELOADS`] times in [`SPELL`]; after that the app says so in a native dialog
//! rather than loop. When the page stops answering (WebKit's own check, a few seconds without a
//! reply) and when it answers again, the log says so too: a window that froze is told apart
//! from one that was never touched. Linux only for now: on macOS and Windows the system's
//! webview is not watched yet.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How many times the page is loaded again within one [`SPELL`].
const RELOADS: usize = 3;
/// The span [`RELOADS`] counts over.
const SPELL: Duration = Duration::from_secs(60);

/// Watches the window's page: loads it again when its process dies, and logs when it stops
/// answering and answers again.
#[cfg(target_os = "linux")]
pub fn watch<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    use std::cell::RefCell;
    use tauri::Manager;
    use webkit2gtk::WebViewExt;

    let app = window.app_handle().clone();
    let watched = window.with_webview(move |platform| {
        let page = platform.inner();
        let reloads = RefCell::new(Reloads::default());
        page.connect_web_process_terminated(move |page, reason| {
            page_ended(page, reason, &mut reloads.borrow_mut(), &app);
        });
        page.connect_is_web_process_responsive_notify(|page| {
            if page.is_web_process_responsive() {
                tracing::info!("the window's page answers again");
            } else {
                tracing::warn!("the window's page stopped answering");
            }
        });
    });
    if let Err(error) = watched {
        tracing::warn!(%error, "the window's page cannot be watched: a crash would leave it blank");
    }
}

/// Watches nothing yet where the system's webview is not WebKitGTK (macOS, Windows).
#[cfg(not(target_os = "linux"))]
pub fn watch<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) {}

/// The page's process ended: loads the page again while the budget allows, else says so.
#[cfg(target_os = "linux")]
fn page_ended<R: tauri::Runtime>(
    page: &webkit2gtk::WebView,
    reason: webkit2gtk::WebProcessTerminationReason,
    reloads: &mut Reloads,
    app: &tauri::AppHandle<R>,
) {
    use webkit2gtk::WebViewExt;
    let why = termination(reason);
    if reloads.allow(Instant::now()) {
        tracing::warn!(why, "the window's page ended: loading it again");
        page.reload();
    } else {
        tracing::error!(
            why,
            reloads = RELOADS,
            "the window's page ended again: left blank"
        );
        tell_the_owner(app);
    }
}

/// Why WebKit says the page's process ended, in words.
#[cfg(target_os = "linux")]
fn termination(reason: webkit2gtk::WebProcessTerminationReason) -> &'static str {
    use webkit2gtk::WebProcessTerminationReason as Reason;
    match reason {
        Reason::Crashed => "its process crashed or was killed",
        Reason::ExceededMemoryLimit => "its process passed WebKit's memory limit",
        Reason::TerminatedByApi => "the app ended its process",
        _ => "its process ended for a reason WebKit does not name",
    }
}

/// The native dialog for a page that keeps dying: the window cannot say it itself.
#[cfg(target_os = "linux")]
fn tell_the_owner<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    use tauri_plugin_dialog::{DialogExt, MessageDialogKind};
    app.dialog()
        .message(format!(
            "The window's page stopped {RELOADS} times within a minute, so Socialweb Desk no \
             longer loads it again. Your deployments keep running; quit and start the app to \
             see them, and see the app's log for what happened."
        ))
        .title("Socialweb Desk's window stopped")
        .kind(MessageDialogKind::Error)
        .show(|_| {});
}

/// The page's recent reloads: whether one more fits in the spell.
#[derive(Debug, Default)]
struct Reloads {
    recent: VecDeque<Instant>,
}

impl Reloads {
    /// Answers whether the page may be loaded again at `now`, and counts it if so.
    fn allow(&mut self, now: Instant) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|at| now.duration_since(*at) >= SPELL)
        {
            self.recent.pop_front();
        }
        if self.recent.len() >= RELOADS {
            return false;
        }
        self.recent.push_back(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_loaded_again_three_times_a_minute_and_again_once_the_minute_has_passed() {
        let start = Instant::now();
        let mut reloads = Reloads::default();
        let second = Duration::from_secs(1);
        assert!(reloads.allow(start));
        assert!(reloads.allow(start + second));
        assert!(reloads.allow(start + 2 * second));
        assert!(
            !reloads.allow(start + 3 * second),
            "a fourth within the minute"
        );
        assert!(
            !reloads.allow(start + 59 * second),
            "still within the first's minute"
        );
        assert!(
            reloads.allow(start + SPELL),
            "the first has left the minute"
        );
        assert!(!reloads.allow(start + SPELL), "and only the first");
        assert!(reloads.allow(start + SPELL + 2 * second));
    }
}

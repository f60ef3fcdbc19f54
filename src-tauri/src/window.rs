//! The main window as a desktop app keeps it: one window however often the app is launched (a
//! second launch brings this one forward, hands over its sign-in link if it carries one, and
//! exits), and its size, place and maximized state
//! restored at start and saved whenever it changes, so a restart or a crash loses nothing.
//!
//! One instance is one **data directory**, as a browser keeps one instance per profile: a launch
//! with another `XDG_DATA_HOME` (another profile; the tests' second device) is an instance of
//! its own. The instance is named from the app's identifier and a hash of the data directory: on
//! Linux a name in the abstract socket namespace (`swdesk_api::instance`, no D-Bus connection of
//! its own), elsewhere a name the single-instance plugin holds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// How long the window must rest after a move or resize before its state is written: a drag
/// is a burst of events, written once.
const SETTLE: Duration = Duration::from_millis(400);

/// The window's label in `tauri.conf.json`.
pub const MAIN: &str = "main";
/// The app's identifier in `tauri.conf.json` (a test keeps them equal).
const IDENTIFIER: &str = "computer.socialweb.desk";

/// Claims this profile's instance before the window opens: a later launch hands its arguments
/// to the running one and ends here; otherwise answers the instance to [`serve_later_launches`]
/// (none where it could not be held: the app then runs as an instance of its own).
#[cfg(target_os = "linux")]
pub fn claim_instance(runtime: &tokio::runtime::Runtime) -> Option<swdesk_api::instance::Instance> {
    use swdesk_api::instance::{Claim, claim};
    let arguments: Vec<String> = std::env::args().collect();
    match runtime.block_on(claim(&instance_name(&data_home()), &arguments)) {
        Claim::First(instance) => Some(instance),
        Claim::HandedOver => std::process::exit(0),
        Claim::Unclaimed(why) => {
            eprintln!("Socialweb Desk runs as an instance of its own: {why}");
            None
        }
    }
}

/// Serves later launches of this profile: each brings this window forward and hands over its
/// sign-in link, if it carries one.
#[cfg(target_os = "linux")]
pub fn serve_later_launches<R: Runtime>(
    app: &AppHandle<R>,
    instance: swdesk_api::instance::Instance,
) {
    let app = app.clone();
    tauri::async_runtime::spawn(instance.serve(move |arguments| later_launch(&app, &arguments)));
}

/// The single-instance plugin, one instance per data directory: a second launch calls
/// [`later_launch`] in the first and ends.
#[cfg(not(target_os = "linux"))]
pub fn single_instance_plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_single_instance::Builder::new()
        .dbus_id(instance_name(&data_home()))
        .callback(|app, arguments, _cwd| later_launch(app, &arguments))
        .build()
}

/// A later launch of this profile: its sign-in link (if any) to the waiting sign-in, and this
/// window forward.
fn later_launch<R: Runtime>(app: &AppHandle<R>, arguments: &[String]) {
    tracing::info!(
        arguments = arguments.len(),
        "a second launch: showing this window instead"
    );
    crate::app_link::hand_over(app, arguments);
    bring_forward(app);
}

/// Where the app's data directory lives: `$XDG_DATA_HOME`, or `~/.local/share`.
fn data_home() -> std::path::PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|home| !home.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".local/share"))
        })
        .unwrap_or_default()
}

/// The instance's name: the identifier, then `d` and a hash of `data_home` (an element of a
/// D-Bus name may not start with a digit).
fn instance_name(data_home: &std::path::Path) -> String {
    use std::hash::{DefaultHasher, Hash as _, Hasher as _};
    let mut hasher = DefaultHasher::new();
    data_home.hash(&mut hasher);
    format!("{IDENTIFIER}.d{:016x}", hasher.finish())
}

/// What is kept of the window: not its visibility (the window is shown after its first paint).
fn kept() -> StateFlags {
    StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED
}

/// The window-state plugin, keeping [`kept`] and saving after every move or resize.
pub fn state_plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_window_state::Builder::default()
        .with_state_flags(kept())
        .build()
}

/// Logs a window closing; after a move or resize, saves the state once the window rests for
/// [`SETTLE`].
pub fn on_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    static CHANGES: AtomicU64 = AtomicU64::new(0);
    match event {
        WindowEvent::CloseRequested { .. } => {
            tracing::info!(window = window.label(), "the window is asked to close");
        }
        WindowEvent::Destroyed => tracing::info!(window = window.label(), "the window closed"),
        _ => {}
    }
    if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
        return;
    }
    let change = CHANGES.fetch_add(1, Ordering::SeqCst) + 1;
    let app = window.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        if CHANGES.load(Ordering::SeqCst) == change {
            save_state(&app);
        }
    });
}

/// Saves the window's state now.
fn save_state<R: Runtime>(app: &AppHandle<R>) {
    if let Err(error) = app.save_window_state(kept()) {
        tracing::warn!(%error, "the window's size and place could not be saved");
    }
}

/// Shows the main window in front: unminimized, visible, focused.
fn bring_forward<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN) else {
        return;
    };
    for (step, result) in [
        ("unminimize", window.unminimize()),
        ("show", window.show()),
        ("focus", window.set_focus()),
    ] {
        if let Err(error) = result {
            tracing::warn!(step, %error, "the window could not be brought forward");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identifier_is_the_apps() {
        let config: serde_json::Value =
            serde_json::from_str(include_str!("../tauri.conf.json")).expect("the config");
        assert_eq!(config["identifier"], IDENTIFIER);
    }

    #[test]
    fn on_linux_the_product_name_is_the_identifier_so_the_desktop_entry_is_named_by_it() {
        let config: serde_json::Value =
            serde_json::from_str(include_str!("../tauri.linux.conf.json")).expect("the config");
        assert_eq!(config["productName"], IDENTIFIER);
    }

    #[test]
    fn each_data_directory_is_an_instance_of_its_own() {
        let home = instance_name(std::path::Path::new("/home/alice/.local/share"));
        assert_eq!(
            home,
            instance_name(std::path::Path::new("/home/alice/.local/share"))
        );
        assert_ne!(
            home,
            instance_name(std::path::Path::new("/tmp/device-2/data"))
        );
        assert!(home.starts_with("computer.socialweb.desk.d"), "{home}");
    }
}

//! The desktop around the app, for the tests: [`BrowserPages`], what the owner's browser showed
//! when the app opened a link; [`OtherApp`], another window taking the focus; [`resize_window`],
//! the owner dragging a window's edge; [`window_shown`], whether a native dialog is up; and the
//! notification service: `org.freedesktop.Notifications` on the
//! suite's D-Bus session bus, as a desktop shell (GNOME Shell, KDE's Plasma, dunst) serves it,
//! keeping every notification it is asked to show. Under Xvfb there is no desktop, so without
//! it the app's desktop notifications would go nowhere; with it a test reads what the owner
//! would have seen. It speaks the protocol for real (the Desktop Notifications Specification,
//! version 1.2): the app's notification plugin calls it exactly as it calls a desktop's.
//!
//! The suite's tests share one session bus, so one service serves them all: a test looks for
//! the notification its own deployment brought, by its body.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use zbus::zvariant::Value;

/// The well-known name and object path of the notification service.
const SERVICE: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";

/// One notification as the app asked the desktop to show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub app_name: String,
    pub summary: String,
    pub body: String,
}

/// The notification service, serving while it lives.
#[derive(Debug)]
pub struct DesktopNotifications {
    shown: Arc<Mutex<Vec<Shown>>>,
    _connection: zbus::Connection,
}

#[derive(Debug)]
struct Service {
    shown: Arc<Mutex<Vec<Shown>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Service {
    #[allow(clippy::too_many_arguments)] // the method's signature is the specification's
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, Value<'_>>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self
            .shown
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        shown.push(Shown {
            app_name,
            summary,
            body,
        });
        u32::try_from(shown.len()).unwrap_or(u32::MAX)
    }

    fn close_notification(&self, _id: u32) {}

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".to_owned()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "swdesk-tests".to_owned(),
            "socialweb.computer".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
            "1.2".to_owned(),
        )
    }
}

impl DesktopNotifications {
    /// Serves the notification service on the session bus; fails when there is no session bus
    /// or another service already holds the name.
    pub async fn serve() -> anyhow::Result<Self> {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let service = Service {
            shown: shown.clone(),
        };
        let connection = zbus::connection::Builder::session()
            .context("no D-Bus session bus: run the suite through `cargo xtask test`")?
            .name(SERVICE)?
            .serve_at(PATH, service)?
            .build()
            .await
            .with_context(|| format!("cannot serve {SERVICE} on the session bus"))?;
        Ok(Self {
            shown,
            _connection: connection,
        })
    }

    /// Every notification shown so far.
    pub fn shown(&self) -> Vec<Shown> {
        self.shown
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Waits up to `timeout` for a notification whose body contains `body`.
    pub async fn wait_for(&self, body: &str, timeout: Duration) -> anyhow::Result<Shown> {
        let started = Instant::now();
        loop {
            if let Some(shown) = self
                .shown()
                .into_iter()
                .find(|shown| shown.body.contains(body))
            {
                return Ok(shown);
            }
            if started.elapsed() > timeout {
                bail!(
                    "no desktop notification about {body:?} within {timeout:?}; shown: {:?}",
                    self.shown()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// The pages the owner's browser showed: the suite's system browser (`authorize.mjs`, Chromium)
/// loads every page that is not an authorization page and appends its address, HTTP status and
/// text to this file, named to the app by [`BrowserPages::ENV`].
#[derive(Debug)]
pub struct BrowserPages {
    path: std::path::PathBuf,
}

/// One page the browser showed.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ShownPage {
    pub url: String,
    pub status: Option<u16>,
    pub text: String,
}

impl BrowserPages {
    /// The variable that names the file to the browser.
    pub const ENV: &str = "SWDESK_BROWSER_PAGES";

    /// An empty record of pages for the test `test_name`.
    pub fn new(test_name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "swdesk-e2e-{}-{test_name}-pages.jsonl",
            std::process::id()
        ));
        std::fs::remove_file(&path).ok();
        Self { path }
    }

    /// The environment variable for the app (its browser inherits it).
    pub fn env(&self) -> (&'static str, String) {
        (Self::ENV, self.path.display().to_string())
    }

    /// Every page shown so far.
    pub fn shown(&self) -> anyhow::Result<Vec<ShownPage>> {
        let Ok(lines) = std::fs::read_to_string(&self.path) else {
            return Ok(Vec::new());
        };
        lines
            .lines()
            .map(|line| serde_json::from_str(line).context("a page line is JSON"))
            .collect()
    }

    /// Waits up to `timeout` for the browser to have shown `url`.
    pub async fn wait_for(&self, url: &str, timeout: Duration) -> anyhow::Result<ShownPage> {
        let started = Instant::now();
        loop {
            if let Some(page) = self.shown()?.into_iter().find(|page| page.url == url) {
                return Ok(page);
            }
            if started.elapsed() > timeout {
                bail!(
                    "the browser did not show {url} within {timeout:?}; shown: {:?}",
                    self.shown()?
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for BrowserPages {
    fn drop(&mut self) {
        std::fs::remove_file(&self.path).ok();
    }
}

/// Another application's window on the suite's display, holding the keyboard focus: the owner
/// has switched away from Socialweb Desk (the window is shown, but not looked at). Dropping it
/// closes the window (with its connection to the display).
#[derive(Debug)]
pub struct OtherApp {
    _connection: x11rb::rust_connection::RustConnection,
}

impl OtherApp {
    /// Opens a small window on `$DISPLAY` and gives it the focus.
    pub fn focus() -> anyhow::Result<Self> {
        use x11rb::connection::Connection as _;
        use x11rb::protocol::xproto::{
            ConnectionExt as _, CreateWindowAux, EventMask, InputFocus, WindowClass,
        };
        use x11rb::wrapper::ConnectionExt as _;

        let (connection, screen) =
            x11rb::connect(None).context("cannot reach the X display ($DISPLAY)")?;
        let screen = &connection.setup().roots[screen];
        let window = connection.generate_id()?;
        let aux = CreateWindowAux::new()
            .background_pixel(screen.white_pixel)
            .event_mask(EventMask::STRUCTURE_NOTIFY);
        connection.create_window(
            screen.root_depth,
            window,
            screen.root,
            0,
            0,
            200,
            100,
            0,
            WindowClass::INPUT_OUTPUT,
            screen.root_visual,
            &aux,
        )?;
        connection.change_property8(
            x11rb::protocol::xproto::PropMode::REPLACE,
            window,
            x11rb::protocol::xproto::AtomEnum::WM_NAME,
            x11rb::protocol::xproto::AtomEnum::STRING,
            b"another app",
        )?;
        connection.map_window(window)?;
        connection.flush()?;
        loop {
            if let x11rb::protocol::Event::MapNotify(_) = connection.wait_for_event()? {
                break;
            }
        }
        connection
            .set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)?
            .check()
            .context("cannot give the other window the focus")?;
        Ok(Self {
            _connection: connection,
        })
    }
}

/// Resizes the top-level window titled `title` on `$DISPLAY` to `width` × `height`, as a window
/// manager does when the owner drags its edge (the suite's display has no window manager).
pub fn resize_window(title: &str, width: u32, height: u32) -> anyhow::Result<()> {
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xproto::{ConfigureWindowAux, ConnectionExt as _};

    let (connection, screen) =
        x11rb::connect(None).context("cannot reach the X display ($DISPLAY)")?;
    let window = top_level_titled(&connection, screen, title)?
        .with_context(|| format!("no window titled {title:?} on the display"))?;
    connection
        .configure_window(
            window,
            &ConfigureWindowAux::new().width(width).height(height),
        )?
        .check()
        .context("the window could not be resized")?;
    connection.flush()?;
    Ok(())
}

/// Whether a top-level window titled `title` is on `$DISPLAY` (a native dialog, say).
pub fn window_shown(title: &str) -> anyhow::Result<bool> {
    let (connection, screen) =
        x11rb::connect(None).context("cannot reach the X display ($DISPLAY)")?;
    Ok(top_level_titled(&connection, screen, title)?.is_some())
}

/// The last top-level window titled `title` on the display's `screen`.
fn top_level_titled(
    connection: &impl x11rb::connection::Connection,
    screen: usize,
    title: &str,
) -> anyhow::Result<Option<x11rb::protocol::xproto::Window>> {
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

    let root = connection.setup().roots[screen].root;
    let mut found = None;
    for window in connection.query_tree(root)?.reply()?.children {
        let name = connection
            .get_property(false, window, AtomEnum::WM_NAME, AtomEnum::ANY, 0, 256)?
            .reply()?
            .value;
        if String::from_utf8_lossy(&name) == title {
            found = Some(window);
        }
    }
    Ok(found)
}

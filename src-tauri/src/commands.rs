//! The commands the window may call. Each is a thin wrapper: arguments in, one call, a DTO out.
//! Every command registered in `bindings::specta_builder` (which makes its handler and its
//! TypeScript types) is named in `commands.list` (which the build's gate reads) and granted in
//! `capabilities/main.json`; a test in `bindings` fails when the three differ.

use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use swdesk_api::{Desk, ErrorCode};
use tauri::{AppHandle, Manager, State};

use crate::startup::{self, Startup};

/// The app's name as people read it. Not Tauri's product name: on Linux that is the app id
/// (`tauri.linux.conf.json`), which names the desktop entry and the packages.
const DISPLAY_NAME: &str = "Socialweb Desk";

/// What the Settings screen shows about this installation.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub name: String,
    pub version: String,
    /// The network the app talks to (`Local sandbox` under `cargo xtask run`).
    pub network: String,
    /// The local sandbox's demo account, shown on the sign-in screen.
    pub demo: Option<DemoAccount>,
    pub data_dir: String,
    pub log_dir: String,
    /// Where kubeconfigs go by default (`~/.kube`).
    pub kubeconfig_dir: String,
    /// The scopes sign-in asks for, shown before the browser opens.
    pub requested_scopes: Vec<String>,
}

/// An account the local sandbox made for trying the app (a sandbox password, nothing real).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct DemoAccount {
    pub handle: String,
    pub password: String,
}

/// An error as the window sees it: a stable `code` to branch on, a readable `message`, and
/// for a refused declaration every problem it has.
#[derive(Debug, Clone, Serialize, Type, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
    pub problems: Vec<ProblemDto>,
}

/// One problem of a declaration: where (a JSON Pointer), what is wrong, what would fix it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ProblemDto {
    pub path: String,
    pub message: String,
    pub fix: String,
}

impl From<&swdesk_api::Problem> for ProblemDto {
    fn from(problem: &swdesk_api::Problem) -> Self {
        Self {
            path: problem.path.clone(),
            message: problem.message.clone(),
            fix: problem.fix.clone(),
        }
    }
}

impl CommandError {
    pub(crate) fn new(code: ErrorCode, message: impl ToString) -> Self {
        Self {
            code,
            message: message.to_string(),
            problems: Vec::new(),
        }
    }

    /// The same error, naming `problems`.
    pub(crate) fn with_problems(mut self, problems: Vec<ProblemDto>) -> Self {
        self.problems = problems;
        self
    }
}

/// Facts about this installation for the Settings screen.
#[tauri::command]
#[specta::specta]
pub fn app_info(app: AppHandle, desk: State<'_, Arc<Desk>>) -> Result<AppInfo, CommandError> {
    let paths = app.path();
    let dir = |result: tauri::Result<std::path::PathBuf>| {
        result
            .map(|path| path.display().to_string())
            .map_err(|error| CommandError::new(ErrorCode::Paths, error))
    };
    Ok(AppInfo {
        name: DISPLAY_NAME.to_owned(),
        version: app.package_info().version.to_string(),
        network: desk.sessions().network().display_name.clone(),
        demo: desk
            .sessions()
            .network()
            .demo
            .as_ref()
            .map(|demo| DemoAccount {
                handle: demo.handle.clone(),
                password: demo.password.clone(),
            }),
        data_dir: dir(paths.app_data_dir())?,
        log_dir: dir(paths.app_log_dir())?,
        kubeconfig_dir: dir(paths.home_dir().map(|home| home.join(".kube")))?,
        requested_scopes: swdesk_api::session::requested_scopes(),
    })
}

/// The window calls this once it has painted for the first time.
#[tauri::command]
#[specta::specta]
pub fn ui_ready(startup: State<'_, Startup>) {
    let elapsed = startup.mark_first_paint();
    let steps = startup.steps();
    tracing::info!(
        first_paint_ms = elapsed.as_millis() as u64,
        %steps,
        "window painted"
    );
    startup::report("first-paint", elapsed, &steps);
}

/// The window calls this once its first screen has come to life (the app's code hydrated
/// it: clicks are taken from here on).
#[tauri::command]
#[specta::specta]
pub fn ui_interactive(startup: State<'_, Startup>) {
    let elapsed = startup.mark_interactive();
    tracing::info!(
        interactive_ms = elapsed.as_millis() as u64,
        "window interactive"
    );
    startup::report("interactive", elapsed, "");
}

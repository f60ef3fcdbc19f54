//! The app's sign-in link in the shell: a launch whose arguments carry
//! `computer.socialweb.desk:/oauth/callback?…` (the desktop opening the link, most often as the
//! second launch that [`crate::window`] turns into this process's callback) hands the link to
//! the sign-in waiting for it. The link is never logged: it carries an authorization code.

use std::sync::Arc;

use swdesk_api::Desk;
use swdesk_api::app_link::AppLinks;
use tauri::{AppHandle, Manager, Runtime};

/// Hands every app link among `arguments` to the desk's waiting sign-in.
pub fn hand_over<R: Runtime>(app: &AppHandle<R>, arguments: &[String]) {
    let links = arguments
        .iter()
        .skip(1)
        .filter(|argument| AppLinks::is_app_link(argument));
    for link in links {
        let Some(desk) = app.try_state::<Arc<Desk>>() else {
            tracing::warn!("a sign-in link came before the app was ready; it was dropped");
            return;
        };
        match desk.sessions().deliver_app_link(link) {
            Ok(()) => tracing::info!("a sign-in link was handed to the waiting sign-in"),
            Err(error) => tracing::warn!(%error, "a sign-in link was not taken"),
        }
    }
}

//! The session commands: what the account area and the sign-in screen call. Each is a thin
//! wrapper over [`swdesk_api::Desk`]: restore-or-read, sign in (waits for the browser), cancel,
//! sign out; the desk runs the account's controller while someone is signed in. Errors carry
//! the library's stable codes.

use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use swdesk_api::{Account, Desk, SessionError, SessionView};
use tauri::State;

use crate::commands::CommandError;

/// Where the session is.
#[derive(Debug, Clone, Copy, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum SessionState {
    SignedOut,
    SigningIn,
    SignedIn,
}

/// The session as the window shows it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub state: SessionState,
    /// Signed in: who.
    pub account: Option<AccountDto>,
    /// Signed out: why, when it was not the owner's choice. Signed in: why the session is kept
    /// in memory only (the keychain refused its refreshed tokens).
    pub notice: Option<String>,
    /// Signing in: the handle or DID.
    pub input: Option<String>,
}

/// The signed-in account; nothing secret.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AccountDto {
    pub did: String,
    pub handle: Option<String>,
    pub pds: String,
    /// The scopes the server granted, one per item.
    pub granted_scopes: Vec<String>,
}

impl From<Account> for AccountDto {
    fn from(account: Account) -> Self {
        Self {
            granted_scopes: account.granted_scopes(),
            did: account.did,
            handle: account.handle,
            pds: account.pds.to_string(),
        }
    }
}

impl From<SessionView> for Session {
    fn from(view: SessionView) -> Self {
        let empty = |state| Session {
            state,
            account: None,
            notice: None,
            input: None,
        };
        match view {
            SessionView::SignedOut { notice } => Session {
                notice,
                ..empty(SessionState::SignedOut)
            },
            SessionView::SigningIn { input } => Session {
                input: Some(input),
                ..empty(SessionState::SigningIn)
            },
            SessionView::SignedIn(account) => Session {
                account: Some(account.into()),
                ..empty(SessionState::SignedIn)
            },
        }
    }
}

impl From<SessionError> for CommandError {
    fn from(error: SessionError) -> Self {
        CommandError::new(error.code(), error)
    }
}

/// The session now (the first call restores the keychain's session).
#[tauri::command]
#[specta::specta]
pub async fn session(desk: State<'_, Arc<Desk>>) -> Result<Session, CommandError> {
    let mut session = Session::from(desk.session().await);
    if matches!(session.state, SessionState::SignedIn) {
        session.notice = desk.sessions().unsaved();
    }
    Ok(session)
}

/// Signs in the handle or DID through the browser; answers once the browser came back.
#[tauri::command]
#[specta::specta]
pub async fn sign_in(
    desk: State<'_, Arc<Desk>>,
    input: String,
) -> Result<AccountDto, CommandError> {
    Ok(desk.sign_in(&input).await?.into())
}

/// Stops a sign-in that waits for the browser.
#[tauri::command]
#[specta::specta]
pub fn cancel_sign_in(desk: State<'_, Arc<Desk>>) -> bool {
    desk.sessions().cancel_sign_in()
}

/// Revokes the session and forgets it.
#[tauri::command]
#[specta::specta]
pub async fn sign_out(desk: State<'_, Arc<Desk>>) -> Result<(), CommandError> {
    Ok(desk.sign_out().await?)
}

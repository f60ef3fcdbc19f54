//! The market-key commands: what the *Publish your market key* step and Settings call. Each is
//! a thin wrapper over [`swdesk_api::Desk`]: read the key and how the live DID document stands
//! with it, ask the owner's server for the `identity:*` grant (through the browser), have the
//! PDS email the code, make the change with the code the owner typed. The code is passed on,
//! never logged.

use std::sync::Arc;

use swdesk_api::Desk;
use swdesk_api::market_key::{ChangeAsked, MarketKeyError, MarketKeyView};
use tauri::State;

use crate::commands::CommandError;

impl From<MarketKeyError> for CommandError {
    fn from(error: MarketKeyError) -> Self {
        CommandError::new(error.code(), error)
    }
}

/// This device's market key and how the owner's live DID document stands with it.
#[tauri::command]
#[specta::specta]
pub async fn market_key(desk: State<'_, Arc<Desk>>) -> Result<MarketKeyView, CommandError> {
    Ok(desk.market_key().await?)
}

/// Asks the owner's server, through the browser, to let the app change the DID document.
#[tauri::command]
#[specta::specta]
pub async fn grant_identity(desk: State<'_, Arc<Desk>>) -> Result<MarketKeyView, CommandError> {
    Ok(desk.grant_identity().await?)
}

/// Has the owner's PDS email them the code the change needs.
#[tauri::command]
#[specta::specta]
pub async fn request_market_key_code(desk: State<'_, Arc<Desk>>) -> Result<(), CommandError> {
    Ok(desk.request_market_key_code().await?)
}

/// Publishes this device's key (or removes the market key) with the emailed `code`.
#[tauri::command]
#[specta::specta]
pub async fn change_market_key(
    desk: State<'_, Arc<Desk>>,
    code: String,
    change: ChangeAsked,
) -> Result<MarketKeyView, CommandError> {
    Ok(desk.change_market_key(&code, change).await?)
}

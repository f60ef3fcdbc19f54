//! The deployment commands and the live events of the window: each command is a thin wrapper
//! over [`swdesk_api::Desk`] (the signed-in account's store and controller); the events carry
//! every deployment change and every controller step as they happen, so the window never polls.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use specta::Type;
use swdesk_api::activity::{ActivityEvent, SyncView};
use swdesk_api::controller::LiveEvent;
use swdesk_api::deployments::{
    ContractIntent, DeploymentChange, DeploymentDetail, DeploymentRow, IntentError,
};
use swdesk_api::records::RecordView;
use swdesk_api::{
    DeploymentKind, Desk, DeskError, ErrorCode, IndexHealth, LiveStatus, Name, Resolution,
};
use tauri::AppHandle;
use tauri_specta::Event;

use crate::commands::{CommandError, ProblemDto};

/// A deployment changed in the store (its row now, or none once it is gone).
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct DeploymentChanged(pub DeploymentChange);

/// Deployment changes were lost on the way to the window: it lists every deployment again.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct DeploymentsStale;

/// A bidder or winner shown by its DID now has its handle: an open deployment reads again.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct IdentityNamed;

/// A step of the controller, for the Activity view.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct ControllerActivity(pub ActivityEvent);

/// The account's controller started (its deployments can be read) or stopped.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct ControllerRunning(pub bool);

/// How the index at `self` stands now: its count, the deployments waiting for room, why it is
/// not written (another client's index this version cannot read).
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct IndexHealthChanged(pub IndexHealth);

/// Whether edits made on the owner's other devices now arrive live or by polling, and why.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct LiveStatusChanged(pub LiveStatus);

/// The authorization server ended the session: the window reads the session again (it is
/// signed out, with why) and asks the owner to sign in.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct SessionEnded;

/// Which kind of deployment a command is about.
#[derive(Debug, Clone, Copy, Deserialize, Type)]
pub enum Kind {
    Infra,
    EphemeralInfra,
}

impl From<Kind> for DeploymentKind {
    fn from(kind: Kind) -> Self {
        match kind {
            Kind::Infra => DeploymentKind::Infra,
            Kind::EphemeralInfra => DeploymentKind::EphemeralInfra,
        }
    }
}

/// One deployment with what the controller knows of it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentView {
    pub detail: DeploymentDetail,
    pub sync: Option<SyncView>,
}

/// The owner's answer to a conflict.
#[derive(Debug, Clone, Copy, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum Keep {
    /// This device's declaration is written to the record.
    Local,
    /// The record's declaration is applied here.
    Record,
}

impl From<DeskError> for CommandError {
    fn from(error: DeskError) -> Self {
        let problems = match &error {
            DeskError::Intent(IntentError::Invalid(problems)) => {
                problems.iter().map(ProblemDto::from).collect()
            }
            _ => Vec::new(),
        };
        CommandError::new(error.code(), &error).with_problems(problems)
    }
}

fn name(text: &str) -> Result<Name, CommandError> {
    Name::parse(text).map_err(|error| CommandError::new(ErrorCode::NotFound, error))
}

/// Every deployment of the signed-in account.
#[tauri::command]
#[specta::specta]
pub async fn deployments(
    desk: tauri::State<'_, Arc<Desk>>,
) -> Result<Vec<DeploymentRow>, CommandError> {
    Ok(desk.deployments().await?)
}

/// How the index at `self` stands: the count in the list's header, the rows waiting for room,
/// the notice above the list.
#[tauri::command]
#[specta::specta]
pub async fn index_health(desk: tauri::State<'_, Arc<Desk>>) -> Result<IndexHealth, CommandError> {
    Ok(desk.index_health().await)
}

/// Whether edits made on the owner's other devices arrive live (the repo's stream is open) or
/// by polling, and why: the indicator beside the account.
#[tauri::command]
#[specta::specta]
pub async fn live_status(desk: tauri::State<'_, Arc<Desk>>) -> Result<LiveStatus, CommandError> {
    Ok(desk.live_status().await)
}

/// The URL Settings keeps for following the owner's repo instead of their PDS (none: their
/// PDS).
#[tauri::command]
#[specta::specta]
pub async fn live_source(
    desk: tauri::State<'_, Arc<Desk>>,
) -> Result<Option<String>, CommandError> {
    Ok(desk.live_source())
}

/// Follows the owner's repo at `url` from now on (empty: their PDS); refused, naming every
/// problem, when the network's outbound policy does not allow it. Answers what is kept now.
#[tauri::command]
#[specta::specta]
pub async fn set_live_source(
    desk: tauri::State<'_, Arc<Desk>>,
    url: String,
) -> Result<Option<String>, CommandError> {
    Ok(desk.set_live_source(&url).await?)
}

/// One deployment with its contracts, record and controller state.
#[tauri::command]
#[specta::specta]
pub async fn deployment(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
) -> Result<Option<DeploymentView>, CommandError> {
    let found = desk.deployment(kind.into(), &self::name(&name)?).await?;
    Ok(found.map(|(detail, sync)| DeploymentView { detail, sync }))
}

/// The deployment's record as the repo holds it now, beside this device's declaration (the
/// record inspector and the conflict view); `None` before it has a record.
#[tauri::command]
#[specta::specta]
pub async fn deployment_record(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
) -> Result<Option<RecordView>, CommandError> {
    Ok(desk
        .deployment_record(kind.into(), &self::name(&name)?)
        .await?)
}

/// Creates or edits a deployment from its declaration (JSON text); refused whole, with every
/// problem, when anything is wrong.
#[tauri::command]
#[specta::specta]
pub async fn declare_deployment(
    desk: tauri::State<'_, Arc<Desk>>,
    declaration: String,
) -> Result<DeploymentRow, CommandError> {
    let value = serde_json::from_str(&declaration).map_err(|error| {
        CommandError::new(ErrorCode::Invalid, "the declaration is not JSON").with_problems(vec![
            ProblemDto {
                path: String::new(),
                message: format!("This is not JSON: {error}."),
                fix: "Correct the JSON syntax.".to_owned(),
            },
        ])
    })?;
    Ok(desk.declare(value).await?)
}

/// Stages, requests or releases one contract.
#[tauri::command]
#[specta::specta]
pub async fn set_contract(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
    contract: String,
    intent: ContractIntent,
) -> Result<(), CommandError> {
    Ok(desk
        .set_contract(kind.into(), self::name(&name)?, contract, intent)
        .await?)
}

/// Sets a deployment's secret to `value` for `contracts` (none: all): a new secret, or a
/// rotation its guests get sealed afresh. The value goes to the keychain only.
#[tauri::command]
#[specta::specta]
pub async fn set_secret(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
    secret: String,
    value: String,
    contracts: Vec<String>,
) -> Result<(), CommandError> {
    Ok(desk
        .set_secret(kind.into(), self::name(&name)?, secret, value, contracts)
        .await?)
}

/// Takes a secret off a deployment and forgets its value.
#[tauri::command]
#[specta::specta]
pub async fn remove_secret(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
    secret: String,
) -> Result<(), CommandError> {
    Ok(desk
        .remove_secret(kind.into(), self::name(&name)?, secret)
        .await?)
}

/// A secret's value from the keychain, when the owner asks to see it.
#[tauri::command]
#[specta::specta]
pub async fn reveal_secret(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
    secret: String,
) -> Result<String, CommandError> {
    Ok(desk
        .reveal_secret(kind.into(), self::name(&name)?, secret)
        .await?)
}

/// Ends a deployment: its contracts are released and its record stays, ended.
#[tauri::command]
#[specta::specta]
pub async fn end_deployment(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
) -> Result<(), CommandError> {
    Ok(desk.end(kind.into(), self::name(&name)?).await?)
}

/// Answers a deployment's conflict: keep this device's declaration, or take the record's.
#[tauri::command]
#[specta::specta]
pub async fn resolve_conflict(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
    keep: Keep,
) -> Result<(), CommandError> {
    let resolution = match keep {
        Keep::Local => Resolution::KeepLocal,
        Keep::Record => Resolution::TakeRecord,
    };
    Ok(desk
        .resolve_conflict(kind.into(), &self::name(&name)?, resolution)
        .await?)
}

/// Ends a deployment whose record was changed elsewhere in fields only creation sets, for a
/// successor declared as the record is; answers the successor's row.
#[tauri::command]
#[specta::specta]
pub async fn succeed_deployment(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
) -> Result<DeploymentRow, CommandError> {
    Ok(desk
        .succeed_deployment(kind.into(), &self::name(&name)?)
        .await?)
}

/// Opens a contract's receipt in the owner's browser (the record as its author's PDS serves
/// it); the window names the contract, never an address, and the `host` it showed the owner,
/// who confirmed it (refused when the link's host is another).
#[tauri::command]
#[specta::specta]
pub async fn open_receipt(
    desk: tauri::State<'_, Arc<Desk>>,
    kind: Kind,
    name: String,
    contract: String,
    host: String,
) -> Result<(), CommandError> {
    Ok(desk
        .open_receipt(kind.into(), &self::name(&name)?, &contract, &host)
        .await?)
}

/// Forwards the desk's live events to the window until the app ends.
pub fn forward_live_events(app: AppHandle, desk: &Desk) {
    let mut live = desk.live();
    tauri::async_runtime::spawn(async move {
        loop {
            let sent = match live.recv().await {
                Ok(LiveEvent::Deployment(change)) => DeploymentChanged(*change).emit(&app),
                Ok(LiveEvent::Activity(step)) => ControllerActivity(step).emit(&app),
                Ok(LiveEvent::ControllerRunning(running)) => ControllerRunning(running).emit(&app),
                Ok(LiveEvent::Clusters(view)) => crate::clusters::ClustersChanged(view).emit(&app),
                Ok(LiveEvent::DeploymentsStale) => DeploymentsStale.emit(&app),
                Ok(LiveEvent::IdentityNamed) => IdentityNamed.emit(&app),
                Ok(LiveEvent::IndexHealth(health)) => IndexHealthChanged(health).emit(&app),
                Ok(LiveEvent::SessionEnded) => SessionEnded.emit(&app),
                Ok(LiveEvent::LiveStatus(status)) => LiveStatusChanged(status).emit(&app),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(
                        missed,
                        "the window fell behind the live events; it lists again"
                    );
                    DeploymentsStale.emit(&app)
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            if let Err(error) = sent {
                tracing::warn!(%error, "a live event could not reach the window");
            }
        }
    });
}

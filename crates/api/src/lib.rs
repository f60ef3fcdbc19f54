//! The facade of swdesk: what every caller (the app shell, tests, a CLI) uses, with the real
//! adapters wired in. It knows nothing of Tauri; the shell turns its answers into DTOs.
//!
//! Map:
//! - [`network`]: which network the app talks to (the local sandbox, or the public network);
//! - [`session`]: the owner's session: restore, sign in through the browser, sign out;
//!   [`app_link`]: whether the desktop hands the app's sign-in link to this program;
//! - [`controller`]: the embedded core controller of the signed-in account (its store, the
//!   engine over its repo); [`live_source`]: where its repo is followed live (the PDS, or a
//!   relay the owner names in Settings);
//! - [`deployments`] and [`contracts`]: the deployments as the window shows them, with each
//!   contract's bids, guest events and phase history; [`identities`]: the handles and PDSes of
//!   the DIDs shown, resolved once and kept; [`records`]: a deployment's record as the repo
//!   holds it, beside this device's declaration (the record inspector, the conflict view);
//!   [`secrets`]: a deployment's secrets (set, rotated, removed) and what each guest has of
//!   them; [`intent`]: how both edit a declaration (one compare-and-swap, refused whole);
//! - [`clusters`]: the owner's tenant clusters through the gateway; [`node_infra`]: a
//!   cluster's nodes as the one Infra the gateway keeps for them; [`kubeconfigs`]: the
//!   kubeconfigs saved here, kept across restarts; [`kubeconfig_paths`]: where the window may
//!   have one written (under `~/.kube`, or picked in the save dialog); [`last_seen`]: the clusters last seen live,
//!   shown at an offline start;
//! - [`update`]: signed updates: the release manifest and package, fetched under the outbound
//!   policy, and what the window shows of them;
//! - [`error_code`]: the one list of codes a failed command carries to the window;
//! - [`market_key`]: the owner's market key in their DID document (publish, replace, remove,
//!   with the code their PDS emails), as the window's step and Settings show it;
//! - [`desk`]: all of it together, as the shell sees the app: the controller runs while
//!   someone is signed in; [`runtime`]: the async runtime the app runs on; [`instance`] (Linux):
//!   one running app per profile, a later launch handing over its arguments.

pub mod activity;
pub mod app_link;
pub mod clusters;
pub mod contracts;
pub mod controller;
pub mod deployments;
pub mod desk;
pub mod error_code;
pub mod identities;
#[cfg(target_os = "linux")]
pub mod instance;
pub mod intent;
pub mod kubeconfig_paths;
pub mod kubeconfigs;
pub mod last_seen;
pub mod live_source;
pub mod market_key;
pub mod network;
pub mod node_infra;
mod private_json;
pub mod records;
pub mod runtime;
pub mod secrets;
pub mod session;
pub mod update;

pub use controller::LiveStatus;
pub use desk::{Desk, DeskError};
pub use error_code::ErrorCode;
pub use network::{DemoAccount, Network, NetworkError};
pub use session::{SessionError, SessionView, Sessions};
pub use swdesk_atproto::{Account, SystemBrowser};
pub use swdesk_core::index_health::IndexHealth;
pub use swdesk_core::sync::Resolution;
pub use swdesk_kernel::deployment_kind::DeploymentKind;
pub use swdesk_kernel::name::Name;
pub use swdesk_lexicon::Problem;

/// The serde name of a unit enum value (`staged`, `Ready`, ...): how the window names phases.
pub(crate) fn serde_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

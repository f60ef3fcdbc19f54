//! The deployment rules of swdesk's embedded core controller, with no I/O, no async and no
//! clock: every rule is a pure function the controller calls, and time comes in as a
//! `swdesk_kernel::timestamp::Timestamp` parameter (`now`). The words these rules share with
//! the market's (names, rkeys, URIs, time, objects, the repo port, retries, phases, drift) are
//! `swdesk-kernel`'s; the market requester's decisions and the ComputeContract they run are
//! `swdesk-auction`'s, which this crate stands on (a deployment's contracts run on the market).
//!
//! Map:
//! - objects: [`infra`] (Infra and EphemeralInfra specs and statuses), [`record`]
//!   (AtprotoRecord), [`collection`] (following an account's index), [`resource`] (every kind,
//!   by name);
//! - declarations: [`declaration`] (validation, every problem at once, and the declaration
//!   hash), [`publish`] (object to record, record onto spec);
//! - decisions: [`sync`] (one sync action per reconcile), [`lifecycle`] (contract actions, the
//!   end of a deployment), [`deployment`] (what a deployment is, who writes it), [`index`] (the
//!   index at `self`), [`index_health`] (how it stands for the window), [`progress`] (when a
//!   record may be written), [`seen`] (a follower's view of the writer's phases),
//!   [`cluster_nodes`] (a cluster's NodeClaims against the Infra that holds its nodes).

pub mod cluster_nodes;
pub mod collection;
pub mod declaration;
pub mod deployment;
pub mod index;
pub mod index_health;
pub mod infra;
pub mod lifecycle;
pub mod progress;
pub mod publish;
pub mod record;
pub mod resource;
pub mod seen;
pub mod sync;

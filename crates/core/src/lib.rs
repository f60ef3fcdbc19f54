//! The domain of swdesk's embedded core controller, with no I/O, no async and no clock: every
//! rule is a pure function the controller calls, and time comes in as a
//! [`timestamp::Timestamp`] parameter (`now`).
//!
//! Map:
//! - objects: [`object`] (metadata, uids, the generic `Object`), [`infra`] (Infra and
//!   EphemeralInfra specs and statuses), [`compute`] (ComputeContract, what a contract waits
//!   for), [`record`] (AtprotoRecord), [`collection`] (following an account's index),
//!   [`secret`] (references only; values redacted; what each guest has of them);
//! - names and keys: [`name`] (DNS-1123 labels), [`rkey`] (record keys and their succession),
//!   [`uri`] (record URIs);
//! - declarations: [`declaration`] (validation, every problem at once, and the declaration
//!   hash), [`publish`] (object to record, record onto spec);
//! - decisions: [`sync`] (one sync action per reconcile), [`lifecycle`] (contract actions, the
//!   end of a deployment), [`rollup`] (the object phase), [`index`] (the index at `self`),
//!   [`progress`] (when a record may be written), [`auction`] (the requester's side of the
//!   market's RFP flow: request, bidders, bids, winner, receipt, the durable steps), [`drift`]
//!   (what the world says that the records do not), [`cluster_nodes`] (a cluster's NodeClaims
//!   against the Infra that holds its nodes);
//! - ports: [`repo`] (`RecordRepo`, the owner's atproto repo), [`market`] (`Market`, the
//!   compute market), [`timestamp`] (time values and the `Clock` port);
//! - faults: [`retry`] (the one retry rule: which failures may heal, backoff with jitter,
//!   `Retry-After`, deadlines; each market step's deadline is in `auction::deadline`).

pub mod auction;
pub mod cluster_nodes;
pub mod collection;
pub mod compute;
pub mod declaration;
pub mod deployment;
pub mod drift;
pub mod index;
pub mod index_health;
pub mod infra;
pub mod lifecycle;
pub mod market;
pub mod name;
mod newtype;
pub mod object;
pub mod progress;
pub mod publish;
pub mod record;
pub mod repo;
pub mod resource;
pub mod retry;
pub mod rkey;
pub mod rollup;
pub mod secret;
pub mod seen;
pub mod sync;
pub mod timestamp;
pub mod uri;

//! The requester side of the compute market's RFP flow (`market.md`, issue 8), as pure
//! decisions: the adapter that talks to PDSes and bidders asks these modules what to write,
//! whom to ask, which bids count, who wins, whether a receipt holds, and what to do next. It
//! stands on `swdesk-kernel` alone (and the lexicon); the deployment rules (`swdesk-core`) stand
//! on it, never the other way round.
//!
//! Map:
//! - [`compute`]: the ComputeContract (one declared contract's run on the market), its phase and
//!   what it waits for; [`market`]: the `Market` port that advances one (and
//!   [`market::Unconnected`], the market of a session without one);
//! - [`secret`]: what each guest has of its secrets (the secrets themselves are the kernel's);
//! - [`request`]: a declared contract → the `compute.vm` payload, the fulfillment policy record,
//!   the RFP, the bid window and `firstFree`, every problem at once;
//! - [`carriage`]: SSH keys into cloud-init `user_data`; fields `compute.vm` cannot carry refused;
//! - [`bidders`]: the bidders asked (explicit ∪ offerings for the payload, minus the denied);
//! - [`bids`]: bid costs, admission, the window, the winner, the no-bids rejection;
//! - [`records`]: the accept, the acceptance of free terms and the release records;
//! - [`receipt`]: the winner's receipt (and free grant) checked against the deal;
//! - [`trust`]: what was verified of a peer's record (proof, key binding), kept to be shown;
//! - [`deadline`]: how long each step may keep failing; a failure as a retry shown or the
//!   contract's end;
//! - [`flow`]: the durable steps of one contract, what each persists, the next thing to do and
//!   the transitions, with deterministic record keys so a restart never writes a second RFP.
//!
//! Nothing here does I/O or reads a clock: time comes in as `now`.

pub mod bidders;
pub mod bids;
pub mod carriage;
pub mod compute;
pub mod deadline;
pub mod flow;
pub mod market;
pub mod receipt;
pub mod records;
pub mod request;
pub mod secret;
pub mod trust;

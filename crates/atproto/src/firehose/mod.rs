//! The owner's repo followed as it changes: `com.atproto.sync.subscribeRepos` of their PDS,
//! read through the outbound policy and checked before the controller sees any of it.
//! - `frame.rs`: one frame decoded (header + body), bounded, every field typed, peer texts
//!   cleaned;
//! - `verify.rs`: a `#commit` proven by its blocks (hashes, the signed commit, each op in the
//!   signed tree), with `proof`'s checks;
//! - `stream.rs`: the [`Follower`]: connections with bounds and backoff, the position (cursor
//!   and revision) that makes each commit apply once, and the cases that call for a listing;
//! - `forge.rs` (tests only): frames made by hand, signed by any key.

mod frame;
mod stream;
mod verify;

pub use frame::{
    Action, CommitFrame, Frame, FrameError, MAX_BLOCKS_BYTES, MAX_FRAME, MAX_OPS, OpFrame, decode,
};
pub use stream::{FollowConfig, Follower, NSID, StreamLimits};
pub use verify::{CommitError, MAX_COMMIT_BLOCKS, verify_commit};
#[cfg(any(test, feature = "test-support"))]
pub mod forge;

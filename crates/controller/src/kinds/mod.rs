//! One reconciler per kind, each over a [`crate::Context`]: [`record`] (AtprotoRecord: one
//! record in the owner's repo, written with a swap cid).

pub mod record;

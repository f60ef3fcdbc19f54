//! The domain of swdesk's embedded core controller, with no I/O: declaration validation and
//! hashing, the sync decision, rkeys, the index at `self`, the contract lifecycle and the phase
//! rollup. Every rule here is a pure function the controller calls.

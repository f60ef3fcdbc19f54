//! Fuzz target `cluster_frames`: see `swdesk_fuzz::cluster_frames` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::cluster_frames::check(data));

//! Fuzz target `cluster_feed`: see `swdesk_fuzz::cluster_feed` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::cluster_feed::check(data));

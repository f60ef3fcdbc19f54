//! Fuzz target `update_manifest`: see `swdesk_fuzz::update_manifest` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::update_manifest::check(data));

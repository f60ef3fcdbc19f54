//! Fuzz target `record_proof`: see `swdesk_fuzz::record_proof` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::record_proof::check(data));

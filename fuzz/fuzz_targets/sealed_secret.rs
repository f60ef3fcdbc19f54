//! Fuzz target `sealed_secret`: see `swdesk_fuzz::sealed_secret` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::sealed_secret::check(data));

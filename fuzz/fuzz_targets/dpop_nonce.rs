//! Fuzz target `dpop_nonce`: see `swdesk_fuzz::dpop_nonce` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::dpop_nonce::check(data));

//! Fuzz target `sign_in_request`: see `swdesk_fuzz::sign_in_request` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::sign_in_request::check(data));

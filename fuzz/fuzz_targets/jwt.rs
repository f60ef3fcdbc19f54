//! Fuzz target `jwt`: see `swdesk_fuzz::jwt` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::jwt::check(data));

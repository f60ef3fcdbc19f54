//! Fuzz target `relay_grant`: see `swdesk_fuzz::relay_grant` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::relay_grant::check(data));

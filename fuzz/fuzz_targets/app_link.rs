//! Fuzz target `app_link`: see `swdesk_fuzz::app_link` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::app_link::check(data));

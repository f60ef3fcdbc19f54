//! Fuzz target `records`: see `swdesk_fuzz::records` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::records::check(data));

//! Fuzz target `bid_cost`: see `swdesk_fuzz::bid_cost` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::bid_cost::check(data));

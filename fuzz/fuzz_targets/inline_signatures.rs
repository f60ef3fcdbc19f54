//! Fuzz target `inline_signatures`: see `swdesk_fuzz::inline_signatures` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::inline_signatures::check(data));

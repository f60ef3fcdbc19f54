//! Fuzz target `syntax`: see `swdesk_fuzz::syntax` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::syntax::check(data));

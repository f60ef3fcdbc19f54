//! Fuzz target `oauth_metadata`: see `swdesk_fuzz::oauth_metadata` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::oauth_metadata::check(data));

//! Fuzz target `did_document`: see `swdesk_fuzz::did_document` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::did_document::check(data));

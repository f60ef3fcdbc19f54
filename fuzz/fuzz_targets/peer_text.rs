//! Fuzz target `peer_text`: see `swdesk_fuzz::peer_text` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::peer_text::check(data));

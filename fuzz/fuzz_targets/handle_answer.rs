//! Fuzz target `handle_answer`: see `swdesk_fuzz::handle_answer` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::handle_answer::check(data));

//! Fuzz target `data_model`: see `swdesk_fuzz::data_model` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::data_model::check(data));

//! Fuzz target `kubeconfig`: see `swdesk_fuzz::kubeconfig` for what it feeds and the invariants it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| swdesk_fuzz::kubeconfig::check(data));

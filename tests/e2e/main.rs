//! The end-to-end suite: the real app binary in a real window under Xvfb, driven through
//! tauri-driver. Each test opens its own app with its own home and saves screenshots of each
//! step under `target/e2e/`.

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]

mod accessibility;
mod clusters;
mod deployments;
mod drift;
mod faults;
mod index;
mod live;
mod market;
mod package;
mod public_market;
mod secrets;
mod shell;
mod sign_in;
mod strict_market;
mod update;

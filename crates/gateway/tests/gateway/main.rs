//! The gateway client against real parts: the sandbox's real PDS and PLC on loopback, Debian's
//! Chromium at the real authorization page (sign-in, then service auth through the owner's
//! PDS), and the local sandbox gateway started in-process on loopback.

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]
// Test helpers fail their test by panicking, as the tests themselves do.
#![allow(clippy::unwrap_used)]

mod apply;
mod auth;
mod clusters;
mod errors;
mod frames;
mod kubeconfig;
mod subscription;
mod support;

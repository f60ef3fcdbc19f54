//! The atproto side against real parts: the sandbox's real PDS and PLC on loopback, Debian's
//! Chromium at the real authorization page, the real Secret Service (gnome-keyring).

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]
// Test helpers fail their test by panicking, as the tests themselves do.
#![allow(clippy::unwrap_used)]

mod crypto;
mod firehose;
mod identity;
mod keychain;
mod plc;
mod repo;
mod service_auth;
mod sign_in;
mod support;

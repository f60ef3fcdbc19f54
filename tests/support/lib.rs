//! Support for the end-to-end tests.

//! The project's task runner.
fn main() {}

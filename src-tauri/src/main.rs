//! The `swdesk` binary: records when the process started, then hands over to the shell.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    swdesk_app::run(std::time::Instant::now());
}

//! The bench's baseline: the smallest Tauri app that opens a window and reports its first
//! paint on stdout exactly as the real app does (`swdesk:first-paint ms=<n>`).

use std::sync::OnceLock;
use std::time::Instant;

static PROCESS_START: OnceLock<Instant> = OnceLock::new();

#[tauri::command]
fn ui_ready() {
    let start = PROCESS_START.get_or_init(Instant::now);
    #[allow(clippy::print_stdout)]
    {
        println!("swdesk:first-paint ms={}", start.elapsed().as_millis());
    }
}

fn main() {
    PROCESS_START.get_or_init(Instant::now);
    let app = tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![ui_ready])
        .build(tauri::generate_context!());
    match app {
        Ok(app) => app.run(|_, _| {}),
        Err(error) => {
            eprintln!("the bare window could not start: {error}");
            std::process::exit(1);
        }
    }
}

//! The bench's baseline: the smallest Tauri app that opens a window and reports its first
//! paint on stdout exactly as the real app does (`swdesk:first-paint ms=<n>`, with the same
//! start-up steps: `built`, `setup`, `page-started`, `page-loaded`, in ms since the process
//! started), so the bench can say where the app's start-up spends its extra time.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

static PROCESS_START: OnceLock<Instant> = OnceLock::new();
static STEPS: Mutex<Vec<(&str, Duration)>> = Mutex::new(Vec::new());

fn since_start() -> Duration {
    PROCESS_START.get_or_init(Instant::now).elapsed()
}

fn mark(step: &'static str) {
    if let Ok(mut steps) = STEPS.lock()
        && !steps.iter().any(|(name, _)| *name == step)
    {
        steps.push((step, since_start()));
    }
}

#[tauri::command]
fn ui_ready() {
    let painted = since_start();
    let steps = STEPS.lock().map(|steps| steps.clone()).unwrap_or_default();
    let steps: Vec<String> = steps
        .iter()
        .map(|(step, at)| format!("{step}={}", at.as_millis()))
        .collect();
    #[allow(clippy::print_stdout)]
    {
        println!(
            "swdesk:first-paint ms={} {}",
            painted.as_millis(),
            steps.join(" ")
        );
    }
}

fn main() {
    PROCESS_START.get_or_init(Instant::now);
    let app = tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![ui_ready])
        .on_page_load(|_, load| {
            mark(match load.event() {
                tauri::webview::PageLoadEvent::Started => "page-started",
                tauri::webview::PageLoadEvent::Finished => "page-loaded",
            })
        })
        .setup(|_| {
            mark("setup");
            Ok(())
        })
        .build(tauri::generate_context!());
    match app {
        Ok(app) => {
            mark("built");
            app.run(|_, _| {});
        }
        Err(error) => {
            eprintln!("the bare window could not start: {error}");
            std::process::exit(1);
        }
    }
}

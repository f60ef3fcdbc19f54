//! Generates the Tauri context and gates every command: a command not named in
//! `commands.list` cannot be called from the window, and a named one still needs a permission
//! in `capabilities/` (a test in `src/bindings.rs` holds the list, the handlers, the bindings
//! and the capability to one another).

/// The names in `commands.list`: one a line, `#` starting a comment.
fn command_names() -> &'static [&'static str] {
    let list =
        std::fs::read_to_string("commands.list").expect("src-tauri/commands.list is readable");
    let names: Vec<&'static str> = list
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|name| &*Box::leak(name.to_owned().into_boxed_str()))
        .collect();
    Box::leak(names.into_boxed_slice())
}

fn main() {
    println!("cargo:rerun-if-changed=commands.list");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(command_names())),
    )
    .expect("failed to run tauri-build");
}

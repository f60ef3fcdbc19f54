//! Writes the window's TypeScript bindings (`cargo xtask bindings` runs this). An example, not
//! a binary of the app, so the bundler never packages it.

fn main() {
    let path = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(swdesk_app::bindings::BINDINGS_PATH)
        });
    if let Err(error) = swdesk_app::bindings::export(&path) {
        eprintln!("cannot write {}: {error}", path.display());
        std::process::exit(1);
    }
}

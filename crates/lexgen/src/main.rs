//! `cargo run -p swdesk-lexgen [-- --check]`: regenerates `crates/lexicon/src/generated/` from
//! `lexicons/`, or with `--check` only reports drift (exit status 1 when there is any).

use std::process::ExitCode;

fn main() -> ExitCode {
    let check_only = std::env::args().skip(1).any(|arg| arg == "--check");
    match run(check_only) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("swdesk-lexgen: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(check_only: bool) -> Result<ExitCode, swdesk_lexgen::LexgenError> {
    let (lexicon_dir, out_dir) = swdesk_lexgen::workspace_paths();
    let files = swdesk_lexgen::generate(&lexicon_dir)?;
    if !check_only {
        swdesk_lexgen::write(&out_dir, &files)?;
        eprintln!(
            "swdesk-lexgen: wrote {} files to {}",
            files.len(),
            out_dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let drifts = swdesk_lexgen::drift(&out_dir, &files)?;
    for drift in &drifts {
        eprintln!("swdesk-lexgen: {drift:?}");
    }
    Ok(if drifts.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

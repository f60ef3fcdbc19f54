//! Running child processes the way a task runner should: each command is echoed before it
//! runs, and a failure names the command that failed.

use std::process::Command;

use anyhow::Context;

/// The command line as a person would type it.
pub fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs to completion, echoing the command; an unsuccessful exit is an error.
pub fn run(command: &mut Command) -> anyhow::Result<()> {
    let line = describe(command);
    eprintln!("$ {line}");
    let status = command
        .status()
        .with_context(|| format!("cannot start `{line}`"))?;
    anyhow::ensure!(status.success(), "`{line}` failed ({status})");
    Ok(())
}

/// Whether the command runs and exits successfully, without echoing it or its output.
pub fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The command's standard output, when it runs and exits successfully.
pub fn stdout_of(command: &mut Command) -> Option<String> {
    let output = command.stderr(std::process::Stdio::null()).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// A `cargo` command (the same cargo that runs xtask).
pub fn cargo() -> Command {
    Command::new(cargo_program())
}

/// The cargo that runs xtask: `CARGO` as cargo sets it for the process it runs, read at run
/// time (the path baked in at build time goes stale when the toolchain is reinstalled or
/// renamed, and cargo does not rebuild xtask for that), else `cargo` on `PATH`.
pub fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

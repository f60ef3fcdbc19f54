//! The one-client rule is the compiler's: `clippy.toml` refuses every way to build an HTTP
//! client, open a TCP connection or a WebSocket outside `crates/net` (the sandbox's peers and
//! the test suites allow it where they must). [`refused`] proves the rule is live: it lints a
//! stray crate that opens a connection of its own, once under the workspace's `clippy.toml`
//! (clippy must refuse it, naming the rule's reason) and once under none (the same code passes,
//! so the refusal is the rule's and nothing else's).

use std::path::Path;
use std::process::{Command, Output};

use anyhow::Context;

use crate::cmd;
use crate::paths::Paths;

/// A crate of its own (no dependencies) that opens a TCP connection past the policy.
const STRAY_LIB: &str = "//! A stray client.\n\n/// Connects past the outbound policy.\n\
pub fn stray() -> std::io::Result<std::net::TcpStream> {\n    \
std::net::TcpStream::connect((\"127.0.0.1\", 9))\n}\n";

const STRAY_MANIFEST: &str = "[package]\nname = \"stray-client\"\nversion = \"0.0.0\"\n\
edition = \"2024\"\npublish = false\n\n[workspace]\n";

/// Fails unless clippy refuses the stray crate under the workspace's rules, and passes it
/// without them.
pub fn refused(paths: &Paths) -> anyhow::Result<()> {
    let scratch = tempfile::tempdir().context("a scratch folder")?;
    write_stray_crate(scratch.path())?;
    let empty = scratch.path().join("no-rules");
    std::fs::create_dir_all(&empty)?;
    let with_rules = lint(scratch.path(), &paths.root)?;
    let text = String::from_utf8_lossy(&with_rules.stderr);
    anyhow::ensure!(
        !with_rules.status.success() && text.contains("swdesk_net::Outbound"),
        "clippy did not refuse a stray TCP connection under clippy.toml:\n{text}"
    );
    let without = lint(scratch.path(), &empty)?;
    anyhow::ensure!(
        without.status.success(),
        "the stray crate fails clippy for another reason:\n{}",
        String::from_utf8_lossy(&without.stderr)
    );
    Ok(())
}

fn write_stray_crate(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(dir.join("Cargo.toml"), STRAY_MANIFEST)?;
    std::fs::write(dir.join("src/lib.rs"), STRAY_LIB)?;
    Ok(())
}

/// `cargo clippy -D warnings` of the crate in `dir` under the `clippy.toml` in `rules`.
fn lint(dir: &Path, rules: &Path) -> anyhow::Result<Output> {
    let mut command = Command::new(cmd::cargo_program());
    command
        .args(["clippy", "--quiet", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .args(["--", "-D", "warnings"])
        .env("CLIPPY_CONF_DIR", rules)
        .env("CARGO_TARGET_DIR", dir.join("target"));
    command
        .output()
        .with_context(|| format!("running `{}`", cmd::describe(&command)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn clippy_refuses_a_stray_connection_outside_the_network_crate() {
        let paths = crate::paths::Paths::discover().expect("the workspace");
        super::refused(&paths).expect("the one-client rule is live");
    }
}

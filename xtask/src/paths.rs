//! Where things are: the workspace root, cargo's target directory (which `CARGO_TARGET_DIR` may
//! move outside the clone, as CI does; always absolute here, so a path printed or handed to a
//! command run elsewhere names the same file), the UI, the built binaries and the E2E
//! screenshots.

use std::path::{Path, PathBuf};

use anyhow::Context;

#[derive(Debug, Clone)]
pub struct Paths {
    pub root: PathBuf,
    pub target: PathBuf,
}

impl Paths {
    pub fn discover() -> anyhow::Result<Self> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .context("xtask lives one level below the workspace root")?
            .to_path_buf();
        let target = target_directory(&root)?;
        Ok(Self { root, target })
    }

    pub fn ui(&self) -> PathBuf {
        self.root.join("ui")
    }

    /// The sandbox PDS harness and the authorization-page driver (Node packages).
    pub fn devnet_pds(&self) -> PathBuf {
        self.root.join("sandbox").join("devnet").join("pds")
    }

    /// The public market's test peer (third-party, beside the project in `../shared`).
    pub fn market_peer(&self) -> PathBuf {
        self.root.join("../shared/peers/atproto-market/peer.sh")
    }

    /// A binary built by cargo in the given profile directory (`debug` or `release`).
    pub fn binary(&self, profile_dir: &str, name: &str) -> PathBuf {
        self.target.join(profile_dir).join(name)
    }

    /// Screenshots and reports of the end-to-end suite, always inside the clone.
    pub fn e2e_output(&self) -> PathBuf {
        self.root.join("target").join("e2e")
    }

    /// The JUnit report of a nextest profile (the store dir is set in `.config/nextest.toml`).
    pub fn nextest_report(&self, profile: &str) -> PathBuf {
        self.root
            .join("target")
            .join("nextest")
            .join(profile)
            .join("junit.xml")
    }

    /// Reports written by the test steps (JUnit, Vitest JSON).
    pub fn reports(&self) -> PathBuf {
        self.root.join("target").join("reports")
    }
}

fn target_directory(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
        // Relative to where cargo was run, as cargo reads it.
        return Ok(std::env::current_dir()?.join(dir));
    }
    let output = crate::cmd::cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    anyhow::ensure!(output.status.success(), "cargo metadata failed");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let dir = metadata["target_directory"]
        .as_str()
        .context("cargo metadata names no target_directory")?;
    Ok(PathBuf::from(dir))
}

//! Installs a downloaded update exactly as its signature was checked. The shell checks the
//! signature over the package's bytes in memory; between that check and the package manager,
//! any file of the owner's could be swapped by another program the owner runs. So the bytes
//! are written to a file of the owner's ([`Staged::write`]), and the privileged step (through
//! `pkexec`, [`Elevation`]) copies at most their length into a folder only root can write,
//! checks the copy's SHA-256 against that of the verified bytes (passed as an argument), and
//! hands the package manager the copy only when they match. A swapped file makes a copy that
//! does not match: nothing is installed ([`InstallError::Changed`]).
//!
//! Invariants: the package manager only ever reads root's copy; the hash compared is taken from
//! the bytes the signature covered, never from a file; the privileged step is one fixed script
//! ([`PRIVILEGED_STEP`]) whose arguments are a hex digest, a number, our own path and a fixed
//! word, and which takes its `PATH` from `pkexec` (which clears the owner's environment).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The script run as root: `$1` the SHA-256 of the verified bytes (hex), `$2` their length,
/// `$3` the owner's file holding them, `$4` `deb` or `rpm`. Exits 3 when the copy is not the
/// verified bytes, 4 when the package manager failed, 5 when the copy could not be made.
pub const PRIVILEGED_STEP: &str = r#"set -u
expected=$1 size=$2 source=$3 kind=$4
case "$kind" in deb|rpm) ;; *) exit 5 ;; esac
folder=$(mktemp -d /tmp/swdesk-update.XXXXXXXXXX) || exit 5
trap 'rm -rf "$folder"' EXIT
copy="$folder/package.$kind"
head -c "$size" -- "$source" > "$copy" || exit 5
actual=$(sha256sum "$copy") || exit 5
[ "${actual%% *}" = "$expected" ] || { echo "the package changed after its check" >&2; exit 3; }
case "$kind" in
  deb) dpkg -i "$copy" || exit 4 ;;
  rpm) rpm -U "$copy" || exit 4 ;;
esac
"#;

/// The package formats the app updates itself from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageKind {
    /// Debian and Ubuntu (`dpkg -i`).
    Deb,
    /// Fedora and openSUSE (`rpm -U`).
    Rpm,
}

impl PackageKind {
    fn word(self) -> &'static str {
        match self {
            Self::Deb => "deb",
            Self::Rpm => "rpm",
        }
    }

    /// Whether `bytes` begin as a package of this kind does.
    fn begins(self, bytes: &[u8]) -> bool {
        match self {
            Self::Deb => bytes.starts_with(b"!<arch>\ndebian-binary"),
            Self::Rpm => bytes.starts_with(&[0xED, 0xAB, 0xEE, 0xDB]),
        }
    }
}

/// Why an update was not installed; nothing was, in every case.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The verified bytes are not a package of the kind this copy was installed from.
    #[error("the download is not a .{0} package")]
    NotAPackage(&'static str),
    /// The bytes could not be written for the privileged step.
    #[error("the package could not be written for the installer: {0}")]
    Stage(std::io::Error),
    /// `pkexec` could not be run.
    #[error(
        "the installer could not ask for the administrator's permission ({0}); install polkit (pkexec)"
    )]
    Elevation(std::io::Error),
    /// The password prompt was dismissed or refused.
    #[error("the installation was not authorized")]
    NotAuthorized,
    /// The file handed to the privileged step was not the verified bytes by then.
    #[error("the package file changed after its signature was checked: nothing was installed")]
    Changed,
    /// The package manager, or the privileged step, failed.
    #[error("the installer failed (exit status {status}): {output}")]
    Failed {
        /// Its exit status, if it exited.
        status: String,
        /// The last of what it wrote.
        output: String,
    },
}

/// How the privileged step is run: the system's `pkexec`, or (tests) a stand-in for it.
#[derive(Debug, Clone)]
pub struct Elevation {
    program: OsString,
}

impl Elevation {
    /// The system's `pkexec`: polkit's password prompt.
    pub fn system() -> Self {
        Self::through("pkexec")
    }

    /// `program`, run as `pkexec` is: the command to run as root follows it.
    pub fn through(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
        }
    }
}

/// Verified bytes written to a file of the owner's, with their digest: what the privileged step
/// checks its copy against.
#[derive(Debug)]
pub struct Staged {
    _folder: tempfile::TempDir,
    path: PathBuf,
    sha256: String,
    size: usize,
    kind: PackageKind,
}

impl Staged {
    /// Writes `verified` (the bytes whose signature was checked) for the privileged step, in a
    /// new folder only the owner reads.
    pub fn write(verified: &[u8], kind: PackageKind) -> Result<Self, InstallError> {
        if !kind.begins(verified) {
            return Err(InstallError::NotAPackage(kind.word()));
        }
        let folder = tempfile::Builder::new()
            .prefix("swdesk-update-")
            .tempdir()
            .map_err(InstallError::Stage)?;
        let path = folder.path().join(format!("package.{}", kind.word()));
        std::fs::write(&path, verified).map_err(InstallError::Stage)?;
        let sha256 = Sha256::digest(verified)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Ok(Self {
            _folder: folder,
            path,
            sha256,
            size: verified.len(),
            kind,
        })
    }

    /// The owner's file (any program of the owner's could change it: the privileged step does
    /// not trust it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs the privileged step through `elevation`: root's copy is installed only if it is the
    /// verified bytes. Blocks until the package manager is done.
    pub fn install(self, elevation: &Elevation) -> Result<(), InstallError> {
        let done = Command::new(&elevation.program)
            .args(["/bin/sh", "-c", PRIVILEGED_STEP, "swdesk-update"])
            .arg(&self.sha256)
            .arg(self.size.to_string())
            .arg(&self.path)
            .arg(self.kind.word())
            .output()
            .map_err(InstallError::Elevation)?;
        match done.status.code() {
            Some(0) => Ok(()),
            Some(3) => Err(InstallError::Changed),
            Some(126 | 127) => Err(InstallError::NotAuthorized),
            _ => Err(InstallError::Failed {
                status: done
                    .status
                    .code()
                    .map_or_else(|| "none: killed".to_owned(), |code| code.to_string()),
                output: last_lines(&done.stderr),
            }),
        }
    }
}

/// Installs `verified` (a package whose signature was just checked) through the system's
/// `pkexec`, exactly those bytes or nothing.
pub fn install(verified: &[u8], kind: PackageKind) -> Result<(), InstallError> {
    Staged::write(verified, kind)?.install(&Elevation::system())
}

/// The last lines of what the installer wrote, at most 500 bytes of them.
fn last_lines(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let text = text.trim();
    let start = text.len().saturating_sub(500);
    let start = (start..text.len())
        .find(|at| text.is_char_boundary(*at))
        .unwrap_or(text.len());
    text[start..].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_no_package_of_the_kind_are_refused_before_anything_is_written() {
        let refused = Staged::write(b"no package at all", PackageKind::Deb);
        assert!(matches!(refused, Err(InstallError::NotAPackage("deb"))));
        let rpm_as_deb = Staged::write(&[0xED, 0xAB, 0xEE, 0xDB, 0], PackageKind::Deb);
        assert!(matches!(rpm_as_deb, Err(InstallError::NotAPackage("deb"))));
        assert!(Staged::write(&[0xED, 0xAB, 0xEE, 0xDB, 0], PackageKind::Rpm).is_ok());
    }
}

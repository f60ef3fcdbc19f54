//! Kubeconfigs on the owner's machine. A gateway's answer is never saved as it came: it is
//! read ([`Summary`]: server, cluster, the client certificate's subject and validity, checked
//! against the cluster CA), refused when it asks for anything that would run code, read files
//! or weaken TLS when the owner next uses `kubectl` (`refusals`), and rebuilt from the verified
//! fields into a minimal kubeconfig ([`Minimal`]). [`save`] writes one with mode 0600 (it holds
//! a client key) through [`write_private`]: into a temporary file of an unpredictable name in
//! the target folder, synced, then renamed over the path, and the folder synced, so the path
//! holds the old file or the whole new one, never a part.
//!
//! Invariant: the kubeconfig's text is never logged or put in an error message; a kubeconfig
//! is verified and rebuilt before anything is written.

mod error;
mod minimal;
mod refusals;
mod summary;

use std::io::Write as _;
use std::path::Path;

use swdesk_lexicon::Redacted;

pub use error::KubeconfigError;
pub use minimal::{Minimal, Parts};
pub use summary::Summary;

/// Writes `kubeconfig` at `path` readable by the owner only (0600 on Unix), atomically.
pub fn save(path: &Path, kubeconfig: &Redacted<String>) -> std::io::Result<()> {
    write_private(path, kubeconfig.expose().as_bytes())
}

/// Writes `bytes` at `path` as a file only its owner reads (0600 on Unix), whole or not at
/// all: a temporary file of an unpredictable name in the same folder, synced, renamed over
/// `path`, the folder synced.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if path.file_name().is_none() {
        return Err(std::io::Error::other("the path names no file"));
    }
    // `tempfile` creates the file with a random name, exclusively, readable by the owner only.
    let mut file = tempfile::Builder::new()
        .prefix(".swdesk-")
        .tempfile_in(directory)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    #[cfg(unix)]
    std::fs::File::open(directory)?.sync_all()?;
    Ok(())
}
